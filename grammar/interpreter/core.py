"""Run gradexpr programs: Python's meaning, by calling Python's own operators on the values.

``Interpreter(globals, filename=..., out=..., limits=...)`` then ``.run(module)`` or
``.eval(expr)``. The AST is first compiled into Python closures (one per node, each
``fn(frame) -> value``), so a loop runs closures rather than re-dispatching on node types.

Names. Top-level names live in ``globals`` (the dict passed in, used as is). A ``def`` or
``lambda`` gets a frame, a list ``[enclosing frame, return value, slot, slot, ...]``: names
assigned in a function are its locals (slots); other names are read from the enclosing
functions' frames, then ``globals``; ``global``/``nonlocal``, class bodies and comprehensions as
``scopes.py`` says. User functions
are plain Python callables, so engine code can call them (``jacobian(f, x)``).

Safety. Attribute reads and writes go through one policy (``policy.py``). Builtins that could exhaust memory are guarded where
they are called (``builtins.CALL_GUARDS``), as are ``*``, ``+``, ``**``, ``<<``, ``%`` on
sequences and integers. Loops, calls and wall time are counted against ``Limits``.

Errors. Any exception from evaluating a node becomes a located ``gradexpr.errors.GxError``
(Python's own exceptions are converted by ``located``, keeping Python's type name and
message), located at the innermost node that failed. KeyboardInterrupt passes through.

The compiler is assembled here from one mixin per concern: statements (``compile_stmt``),
functions (``functions``), expressions (``compile_expr``), classes and decorators
(``compile_defs``), exceptions and names (``compile_flow``), generators and comprehensions
(``compile_generators``). The last three are loaded when a program first has such a node: a
one-liner's start-up does not pay for them (``_Compiler.__getattr__``).
"""
from __future__ import annotations

import gc
import re
import sys
import time

from gradexpr import errors
from gradexpr import limits as _limits
from gradexpr.graph import forward_site as _forward_site

from .. import ast
from .. import builtins as _b

from .compile_expr import ExpressionCompiler
from .compile_stmt import StatementCompiler
from .functions import FunctionCompiler
from .located import _loc, located
from .runtime import BREAK, CONTINUE, UNBOUND, _noop, _Runtime


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
        self._initial = globals.copy()     # (a Prelude stays one: its late names are made on first use)

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


# ============================================================================ the compiler

def _lazy_mixins() -> tuple:
    """The compiler's mixins for classes, decorators, exceptions, ``del``/``global``/starred
    targets, generators and comprehensions."""
    from .compile_defs import DefinitionCompiler
    from .compile_flow import FlowCompiler
    from .compile_generators import GeneratorCompiler
    return DefinitionCompiler, FlowCompiler, GeneratorCompiler


class _Compiler(StatementCompiler, FunctionCompiler, ExpressionCompiler):
    """Turns AST nodes into closures. Expressions: ``fn(frame) -> value``. Statements:
    ``fn(frame) -> None | BREAK | CONTINUE | RETURN``. ``frame`` is None at top level."""

    def __getattr__(self, name):
        # a method of a lazy mixin (only names the class itself lacks get here)
        for mixin in _lazy_mixins():
            method = mixin.__dict__.get(name)
            if method is not None:
                return method.__get__(self)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    unbound_marker = UNBOUND
    signals = (BREAK, CONTINUE)

    def __init__(self, interp: Interpreter):
        self.interp = interp
        self.g = interp.globals
        self.rt = interp._rt
        self.filename = interp.filename
        self.constants = {}         # folded and literal constants, one object per value (co_consts)
        self.folds = {}             # operator nodes folded or not (compile_expr._folded)

    # ------------------------------------------------------------------ helpers
    def loc(self, exc, node):
        return _loc(exc, self.filename, node)

    def _name_error(self, name, scope, node):
        cands = self.g.all_names() if hasattr(self.g, "all_names") else set(self.g)
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
        filename = self.filename
        pairs = tuple((f, node, (filename, node)) for f, node in zip(fns, nodes))
        site = _forward_site

        def run_module():
            for f, node, where in pairs:
                site[0] = where         # see block()
                f(None)
                if rt.deadline is not None:
                    rt.check_time(node)
            site[0] = None
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
        sites = []
        for s in stmts:
            if type(s) is ast.ExprStmt and type(s.value) is ast.Constant and type(s.value.value) is str:
                continue
            if type(s) is ast.Pass:
                continue
            f = self._top_expr(s) if (scope is None and type(s) is ast.ExprStmt) else self.stmt(s, scope)
            if f is not None:
                fns.append(f)
                sites.append((self.filename, s))
        if not fns:
            return _noop
        # Each statement publishes where it is (graph.forward_site) before it runs, so the nodes it
        # records know their origin (named in a note under an error of backward); a block puts back
        # the site of the statement that runs it when it ends.
        site = _forward_site
        if len(fns) == 1:
            a, = fns
            sa, = sites

            def block1(fr):
                prev = site[0]
                site[0] = sa
                r = a(fr)
                site[0] = prev
                return r
            return block1
        pairs = tuple(zip(sites, fns))

        def block_n(fr):
            prev = site[0]
            for where, f in pairs:
                site[0] = where
                r = f(fr)
                if r is not None:
                    site[0] = prev
                    return r
            site[0] = prev
            return None
        return block_n

    def stmt(self, s, scope):
        return getattr(self, "s_" + type(s).__name__)(s, scope)
