"""Evaluating a program with bindings: the value, its graph, gradients, Jacobians, Hessians, traces, checks.

This is gradexpr's evaluation API; ``gradexpr eval``, ``gradexpr graph`` and the REPL call it
and only render what it returns, and Python code can call it too::

    from gradexpr import session
    bindings = session.Bindings.parse(variables=["x=ones(2, 2)"])   # or Bindings.of({"x": tensor})
    ev = session.evaluate("((x + 2) ** 2 * 3).mean()", "<expr>", bindings, session.Request())
    ev.value, ev.grads["x"], ev.graph

The steps:

1. ``Bindings.parse`` evaluates the variables and constants (expressions of the language,
   or ``@file.npy|csv|json``) once; ``Bindings.of`` takes Python values instead;
2. ``run_program`` runs the program with them as extra globals — every floating variable
   becomes a fresh leaf that requires grad — and takes its target (the last expression
   statement, or ``of=NAME``);
3. ``find_leaves`` walks the graph to the leaves (``AccumulateGrad.variable``) and names
   them by the global that holds them;
4. ``evaluate`` differentiates without touching any ``.grad``: leaf gradients (or a
   vector–Jacobian product), Jacobians and Hessians through ``gradexpr.functional``'s
   batched products, the backward pass step by step (``trace``), central differences
   (``check``, in ``gradient_check``).

Where the interpreter comes from: running a program text needs the language
(``gradexpr.grammar``), which sits above the engine (imports go ``cli -> grammar ->
gradexpr``). The differentiation, the leaves, the trace and the check are engine work and
belong here, beside ``functional.py``; so this module keeps them and imports
``gradexpr.grammar.running`` only inside the two functions that run program text
(``run_program``, ``evaluate_value``). Nothing of the grammar is imported when this module
is, so ``gradexpr``'s module-level imports still form a tree without the grammar; putting
the whole API on the grammar side instead would make Python users import the engine's
results from the parser's package.

Errors: a bad request (a binding, ``of``, ``wrt``, ``grad_output``) raises ``RequestError``,
whose messages name the command-line option that carries it; a failing program is
``ProgramError`` from ``run_program`` and ``Evaluation.error`` from ``evaluate``.

The records here are plain slotted classes, not dataclasses: defining a dataclass costs
about a millisecond, paid at every start of the command.
"""
from __future__ import annotations

import contextvars
import io
import sys

RUNTIME, USAGE = 1, 2         # an evaluation's error_code: the process exit status (cli/exitcodes.Exit)


# progress(task, done, total) for long work (a Jacobian's rows, --check's program runs): set by a
# front end that shows progress (``reporting``); None by default
_progress = contextvars.ContextVar("gradexpr_session_progress", default=None)


class reporting:
    """``with session.reporting(callback):`` calls ``callback(task, done, total)`` as long work advances."""

    def __init__(self, callback):
        self.callback = callback

    def __enter__(self):
        self.token = _progress.set(self.callback)
        return self

    def __exit__(self, *exc):
        _progress.reset(self.token)


def _report(task: str):
    """A ``progress(done, total)`` for ``task``, or None when nobody listens."""
    callback = _progress.get()
    return None if callback is None else lambda done, total: callback(task, done, total)


class RequestError(Exception):
    """A bad request: a binding (``-v``, ``-c``), ``--of``, ``--wrt`` or ``--grad-output``; exit status 2.

    When a value's expression failed, ``error`` is the program error, ``source`` the
    expression and ``filename`` its label, so a front end can show it located."""

    def __init__(self, message: str, error=None, source: str | None = None, filename: str | None = None,
                 hint: str | None = None):
        super().__init__(message)
        self.error = error
        self.source = source
        self.filename = filename
        self.hint = hint


