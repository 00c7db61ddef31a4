"""Run gradexpr programs: Python's meaning, by calling Python's own operators on the values.

``Interpreter(globals, filename=..., out=..., limits=...)`` then ``.run(module)`` or
``.eval(expr)``. The AST is first compiled into Python closures (one per node, each
``fn(frame) -> value``), so a loop runs closures rather than re-dispatching on node types.

Names. Top-level names live in ``globals`` (the dict passed in, used as is). A ``def`` or
``lambda`` gets a frame, a list ``[enclosing frame, return value, slot, slot, ...]``: names
assigned in a function are its locals (slots); other names are read from the enclosing
functions' frames, then ``globals``; there is no ``global``/``nonlocal``. User functions
are plain Python callables, so engine code can call them (``jacobian(f, x)``).

Safety. Attribute reads go through a policy (``attribute_getter``): no name starting with
``_``; any public attribute of objects whose class has ``_gx_exposed = True``; a whitelist
of methods on builtin types; nothing else. Attribute writes need ``_gx_exposed`` and the
name in the class's ``_gx_settable``. Builtins that could exhaust memory are guarded where
they are called (``builtins.CALL_GUARDS``), as are ``*``, ``+``, ``**``, ``<<``, ``%`` on
sequences and integers. Loops, calls and wall time are counted against ``Limits``.

Errors. Any exception from evaluating a node becomes a located ``gradexpr.errors.GxError``
(Python's own exceptions are converted by ``located``, keeping Python's type name and
message), located at the innermost node that failed. KeyboardInterrupt passes through.
"""
from __future__ import annotations

import builtins as _py
import gc
import itertools
import operator
import re
import sys
import time

import numpy as _np

from gradexpr import errors
from gradexpr import limits as _limits

from . import ast
from . import builtins as _b
from . import scopes as _scopes
from .scopes import Scope as _Scope
from .compile_defs import DefinitionCompiler, mentions_super
from .compile_flow import FlowCompiler
from .compile_generators import GeneratorCompiler
from .policy import SAFE_ATTRIBUTES, attribute_getter, attribute_hint as _attribute_hint, \
    set_attribute as _set_attribute

__all__ = ["Interpreter", "located", "attribute_getter", "SAFE_ATTRIBUTES"]


class _Signal:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


BREAK = _Signal("BREAK")
CONTINUE = _Signal("CONTINUE")
RETURN = _Signal("RETURN")      # the value is in frame[1]


class _Unbound:
    __slots__ = ()

    def __repr__(self):
        return "<unbound>"


UNBOUND = _Unbound()
_NO_DEFAULT = _Unbound()

_FunctionType = type(lambda: None)
_GUARD_TYPES = _b.GUARDED_CALLABLE_TYPES
_CALL_GUARDS = _b.CALL_GUARDS


# ============================================================================ errors

_ERROR_CLASSES = {
    "RuntimeError": errors.RuntimeError, "TypeError": errors.TypeError, "ValueError": errors.ValueError,
    "IndexError": errors.IndexError, "KeyError": errors.KeyError, "NameError": errors.NameError,
    "AttributeError": errors.AttributeError, "AssertionError": errors.AssertionError,
    "NotImplementedError": errors.NotImplementedError, "ZeroDivisionError": errors.ZeroDivisionError,
    "RecursionError": errors.RecursionError,
}
_dynamic_classes: dict = {}


def _error_class(exc_type):
    cls = _ERROR_CLASSES.get(exc_type.__name__) if exc_type.__module__ == "builtins" else None
    if cls is not None:
        return cls
    cls = _dynamic_classes.get(exc_type)
    if cls is None:
        name = exc_type.__name__
        cls = None
        if exc_type.__module__ == "builtins":
            try:
                cls = type(f"Gx{name}", (errors.GxError, exc_type), {"kind": name, "__module__": __name__})
                cls("probe")
            except Exception:
                cls = None
        if cls is None:
            kind = f"__main__.{exc_type.__qualname__}" if exc_type.__module__ == "__main__" else name
            cls = type(f"Gx{name}", (errors.GxError,), {"kind": kind, "__module__": __name__})
        _dynamic_classes[exc_type] = cls
    return cls


