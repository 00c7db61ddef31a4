"""Compiling expressions (a mixin of the compiler): names, operators, calls, attributes,
subscripts, displays and f-strings, each into ``fn(frame) -> value``.
"""
from __future__ import annotations

from gradexpr import errors

from .. import ast
from .. import builtins as _b
from . import scopes as _scopes
from .located import _callee_error, _callee_name, _kind_error, _operand_error, located
from .policy import attribute_getter, attribute_hint as _attribute_hint
from .runtime import _BINOPS, _CALL_GUARDS, _CMPOPS, _GUARD_TYPES, _UNOPS, UNBOUND, _const


_NOT_CONSTANT = object()
_MAX_INT_BITS = 128             # CPython's ast_opt.c: no folding into ints wider than this
_MAX_STR_SIZE = 4096


def _folded(e, memo):
    """The constant CPython's compiler folds ``e`` into (a literal, or unary and binary operators on
    constants, within ast_opt's size limits and where the operation raises nothing), else _NOT_CONSTANT.
    ``memo`` (id(node) -> (node, result); the node kept, so its id is not reused) makes compiling a chain
    of n operators take n steps, not n²."""
    t = type(e)
    if t is ast.Constant:
        return e.value
    if t is not ast.UnaryOp and (t is not ast.BinOp or e.op == "@"):
        return _NOT_CONSTANT
    seen = memo.get(id(e))
    if seen is None or seen[0] is not e:
        seen = memo[id(e)] = (e, _fold(e, memo))
    return seen[1]


def _fold(e, memo):
    if type(e) is ast.UnaryOp:
        v = _folded(e.operand, memo)
        if v is _NOT_CONSTANT:
            return v
        try:
            return (not v) if e.op == "not" else _UNOPS[e.op](v)
        except Exception:       # noqa: BLE001 - left to run time, as CPython leaves it
            return _NOT_CONSTANT
    a = _folded(e.left, memo)
    b = _folded(e.right, memo) if a is not _NOT_CONSTANT else a
    if b is _NOT_CONSTANT or not _safe_to_fold(e.op, a, b):
        return _NOT_CONSTANT
    try:
        return _BINOPS[e.op](a, b)
    except Exception:       # noqa: BLE001
        return _NOT_CONSTANT


