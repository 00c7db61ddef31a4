"""Compiling generators, comprehensions and the displays that unpack (a mixin of the compiler).

Generators. A function whose body holds a ``yield`` is compiled in *generator mode*: each
statement that contains a ``yield`` becomes a Python generator function ``g(frame)`` that
yields the program's values and returns the statement's signal (None, BREAK, CONTINUE,
RETURN); the statements without one stay ordinary closures, called directly. So a
program's generator is a Python generator (``next``, ``for``, ``yield from`` and return
values work natively), and its ``gi_frame`` and the rest are out of reach by the attribute
policy.

A ``yield`` inside an expression (``y = 2 * (yield x)``, ``print((yield))``, ``if (yield) > 0:``)
is reached the way CPython's evaluation order reaches it: the operands written before it, and
the ``yield`` itself, are evaluated first into hidden locals of the function (``_$y0`` …, names a
program cannot write); what is left of the expression is then an ordinary one that reads them.
``and``/``or``, ``x if c else y`` and comparison chains keep their short circuits.

Comprehensions have their own scope (a frame like a function's); the first iterable is
evaluated outside it, as in Python; each step counts against the loop budget, as each
``yield`` does.
"""
from __future__ import annotations

import itertools

from gradexpr import errors

from .. import ast
from . import scopes as _scopes
from ..builtins import bounded_star_args
from .located import catchable
from .scopes import Scope

__all__ = ["GeneratorCompiler"]


def _holds_yield(node):
    for n in ast.walk(node):
        t = type(n)
        if t is ast.Yield or t is ast.YieldFrom:
            return True
    return False


# statements whose only expression that may hold a yield is ``value`` (evaluated before the target)
_VALUE_STATEMENTS = (ast.ExprStmt, ast.Assign, ast.AugAssign, ast.Return, ast.AnnAssign)
# comprehensions and lambdas are scopes of their own: a yield there is not this generator's
_UNSUPPORTED_YIELD = ("'yield' is supported in gradexpr in the value of an expression statement, an assignment, "
                      "a return and in the tests of if, while, for and with")
_OWN_SCOPE_YIELD = {ast.ListComp: "'yield' inside list comprehension", ast.SetComp: "'yield' inside set comprehension",
                    ast.DictComp: "'yield' inside dict comprehension",
                    ast.GeneratorExp: "'yield' inside generator expression",
                    ast.Lambda: "'yield' inside a lambda is not supported in gradexpr"}
_OWN_SCOPES = tuple(_OWN_SCOPE_YIELD)


def _operands(e):
    """The sub-expressions of ``e`` in CPython's order of evaluation, each as (container, key):
    ``container[key]`` (a list and an index, or a node and a field name)."""
    t = type(e)
    if t is ast.Call:
        out = [(e, "func")]
        out += [(a, "value") if type(a) is ast.Starred else (e.args, i) for i, a in enumerate(e.args)]
        out += [(k, "value") for k in e.keywords]
        return out
    if t is ast.Dict:
        out = []
        for i, (k, v) in enumerate(zip(e.keys, e.values)):
            if k is not None:
                out.append((e.keys, i))
            out.append((e.values, i))
        return out
    if t in (ast.Tuple, ast.List, ast.Set):
        return [(a, "value") if type(a) is ast.Starred else (e.elts, i) for i, a in enumerate(e.elts)]
    if t is ast.JoinedStr:
        return [(v, "value") for v in e.values if type(v) is ast.FormattedValue]
    fields = {ast.BinOp: ("left", "right"), ast.UnaryOp: ("operand",), ast.Attribute: ("value",),
              ast.Subscript: ("value", "slice"), ast.Slice: ("lower", "upper", "step"), ast.Starred: ("value",),
              ast.NamedExpr: ("value",), ast.FormattedValue: ("value",)}.get(t, ())
    return [(e, f) for f in fields if getattr(e, f) is not None]


def _get(container, key):
    return container[key] if type(container) is list else getattr(container, key)