def _convert(exc: BaseException) -> errors.GxError:
    """A GxError standing for Python exception ``exc`` (same type name and message)."""
    if isinstance(exc, errors.GxError):
        return exc
    if isinstance(exc, RecursionError):
        new = errors.RecursionError("maximum recursion depth exceeded")
    else:
        msg = str(exc)
        if msg.startswith("'Size' object"):     # Python names the class; PyTorch's is torch.Size
            msg = "'torch.Size'" + msg[6:]
        new = _error_class(type(exc))(msg)
        new._gx_original = exc      # what the program sees when it catches it
    new.__cause__ = exc
    return new


def located(exc: BaseException, filename: str, line: int, col: int, end_col: int | None = None) -> errors.GxError:
    """``exc`` as a ``GxError`` located at ``filename:line:col`` (unless it already has a
    location). Python's own exceptions become a GxError with their type name as ``kind``
    and their message (for KeyError, the repr of the key), chained with ``__cause__``."""
    err = _convert(exc)
    if err.line is None:
        err.at(filename, line, col, end_col)
    return err


def _loc(exc, filename, node):
    err = _convert(exc)
    if err.line is None:
        err.at(filename, node.line, node.col, node.end_col if node.end_line == node.line else None)
    return err


def _kind_error(kind: str, message: str, base=Exception) -> errors.GxError:
    return _error_class(getattr(_py, kind, None) or type(kind, (base,), {}))(message)


# ============================================================================ operators

_BINOPS = {
    "+": _b.guarded_add, "-": operator.sub, "*": _b.guarded_mul, "/": operator.truediv,
    "//": operator.floordiv, "%": _b.guarded_mod, "@": operator.matmul, "**": _b.guarded_pow,
    "<<": _b.guarded_lshift, ">>": operator.rshift, "&": operator.and_, "|": operator.or_,
    "^": operator.xor,
}
_IOPS = {
    "+": _b.guarded_iadd, "-": operator.isub, "*": _b.guarded_imul, "/": operator.itruediv,
    "//": operator.ifloordiv, "%": _b.guarded_imod, "@": operator.imatmul, "**": _b.guarded_ipow,
    "<<": _b.guarded_ilshift, ">>": operator.irshift, "&": operator.iand, "|": operator.ior,
    "^": operator.ixor,
}


_CMPOPS = {
    "<": operator.lt, ">": operator.gt, "==": operator.eq, "!=": operator.ne, "<=": operator.le,
    ">=": operator.ge, "is": operator.is_, "is not": operator.is_not,
    "in": lambda a, b: a in b, "not in": lambda a, b: a not in b,
}
_UNOPS = {"-": operator.neg, "+": operator.pos, "~": operator.invert}


def _unpack(value, n):
    """Python's iterable unpacking into exactly ``n`` targets, with Python's messages."""
    t = type(value)
    if t is tuple or t is list:
        k = len(value)
        if k == n:
            return value
        if k < n:
            raise errors.ValueError(f"not enough values to unpack (expected {n}, got {k})")
        raise errors.ValueError(f"too many values to unpack (expected {n})")
    try:
        it = iter(value)
    except TypeError:
        if not hasattr(t, "__iter__") and not hasattr(t, "__getitem__"):
            raise errors.TypeError(f"cannot unpack non-iterable {t.__name__} object") from None
        raise
    items = list(itertools.islice(it, n + 1))
    if len(items) < n:
        raise errors.ValueError(f"not enough values to unpack (expected {n}, got {len(items)})")
    if len(items) > n:
        raise errors.ValueError(f"too many values to unpack (expected {n})")
    return items


def _name_list(names):
    q = [f"'{n}'" for n in names]
    if len(q) == 1:
        return q[0]
    if len(q) == 2:
        return f"{q[0]} and {q[1]}"
    return ", ".join(q[:-1]) + ", and " + q[-1]


