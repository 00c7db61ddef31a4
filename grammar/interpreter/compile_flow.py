"""Compiling ``try``/``except``/``finally``, ``raise``, ``del``, ``global``/``nonlocal``,
annotated assignments and starred targets (a mixin of the compiler).

Exceptions. Everything that fails inside a program is a located ``GxError`` by the time a
``try`` sees it (``interpreter._convert``); an exception the program raised itself keeps
the object it raised as ``_gx_original``, which is what ``except T`` tests and ``as e``
binds. A resource limit (``LimitError``), ``KeyboardInterrupt`` and ``GeneratorExit`` are
never caught, not even by a bare ``except:``.
"""
from __future__ import annotations

from gradexpr import errors

from .. import ast
from . import scopes as _scopes
from ..builtins import bounded_star_args
from .classes import check_exception_types
from .located import catchable, original
from .policy import delete_attribute

__all__ = ["FlowCompiler"]


class FlowCompiler:
    """Statements about control flow and names beyond the core ones."""

    # ------------------------------------------------------------------ try
    def handlers(self, s, scope, gen=False):
        """``match(frame, err) -> (handler body, store, unbind, exception seen) | None`` for the
        except clauses (bodies in generator mode with ``gen``)."""
        compiled = []
        for h in s.handlers:
            tf = self.expr(h.type, scope) if h.type is not None else None
            st = self.store(ast.Name(h.name, h.line, h.col, h.end_line, h.end_col), scope) if h.name else None
            unbind = self.unbinder(h.name, scope, h) if h.name else None
            compiled.append((tf, st, unbind, self.gen_block(h.body, scope) if gen else self.block(h.body, scope), h))
        loc = self.loc

        def match(fr, err):
            seen = original(err)
            for tf, st, unbind, body, h in compiled:
                if tf is not None:
                    try:
                        types = check_exception_types(tf(fr))
                    except Exception as e:
                        raise loc(e, h.type)
                    if not isinstance(seen, types):
                        continue
                return body, st, unbind, seen
            return None
        return match

    def s_Try(self, s, scope):
        body = self.block(s.body, scope)
        match = self.handlers(s, scope) if s.handlers else None
        orelse = self.block(s.orelse, scope) if s.orelse else None
        final = self.block(s.finalbody, scope) if s.finalbody else None
        handling = self.rt.handling

        def try_except(fr):
            try:
                r = body(fr)
            except Exception as err:
                if not catchable(err):
                    raise
                found = match(fr, err)
                if found is None:
                    raise
                hbody, st, unbind, seen = found
                handling.append(err)
                try:
                    if st is not None:
                        st(fr, seen)
                    return hbody(fr)
                finally:
                    handling.pop()
                    if unbind is not None:
                        unbind(fr)
            if orelse is not None:
                return orelse(fr)
            return r
        if final is None:
            return try_except
        inner = try_except if match is not None else body

        def try_finally(fr):
            try:
                r = inner(fr)
            finally:
                f = final(fr)
                if f is not None:
                    return f        # noqa: B012 - a break/continue/return in 'finally' wins, as in Python
            return r
        return try_finally

    def unbinder(self, name, scope, node):
        """After ``except E as name:``, Python deletes ``name``."""
        where = _scopes.home(scope, name)
        if where[0] == "global":
            g = self.g
            return lambda fr: g.pop(name, None)
        if where[0] == "class":
            return lambda fr: fr[2].pop(name, None)
        _, depth, i = where
        unbound = self.unbound_marker

        def unbind(fr):
            for _ in range(depth):
                fr = fr[0]
            fr[i] = unbound
        return unbind

    # ------------------------------------------------------------------ raise
    def s_Raise(self, s, scope):
        ef = self.expr(s.exc, scope) if s.exc is not None else None
        cf = self.expr(s.cause, scope) if s.cause is not None else None
        loc = self.loc
        handling = self.rt.handling

        def raise_stmt(fr):
            if ef is None:
                if not handling:
                    raise loc(errors.RuntimeError("No active exception to reraise"), s)
                raise handling[-1]
            exc = ef(fr)
            if isinstance(exc, type) and issubclass(exc, BaseException):
                try:
                    exc = exc()
                except Exception as e:
                    raise loc(e, s.exc)
            if not isinstance(exc, BaseException):
                raise loc(errors.TypeError("exceptions must derive from BaseException"), s.exc)
            if cf is not None:
                cause = cf(fr)
                if isinstance(cause, type) and issubclass(cause, BaseException):
                    cause = cause()
                elif cause is not None and not isinstance(cause, BaseException):
                    raise loc(errors.TypeError("exception causes must derive from BaseException"), s.cause)
                exc.__cause__ = cause
            err = loc(exc, s)
            if err is not exc:
                err._gx_original = exc
            raise err
        return raise_stmt

    # ------------------------------------------------------------------ del, global, annotations
    def s_Delete(self, s, scope):
        fns = tuple(self.deleter(t, scope) for t in s.targets)

        def del_stmt(fr):
            for f in fns:
                f(fr)
        return del_stmt

    def deleter(self, t, scope):
        tt = type(t)
        loc = self.loc
        if tt is ast.Tuple or tt is ast.List:
            parts = tuple(self.deleter(x, scope) for x in t.elts)

            def del_each(fr):
                for f in parts:
                    f(fr)
            return del_each
        if tt is ast.Attribute:
            of = self.expr(t.value, scope)
            name = _scopes.mangle(scope, t.attr)

            def del_attr(fr):
                obj = of(fr)
                try:
                    delete_attribute(obj, name)
                except Exception as e:
                    raise loc(e, t)
            return del_attr
        if tt is ast.Subscript:
            of = self.expr(t.value, scope)
            kf = self.index(t.slice, scope)

            def del_item(fr):
                obj = of(fr)
                key = kf(fr)
                try:
                    del obj[key]
                except Exception as e:
                    raise loc(e, t)
            return del_item
        name = t.id
        where = _scopes.home(scope, name)
        if where[0] == "global":
            g = self.g

            def del_global(fr):
                if name not in g:
                    raise loc(errors.NameError(f"name '{name}' is not defined"), t)
                del g[name]
            return del_global
        if where[0] == "class":
            def del_class(fr):
                if name not in fr[2]:
                    raise loc(errors.NameError(f"name '{name}' is not defined"), t)
                del fr[2][name]
            return del_class
        _, depth, i = where
        unbound = self.unbound_marker

        def del_local(fr):
            for _ in range(depth):
                fr = fr[0]
            if fr[i] is unbound:
                raise loc(errors.NameError(f"cannot access local variable '{name}' where it is not "
                                           f"associated with a value"), t)
            fr[i] = unbound
        return del_local

    def s_Global(self, s, scope):
        return None

    s_Nonlocal = s_Global

    def s_AnnAssign(self, s, scope):
        if s.value is None:
            return None
        return self.s_Assign(ast.Assign([s.target], s.value, s.line, s.col, s.end_line, s.end_col), scope)

    # ------------------------------------------------------------------ starred targets
    def store_starred(self, t, scope):
        """``a, *b, c = value``."""
        k = next(i for i, e in enumerate(t.elts) if type(e) is ast.Starred)
        before = tuple(self.store(e, scope) for e in t.elts[:k])
        star = self.store(t.elts[k].value, scope)
        after = tuple(self.store(e, scope) for e in t.elts[k + 1:])
        need = len(before) + len(after)
        loc = self.loc

        def store_star(fr, v):
            try:
                items = list(bounded_star_args(v))
            except Exception as e:
                if not hasattr(type(v), "__iter__") and not hasattr(type(v), "__getitem__"):
                    e = errors.TypeError(f"cannot unpack non-iterable {type(v).__name__} object")
                raise loc(e, t)
            if len(items) < need:
                raise loc(errors.ValueError(f"not enough values to unpack (expected at least {need}, "
                                            f"got {len(items)})"), t)
            for st, x in zip(before, items):
                st(fr, x)
            star(fr, items[len(before):len(items) - len(after)])
            for st, x in zip(after, items[len(items) - len(after):]):
                st(fr, x)
        return store_star