def _closest(word: str, names) -> str | None:
    """``did you mean 'x'?`` for the closest of ``names`` (difflib's ratio), or None."""
    import difflib
    close = difflib.get_close_matches(word, [n for n in names if not n.startswith("_")], n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else None


class ProgramError(Exception):
    """The program (or the differentiation of its target) failed; carries the outcome's error."""

    def __init__(self, error, code=RUNTIME, output=""):
        super().__init__(str(error))
        self.error = error
        self.code = code
        self.output = output


# ================================================================ -v / -c values
def split_assignment(text: str, option: str) -> tuple[str, str]:
    name, eq, value = text.partition("=")
    name = name.strip()
    if not eq or not (name.isascii() and name.isidentifier()):
        raise RequestError(f"{option} {text!r}: expected NAME=VALUE (e.g. {option} x=\"ones(2, 2)\")")
    if not value.strip():
        raise RequestError(f"{option} {name}=: the value is empty")
    return name, value


def evaluate_value(text: str, label: str, scope: dict, limits):
    """A value given on the command line: ``@file`` or an expression of the language."""
    text = text.strip()
    if text.startswith("@"):
        return load_file(text[1:])
    from gradexpr.grammar.running import execute   # the interpreter: see the module's docstring
    outcome = execute(text, label, out=io.StringIO(), limits=limits, extra_globals=scope)
    if outcome.error is not None:
        from .errors import describe
        raise RequestError(f"{label}: {describe(outcome.error)}", outcome.error, text, label)
    if outcome.interpreter.last_node is None:
        raise RequestError(f"{label}: {text!r} is not an expression")
    return as_tensor_if_numeric(outcome.interpreter.last_value, label)


def as_tensor_if_numeric(value, label):
    """Python floats and (nested) lists of numbers become tensors, as ``tensor(value)`` would."""
    from . import functions
    from .tensor import Tensor
    if isinstance(value, float) or (isinstance(value, (list, tuple)) and value):
        try:
            return functions.tensor(value)
        except Exception as e:   # a ragged or non-numeric list
            from .errors import describe
            raise RequestError(f"{label}: cannot make a tensor of this value ({describe(e)})") from None
    if isinstance(value, (Tensor, int, bool, str)) or value is None:
        return value
    raise RequestError(f"{label}: a value must be a tensor or a number, not {type(value).__name__}")


_NPY_DTYPES = ("float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool")


def load_file(path: str):
    """A tensor read from ``.npy`` (no pickle), ``.csv`` (numbers, comma-separated) or ``.json``."""
    import numpy as np
    from . import functions, limits as _limits
    lower = path.lower()
    try:
        if lower.endswith(".npy"):
            with open(path, "rb") as f:
                if f.read(6) != b"\x93NUMPY":
                    raise ValueError("not a .npy file (no NumPy header)")
            array = np.load(path, allow_pickle=False)
            if array.dtype.name not in _NPY_DTYPES:
                raise ValueError(f"unsupported dtype {array.dtype} (use one of {', '.join(_NPY_DTYPES)})")
            _limits.check_elements(array.shape)
            return functions.from_numpy(np.ascontiguousarray(array))
        if lower.endswith(".csv"):
            array = np.loadtxt(path, delimiter=",", dtype=np.float64, ndmin=1, comments="#")
        elif lower.endswith(".json"):
            import json
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
            if isinstance(data, (dict, str)) or data is None:
                raise ValueError("expected a number or nested lists of numbers")
            array = np.array(data, dtype=np.float64)    # as CSV reads them: "1" and "1.0" are one value
        else:
            raise RequestError(f"cannot read {path}: unsupported file type (use .npy, .csv or .json)")
        _limits.check_elements(array.shape)
        return functions.tensor(array.astype(np.float32))
    except RequestError:
        raise
    except FileNotFoundError:
        raise RequestError(f"cannot read {path}: no such file") from None
    except OSError as e:
        raise RequestError(f"cannot read {path}: {e.strerror or e}") from None
    except Exception as e:   # malformed content: bad numbers, ragged rows, a pickled array …
        reason = str(e).strip().splitlines()
        raise RequestError(f"cannot read {path}: {reason[0] if reason else type(e).__name__}") from None


def fresh_copy(value, requires_grad: bool):
    """A new tensor with ``value``'s data and no history (a new leaf for each program run)."""
    from . import functions
    from .tensor import Tensor
    if not isinstance(value, Tensor):
        return value
    return functions.tensor(value, requires_grad=requires_grad)


class Bindings:
    """The ``-v`` variables and ``-c`` constants, each evaluated once, in command-line order.

    An integer bound as a variable (``-v x=3``) stays an integer while the target needs it
    so (``ones(n)``); when the target then has nothing to differentiate, ``evaluate`` runs
    the program again with the integers ``promoted`` to the default float dtype."""

    __slots__ = ("values", "variables", "integers")

    def __init__(self, values=None, variables=None, integers=None):
        self.values = {} if values is None else values              # name -> value
        self.variables = [] if variables is None else variables     # names bound with -v to floating tensors
        self.integers = {} if integers is None else integers        # name -> text of a -v integer value

    @classmethod
    def parse(cls, variables=(), constants=(), limits=None):
        b = cls()
        for option, items in (("-v", variables), ("-c", constants)):
            for text in items:
                name, source = split_assignment(text, option)
                value = evaluate_value(source, f"{option} {name}", b.for_run(), limits)
                b._bind(option, name, value, source.strip())
        return b

    @classmethod
    def of(cls, variables=None, constants=None):
        """Bindings from Python values (tensors, numbers, nested lists), for callers in Python:
        ``Bindings.of({"x": [1., 2.]}, {"n": 3})``."""
        b = cls()
        for option, items in (("-v", variables or {}), ("-c", constants or {})):
            for name, value in items.items():
                b._bind(option, name, as_tensor_if_numeric(value, f"{option} {name}"), repr(value))
        return b

    def _bind(self, option, name, value, text):
        if name in self.values:
            raise RequestError(f"{option} {name}: {name} is bound twice")
        self.values[name] = value
        if option == "-v":
            if _is_floating_tensor(value):
                self.variables.append(name)
            elif _is_integer(value):
                self.integers[name] = text

    def promoted(self):
        """These bindings with the integer variables as floating leaves (default dtype)."""
        from . import dtypes, functions
        from .tensor import Tensor
        values = dict(self.values)
        for name in self.integers:
            v = values[name]
            values[name] = functions.tensor(v._data.astype(dtypes.default_float.np)) if isinstance(v, Tensor) \
                else functions.tensor(float(v))
        variables = [n for n in values if n in self.variables or n in self.integers]
        return Bindings(values, variables)

    def for_run(self, substitutes=None):
        """Globals for one run: fresh leaves for the variables, copies of the constants."""
        substitutes = substitutes or {}
        out = {}
        for name, value in self.values.items():
            if name in substitutes:
                out[name] = substitutes[name]
            else:
                out[name] = fresh_copy(value, requires_grad=name in self.variables)
        return out


def _is_integer(value) -> bool:
    from .tensor import Tensor
    if isinstance(value, Tensor):
        return value._dtype.np.kind in "iu"
    return isinstance(value, int) and not isinstance(value, bool)


def _is_floating_tensor(value) -> bool:
    from .tensor import Tensor
    return isinstance(value, Tensor) and value._dtype.is_floating_point


# ================================================================ running the program
class Run:
    """One run of the program: its target, what it printed, and the names of its tensors."""

    __slots__ = ("target", "target_name", "output", "bound", "names")

    def __init__(self, target, target_name: str | None, output: str, bound: dict, names: dict):
        self.target = target
        self.target_name = target_name
        self.output = output
        self.bound = bound      # name -> the tensor bound to it for this run (-v leaves, -c constants)
        self.names = names      # id(tensor) -> name: bound names first, then the program's globals


def run_program(source: str, filename: str, bindings: Bindings, *, of=None, limits=None, debug=False,
                substitutes=None) -> Run:
    """One run of the program with ``bindings``; raises ``ProgramError`` when it fails."""
    from gradexpr.grammar.running import execute   # the interpreter: see the module's docstring
    bound = bindings.for_run(substitutes)
    out = io.StringIO()
    outcome = execute(source, filename, out=out, limits=limits, extra_globals=dict(bound), debug=debug)
    if outcome.error is not None:
        raise ProgramError(outcome.error, outcome.code, out.getvalue())
    interp = outcome.interpreter
    if of is not None:
        if of not in interp.globals:
            raise RequestError(f"--of {of}: the program binds no name {of!r}",
                               hint=_closest(of, [n for n in interp.globals if n not in interp._initial or n in bound]))
        target = interp.globals[of]
    else:
        if interp.last_node is None:
            raise RequestError("nothing to evaluate: the program has no expression statement at its end "
                              "(end it with an expression, or name the target with --of NAME)")
        target = interp.last_value
    return Run(target, of, out.getvalue(), bound, _tensor_names(bound, interp.globals, of, target))


def run_of(target, scope: dict, name: str | None = None) -> Run:
    """A run for a value computed elsewhere (the REPL's last value), its tensors named by ``scope``."""
    return Run(target, name, "", {}, _tensor_names({}, scope, name, target))


def _tensor_names(bound: dict, scope: dict, of, target) -> dict:
    """``id(tensor) -> name``: the bound names first, then the program's globals."""
    from .tensor import Tensor
    names = {}
    for name, value in bound.items():
        if isinstance(value, Tensor):
            names.setdefault(id(value), name)
    # the prelude binds no tensors: these are the program's (Tensor has no subclasses; the exact type
    # test keeps this scan of the prelude's few hundred names cheap for each line of --batch)
    for name, value in scope.items():
        if type(value) is Tensor:
            names.setdefault(id(value), name)
    if of is not None:
        names.setdefault(id(target), of)
    return names


# ================================================================ leaves
class Leaf:
    __slots__ = ("name", "tensor", "bound")

    def __init__(self, name: str, tensor, bound: bool):
        self.name = name
        self.tensor = tensor
        self.bound = bound    # bound with -v, so --check can re-run the program with a perturbed value


def graph_nodes(target):
    """The target's graph nodes in ``graphview.describe`` order (n0, n1, …: breadth first)."""
    from collections import deque
    from .graph import shown_node
    root = shown_node(target._grad_fn)
    if root is None:
        return [target._accumulator()] if target._requires_grad else []
    order, seen, queue = [root], {root}, deque([root])
    while queue:
        for nxt in queue.popleft()._next:
            nxt = shown_node(nxt)
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                order.append(nxt)
                queue.append(nxt)
    return order


def find_leaves(run: Run, bindings: Bindings):
    """The leaves that require grad: the ``-v`` variables first, then those the program made."""
    from .graph import AccumulateGrad
    from .tensor import Tensor
    leaves = [Leaf(name, run.bound[name], True) for name in bindings.variables]
    known = {id(leaf.tensor) for leaf in leaves}
    labels = {leaf.name for leaf in leaves}
    if isinstance(run.target, Tensor):
        unnamed = 0
        for node in graph_nodes(run.target):
            if type(node) is AccumulateGrad and id(node.variable) not in known:
                known.add(id(node.variable))
                name = run.names.get(id(node.variable))
                if name is None or name in labels:   # unnamed, or a -v name the program rebound
                    unnamed += 1
                    name = f"<leaf {unnamed}>" if name is None else f"{name}<{unnamed}>"
                labels.add(name)
                leaves.append(Leaf(name, node.variable, False))
    return leaves


def only(leaves, wrt):
    """The leaves named by ``--wrt``, in its order."""
    by_name = {leaf.name: leaf for leaf in leaves}
    missing = [w for w in wrt if w not in by_name]
    if missing:
        have = ", ".join(by_name) or "none"
        raise RequestError(f"--wrt {missing[0]}: not a leaf of the target (leaves: {have})",
                           hint=_closest(missing[0], by_name))
    return [by_name[w] for w in dict.fromkeys(wrt)]


# ================================================================ the evaluation
class TraceStep:
    __slots__ = ("node", "name", "grad_in", "sent")

    def __init__(self, node: str, name: str, grad_in, sent: list):
        self.node = node          # graph id (n0 …) of the node that ran
        self.name = name
        self.grad_in = grad_in
        self.sent = sent          # (destination id or None, destination label, input index, gradient)


class LeafCheck:
    """One leaf's ``--check``; ``precision`` names the dtype the differences were taken in when
    the program computes below float64 (``eps`` is then that dtype's relative step and
    ``allowance`` the largest tolerance added for its rounding: see ``gradient_check``)."""
    __slots__ = ("leaf", "max_abs", "max_rel", "ok", "checked", "total", "skipped", "precision", "eps", "allowance")

    def __init__(self, leaf: str, max_abs: float | None = None, max_rel: float | None = None, ok: bool = True,
                 checked: int = 0, total: int = 0, skipped: str | None = None):
        self.leaf = leaf
        self.max_abs = max_abs
        self.max_rel = max_rel
        self.ok = ok
        self.checked = checked
        self.total = total
        self.skipped = skipped
        self.precision = None
        self.eps = None
        self.allowance = 0.0


class Check:
    __slots__ = ("leaves", "eps", "atol", "rtol")

    def __init__(self, leaves: list, eps: float, atol: float, rtol: float):
        self.leaves = leaves
        self.eps = eps
        self.atol = atol
        self.rtol = rtol

    @property
    def ok(self):
        return all(c.ok for c in self.leaves)


class Evaluation:
    __slots__ = ("source", "filename", "target_name", "value", "output", "graph", "leaves", "grads",
                 "grad_output", "jacobian", "hessian", "pointwise", "trace", "check", "notes", "error", "error_code",
                 "mode", "tangents", "jvp")

    def __init__(self, source: str, filename: str, target_name: str | None = None):
        self.source = source
        self.filename = filename
        self.target_name = target_name
        self.value = None
        self.output = ""
        self.graph = ((), ())       # graphview.describe(target, names)
        self.leaves = []
        self.grads = None           # leaf name -> Tensor | None (unused)
        self.grad_output = None
        self.jacobian = None        # leaf name -> Tensor shaped output.shape + leaf.shape
        self.hessian = None         # leaf name -> {leaf name -> Tensor}
        self.pointwise = None       # leaf name -> Pointwise, where the target is elementwise in the leaf
        self.trace = None
        self.check = None           # Check
        self.notes = []
        self.error = None
        self.error_code = 0
        self.mode = None            # "reverse" | "forward": how the gradients and Jacobian were computed
        self.tangents = None        # --jvp: leaf name -> the tangent it was given
        self.jvp = None             # --jvp: the target's tangent (a Jacobian-vector product)

    @property
    def ok(self):
        return self.error is None and (self.check is None or self.check.ok)


class Request:
    """What to compute beyond the value and graph (the command's options)."""

    __slots__ = ("of", "wrt", "jacobian", "grad_output", "hessian", "trace", "check", "atol", "rtol", "pointwise",
                 "mode", "jvp")

    def __init__(self, of: str | None = None, wrt: tuple = (), jacobian: bool = False, grad_output: str | None = None,
                 hessian: bool = False, trace: bool = False, check: bool = False, atol: float = 1e-5,
                 rtol: float = 1e-3, pointwise: bool = False, *, mode: str = "reverse", jvp: tuple = ()):
        self.of = of
        self.wrt = wrt
        self.jacobian = jacobian
        self.grad_output = grad_output
        self.hessian = hessian
        self.trace = trace
        self.check = check
        self.atol = atol
        self.rtol = rtol
        self.pointwise = pointwise  # True: the target is elementwise in its leaves (no Jacobian); else detected
        self.mode = mode            # "reverse" | "forward" | "auto" (session_forward.py)
        self.jvp = jvp              # "NAME=VALUE" tangents: a Jacobian-vector product (forward mode)


PRISTINE_RNG = "pristine"       # the random state while gradexpr.rng is not imported: nothing drew yet


def snapshot_rng_state():
    """The default generator's state, for a rerun (integer promotion, ``--check``, forward mode). A
    program that draws nothing never imports gradexpr.rng: the state then is its first one."""
    rng = sys.modules.get(f"{__package__}.rng")
    return PRISTINE_RNG if rng is None else rng.snapshot_rng_state()


def restore_rng_state(state) -> None:
    if state is PRISTINE_RNG:
        rng = sys.modules.get(f"{__package__}.rng")
        if rng is not None:             # (the program drew since: back to the first state)
            rng.restore_rng_state(rng.DEFAULT_RNG_SEED)
        return
    from . import rng
    rng.restore_rng_state(state)


def evaluate(source, filename, bindings: Bindings, request: Request, *, limits=None, debug=False) -> Evaluation:
    """Run and differentiate; program errors end up in ``Evaluation.error``, option errors raise."""
    ev = Evaluation(source, filename, request.of)
    # --check and forward mode re-run the program from the random state it started with
    rng_state = snapshot_rng_state() if request.check or request.jvp or request.mode != "reverse" else None
    start = rng_state if rng_state is not None or not bindings.integers else snapshot_rng_state()
    try:
        run = run_program(source, filename, bindings, of=request.of, limits=limits, debug=debug)
    except ProgramError as e:
        ev.error, ev.error_code, ev.output = e.error, e.code, e.output
        return ev
    from .tensor import Tensor
    if bindings.integers and not (isinstance(run.target, Tensor) and run.target._requires_grad):
        run, bindings = _with_integers_promoted(run, bindings, ev, source, filename, request, limits, start)
    return analyse(ev, run, bindings, request, limits=limits, debug=debug, rng_state=rng_state)


def analyse(ev: Evaluation, run: Run, bindings: Bindings, request: Request, *, limits=None, debug=False,
            rng_state=None) -> Evaluation:
    """Fill ``ev`` from a run: its value, graph, leaves and what ``request`` asks for. (The REPL
    calls it with a run made from its last value; ``check`` needs ``rng_state`` and a program.)"""
    from .graphview import describe
    from .tensor import Tensor
    ev.value, ev.output = run.target, run.output
    if not isinstance(run.target, Tensor):
        ev.notes.append(f"the target is a {type(run.target).__name__}, not a tensor: nothing to differentiate")
        return ev
    ev.leaves = find_leaves(run, bindings)
    ev.graph = describe(run.target, {**run.names, **{id(leaf.tensor): leaf.name for leaf in ev.leaves}})
    if request.wrt:
        ev.leaves = only(ev.leaves, request.wrt)
    try:
        _differentiate(ev, run, bindings, request, limits, _rerun(ev, bindings, request, limits, rng_state))
        if request.check and ev.leaves and run.target._requires_grad:
            from .gradient_check import check_gradients
            ev.check = check_gradients(ev, run, bindings, request, ev.source, ev.filename, limits, rng_state)
    except RequestError:
        raise
    except Exception as e:
        if debug:
            raise
        from . import errors
        if isinstance(e, RecursionError) and not isinstance(e, errors.GxError):
            e = errors.RecursionError("maximum recursion depth exceeded")
        ev.error = e
        ev.error_code = RUNTIME
    return ev


def _with_integers_promoted(run, bindings: Bindings, ev: Evaluation, source, filename, request, limits, rng_state):
    """The run again with the integer variables as float leaves, when that gives something to
    differentiate (``gradexpr eval "x**2" -v x=3`` differentiates at 3.); else the run as it was."""
    from . import dtypes
    from .tensor import Tensor
    after = snapshot_rng_state()
    promoted = bindings.promoted()
    restore_rng_state(rng_state)
    try:
        again = run_program(source, filename, promoted, of=request.of, limits=limits)
    except ProgramError:
        again = None
    if again is None or not (isinstance(again.target, Tensor) and again.target._requires_grad):
        restore_rng_state(after)
        return run, bindings
    for name, text in bindings.integers.items():
        ev.notes.append(f"-v {name}={text} is an integer: promoted to {dtypes.default_float.name} to differentiate "
                        f"(-c {name}={text} keeps it an integer)")
    return again, promoted


def _seed(target, request: Request, bindings: Bindings, limits):
    """The gradient the backward pass starts from: ones for a scalar, or ``--grad-output``."""
    import numpy as np
    from .tensor import Size, Tensor
    if request.grad_output is None:
        return Tensor._make(np.ones(target._data.shape, target._dtype.np), target._dtype)
    v = evaluate_value(request.grad_output, "--grad-output", bindings.for_run(), limits)
    if not isinstance(v, Tensor):
        from . import functions
        v = functions.tensor(v)
    if v._data.shape != target._data.shape:
        raise RequestError(f"--grad-output: Mismatch in shape: grad_output[0] has a shape of {Size(v._data.shape)} "
                          f"and output[0] has a shape of {Size(target._data.shape)}.")
    return v.detach().to(target._dtype)


def _rerun(ev: Evaluation, bindings: Bindings, request: Request, limits, rng_state):
    """The program as a function of its leaves, for forward mode (None: reverse mode only)."""
    if not request.jvp and request.mode == "reverse":
        return None
    from . import session_forward
    if rng_state is None:
        raise RequestError("--mode forward and --jvp re-run the program: they need a program, not a value")
    return session_forward.Rerun(ev.source, ev.filename, bindings, request, limits, rng_state)


def _differentiate(ev: Evaluation, run: Run, bindings: Bindings, request: Request, limits, rerun=None):
    import numpy as np
    from .graph import run_backward
    from .tensor import Tensor
    target = run.target
    scalar = target._data.size == 1
    not_scalar = None
    if request.hessian and not scalar:
        not_scalar = RequestError(f"--hessian needs a scalar target; the target has shape "
                                  f"{list(target._data.shape)} (or one elementwise in its leaves: --pointwise)")
    if request.trace and not scalar and request.grad_output is None:
        raise RequestError("--trace follows one backward pass: it needs a scalar target or --grad-output")
    tensors = tuple(leaf.tensor for leaf in ev.leaves)
    if not target._requires_grad or not target._dtype.is_floating_point or not tensors:
        if not_scalar is not None and not request.pointwise:
            raise not_scalar
        if not target._requires_grad:
            ev.notes.append("the target does not require grad: no leaf that requires grad reaches it")
        return
    names = [leaf.name for leaf in ev.leaves]
    ev.mode = "reverse" if rerun is None else rerun.begin(ev, target)    # forward mode: --jvp's product too
    if scalar and request.grad_output is None and ev.mode == "forward":   # the one row of its Jacobian
        jacobian = _jacobian(ev, target, tensors, rerun, limits)
        ev.grads = {name: b.reshape(x._data.shape) for (name, b), x in zip(jacobian.items(), tensors)}
        if request.jacobian:
            ev.jacobian = jacobian
    elif scalar or request.grad_output is not None:
        seed = _seed(target, request, bindings, limits)
        if request.grad_output is not None:
            ev.grad_output = seed
        tracer = _Tracer(target, ev) if request.trace else None
        grads = run_backward((target,), (seed,), retain_graph=True, create_graph=False, inputs=tensors,
                             accumulate=False, allow_unused=True, node_apply=tracer)
        ev.grads = dict(zip(names, grads))
        if tracer is not None:
            ev.trace = tracer.steps
    if ((not scalar and request.grad_output is None and not request.pointwise) or request.jacobian) \
            and ev.jacobian is None:
        ev.jacobian = _jacobian(ev, target, tensors, rerun, limits)
    if not scalar and (request.pointwise or (ev.jacobian is not None and not request.jacobian)):
        ev.pointwise = _pointwise(target, ev, names, tensors, request)
    if not_scalar is not None:
        if not ev.pointwise:
            raise not_scalar
    elif request.hessian:
        from .functional import jacobian_blocks
        _refuse_too_big("Hessian", (), ev.leaves, ev.leaves, limits)
        seed = Tensor._make(np.ones(target._data.shape, target._dtype.np), target._dtype)
        firsts = run_backward((target,), (seed,), retain_graph=True, create_graph=True, inputs=tensors,
                              accumulate=False, allow_unused=True)
        ev.hessian = {}
        for name, g, x in zip(names, firsts, tensors):
            blocks = jacobian_blocks(g, tensors, progress=_report(f"Hessian, {name} rows")) if g is not None \
                else [None] * len(tensors)
            ev.hessian[name] = {other: b if b is not None else _zeros(x._data.shape + y._data.shape, y)
                                for other, b, y in zip(names, blocks, tensors)}


def _jacobian(ev: Evaluation, target, tensors, rerun, limits) -> dict:
    """Leaf name -> d target / d leaf: rows by batched cotangents (reverse mode) or columns by batched
    tangents (forward mode, session_forward.py)."""
    from .functional import jacobian_blocks
    _refuse_too_big("Jacobian", target._data.shape, ev.leaves, ev.leaves, limits)
    if ev.mode == "forward":
        blocks = rerun.jacobian_blocks(target, ev.leaves)
    else:
        blocks = jacobian_blocks(target, tensors, progress=_report("Jacobian"))
    return {leaf.name: b if b is not None else _zeros(target._data.shape + x._data.shape, x)
            for leaf, b, x in zip(ev.leaves, blocks, tensors)}


def _refuse_too_big(what: str, out_shape, rows, columns, limits):
    """A Jacobian or Hessian over ``--max-elements`` is refused before any of it is computed, with
    the ways to ask for less (the engine's own refusal would only say to raise the limit)."""
    from . import errors
    from .limits import current
    limit = (limits or current()).max_elements
    out = 1
    for s in out_shape:
        out *= int(s)
    for a in rows:
        for b in columns if what == "Hessian" else (None,):
            n = out * a.tensor._data.size * (b.tensor._data.size if b is not None else 1)
            if not limit or n <= limit:
                continue
            by = f"{a.name} {list(a.tensor._data.shape)}" + (f" and {b.name} {list(b.tensor._data.shape)}" if b else "")
            of = f" of the target {list(out_shape)}" if what == "Jacobian" else ""
            raise errors.LimitError(
                f"the {what}{of} with respect to {by} would have {n:,} elements, over the limit of {limit:,}",
                hint="differentiate less: --wrt NAME keeps some leaves" + (
                    ", --grad-output VALUE gives one vector-Jacobian product, --pointwise shows f'(x) "
                    "when the target is elementwise in x" if what == "Jacobian" else ""))


class Pointwise:
    """The target is elementwise in ``leaf`` (its Jacobian is diagonal): f'(x) (and f''(x)) per element."""

    __slots__ = ("leaf", "first", "second")

    def __init__(self, leaf, first, second=None):
        self.leaf = leaf          # the leaf's values (x)
        self.first = first        # d target_i / d x_i
        self.second = second      # d2 target_i / d x_i2 (with --hessian)


def _pointwise(target, ev: Evaluation, names, tensors, request: Request):
    """The leaves the target is elementwise in: read off a diagonal Jacobian, or (``--pointwise``,
    no Jacobian) from one backward pass of ones, checked by a second with other weights."""
    import numpy as np
    from .graph import run_backward
    from .tensor import Tensor
    shape, n = target._data.shape, target._data.size
    found = {}
    for name, x in zip(names, tensors):
        if x._data.shape != shape:
            continue
        ones = Tensor._make(np.ones(shape, target._dtype.np), target._dtype)
        if ev.jacobian is not None:
            square = ev.jacobian[name]._data.reshape(n, n)
            diagonal = square.diagonal().copy()
            off = square.copy()
            np.fill_diagonal(off, 0)
            if np.any(off != 0):       # nan off the diagonal counts too
                continue
            first = Tensor._make(diagonal.reshape(shape), ev.jacobian[name]._dtype)
        else:
            (first,) = run_backward((target,), (ones,), retain_graph=True, create_graph=False, inputs=(x,),
                                    accumulate=False, allow_unused=True)
            first = first if first is not None else _zeros(shape, x)
            weights = (1.0 + np.arange(n) % 3).reshape(shape).astype(target._dtype.np)
            (weighted,) = run_backward((target,), (Tensor._make(weights, target._dtype),), retain_graph=True,
                                       create_graph=False, inputs=(x,), accumulate=False, allow_unused=True)
            expected = weights * first._data
            got = weighted._data if weighted is not None else np.zeros_like(expected)
            with np.errstate(all="ignore"):
                if not np.allclose(got, expected, rtol=1e-4, atol=1e-6 * float(np.nanmax(np.abs(expected), initial=0)),
                                   equal_nan=True):
                    continue
        second = None
        if request.hessian:
            (g,) = run_backward((target,), (ones,), retain_graph=True, create_graph=True, inputs=(x,),
                                accumulate=False, allow_unused=True)
            second = None
            if g is not None and g._requires_grad:
                (second,) = run_backward((g,), (ones,), retain_graph=True, create_graph=False, inputs=(x,),
                                         accumulate=False, allow_unused=True)
            second = second if second is not None else _zeros(shape, x)
        found[name] = Pointwise(x, first, second)
    if request.pointwise and not found:
        raise RequestError("--pointwise: the target is not elementwise in any leaf (no leaf has the target's shape "
                           f"{list(shape)} and a diagonal Jacobian); use --jacobian or --grad-output")
    return found or None


def _zeros(shape, like):
    import numpy as np
    from .tensor import Tensor
    return Tensor._make(np.zeros(shape, like._dtype.np), like._dtype)


class _Tracer:
    """``run_backward``'s ``node_apply``: runs each node as usual and records what went in and out."""

    def __init__(self, target, ev: Evaluation):
        from .graph import AccumulateGrad
        nodes = graph_nodes(target)
        self.ids = {node: f"n{i}" for i, node in enumerate(nodes)}
        by_id = {n.id: n for n in ev.graph[0]}
        leaf_names = {id(leaf.tensor): leaf.name for leaf in ev.leaves}
        self.labels = {}
        for node, node_id in self.ids.items():
            if type(node) is AccumulateGrad:
                self.labels[node] = leaf_names.get(id(node.variable)) or by_id[node_id].variable or node_id
            else:
                self.labels[node] = node.name()
        self.steps = []

    def __call__(self, node, grad):
        from .graph import OutputEdge, shown_node
        grads = node._apply(grad)
        if type(node) is OutputEdge:    # the gradient of output k of a custom Function, handed to its node
            self.steps.append(TraceStep(self.ids.get(node._fn, "?"), f"{node.name()} (output {node._k})", grad, []))
            return grads
        sent = [(self.ids.get(shown_node(nxt)), self.labels.get(shown_node(nxt), nxt.name()), i, g)
                for i, (nxt, g) in enumerate(zip(node._next, grads)) if nxt is not None and g is not None]
        self.steps.append(TraceStep(self.ids.get(node, "?"), node.name(), grad, sent))
        return grads