# ============================================================================ runtime

class _Runtime:
    """Counters shared by the compiled code of one Interpreter: loop iterations (counted
    down in windows of at most 1024 between checkpoints), call depth, wall time."""

    __slots__ = ("interp", "out", "loop", "calls", "depth", "max_depth", "max_iters", "used",
                 "window", "deadline", "max_seconds", "active", "handling")

    def __init__(self, interp):
        self.interp = interp
        self.out = None
        self.loop = [1023]
        self.calls = [1023]
        self.depth = 0
        self.max_depth = 0
        self.max_iters = 0
        self.used = 0
        self.window = 1023
        self.deadline = None
        self.max_seconds = 0
        self.active = 0
        self.handling = []      # the exceptions being handled (innermost last), for a bare 'raise'

    def start(self, lim, out):
        self.out = out
        self.max_depth = lim.max_recursion
        self.max_iters = lim.max_loop_iterations
        self.max_seconds = lim.max_seconds
        self.used = 0
        self.deadline = time.monotonic() + lim.max_seconds if lim.max_seconds else None
        self._window()

    def _window(self):
        w = 1023
        if self.max_iters:
            w = min(w, self.max_iters - self.used)
        self.window = w
        self.loop[0] = w

    def checkpoint(self, node=None):
        """The current window of loop iterations is used up (one more began)."""
        self.used += self.window + 1
        if self.max_iters and self.used > self.max_iters:
            self.used = self.max_iters + 1
            self.loop[0] = 1023
            raise self._locate(_limits.exceeded("the number of loop iterations", self.max_iters,
                                                "max_loop_iterations"), node)
        self.check_time(node)
        self._window()

    def charge(self, n):
        """Count ``n`` iterations done by a builtin (``sum(range(n))``...)."""
        self.used += self.window - self.loop[0] + n
        self.loop[0] = self.window
        if self.max_iters and self.used > self.max_iters:
            raise _limits.exceeded("the number of loop iterations", self.max_iters, "max_loop_iterations")
        self.check_time()
        self._window()

    def call_checkpoint(self):
        self.calls[0] = 1023
        self.check_time()

    def check_time(self, node=None):
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise self._locate(_limits.exceeded("the running time (seconds)", self.max_seconds,
                                                "max_seconds"), node)

    def _locate(self, err, node):
        if node is not None:
            return _loc(err, self.interp.filename, node)
        return err


# ============================================================================ the interpreter

