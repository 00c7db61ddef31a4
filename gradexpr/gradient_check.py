"""``--check``: central differences of the target, re-running the program with one leaf element moved.

The check runs the program again with each bound leaf as a float64 tensor, so that the
differences are taken in float64 (step ``CHECK_EPS``, as ``torch.autograd.gradcheck``).
That only holds when the program keeps the leaf in float64: PyTorch's type promotion lets a
dimensioned float32 tensor win over a 0-dim float64 one (``x * 2 + torch.rand(1)`` is float32
with ``x`` a float64 scalar), and ``x.float()`` or ``x.half()`` round on purpose. A float64
step of 1e-6 is then below the target's resolution and the differences are rounding noise,
so a correct gradient would be reported as wrong.

So a first run with the leaf unmoved finds the lowest floating precision on the target's
graph (the target and every node's inputs). When it is below float64, the check works at
that precision instead, as a careful user would by hand:

- the step is ``cbrt(machine epsilon) * max(1, |x|)`` (the step that balances truncation
  against rounding: 4.9e-3 for float32, 0.099 for float16), and both moved points are rounded
  to that precision so the program sees exactly the step that the quotient divides by;
- the tolerance grows by the rounding the differences can carry: ``ROUNDING_ULPS`` machine
  epsilons of each of the two values, divided by the step (weighted like the gradient).

The result says so (``LeafCheck.precision``, ``eps``, ``allowance``), since such a check is
weaker than a float64 one.
"""
from __future__ import annotations

CHECK_EPS = 1e-6              # central-difference step (float64), as torch.autograd.gradcheck
CHECK_MAX_ELEMENTS = 128      # perturbed elements per leaf: two program runs each
ROUNDING_ULPS = 2             # machine epsilons of rounding allowed in each value of a low-precision target


def check_gradients(ev, run, bindings, request, source, filename, limits, rng_state):
    """Compare ``ev``'s gradients (or Jacobian) with central differences; a ``session.Check``."""
    import numpy as np
    from .session import restore_rng_state, snapshot_rng_state
    from .session import Check, LeafCheck, ProgramError
    after = snapshot_rng_state()
    weights = None
    if ev.grads is not None:   # compare the gradient (or VJP): d(v . target)/dx
        weights = (np.ones(1) if ev.grad_output is None else ev.grad_output._data.astype(np.float64)).reshape(-1)
    rerun = _Rerun(source, filename, bindings, request, limits, rng_state, run.target._data.size)
    results = []
    try:
        for leaf in ev.leaves:
            total = leaf.tensor._data.size
            result = LeafCheck(leaf.name, total=total)
            results.append(result)
            if not leaf.bound:
                result.skipped = "created by the program: bind it with -v to check it"
                continue
            if weights is not None:
                g = ev.grads[leaf.name]
                analytic = np.zeros((1, total)) if g is None else g._data.astype(np.float64).reshape(1, total)
            else:
                analytic = ev.jacobian[leaf.name]._data.astype(np.float64).reshape(-1, total)
            _check_leaf(result, leaf.name, leaf.tensor._data.astype(np.float64), analytic, weights, rerun, request)
    except ProgramError as e:
        raise e.error from None
    finally:
        restore_rng_state(after)
    return Check(results, CHECK_EPS, request.atol, request.rtol)


class _Rerun:
    """Runs the program from its starting random state with one leaf replaced by a float64 value."""

    def __init__(self, source, filename, bindings, request, limits, rng_state, size):
        self.source, self.filename, self.bindings = source, filename, bindings
        self.request, self.limits, self.rng_state, self.size = request, limits, rng_state, size

    def __call__(self, name, value):
        from . import functions
        from .session import restore_rng_state
        from .session import RequestError, run_program
        restore_rng_state(self.rng_state)
        again = run_program(self.source, self.filename, self.bindings, of=self.request.of, limits=self.limits,
                            substitutes={name: functions.from_numpy(value).requires_grad_(True)})
        if again.target._data.size != self.size:
            raise RequestError("--check: the target's shape changed when a leaf was perturbed")
        return again.target