def _put(container, key, value):
    if type(container) is list:
        container[key] = value
    else:
        setattr(container, key, value)


def _with_items(s, first):
    """The with statement ``s`` whose first item is ``first``."""
    import copy
    out = copy.copy(s)
    out.items = [first] + list(s.items[1:])
    return out


def _copy_tree_to(e):
    """A copy of ``e`` whose containers on the way to its operands are copies too (so operands can
    be replaced in it without touching the program's tree)."""
    import copy
    out = copy.copy(e)
    for field in e._fields:
        value = getattr(e, field)
        if type(value) is list:
            value = [copy.copy(v) if type(v) in (ast.Starred, ast.Keyword, ast.FormattedValue) else v for v in value]
            setattr(out, field, value)
    return out


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
        if method is not None:
            return method(s, scope)
        if t in _VALUE_STATEMENTS and not any(_holds_yield(x) for x in self._targets_of(s)):
            return self._gen_value_statement(s, scope)
        n = next(n for n in ast.walk(s) if type(n) in (ast.Yield, ast.YieldFrom))
        raise self.loc(errors.SyntaxError(_UNSUPPORTED_YIELD), n)

    @staticmethod
    def _targets_of(s):
        t = type(s)
        return s.targets if t is ast.Assign else [s.target] if t in (ast.AugAssign, ast.AnnAssign) else []

    def _gen_value_statement(self, s, scope):
        """``x = f((yield))``, ``return 2 * (yield)``, ``print((yield))``: the value first (it
        holds the yield), into a hidden local; then the statement reading it."""
        import copy
        value = self.gen_expr(s.value, scope)
        name, slot = self._hidden_local(scope)
        rest = copy.copy(s)
        rest.value = self._read(name, s.value)
        then = self.stmt(rest, scope)

        def gen_value_statement(fr):
            fr[slot] = yield from value(fr)
            return then(fr) if then is not None else None
        return gen_value_statement

    def _hidden_local(self, scope):
        """A new local of the generator (``_$y<n>``) -> (its name, its frame index)."""
        name = f"_$y{len(scope.slots)}"
        scope.slots[name] = 2 + len(scope.slots)
        return name, scope.slots[name]

    @staticmethod
    def _read(name, where):
        return ast.Name(name, where.line, where.col, where.end_line, where.end_col)

    def gen_expr(self, e, scope):
        """``g(frame)`` -> generator returning the value of ``e`` (which may hold a yield)."""
        t = type(e)
        if t is ast.Yield or t is ast.YieldFrom:
            return self.gen_yield(e, scope)
        if not _holds_yield(e):
            f = self.expr(e, scope)

            def plain(fr):
                return f(fr)
                yield       # (a generator: its value is f's)
            return plain
        if t in _OWN_SCOPES:
            n = next(n for n in ast.walk(e) if type(n) in (ast.Yield, ast.YieldFrom))
            raise self.loc(errors.SyntaxError(_OWN_SCOPE_YIELD[t]), n)
        if t is ast.BoolOp:
            return self._gen_boolop(e, scope)
        if t is ast.IfExp:
            return self._gen_ifexp(e, scope)
        if t is ast.Compare:
            return self._gen_compare(e, scope)
        # the operands up to the last one holding a yield are evaluated first, in order
        operands = _operands(e)
        last = max(i for i, (c, k) in enumerate(operands) if _holds_yield(_get(c, k)))
        copied = _copy_tree_to(e)
        steps = []
        for container, key in _operands(copied)[:last + 1]:
            operand = _get(container, key)
            name, slot = self._hidden_local(scope)
            steps.append((slot, self.gen_expr(operand, scope)))
            _put(container, key, self._read(name, operand))
        steps = tuple(steps)
        rest = self.expr(copied, scope)

        def gen_operands_first(fr):
            for slot, operand in steps:
                fr[slot] = yield from operand(fr)
            return rest(fr)
        return gen_operands_first

    def _gen_boolop(self, e, scope):
        parts = tuple(self.gen_expr(v, scope) for v in e.values)
        is_and = e.op == "and"

        def gen_boolop(fr):
            for part in parts:
                v = yield from part(fr)
                if (not v) if is_and else v:
                    return v
            return v
        return gen_boolop

    def _gen_ifexp(self, e, scope):
        test, body, orelse = (self.gen_expr(x, scope) for x in (e.test, e.body, e.orelse))

        def gen_ifexp(fr):
            if (yield from test(fr)):
                return (yield from body(fr))
            return (yield from orelse(fr))
        return gen_ifexp

    def _gen_compare(self, e, scope):
        """``a < (yield) < c``: each comparison of the chain as an ordinary one between two hidden
        locals; the chain stops at the first false one, as Python's."""
        operands = (e.left,) + tuple(e.comparators)
        names = [self._hidden_local(scope) for _ in operands]
        values = tuple(self.gen_expr(x, scope) for x in operands)
        tests = tuple(self.expr(ast.Compare(self._read(names[i][0], operands[i]), [op],
                                            [self._read(names[i + 1][0], operands[i + 1])],
                                            operands[i].line, operands[i].col, operands[i + 1].end_line,
                                            operands[i + 1].end_col), scope)
                      for i, op in enumerate(e.ops))
        slots = tuple(slot for _, slot in names)

        def gen_compare(fr):
            fr[slots[0]] = yield from values[0](fr)
            r = True
            for i, test in enumerate(tests):
                fr[slots[i + 1]] = yield from values[i + 1](fr)
                r = test(fr)
                if not r:
                    return r
            return r
        return gen_compare

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

    def _test_first(self, s, field, scope, compile_rest):
        """``s`` whose ``field`` (evaluated once, first) holds a yield: that expression into a
        hidden local, then ``s`` reading it."""
        import copy
        value = self.gen_expr(getattr(s, field), scope)
        name, slot = self._hidden_local(scope)
        rest = copy.copy(s)
        setattr(rest, field, self._read(name, getattr(s, field)))
        then = compile_rest(rest, scope)

        def gen_first(fr):
            fr[slot] = yield from value(fr)
            return (yield from then(fr))
        return gen_first

    def g_If(self, s, scope):
        if _holds_yield(s.test):
            return self._test_first(s, "test", scope, self.g_If)
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

    def _gen_loop(self, s, scope, items_of, store, test=None):
        """A for or while loop in generator mode: over ``items_of(frame)``, or, for a while whose test
        holds a yield, for as long as ``test`` (a generator-mode expression) is true."""
        body = self.gen_block(s.body, scope)
        orelse = self._part(s.orelse, scope)
        rt = self.rt
        ctr = rt.loop
        brk, cont = self.signals
        loc = self.loc
        forever = itertools.repeat(None)

        def gen_loop(fr):
            for item in (forever if items_of is None else items_of(fr)):
                if test is not None:
                    v = yield from test(fr)
                    try:
                        if not v:
                            break
                    except Exception as e:
                        raise loc(e, s.test)
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
        if _holds_yield(s.iter):
            return self._test_first(s, "iter", scope, self.g_For)
        if _holds_yield(s.target):
            raise self.loc(errors.SyntaxError("'yield' in the target of a for loop is not supported in gradexpr"),
                           s.target)
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
        if _holds_yield(s.test):       # (the test is part of the generator, evaluated before each pass)
            return self._gen_loop(s, scope, None, None, test=self.gen_expr(s.test, scope))
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
        if _holds_yield(s.items[0].context_expr):
            return self._test_first(s.items[0], "context_expr", scope,
                                    lambda item, sc: self.g_With(_with_items(s, item), sc))
        if any(_holds_yield(item) for item in s.items):
            raise self.loc(errors.SyntaxError("'yield' is supported in gradexpr in the first context manager of "
                                              "a with statement"), s)
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
        # (a generator's statements reach their yields through gen_stmt; here, one gradexpr cannot reach)
        raise self.loc(errors.SyntaxError(_UNSUPPORTED_YIELD), e)

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