class Interpreter:
    """Runs parsed gradexpr code against ``globals``.

    ``globals`` is used as is (not copied): after ``run`` it holds the program's top-level
    names. Names are looked up there only (no separate builtins), so pass
    ``{**torch_names, **BUILTINS}``: the prelude's ``from builtins import ...`` means the
    Python builtins win over same-named torch functions (``max``, ``sum``, ``abs``...).
    ``out`` receives ``print`` output (default: ``sys.stdout`` at the time of printing).
    ``limits`` defaults to ``gradexpr.limits.current()`` and is made current while the
    program runs, so engine code sees the same limits.

    While a program runs, the objects alive before it (its tree and compiled closures, the
    engine's modules) are frozen out of garbage collection (``gc.freeze``), and unfrozen
    afterwards: full collections otherwise rescan them and big programs run tens of times
    slower.
    """

    def __init__(self, globals: dict, *, filename: str = "<string>", out=None, limits=None):
        self.globals = globals
        self.filename = filename
        self.out = out
        self.limits = limits if limits is not None else _limits.current()
        self.last_value = None
        self.last_node = None
        self._rt = _Runtime(self)
        self._initial = dict(globals)

    # ------------------------------------------------------------------ API
    def run(self, module: ast.Module) -> None:
        """Execute the statements of ``module``.

        ``last_value`` becomes the value of the last expression statement executed at top
        level -- in the module's own statements or in top-level ``if``/``for``/``while``/
        ``with`` blocks, not inside functions -- and ``last_node`` its expression node.
        Bare string statements (docstrings, '''...''' output blocks) do not count; a
        ``print(...)`` does (its value is None). Both are None if there was none."""
        self.last_value = None
        self.last_node = None
        self._execute(lambda c: c.module(module), module)

    def eval(self, expr: ast.Expr):
        """Evaluate one expression in ``globals`` and return its value."""
        def how(c):
            fn = c.expr(expr, None)
            return lambda: fn(None)
        return self._execute(how, expr)

    def call(self, fn, *args, **kwargs):
        """Call ``fn`` (e.g. a user function) with this interpreter's limits and output active."""
        return self._execute(None, None, thunk=lambda: fn(*args, **kwargs))

    # ------------------------------------------------------------------ internals
    def _compile(self, how, node):
        """Compile with ``how(compiler)``, converting a too-deep tree into a clean error."""
        try:
            return how(_Compiler(self))
        except RecursionError:
            lim = self.limits.max_depth
            err = (_limits.exceeded("nesting depth", lim, "max_depth") if lim
                   else errors.RecursionError("maximum recursion depth exceeded"))
            raise located(err, self.filename, node.line, node.col) from None

    def _execute(self, how, node, thunk=None):
        """Compile with ``how(compiler) -> callable`` (or take ``thunk``) and call the result
        with the limits, the output and the runtime counters active."""
        rt = self._rt
        lim = self.limits
        if rt.active:       # re-entered (engine code calling back): already set up
            return (self._compile(how, node) if thunk is None else thunk)()
        old = sys.getrecursionlimit()
        need = 4000 + 60 * lim.max_depth + 40 * lim.max_recursion if lim.max_depth and lim.max_recursion \
            else 100000
        if old < need:
            sys.setrecursionlimit(need)
        gc_was_enabled = gc.isenabled()
        frozen = False
        try:
            if thunk is None:
                # Compiling makes many small objects and no cycles: no collections meanwhile.
                # Then everything alive (the program's tree and closures, the engine's
                # modules) is set aside from collection while the program runs; otherwise
                # each full collection rescans it: tens of times slower on big programs.
                gc.disable()
                code = self._compile(how, node)
                if gc.get_freeze_count() == 0:
                    gc.freeze()
                    frozen = True
                if gc_was_enabled:
                    gc.enable()
            else:
                code = thunk
            token = _limits.activate(lim)
            rtok = _b.current_runtime.set(rt)
            rt.start(lim, self.out)
            rt.active += 1
            try:
                return code()
            finally:
                rt.active -= 1
                rt.deadline = None
                rt.depth = 0
                _b.current_runtime.reset(rtok)
                _limits.deactivate(token)
        finally:
            if frozen:
                gc.unfreeze()
            if gc_was_enabled and not gc.isenabled():
                gc.enable()
            if old < need:
                sys.setrecursionlimit(old)


# ============================================================================ scopes

def _const(v):
    def const(fr):
        return v
    return const


def _noop(fr):
    return None


# ============================================================================ the compiler

