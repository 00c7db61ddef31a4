"""Compiling generators, comprehensions and the displays that unpack (a mixin of the compiler).

Generators. A function whose body holds a ``yield`` is compiled in *generator mode*: each
statement that contains a ``yield`` becomes a Python generator function ``g(frame)`` that
yields the program's values and returns the statement's signal (None, BREAK, CONTINUE,
RETURN); the statements without one stay ordinary closures, called directly. So a
program's generator is a Python generator (``next``, ``for``, ``yield from`` and return
values work natively), and its ``gi_frame`` and the rest are out of reach by the attribute
policy. ``yield`` may stand as a statement or as the value of an assignment.

Comprehensions have their own scope (a frame like a function's); the first iterable is
evaluated outside it, as in Python; each step counts against the loop budget, as each
``yield`` does.
"""
from __future__ import annotations

from gradexpr import errors

from .. import ast
from . import scopes as _scopes
from ..builtins import bounded_star_args
from .compile_flow import catchable
from .scopes import Scope

__all__ = ["GeneratorCompiler"]


def _holds_yield(node):
    for n in ast.walk(node):
        t = type(n)
        if t is ast.Yield or t is ast.YieldFrom:
            return True
    return False


class GeneratorCompiler:
    """Generator bodies, ``yield``, comprehensions, ``:=``, sets and starred displays."""

    # ------------------------------------------------------------------ generator bodies
    def generator_body(self, body, scope):
        return self.gen_block(body, scope)

    def gen_block(self, stmts, scope):
        """A block in generator mode: ``g(frame)`` -> generator returning the block's signal."""
        fns = []
        for s in stmts:
            if type(s) is ast.ExprStmt and type(s.value) is ast.Constant:
                continue
            if _holds_yield(s):
                fns.append((True, self.gen_stmt(s, scope)))
            else:
                f = self.stmt(s, scope)
                if f is not None:
                    fns.append((False, f))
        fns = tuple(fns)

        def gen_block(fr):
            for is_gen, f in fns:
                r = (yield from f(fr)) if is_gen else f(fr)
                if r is not None:
                    return r
            return None
        return gen_block

    def gen_stmt(self, s, scope):
        t = type(s)
        if t is ast.ExprStmt and type(s.value) in (ast.Yield, ast.YieldFrom):
            y = self.gen_yield(s.value, scope)

            def yield_stmt(fr):
                yield from y(fr)
            return yield_stmt
        if t is ast.Assign and type(s.value) in (ast.Yield, ast.YieldFrom) \
                and not any(_holds_yield(x) for x in s.targets):
            y = self.gen_yield(s.value, scope)
            stores = tuple(self.store(x, scope) for x in s.targets)

            def yield_assign(fr):
                v = yield from y(fr)
                for st in stores:
                    st(fr, v)
            return yield_assign
        method = getattr(self, "g_" + t.__name__, None)
        if method is None:
            n = next(n for n in ast.walk(s) if type(n) in (ast.Yield, ast.YieldFrom))
            raise self.loc(errors.SyntaxError("'yield' is supported in gradexpr as a statement or as the "
                                              "value of an assignment"), n)
        return method(s, scope)

    def gen_yield(self, y, scope):
        """``g(frame)`` -> generator yielding for ``yield v`` / ``yield from v``; returns the sent value."""
        vf = self.expr(y.value, scope) if y.value is not None else None
        rt = self.rt
        ctr = rt.loop
        loc = self.loc
        if type(y) is ast.Yield:
            def yield_one(fr):
                v = vf(fr) if vf is not None else None
                ctr[0] -= 1
                if ctr[0] < 0:
                    rt.checkpoint(y)
                return (yield v)
            return yield_one

        def yield_from(fr):
            src = vf(fr)
            try:
                it = iter(src)
            except Exception as e:
                raise loc(e, y.value)
            while True:
                try:
                    v = next(it)
                except StopIteration as stop:
                    return stop.value
                ctr[0] -= 1
                if ctr[0] < 0:
                    rt.checkpoint(y)
                yield v
        return yield_from

    def _part(self, stmts, scope):
        """A sub-block in generator mode, or None when empty."""
        return self.gen_block(stmts, scope) if stmts else None

    def g_If(self, s, scope):
        test = self.expr(s.test, scope)
        body = self.gen_block(s.body, scope)
        orelse = self._part(s.orelse, scope)
        loc = self.loc

        def gen_if(fr):
            v = test(fr)
            try:
                c = True if v else False
            except Exception as e:
                raise loc(e, s.test)
            if c:
                return (yield from body(fr))
            if orelse is not None:
                return (yield from orelse(fr))
            return None
        return gen_if

    def _gen_loop(self, s, scope, items_of, store):
        body = self.gen_block(s.body, scope)
        orelse = self._part(s.orelse, scope)
        rt = self.rt
        ctr = rt.loop
        brk, cont = self.signals

        def gen_loop(fr):
            for item in items_of(fr):
                ctr[0] -= 1
                if ctr[0] < 0:
                    rt.checkpoint(s)
                if store is not None:
                    store(fr, item)
                r = yield from body(fr)
                if r is not None:
                    if r is brk:
                        return None
                    if r is cont:
                        continue
                    return r
            if orelse is not None:
                return (yield from orelse(fr))
            return None
        return gen_loop

    def g_For(self, s, scope):
        itf = self.expr(s.iter, scope)
        loc = self.loc

        def items(fr):
            v = itf(fr)
            try:
                return iter(v)
            except Exception as e:
                raise loc(e, s.iter)
        return self._gen_loop(s, scope, items, self.store(s.target, scope))

    def g_While(self, s, scope):
        test = self.expr(s.test, scope)
        loc = self.loc

        def items(fr):
            while True:
                v = test(fr)
                try:
                    c = True if v else False
                except Exception as e:
                    raise loc(e, s.test)
                if not c:
                    return
                yield None
        return self._gen_loop(s, scope, items, None)

    def g_With(self, s, scope):
        inner = self.gen_block(s.body, scope)
        for item in reversed(s.items):
            inner = self._gen_with_item(item, inner, scope)
        return inner

    def _gen_with_item(self, item, inner, scope):
        enter = self.with_enter(item, scope)
        leave = self.with_exit(item)

        def gen_with(fr):
            mgr, exit_ = enter(fr)
            try:
                r = yield from inner(fr)
            except BaseException as e:
                if not leave(mgr, exit_, e):
                    raise
                return None
            leave(mgr, exit_, None)
            return r
        return gen_with

    def g_Try(self, s, scope):
        body = self.gen_block(s.body, scope)
        match = self.handlers(s, scope, gen=True) if s.handlers else None
        orelse = self._part(s.orelse, scope)
        final = self._part(s.finalbody, scope)
        handling = self.rt.handling

        def gen_try(fr):
            try:
                try:
                    r = yield from body(fr)
                except Exception as err:
                    if match is None or not catchable(err):
                        raise
                    found = match(fr, err)
                    if found is None:
                        raise
                    hbody, st, unbind, seen = found
                    handling.append(err)
                    try:
                        if st is not None:
                            st(fr, seen)
                        r = yield from hbody(fr)
                    finally:
                        handling.pop()
                        if unbind is not None:
                            unbind(fr)
                else:
                    if orelse is not None:
                        r = yield from orelse(fr)
            finally:
                if final is not None:
                    f = yield from final(fr)
                    if f is not None:
                        return f    # noqa: B012 - as in Python
            return r
        return gen_try

    # ------------------------------------------------------------------ comprehensions
    def comprehension(self, e, scope, leaf):
        """``run(frame)`` -> a generator of ``leaf(comprehension frame)`` over the clauses."""
        in_class = scope is not None and scope.kind == _scopes.CLASS
        outer = scope.parent if in_class else scope
        names = []
        for g in e.generators:
            _scopes._target_names(g.target, names)
        qual = "<genexpr>" if outer is None else f"{outer.qualname}.<locals>.<genexpr>"
        cscope = Scope(outer, names, (), qual, kind=_scopes.COMPREHENSION)
        cscope.class_name = scope.class_name if scope is not None else None
        first = self.expr(e.generators[0].iter, scope)
        clauses = []
        for k, g in enumerate(e.generators):
            clauses.append((self.store(g.target, cscope), None if k == 0 else self.expr(g.iter, cscope),
                            tuple(self.expr(c, cscope) for c in g.ifs), g))
        value = leaf(cscope)
        nslots = len(cscope.slots)
        unbound = self.unbound_marker
        rt = self.rt
        ctr = rt.loop
        loc = self.loc
        last = len(clauses) - 1

        def produce(frame, it, level):
            store, _, conds, node = clauses[level]
            nxt = clauses[level + 1] if level < last else None
            for item in it:
                ctr[0] -= 1
                if ctr[0] < 0:
                    rt.checkpoint(node)
                store(frame, item)
                ok = True
                for c in conds:
                    v = c(frame)
                    try:
                        if not v:
                            ok = False
                            break
                    except Exception as ex:
                        raise loc(ex, node)
                if not ok:
                    continue
                if nxt is None:
                    yield value(frame)
                else:
                    src = nxt[1](frame)
                    try:
                        inner = iter(src)
                    except Exception as ex:
                        raise loc(ex, nxt[3].iter)
                    yield from produce(frame, inner, level + 1)

        def run(fr):
            src = first(fr)
            try:
                it = iter(src)
            except Exception as ex:
                raise loc(ex, e.generators[0].iter)
            frame = [fr[0] if in_class else fr, None]
            frame.extend((unbound,) * nslots)
            gen = produce(frame, it, 0)
            return gen
        return run, qual

    def e_ListComp(self, e, scope):
        run, _ = self.comprehension(e, scope, lambda cs: self.expr(e.elt, cs))
        return lambda fr: list(run(fr))

    def e_SetComp(self, e, scope):
        run, _ = self.comprehension(e, scope, lambda cs: self.expr(e.elt, cs))
        loc = self.loc

        def setcomp(fr):
            try:
                return set(run(fr))
            except Exception as ex:
                raise loc(ex, e)
        return setcomp

    def e_DictComp(self, e, scope):
        def leaf(cs):
            kf, vf = self.expr(e.key, cs), self.expr(e.value, cs)
            return lambda fr: (kf(fr), vf(fr))
        run, _ = self.comprehension(e, scope, leaf)
        loc = self.loc

        def dictcomp(fr):
            try:
                return dict(run(fr))
            except Exception as ex:
                raise loc(ex, e)
        return dictcomp

    def e_GeneratorExp(self, e, scope):
        run, qual = self.comprehension(e, scope, lambda cs: self.expr(e.elt, cs))

        def genexp(fr):
            gen = run(fr)
            gen.__name__, gen.__qualname__ = "<genexpr>", qual
            return gen
        return genexp

    # ------------------------------------------------------------------ :=, sets, starred displays
    def e_NamedExpr(self, e, scope):
        vf = self.expr(e.value, scope)
        st = self.store(e.target, scope)

        def named(fr):
            v = vf(fr)
            st(fr, v)
            return v
        return named

    def e_Yield(self, e, scope):
        raise self.loc(errors.SyntaxError("'yield' is supported in gradexpr as a statement or as the value "
                                          "of an assignment"), e)

    e_YieldFrom = e_Yield

    def items(self, elts, scope):
        """``fn(frame) -> list`` of display items, ``*x`` unpacked."""
        parts = tuple((type(x) is ast.Starred, self.expr(x.value if type(x) is ast.Starred else x, scope), x)
                      for x in elts)
        loc = self.loc

        def items(fr):
            out = []
            for star, f, node in parts:
                v = f(fr)
                if star:
                    try:
                        out.extend(bounded_star_args(v))
                    except Exception as ex:
                        if not hasattr(type(v), "__iter__") and not hasattr(type(v), "__getitem__"):
                            ex = errors.TypeError(f"Value after * must be an iterable, not {type(v).__name__}")
                        raise loc(ex, node)
                else:
                    out.append(v)
            return out
        return items

    def e_Set(self, e, scope):
        items = self.items(e.elts, scope)
        loc = self.loc

        def make_set(fr):
            try:
                return set(items(fr))
            except Exception as ex:
                raise loc(ex, e)
        return make_set