def _safe_to_fold(op, a, b):
    """ast_opt.c's safe_multiply / safe_power / safe_lshift / safe_mod: no huge ints or strings, no
    %-formatting."""
    ints = type(a) is int and type(b) is int
    if op == "*":
        if ints:
            return not a or not b or a.bit_length() + b.bit_length() <= _MAX_INT_BITS
        if isinstance(a, str) or isinstance(b, str):
            n, text = (b, a) if isinstance(a, str) else (a, b)
            return type(n) is int and (n <= 0 or len(text) <= _MAX_STR_SIZE // n)
        return True
    if op == "**":
        return not ints or b < 0 or not a or a.bit_length() * b <= _MAX_INT_BITS
    if op == "<<":
        return not ints or b < 0 or not a or (b <= _MAX_INT_BITS and a.bit_length() <= _MAX_INT_BITS - b)
    if op == "%":
        return not isinstance(a, str)
    return True


def _constant_key(v):
    """co_consts' key: equal values of one type are one constant (0.0 and -0.0 are two)."""
    return (type(v), repr(v)) if type(v) is float else (type(v), v)


class ExpressionCompiler:
    """Expressions: ``fn(frame) -> value``."""

    # ------------------------------------------------------------------ expressions
    def expr(self, e, scope):
        return getattr(self, "e_" + type(e).__name__)(e, scope)

    def e_Constant(self, e, scope):
        return _const(self.constant(e.value))

    def constant(self, v):
        """One object per constant value, as a code object's co_consts: ``(-8) is (-8)`` and ``(1000) is
        (1000)`` are True in CPython, which folds and shares them."""
        if type(v) not in (int, float, str):
            return v
        return self.constants.setdefault(_constant_key(v), v)

    def e_Name(self, e, scope):
        return self.load_name(e, scope)

    def load_name(self, e, scope):
        name = e.id
        if scope is not None and scope.kind == _scopes.CLASS:
            return self.load_in_class(e, scope)
        depth = 0
        s = scope
        while s is not None:
            if name in s.slots or name in s.globals:
                break
            s = s.parent
            depth += 1
        if s is None or name in s.globals:
            g = self.g
            name_error = self._name_error

            def load_global(fr):
                try:
                    return g[name]
                except KeyError:
                    raise name_error(name, scope, e) from None
            return load_global
        i = s.slots[name]
        loc = self.loc
        if depth == 0:
            if name in s.params:
                def load_param(fr):
                    return fr[i]
                return load_param

            def load_local(fr):
                v = fr[i]
                if v is UNBOUND:
                    raise loc(_kind_error("UnboundLocalError", f"cannot access local variable '{name}' "
                                                               f"where it is not associated with a value",
                                          NameError), e)
                return v
            return load_local

        def load_free(fr):
            f = fr
            for _ in range(depth):
                f = f[0]
            v = f[i]
            if v is UNBOUND:
                raise loc(errors.NameError(f"cannot access free variable '{name}' where it is not "
                                           f"associated with a value in enclosing scope"), e)
            return v
        if depth == 1:
            def load_free1(fr):
                v = fr[0][i]
                if v is UNBOUND:
                    return load_free(fr)
                return v
            return load_free1
        return load_free

    def e_JoinedStr(self, e, scope):
        parts = []
        for v in e.values:
            if type(v) is ast.Constant:
                parts.append((v.value, None, None, None))
            else:
                parts.append((None, self.expr(v.value, scope), v.conversion,
                              self.expr(v.format_spec, scope) if v.format_spec is not None else None, v))
        parts = tuple(parts)
        loc = self.loc
        from ..text_guards import _CONTAINERS as containers, check_render, safe_format, safe_repr, safe_str

        def fstring(fr):
            out = []
            for p in parts:
                if p[0] is not None:
                    out.append(p[0])
                    continue
                _, vf, conv, sf, node = p
                v = vf(fr)
                spec = sf(fr) if sf is not None else ""
                try:
                    if conv is not None:
                        if conv == "r" or conv == "s":
                            v = safe_repr(v) if conv == "r" else safe_str(v)
                        else:
                            if isinstance(v, containers):
                                check_render(v)
                            v = ascii(v)
                    out.append(safe_format(v, spec))
                except Exception as ex:
                    raise loc(ex, node)
            s = "".join(out)
            return s
        return fstring

    def e_FormattedValue(self, e, scope):       # pragma: no cover - only inside JoinedStr
        return self.e_JoinedStr(ast.JoinedStr([e], e.line, e.col, e.end_line, e.end_col), scope)

    def e_BinOp(self, e, scope):
        v = _folded(e, self.folds)
        if v is not _NOT_CONSTANT:
            return _const(self.constant(v))
        op = _BINOPS[e.op]
        lf = self.expr(e.left, scope)
        loc = self._xor_loc if e.op == "^" else self.loc
        symbol = e.op
        r = e.right
        if type(r) is ast.Constant:
            c = r.value

            def binop_const(fr):
                a = lf(fr)
                try:
                    return op(a, c)
                except Exception as ex:
                    raise loc(_operand_error(ex, symbol, a, c), e)
            return binop_const
        rf = self.expr(r, scope)

        def binop(fr):
            a = lf(fr)
            b = rf(fr)
            try:
                return op(a, b)
            except Exception as ex:
                raise loc(_operand_error(ex, symbol, a, b), e)
        return binop

    def e_UnaryOp(self, e, scope):
        v = _folded(e, self.folds)
        if v is not _NOT_CONSTANT:
            return _const(self.constant(v))
        vf = self.expr(e.operand, scope)
        loc = self.loc
        if e.op == "not":
            def not_(fr):
                v = vf(fr)
                try:
                    return not v
                except Exception as ex:
                    raise loc(ex, e)
            return not_
        op = _UNOPS[e.op]

        def unary(fr):
            v = vf(fr)
            try:
                return op(v)
            except Exception as ex:
                raise loc(ex, e)
        return unary

    def e_BoolOp(self, e, scope):
        fns = tuple(self.expr(v, scope) for v in e.values)
        loc = self.loc
        first, rest = fns[0], fns[1:]
        if e.op == "and":
            def and_(fr):
                v = first(fr)
                for f in rest:
                    try:
                        t = True if v else False
                    except Exception as ex:
                        raise loc(ex, e)
                    if not t:
                        return v
                    v = f(fr)
                return v
            return and_

        def or_(fr):
            v = first(fr)
            for f in rest:
                try:
                    t = True if v else False
                except Exception as ex:
                    raise loc(ex, e)
                if t:
                    return v
                v = f(fr)
            return v
        return or_

    def e_Compare(self, e, scope):
        lf = self.expr(e.left, scope)
        ops = [_CMPOPS[o] for o in e.ops]
        rfs = [self.expr(c, scope) for c in e.comparators]
        loc = self.loc
        if len(ops) == 1:
            op = ops[0]
            rf = rfs[0]
            symbol = e.ops[0]

            def compare(fr):
                a = lf(fr)
                b = rf(fr)
                try:
                    return op(a, b)
                except Exception as ex:
                    raise loc(_operand_error(ex, symbol, a, b), e)
            return compare
        pairs = tuple(zip(ops, rfs))
        last = len(pairs) - 1

        def compare_chain(fr):
            a = lf(fr)
            for k, (op, rf) in enumerate(pairs):
                b = rf(fr)
                try:
                    r = op(a, b)
                    if k == last:
                        return r
                    if not r:
                        return r
                except Exception as ex:
                    raise loc(_operand_error(ex, e.ops[k], a, b), e)
                a = b
            return r    # pragma: no cover
        return compare_chain

    def e_IfExp(self, e, scope):
        tf = self.expr(e.test, scope)
        bf = self.expr(e.body, scope)
        of = self.expr(e.orelse, scope)
        loc = self.loc
        test = e.test

        def ifexp(fr):
            v = tf(fr)
            try:
                c = True if v else False
            except Exception as ex:
                raise loc(ex, test)
            return bf(fr) if c else of(fr)
        return ifexp

    def e_Lambda(self, e, scope):
        return self.function(e, "<lambda>", e.args, e.body, scope, is_lambda=True)

    def e_Starred(self, e, scope):      # pragma: no cover - the parser allows it only in calls
        raise located(errors.SyntaxError("starred expressions are only supported as call arguments"),
                      self.filename, e.line, e.col)

    def e_Call(self, e, scope):
        if type(e.func) is ast.Name and e.func.id == "super" and not e.args and not e.keywords:
            return self.super_call(e, scope)
        ff = self.expr(e.func, scope)
        loc = self.loc
        guard_types = _GUARD_TYPES
        guards = _CALL_GUARDS
        fname = _callee_name(e.func)
        attribute_call = type(e.func) is ast.Attribute
        if not e.keywords and not any(type(a) is ast.Starred for a in e.args) and len(e.args) <= 3:
            afs = [self.expr(a, scope) for a in e.args]
            if not afs:
                def call0(fr):
                    f = ff(fr)
                    try:
                        if type(f) in guard_types:
                            f = guards.get(f, f)
                        return f()
                    except Exception as ex:
                        raise loc(_callee_error(ex, f, fname, (), attribute_call), e)
                return call0
            if len(afs) == 1:
                af = afs[0]

                def call1(fr):
                    f = ff(fr)
                    a = af(fr)
                    try:
                        if type(f) in guard_types:
                            f = guards.get(f, f)
                        return f(a)
                    except Exception as ex:
                        raise loc(_callee_error(ex, f, fname, (a,), attribute_call), e)
                return call1
            if len(afs) == 2:
                af, bf = afs

                def call2(fr):
                    f = ff(fr)
                    a = af(fr)
                    b = bf(fr)
                    try:
                        if type(f) in guard_types:
                            f = guards.get(f, f)
                        return f(a, b)
                    except Exception as ex:
                        raise loc(_callee_error(ex, f, fname, (a, b), attribute_call), e)
                return call2
            af, bf, cf = afs

            def call3(fr):
                f = ff(fr)
                a = af(fr)
                b = bf(fr)
                c = cf(fr)
                try:
                    if type(f) in guard_types:
                        f = guards.get(f, f)
                    return f(a, b, c)
                except Exception as ex:
                    raise loc(_callee_error(ex, f, fname, (a, b, c), attribute_call), e)
            return call3
        argspec = tuple((type(a) is ast.Starred, self.expr(a.value if type(a) is ast.Starred else a, scope), a)
                        for a in e.args)
        kwspec = tuple((k.arg, self.expr(k.value, scope), k) for k in e.keywords)
        bounded = _b.bounded_star_args

        def call(fr):
            f = ff(fr)
            args = []
            for star, af, node in argspec:
                v = af(fr)
                if star:
                    try:
                        args.extend(bounded(v))
                    except TypeError as ex:
                        if not hasattr(type(v), "__iter__") and not hasattr(type(v), "__getitem__"):
                            ex = errors.TypeError(f"{fname}() argument after * must be an iterable, "
                                                  f"not {type(v).__name__}")
                        raise loc(ex, node)
                    except Exception as ex:
                        raise loc(ex, node)
                else:
                    args.append(v)
            kw = {}
            for name, vf, node in kwspec:
                v = vf(fr)
                if name is None:
                    try:
                        keys = v.keys()
                    except Exception:
                        raise loc(errors.TypeError(f"{fname}() argument after ** must be a mapping, "
                                                   f"not {type(v).__name__}"), node) from None
                    for k in keys:
                        if type(k) is not str:
                            raise loc(errors.TypeError("keywords must be strings"), node)
                        if k in kw:
                            raise loc(errors.TypeError(f"{fname}() got multiple values for keyword "
                                                       f"argument '{k}'"), node)
                        kw[k] = v[k]
                else:
                    if name in kw:
                        raise loc(errors.TypeError(f"{fname}() got multiple values for keyword "
                                                   f"argument '{name}'"), node)
                    kw[name] = v
            try:
                if type(f) in guard_types:
                    f = guards.get(f, f)
                return f(*args, **kw)
            except Exception as ex:
                raise loc(_callee_error(ex, f, fname, args, attribute_call, kw), e)
        return call

    def e_Attribute(self, e, scope):
        vf = self.expr(e.value, scope)
        name = _scopes.mangle(scope, e.attr)
        loc = self.loc
        cache = {}

        def attribute(fr):
            obj = vf(fr)
            try:
                t = type(obj)
                get = cache.get(t)
                if get is None:
                    get = cache[t] = attribute_getter(t, name)
                return get(obj)
            except Exception as ex:
                err = loc(ex, e)
                if err.hint is None and isinstance(err, errors.AttributeError) and "has no attribute" in err.message:
                    err.hint = _attribute_hint(obj, name)
                raise err
        return attribute

    def index(self, s, scope):
        """The key of a subscript: slices become ``slice`` objects, tuples of them tuples."""
        t = type(s)
        if t is ast.Slice:
            parts = [self.expr(p, scope) if p is not None else None for p in (s.lower, s.upper, s.step)]
            consts = [p is None or type(p) is ast.Constant for p in (s.lower, s.upper, s.step)]
            if all(consts):
                key = slice(*[None if p is None else p.value for p in (s.lower, s.upper, s.step)])
                return _const(key)
            lo, hi, st = [p if p is not None else _const(None) for p in parts]

            def make_slice(fr):
                return slice(lo(fr), hi(fr), st(fr))
            return make_slice
        if t is ast.Tuple:
            fns = tuple(self.index(x, scope) for x in s.elts)
            if all(type(x) is ast.Constant for x in s.elts):
                return _const(tuple(x.value for x in s.elts))

            def make_tuple(fr):
                return tuple([f(fr) for f in fns])
            return make_tuple
        return self.expr(s, scope)

    def e_Subscript(self, e, scope):
        vf = self.expr(e.value, scope)
        kf = self.index(e.slice, scope)
        loc = self.loc

        def subscript(fr):
            obj = vf(fr)
            key = kf(fr)
            try:
                return obj[key]
            except Exception as ex:
                raise loc(ex, e)
        return subscript

    def e_Slice(self, e, scope):        # pragma: no cover - slices only appear in subscripts
        return self.index(e, scope)

    def e_Tuple(self, e, scope):
        if any(type(x) is ast.Starred for x in e.elts):
            items = self.items(e.elts, scope)
            return lambda fr: tuple(items(fr))
        if all(type(x) is ast.Constant for x in e.elts):
            return _const(tuple(x.value for x in e.elts))
        fns = tuple(self.expr(x, scope) for x in e.elts)
        if len(fns) == 2:
            a, b = fns
            return lambda fr: (a(fr), b(fr))

        def make_tuple(fr):
            return tuple([f(fr) for f in fns])
        return make_tuple

    def e_List(self, e, scope):
        if any(type(x) is ast.Starred for x in e.elts):
            return self.items(e.elts, scope)
        fns = tuple(self.expr(x, scope) for x in e.elts)

        def make_list(fr):
            return [f(fr) for f in fns]
        return make_list

    def e_Dict(self, e, scope):
        pairs = tuple((self.expr(k, scope) if k is not None else None, self.expr(v, scope))
                      for k, v in zip(e.keys, e.values))
        loc = self.loc

        def make_dict(fr):
            d = {}
            for kf, vf in pairs:
                if kf is None:      # {**mapping}
                    v = vf(fr)
                    try:
                        d.update(v.items() if hasattr(type(v), "keys") else v)
                    except Exception:
                        raise loc(errors.TypeError(f"'{type(v).__name__}' object is not a mapping"), e) from None
                    continue
                k = kf(fr)
                v = vf(fr)
                try:
                    d[k] = v
                except Exception as ex:
                    raise loc(ex, e)
            return d
        return make_dict