def _check_leaf(result, name, base, analytic, weights, rerun, request):
    """Fill ``result`` for one leaf: its sampled elements moved both ways, compared with ``analytic``."""
    import numpy as np
    from .session import _report
    total = base.size
    low = lowest_precision(rerun(name, base))
    result.precision = None if low is None else low.name
    if low is not None:
        machine_eps = float(np.finfo(low.np).eps)
        result.eps = float(np.cbrt(machine_eps))
    picks = np.unique(np.linspace(0, total - 1, min(total, CHECK_MAX_ELEMENTS)).round().astype(int)) \
        if total else np.zeros(0, int)
    worst_abs = worst_rel = worst_allowance = 0.0
    ok = True
    progress = _report(f"--check {name}")
    for done, k in enumerate(picks, 1):
        x = float(base.reshape(-1)[k])

        def at(point):
            moved = base.copy()
            moved.reshape(-1)[k] = point
            return np.asarray(rerun(name, moved)._data, np.float64).reshape(-1)

        allowance = 0.0
        if low is None:
            numeric = (at(x + CHECK_EPS) - at(x - CHECK_EPS)) / ((x + CHECK_EPS) - (x - CHECK_EPS))
        else:
            numeric, noise = _low_precision_difference(at, x, result.eps * max(1.0, abs(x)), low.np, machine_eps)
            allowance = noise if weights is None else np.array([np.abs(weights) @ noise])
            worst_allowance = max(worst_allowance, _worst(allowance))
        if weights is not None:
            numeric = np.array([weights @ numeric])
        got = analytic[:, k]
        err = np.abs(got - numeric)
        with np.errstate(all="ignore"):
            rel = np.where(err == 0, 0.0, err / np.maximum(np.abs(got), np.abs(numeric)))
        worst_abs = max(worst_abs, _worst(err))
        worst_rel = max(worst_rel, _worst(rel))
        ok = ok and bool(np.all(err <= request.atol + request.rtol * np.abs(numeric) + allowance))
        if progress is not None:
            progress(done, len(picks))
    result.max_abs, result.max_rel, result.ok, result.checked = worst_abs, worst_rel, ok, len(picks)
    result.allowance = worst_allowance


def _low_precision_difference(at, x, h, np_dtype, machine_eps):
    """The derivative at ``x`` from steps ``h`` and ``h/2`` combined (Richardson: the step's
    h² error cancels, which the large steps of float32 and float16 need), and the rounding
    noise it can carry. The points are rounded to ``np_dtype`` first, so the quotients divide
    by the steps the program really took."""
    import numpy as np
    quotients, noises, widths = [], [], []
    for step in (h, h / 2):
        ahead, behind = (float(np.asarray(x + s * step).astype(np_dtype)) for s in (1.0, -1.0))
        y_ahead, y_behind = at(ahead), at(behind)
        width = ahead - behind
        quotients.append((y_ahead - y_behind) / width)
        noises.append(ROUNDING_ULPS * machine_eps * (np.abs(y_ahead) + np.abs(y_behind)) / width)
        widths.append(width)
    ratio2 = (widths[0] / widths[1]) ** 2
    numeric = (ratio2 * quotients[1] - quotients[0]) / (ratio2 - 1)
    noise = (ratio2 * noises[1] + noises[0]) / (ratio2 - 1)
    return numeric, noise


def lowest_precision(target):
    """The lowest floating dtype on ``target``'s graph when it is below float64, else None.

    The target's own dtype and the dtype of every input each node recorded: a program that
    rounds through float32 and back (``x.float().double()``) is as coarse as float32."""
    from . import dtypes
    from .session import graph_nodes
    found = {target._dtype}
    for node in graph_nodes(target):
        for meta in getattr(node, "_meta", ()) or ():
            if meta is not None:
                found.add(meta[1])
    floating = [d for d in found if d in (dtypes.float16, dtypes.float32)]
    return min(floating, key=lambda d: d.np.itemsize) if floating else None


def _worst(errors) -> float:
    """The largest error; nan (a gradient or difference that is not a number) counts as infinite."""
    import numpy as np
    return float("inf") if np.isnan(errors).any() else float(errors.max(initial=0.0))