class _Compiler(DefinitionCompiler, FlowCompiler, GeneratorCompiler):
    """Turns AST nodes into closures. Expressions: ``fn(frame) -> value``. Statements:
    ``fn(frame) -> None | BREAK | CONTINUE | RETURN``. ``frame`` is None at top level."""

    unbound_marker = UNBOUND
    signals = (BREAK, CONTINUE)

    def __init__(self, interp: Interpreter):
        self.interp = interp
        self.g = interp.globals
        self.rt = interp._rt
        self.filename = interp.filename

    # ------------------------------------------------------------------ helpers
    def loc(self, exc, node):
        return _loc(exc, self.filename, node)

    def _name_error(self, name, scope, node):
        cands = set(self.g)
        s = scope
        while s is not None:
            cands.update(s.slots)
            s = s.parent
        cands = [c for c in cands if not c.startswith("_")]
        import difflib
        m = difflib.get_close_matches(name, cands, n=1, cutoff=0.7)
        err = errors.NameError(f"name '{name}' is not defined",
                               hint=f"did you mean '{m[0]}'?" if m else None)
        return self.loc(err, node)

    def _xor_loc(self, exc, node):
        """``loc`` for a failed ``a ^ b``: the hint that ``^`` is not a power."""
        err = _loc(exc, self.filename, node)
        if err.hint is None and isinstance(err, (errors.NotImplementedError, errors.TypeError)):
            err.hint = "'^' is bitwise xor, as in Python; to raise to a power, use '**'"
        return err

    # ------------------------------------------------------------------ module
    def module(self, mod):
        fns = []
        nodes = []
        for s in mod.body:
            if type(s) is ast.ExprStmt:
                v = s.value
                if type(v) is ast.Constant and type(v.value) is str:
                    continue            # a docstring-like string: a no-op
                f = self._top_expr(s)
            else:
                f = self.stmt(s, None)
            if f is not None:
                fns.append(f)
                nodes.append(s)
        rt = self.rt
        pairs = tuple(zip(fns, nodes))

        def run_module():
            for f, node in pairs:
                f(None)
                if rt.deadline is not None:
                    rt.check_time(node)
        return run_module

    def _top_expr(self, s):
        ef = self.expr(s.value, None)
        interp = self.interp
        node = s.value

        def top_expr(fr):
            v = ef(fr)
            interp.last_node = node
            interp.last_value = v
        return top_expr

    # ------------------------------------------------------------------ statements
    def block(self, stmts, scope):
        fns = []
        for s in stmts:
            if type(s) is ast.ExprStmt and type(s.value) is ast.Constant and type(s.value.value) is str:
                continue
            if type(s) is ast.Pass:
                continue
            f = self._top_expr(s) if (scope is None and type(s) is ast.ExprStmt) else self.stmt(s, scope)
            if f is not None:
                fns.append(f)
        if not fns:
            return _noop
        if len(fns) == 1:
            return fns[0]
        if len(fns) == 2:
            a, b = fns

            def block2(fr):
                r = a(fr)
                if r is not None:
                    return r
                return b(fr)
            return block2
        fns = tuple(fns)

        def block_n(fr):
            for f in fns:
                r = f(fr)
                if r is not None:
                    return r
            return None
        return block_n

    def stmt(self, s, scope):
        return getattr(self, "s_" + type(s).__name__)(s, scope)

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
            name = t.attr
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

    def _with_item(self, item, inner, scope):
        enter = self.with_enter(item, scope)
        loc = self.loc
        node = item.context_expr

        def with_stmt(fr):
            mgr, exit_ = enter(fr)
            try:
                r = inner(fr)
            except BaseException as e:
                try:
                    suppress = exit_(mgr, type(e), e, None)
                except Exception as e2:
                    raise loc(e2, node)
                if not suppress:
                    raise
                return None
            try:
                exit_(mgr, None, None, None)
            except Exception as e:
                raise loc(e, node)
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
                try:
                    text = _b.safe_str(m)
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
                if mod is interp._initial.get("torch"):
                    for k, v in interp._initial.items():
                        if k not in _b.NAMES and not k.startswith("_"):
                            g[k] = v
                else:
                    from .modules import star_names
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

    # ------------------------------------------------------------------ functions
    def function(self, node, name, args, body, scope, is_lambda):
        """Compile a def/lambda; returns ``make(frame) -> function`` (run at definition)."""
        params = [p.name for p in args.params]
        kwonly = [p.name for p in args.kwonly]
        names = list(params)
        if args.vararg:
            names.append(args.vararg)
        names += kwonly
        if args.kwarg:
            names.append(args.kwarg)
        in_class = scope is not None and scope.kind == _scopes.CLASS
        qual = name if scope is None else f"{scope.qualname}.{name}" if in_class else \
            f"{scope.qualname}.<locals>.{name}"
        if is_lambda:
            walrus = []
            _scopes._walrus_names(body, walrus)
            bound, glob, nonloc = walrus, (), ()
        else:
            bound, glob, nonloc = _scopes.bound_names(body)
        uses_super = in_class and not is_lambda and mentions_super(body)
        fscope = _Scope(scope.parent if in_class else scope, names + bound + (["__class__"] if uses_super else []),
                        names, qual, globals=glob, nonlocals=nonloc)
        class_slot = fscope.slots["__class__"] if uses_super else None
        if in_class:
            fscope.class_cell = scope.class_cell
        elif scope is not None:
            fscope.class_cell = scope.class_cell
        generator = not is_lambda and _scopes.has_yield(body)
        if is_lambda:
            body_fn = self.expr(body, fscope)
        elif generator:
            fscope.generator = True
            body_fn = self.generator_body(body, fscope)
        else:
            body_fn = self.block(body, fscope)
        nslots = len(fscope.slots)
        npos = len(params)
        vararg_slot = fscope.slots[args.vararg] if args.vararg else None
        kwarg_slot = fscope.slots[args.kwarg] if args.kwarg else None
        kw_index = {n: fscope.slots[n] for n in params + kwonly}
        kwonly_slots = [(n, fscope.slots[n]) for n in kwonly]
        default_fns = [self.expr(p.default, scope) if p.default is not None else None for p in args.params]
        kwdefault_fns = [self.expr(p.default, scope) if p.default is not None else None for p in args.kwonly]
        simple = not args.vararg and not args.kwarg and not kwonly and all(d is None for d in default_fns) \
            and class_slot is None
        n_required = sum(1 for d in default_fns if d is None)
        tail = (UNBOUND,) * (nslots - npos)
        rt = self.rt
        calls = rt.calls
        display = "<lambda>" if is_lambda else name

        def recursion_error():
            lim = rt.max_depth
            return errors.RecursionError(
                "maximum recursion depth exceeded",
                hint=f"gradexpr allows {lim} nested calls (raise it with --max-recursion or "
                     f"GRADEXPR_MAX_RECURSION)")

        def make(fr):
            defaults = []
            for i, df in enumerate(default_fns):
                defaults.append(df(fr) if df is not None else _NO_DEFAULT)
            kwdefaults = [df(fr) if df is not None else _NO_DEFAULT for df in kwdefault_fns]
            parent = fr[0] if in_class else fr
            cell = fr[1] if in_class else None

            def bind(args, kw):
                frame = [parent, None]
                frame.extend((UNBOUND,) * nslots)
                if class_slot is not None:
                    frame[class_slot] = cell
                n = len(args)
                if n > npos:
                    if vararg_slot is None:
                        if n_required == npos:
                            takes = f"{npos} positional argument{'s' if npos != 1 else ''}"
                        else:
                            takes = f"from {n_required} to {npos} positional arguments"
                        raise errors.TypeError(f"{qual}() takes {takes} but {n} "
                                               f"{'was' if n == 1 else 'were'} given")
                    frame[vararg_slot] = tuple(args[npos:])
                    n = npos
                elif vararg_slot is not None:
                    frame[vararg_slot] = ()
                frame[2:2 + n] = args[:n]
                if kwarg_slot is not None:
                    extra = {}
                    frame[kwarg_slot] = extra
                for k, v in kw.items():
                    i = kw_index.get(k)
                    if i is None:
                        if kwarg_slot is None:
                            raise errors.TypeError(f"{qual}() got an unexpected keyword argument '{k}'")
                        extra[k] = v
                    elif frame[i] is not UNBOUND:
                        raise errors.TypeError(f"{qual}() got multiple values for argument '{k}'")
                    else:
                        frame[i] = v
                missing = []
                for j in range(npos):
                    if frame[2 + j] is UNBOUND:
                        d = defaults[j]
                        if d is _NO_DEFAULT:
                            missing.append(params[j])
                        else:
                            frame[2 + j] = d
                if missing:
                    raise errors.TypeError(f"{qual}() missing {len(missing)} required positional "
                                           f"argument{'s' if len(missing) != 1 else ''}: {_name_list(missing)}")
                for j, (kname, slot) in enumerate(kwonly_slots):
                    if frame[slot] is UNBOUND:
                        d = kwdefaults[j]
                        if d is _NO_DEFAULT:
                            missing.append(kname)
                        else:
                            frame[slot] = d
                if missing:
                    raise errors.TypeError(f"{qual}() missing {len(missing)} required keyword-only "
                                           f"argument{'s' if len(missing) != 1 else ''}: {_name_list(missing)}")
                return frame

            if generator:
                def run(frame):
                    r = yield from body_fn(frame)
                    return frame[1] if r is RETURN else None

                def fn(*args, **kw):
                    if kw or len(args) != npos or not simple:
                        frame = bind(args, kw)
                    else:
                        frame = [parent, None, *args, *tail]
                    gen = run(frame)
                    gen.__name__, gen.__qualname__ = display, qual
                    return gen
            elif is_lambda:
                def fn(*args, **kw):
                    if kw or len(args) != npos or not simple:
                        frame = bind(args, kw)
                    else:
                        frame = [parent, None, *args, *tail]
                    depth = rt.depth
                    if depth >= rt.max_depth and rt.max_depth:
                        raise recursion_error()
                    rt.depth = depth + 1
                    calls[0] -= 1
                    if calls[0] < 0:
                        rt.call_checkpoint()
                    try:
                        return body_fn(frame)
                    finally:
                        rt.depth = depth
            else:
                def fn(*args, **kw):
                    if kw or len(args) != npos or not simple:
                        frame = bind(args, kw)
                    else:
                        frame = [parent, None, *args, *tail]
                    depth = rt.depth
                    if depth >= rt.max_depth and rt.max_depth:
                        raise recursion_error()
                    rt.depth = depth + 1
                    calls[0] -= 1
                    if calls[0] < 0:
                        rt.call_checkpoint()
                    try:
                        r = body_fn(frame)
                    finally:
                        rt.depth = depth
                    if r is RETURN:
                        return frame[1]
                    return None
            fn.__name__ = display
            fn.__qualname__ = qual if not is_lambda else (
                "<lambda>" if scope is None else f"{scope.qualname}.<locals>.<lambda>")
            return fn
        return make

    # ------------------------------------------------------------------ targets
    def store(self, t, scope):
        """``fn(frame, value)`` assigning ``value`` to target ``t``."""
        tt = type(t)
        loc = self.loc
        if tt is ast.Name:
            name = t.id
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
            name = t.attr

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

    # ------------------------------------------------------------------ expressions
    def expr(self, e, scope):
        return getattr(self, "e_" + type(e).__name__)(e, scope)

    def e_Constant(self, e, scope):
        return _const(e.value)

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
        safe_format = _b.safe_format
        check_render = _b.check_render
        containers = _b._CONTAINERS

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
                        if isinstance(v, containers):
                            check_render(v)
                        v = repr(v) if conv == "r" else str(v) if conv == "s" else ascii(v)
                    out.append(safe_format(v, spec))
                except Exception as ex:
                    raise loc(ex, node)
            s = "".join(out)
            return s
        return fstring

    def e_FormattedValue(self, e, scope):       # pragma: no cover - only inside JoinedStr
        return self.e_JoinedStr(ast.JoinedStr([e], e.line, e.col, e.end_line, e.end_col), scope)

    def e_BinOp(self, e, scope):
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
        if e.op == "-" and type(e.operand) is ast.Constant and type(e.operand.value) in (int, float):
            return _const(-e.operand.value)
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
                        raise loc(_callee_error(ex, f, fname, ()), e)
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
                        raise loc(_callee_error(ex, f, fname, (a,)), e)
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
                        raise loc(_callee_error(ex, f, fname, (a, b)), e)
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
                    raise loc(_callee_error(ex, f, fname, (a, b, c)), e)
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
                raise loc(_callee_error(ex, f, fname, args), e)
        return call

    def e_Attribute(self, e, scope):
        vf = self.expr(e.value, scope)
        name = e.attr
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


