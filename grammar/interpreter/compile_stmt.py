"""Compiling the core statements (assignments, if/while/for, with, assert, def, import) and
assignment targets (a mixin of the compiler).
"""
from __future__ import annotations

from gradexpr import errors

from .. import ast
from .. import builtins as _b
from . import scopes as _scopes
from .located import _kind_error, _operand_error, catchable, located, original
from .policy import attribute_getter, set_attribute as _set_attribute
from .runtime import _IOPS, BREAK, CONTINUE, RETURN, _unpack


class StatementCompiler:
    """Statements: ``fn(frame) -> None | BREAK | CONTINUE | RETURN``."""

    def s_ExprStmt(self, s, scope):
        v = s.value
        if type(v) is ast.Constant:
            return None
        ef = self.expr(v, scope)

        def expr_stmt(fr):
            ef(fr)
        return expr_stmt

    def s_Pass(self, s, scope):
        return None

    def s_Break(self, s, scope):
        return lambda fr: BREAK

    def s_Continue(self, s, scope):
        return lambda fr: CONTINUE

    def s_Return(self, s, scope):
        if s.value is None:
            def ret_none(fr):
                fr[1] = None
                return RETURN
            return ret_none
        vf = self.expr(s.value, scope)

        def ret(fr):
            fr[1] = vf(fr)
            return RETURN
        return ret

    def s_Assign(self, s, scope):
        vf = self.expr(s.value, scope)
        if len(s.targets) == 1:
            t = s.targets[0]
            where = _scopes.home(scope, t.id) if type(t) is ast.Name else None
            if where is not None and where[0] == "global":
                name = t.id
                g = self.g

                def assign_global(fr):
                    g[name] = vf(fr)
                return assign_global
            if where is not None and where[0] == "slot" and where[1] == 0:
                i = where[2]

                def assign_local(fr):
                    fr[i] = vf(fr)
                return assign_local
            st = self.store(t, scope)

            def assign(fr):
                st(fr, vf(fr))
            return assign
        stores = tuple(self.store(t, scope) for t in s.targets)

        def assign_chain(fr):
            v = vf(fr)
            for st in stores:
                st(fr, v)
        return assign_chain

    def s_AugAssign(self, s, scope):
        t = s.target
        iop = _IOPS[s.op]
        vf = self.expr(s.value, scope)
        loc = self._xor_loc if s.op == "^" else self.loc
        if type(t) is ast.Name:
            load = self.load_name(t, scope)
            st = self.store(t, scope)

            def aug_name(fr):
                cur = load(fr)
                v = vf(fr)
                try:
                    r = iop(cur, v)
                except Exception as e:
                    raise loc(_operand_error(e, s.op + "=", cur, v), s)
                st(fr, r)
            return aug_name
        if type(t) is ast.Attribute:
            of = self.expr(t.value, scope)
            name = _scopes.mangle(scope, t.attr)
            cache = {}

            def aug_attr(fr):
                obj = of(fr)
                try:
                    tp = type(obj)
                    get = cache.get(tp)
                    if get is None:
                        get = cache[tp] = attribute_getter(tp, name)
                    cur = get(obj)
                except Exception as e:
                    raise loc(e, t)
                v = vf(fr)
                try:
                    r = iop(cur, v)
                except Exception as e:
                    raise loc(e, s)
                try:
                    _set_attribute(obj, name, r)
                except Exception as e:
                    raise loc(e, t)
            return aug_attr
        # Subscript
        of = self.expr(t.value, scope)
        kf = self.index(t.slice, scope)

        def aug_item(fr):
            obj = of(fr)
            key = kf(fr)
            try:
                cur = obj[key]
            except Exception as e:
                raise loc(e, t)
            v = vf(fr)
            try:
                r = iop(cur, v)
            except Exception as e:
                raise loc(e, s)
            try:
                obj[key] = r
            except Exception as e:
                raise loc(e, t)
        return aug_item

    def s_If(self, s, scope):
        tf = self.expr(s.test, scope)
        body = self.block(s.body, scope)
        orelse = self.block(s.orelse, scope) if s.orelse else None
        loc = self.loc
        test = s.test

        def if_stmt(fr):
            v = tf(fr)
            try:
                c = True if v else False
            except Exception as e:
                raise loc(e, test)
            if c:
                return body(fr)
            if orelse is not None:
                return orelse(fr)
            return None
        return if_stmt

    def s_While(self, s, scope):
        tf = self.expr(s.test, scope)
        body = self.block(s.body, scope)
        orelse = self.block(s.orelse, scope) if s.orelse else None
        rt = self.rt
        ctr = rt.loop
        loc = self.loc
        test = s.test
        header = ast.Name("while", s.line, s.col, s.test.end_line, s.test.end_col)

        def while_stmt(fr):
            while True:
                v = tf(fr)
                try:
                    c = True if v else False
                except Exception as e:
                    raise loc(e, test)
                if not c:
                    break
                ctr[0] -= 1
                if ctr[0] < 0:
                    rt.checkpoint(header)
                r = body(fr)
                if r is not None:
                    if r is BREAK:
                        return None
                    if r is CONTINUE:
                        continue
                    return r
            if orelse is not None:
                return orelse(fr)
            return None
        return while_stmt

    def s_For(self, s, scope):
        itf = self.expr(s.iter, scope)
        body = self.block(s.body, scope)
        orelse = self.block(s.orelse, scope) if s.orelse else None
        rt = self.rt
        ctr = rt.loop
        loc = self.loc
        it_node = s.iter
        header = ast.Name("for", s.line, s.col, s.iter.end_line, s.iter.end_col)
        t = s.target
        simple = None
        if type(t) is ast.Name:
            where = _scopes.home(scope, t.id)
            if where[0] == "global":
                simple = ("g", t.id)
            elif where[0] == "slot" and where[1] == 0:
                simple = ("l", where[2])
        st = self.store(t, scope)
        g = self.g

        def run_loop(fr, items, store):
            for item in items:
                ctr[0] -= 1
                if ctr[0] < 0:
                    rt.checkpoint(header)
                store(fr, item)
                r = body(fr)
                if r is not None:
                    if r is BREAK:
                        return BREAK
                    if r is CONTINUE:
                        continue
                    return r
            return None

        if simple is not None and simple[0] == "g":
            name = simple[1]

            def loop(fr, items):
                for item in items:
                    ctr[0] -= 1
                    if ctr[0] < 0:
                        rt.checkpoint(header)
                    g[name] = item
                    r = body(fr)
                    if r is not None:
                        if r is BREAK:
                            return BREAK
                        if r is CONTINUE:
                            continue
                        return r
                return None
        elif simple is not None:
            slot = simple[1]

            def loop(fr, items):
                for item in items:
                    ctr[0] -= 1
                    if ctr[0] < 0:
                        rt.checkpoint(header)
                    fr[slot] = item
                    r = body(fr)
                    if r is not None:
                        if r is BREAK:
                            return BREAK
                        if r is CONTINUE:
                            continue
                        return r
                return None
        else:
            def loop(fr, items):
                return run_loop(fr, items, st)

        def for_stmt(fr):
            v = itf(fr)
            try:
                items = iter(v)
                r = loop(fr, items)
            except Exception as e:
                raise loc(e, it_node)
            if r is not None:
                if r is BREAK:
                    return None
                return r
            if orelse is not None:
                return orelse(fr)
            return None
        return for_stmt

    def s_With(self, s, scope):
        inner = self.block(s.body, scope)
        for item in reversed(s.items):
            inner = self._with_item(item, inner, scope)
        return inner

    def with_enter(self, item, scope):
        """``enter(frame) -> (manager, its __exit__)``: the manager entered, its value stored."""
        cf = self.expr(item.context_expr, scope)
        st = self.store(item.optional_vars, scope) if item.optional_vars is not None else None
        loc = self.loc
        node = item.context_expr

        def enter(fr):
            mgr = cf(fr)
            try:
                t = type(mgr)
                try:
                    enter = t.__enter__
                    exit_ = t.__exit__
                except AttributeError:
                    raise errors.TypeError(f"'{t.__name__}' object does not support the context "
                                           f"manager protocol") from None
                value = enter(mgr)
            except Exception as e:
                raise loc(e, node)
            if st is not None:
                try:
                    st(fr, value)
                except BaseException:
                    exit_(mgr, None, None, None)
                    raise
            return mgr, exit_
        return enter

    def with_exit(self, item):
        """``leave(manager, __exit__, exception or None) -> suppress?``, errors located."""
        loc = self.loc
        node = item.context_expr

        def leave(mgr, exit_, e):
            try:
                if e is None:
                    exit_(mgr, None, None, None)
                    return False
                seen = original(e)          # what the program raised, as ``except`` sees it
                # (a limit runs the cleanup but is never suppressed)
                return bool(exit_(mgr, type(seen), seen, None)) and catchable(e)
            except Exception as e2:
                raise loc(e2, node)
        return leave

    def _with_item(self, item, inner, scope):
        enter = self.with_enter(item, scope)
        leave = self.with_exit(item)

        def with_stmt(fr):
            mgr, exit_ = enter(fr)
            try:
                r = inner(fr)
            except BaseException as e:
                if not leave(mgr, exit_, e):
                    raise
                return None
            leave(mgr, exit_, None)
            return r
        return with_stmt

    def s_Assert(self, s, scope):
        tf = self.expr(s.test, scope)
        mf = self.expr(s.msg, scope) if s.msg is not None else None
        loc = self.loc
        test = s.test

        def assert_stmt(fr):
            v = tf(fr)
            try:
                ok = True if v else False
            except Exception as e:
                raise loc(e, test)
            if not ok:
                if mf is None:
                    raise loc(errors.AssertionError(""), s)
                m = mf(fr)
                from ..text_guards import safe_str
                try:
                    text = safe_str(m)
                except Exception as e:
                    raise loc(e, s.msg)
                raise loc(errors.AssertionError(text), s)
        return assert_stmt

    def s_FunctionDef(self, s, scope):
        make = self.function(s, s.name, s.args, s.body, scope, is_lambda=False)
        st = self.store(ast.Name(s.name, s.line, s.col, s.end_line, s.end_col), scope)

        def def_stmt(fr):
            st(fr, make(fr))
        return def_stmt

    def s_Import(self, s, scope):
        stores = []
        for a in s.names:
            parts = a.name.split(".")
            target = a.asname or parts[0]
            stores.append((parts, a.asname is not None,
                           self.store(ast.Name(target, a.line, a.col, a.end_line, a.end_col), scope), a))
        interp = self.interp
        loc = self.loc

        def import_stmt(fr):
            for parts, alias, st, node in stores:
                try:
                    mod = _resolve_module(interp, parts)
                except Exception as e:
                    raise loc(e, node)
                st(fr, mod if alias else _resolve_module(interp, parts[:1]))
        return import_stmt

    def s_ImportFrom(self, s, scope):
        parts = s.module.split(".")
        interp = self.interp
        loc = self.loc
        g = self.g
        if s.names[0].name == "*":
            def import_star(fr):
                try:
                    mod = _resolve_module(interp, parts)
                except Exception as e:
                    raise loc(e, s)
                # the prelude's names: restore them as 'from torch import *' would
                initial = interp._initial
                if mod is initial.get("torch"):
                    for k in (initial.all_names() if hasattr(initial, "all_names") else list(initial)):
                        if k not in _b.NAMES and not k.startswith("_") and k in initial:
                            g[k] = initial[k]
                else:
                    from ..modules import star_names
                    g.update(star_names(mod))
            return import_star
        items = []
        for a in s.names:
            items.append((a.name, self.store(ast.Name(a.asname or a.name, a.line, a.col, a.end_line, a.end_col),
                                             scope), a))

        def import_from(fr):
            if parts == ["builtins"]:
                for name, st, node in items:
                    st(fr, _b.BUILTINS[name])
                return
            try:
                mod = _resolve_module(interp, parts)
            except Exception as e:
                raise loc(e, s)
            for name, st, node in items:
                try:
                    value = attribute_getter(type(mod), name)(mod)
                except Exception:
                    if name in interp._initial:
                        value = interp._initial[name]
                    else:
                        raise loc(_kind_error("ImportError", f"cannot import name '{name}' from "
                                                             f"'{s.module}'"), node)
                st(fr, value)
        return import_from

    # ------------------------------------------------------------------ targets
    def store(self, t, scope):
        """``fn(frame, value)`` assigning ``value`` to target ``t``."""
        tt = type(t)
        loc = self.loc
        if tt is ast.Name:
            name = t.id
            if scope is not None and scope.kind == _scopes.CLASS:
                name = _scopes.mangle(scope, name)
            where = _scopes.home(scope, name)
            if where[0] == "global":
                g = self.g

                def store_global(fr, v):
                    g[name] = v
                return store_global
            if where[0] == "class":
                def store_class(fr, v):
                    fr[2][name] = v
                return store_class
            _, depth, i = where
            if depth == 0:
                def store_local(fr, v):
                    fr[i] = v
                return store_local

            def store_free(fr, v):
                for _ in range(depth):
                    fr = fr[0]
                fr[i] = v
            return store_free
        if tt is ast.Starred:       # pragma: no cover - the parser allows it only inside a tuple or list
            raise located(errors.SyntaxError("starred assignment target must be in a list or tuple"),
                          self.filename, t.line, t.col)
        if tt is ast.Attribute:
            of = self.expr(t.value, scope)
            name = _scopes.mangle(scope, t.attr)

            def store_attr(fr, v):
                obj = of(fr)
                try:
                    _set_attribute(obj, name, v)
                except Exception as e:
                    raise loc(e, t)
            return store_attr
        if tt is ast.Subscript:
            of = self.expr(t.value, scope)
            kf = self.index(t.slice, scope)

            def store_item(fr, v):
                obj = of(fr)
                key = kf(fr)
                try:
                    obj[key] = v
                except Exception as e:
                    raise loc(e, t)
            return store_item
        if tt is ast.Tuple or tt is ast.List:
            if any(type(e) is ast.Starred for e in t.elts):
                return self.store_starred(t, scope)
            stores = tuple(self.store(e, scope) for e in t.elts)
            n = len(stores)

            def store_unpack(fr, v):
                try:
                    items = _unpack(v, n)
                except Exception as e:
                    raise loc(e, t)
                for st, x in zip(stores, items):
                    st(fr, x)
            return store_unpack
        raise located(errors.SyntaxError("invalid assignment target"), self.filename, t.line, t.col)  # pragma: no cover


def _resolve_module(interp, parts):
    """``import a.b.c``: the prelude's ``torch`` or a module of ``grammar/modules``."""
    from ..modules import resolve
    return resolve(interp._initial, parts)