_OPERAND_NAMES = {"**": "** or pow()"}


def _operand_error(exc, symbol, a, b):
    """``tensor + [1, 2]``: Python's words, as PyTorch's operators give them ("unsupported operand
    type(s) for +: 'Tensor' and 'list'"), not the engine's complaint about an argument."""
    if isinstance(exc, TypeError) and str(exc).startswith("expected Tensor as element"):
        if symbol in _CMPOPS:
            new = errors.TypeError(f"'{symbol}' not supported between instances of '{type(a).__name__}' and "
                                   f"'{type(b).__name__}'")
        else:
            new = errors.TypeError(f"unsupported operand type(s) for {_OPERAND_NAMES.get(symbol, symbol)}: "
                                   f"'{type(a).__name__}' and '{type(b).__name__}'")
        new.__cause__ = exc
        return new
    return exc


def _callee_error(exc, f, name, args):
    """An error about the arguments of an engine function, in PyTorch's words and naming the
    function as the program wrote it: a TypeError about its signature (``zeros() got an
    unexpected keyword argument 'x'``, ``Tensor.float() takes ...``, not
    ``_factory.<locals>.make()``), and a number where a tensor was needed (``rand_like():
    argument 'input' (position 1) must be Tensor, not float``, not ``'float' object has no
    attribute '_data'``)."""
    kind = type(exc)
    if kind is not AttributeError and not isinstance(exc, TypeError):
        return exc
    module = getattr(f, "__module__", None) or ""
    if not module.startswith("gradexpr.") or module.startswith("gradexpr.grammar"):
        return exc
    qualname = getattr(f, "__qualname__", None) or name
    owner = getattr(f, "__self__", None)
    public = f"{type(owner).__name__}.{name}" if owner is not None and not isinstance(owner, type) else name
    message = str(exc)
    not_tensor = re.match(r"'(\w+)' object has no attribute '_\w+'$" if kind is AttributeError else
                          r"expected Tensor as element \d+ in argument \d+, but got (\w+)$", message)
    if not_tensor:
        position = next((i for i, a in enumerate(args) if type(a).__name__ == not_tensor[1]), None)
        if position is None:
            return exc
        new = errors.TypeError(f"{name}(): argument '{_parameter_name(f, position)}' (position {position + 1}) "
                               f"must be Tensor, not {not_tensor[1]}")
    elif kind is TypeError and (missing := _MISSING.match(message)) and module == "gradexpr.functions" \
            and name not in _PYTHON_LEVEL:
        # PyTorch's argument parser, not Python, reports it: 'roll() missing 1 required positional
        # arguments: "shifts"' (its plural is on 1, not on more: that is how it reads)
        n = int(missing[1])
        names = ", ".join(f'"{a}"' for a in re.findall(r"'(\w+)'", missing[2]))
        new = errors.TypeError(f"{name}() missing {n} required positional argument{'s' if n == 1 else ''}: {names}")
    elif kind is TypeError and message.startswith(qualname + "() ") and public != qualname:
        new = errors.TypeError(public + message[len(qualname):])
    else:
        return exc
    new.__cause__ = exc
    return new


_MISSING = re.compile(r"[\w.<>]+\(\) missing (\d+) required positional arguments?: (.+)$")
# torch functions that PyTorch writes in Python: a missing argument is Python's own message there
_PYTHON_LEVEL = frozenset(("split", "norm", "meshgrid", "einsum", "tensordot", "broadcast_tensors", "cdist",
                           "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "cartesian_prod", "unique"))


def _parameter_name(f, position):
    import inspect
    try:
        return list(inspect.signature(f).parameters)[position]
    except (TypeError, ValueError, IndexError):
        return "input"


def _callee_name(func):
    if type(func) is ast.Name:
        return func.id
    if type(func) is ast.Attribute:
        return func.attr
    return "function"


def _resolve_module(interp, parts):
    """``import a.b.c``: the prelude's ``torch`` or a module of ``grammar/modules``."""
    from .modules import resolve
    return resolve(interp._initial, parts)
