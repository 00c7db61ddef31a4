"""Gradient checks: the engine's derivatives against float64 central differences.

``gradcheck(fn, inputs)`` compares, for every output and every input that requires
grad, the Jacobian the engine computes (one backward pass per output element, through
``autograd.grad``) with the one obtained by perturbing each input element by ``±eps``.
``gradgradcheck`` does the same for the gradient itself (the backward formulas are
tensor ops, so they are differentiated like any other function). Both are shared by
the test suite and by users, in the spirit of ``torch.autograd.gradcheck``.

``DOMAINS`` names the regions where an op may be sampled for such a check: a
function of (random generator, shape) returning float64 values, e.g. ``"positive"``
for ``log`` or ``"distinct"`` for ``max`` (ties and kinks break finite differences).
Every differentiable entry of the op table names its domain.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from . import errors
from .autograd import grad as _grad
from .tensor import Tensor

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck", "numerical_jacobian", "analytical_jacobian",
           "DOMAINS", "sample"]


class GradcheckError(errors.RuntimeError):
    """Analytical and numerical derivatives disagree (PyTorch's ``torch.autograd.gradcheck.GradcheckError``)."""

    kind = "torch.autograd.gradcheck.GradcheckError"


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _outputs(fn, inputs):
    """The floating outputs of ``fn(*inputs)`` as a tuple (integer and bool outputs have no derivative)."""
    outs = _as_tuple(fn(*inputs))
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            raise errors.TypeError(f"gradcheck: output {i} of the function is {type(o).__name__}, not a Tensor")
    return tuple(o for o in outs if o._dtype.is_floating_point)


def _differentiable(inputs):
    return [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t._requires_grad]


def numerical_jacobian(fn: Callable, inputs: Sequence, eps: float = 1e-6):
    """Central differences: ``J[k][i]`` has shape (output k's numel, input i's numel).

    Each input element that requires grad is moved by ±eps in place (and put back), so
    ``fn`` sees exactly the tensors it was given; inputs without grad get ``None``. The
    graphs these evaluations record are simply dropped.
    """
    inputs = _as_tuple(inputs)
    base = _outputs(fn, inputs)
    jac = [[None] * len(inputs) for _ in base]
    for i in _differentiable(inputs):
        x = inputs[i]
        flat = x._data.reshape(-1)           # a view: writing it perturbs the input itself
        if not np.shares_memory(flat, x._data):
            raise errors.ValueError("gradcheck needs contiguous inputs")
        cols = [np.zeros((o._data.size, flat.size)) for o in base]
        for j in range(flat.size):
            # grad mode stays as it is: a function that differentiates inside (gradgradcheck) needs it
            # (outputs are copied at once: an output may share memory with the input being moved)
            old = flat[j]
            flat[j] = old + eps
            plus = [np.array(o._data, np.float64).reshape(-1) for o in _outputs(fn, inputs)]
            flat[j] = old - eps
            minus = [np.array(o._data, np.float64).reshape(-1) for o in _outputs(fn, inputs)]
            flat[j] = old
            for k, (p, m) in enumerate(zip(plus, minus)):
                cols[k][:, j] = (p - m) / (2 * eps)
        for k in range(len(base)):
            jac[k][i] = cols[k]
    return jac


def analytical_jacobian(fn: Callable, inputs: Sequence):
    """The engine's Jacobian, one backward pass per output element (same layout as ``numerical_jacobian``)."""
    inputs = _as_tuple(inputs)
    diff = _differentiable(inputs)
    outs = _outputs(fn, inputs)
    jac = [[None] * len(inputs) for _ in outs]
    for k, out in enumerate(outs):
        rows = {i: np.zeros((out._data.size, inputs[i]._data.size)) for i in diff}
        if out._requires_grad and diff:
            for r in range(out._data.size):
                seed = np.zeros(out._data.size, out._dtype.np)
                seed[r] = 1
                gs = _grad(out, [inputs[i] for i in diff], Tensor._make(seed.reshape(out._data.shape), out._dtype),
                           retain_graph=True, allow_unused=True)
                for i, g in zip(diff, gs):
                    if g is not None:
                        if g._data.shape != inputs[i]._data.shape:
                            raise GradcheckError(f"gradient for input {i} has shape {list(g._data.shape)}, expected "
                                                 f"{list(inputs[i]._data.shape)}")
                        rows[i][r] = g._data.astype(np.float64).reshape(-1)
        for i in diff:
            jac[k][i] = rows[i]
    return jac


def forward_jacobian(fn: Callable, inputs: Sequence):
    """The Jacobian forward-mode AD gives, one dual pass per input element (``numerical_jacobian``'s layout)."""
    from . import forward_ad
    inputs = _as_tuple(inputs)
    diff = _differentiable(inputs)
    n_out = len(_outputs(fn, inputs))
    jac = [[None] * len(inputs) for _ in range(n_out)]
    for i in diff:
        x = inputs[i]
        cols = None
        for j in range(x._data.size):
            seed = np.zeros(x._data.size, x._dtype.np)
            seed[j] = 1
            with forward_ad.dual_level():
                args = list(inputs)
                args[i] = forward_ad.make_dual(x, Tensor._make(seed.reshape(x._data.shape), x._dtype))
                outs = _outputs(fn, args)
                tangents = [forward_ad.unpack_dual(o).tangent for o in outs]
            if cols is None:
                cols = [np.zeros((o._data.size, x._data.size)) for o in outs]
            for k, t in enumerate(tangents):
                if t is not None:
                    cols[k][:, j] = t._data.astype(np.float64).reshape(-1)
        for k in range(n_out):
            jac[k][i] = cols[k]
    return jac


def gradcheck(fn: Callable, inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3, *,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False) -> bool:
    """True when the engine's Jacobian matches central differences within ``atol + rtol * |numerical|``.

    ``inputs`` is a tensor or a sequence of them (and other arguments, passed through);
    only float tensors that require grad are checked, preferably float64 (float32
    differences are too coarse for the default tolerances).
    """
    inputs = _as_tuple(inputs)
    if not _differentiable(inputs):
        raise errors.ValueError("gradcheck expects at least one input tensor to require gradient, but none of them "
                                "have requires_grad=True.")
    # (the engine is deterministic, so nondet_tol changes nothing; fast_mode's check is the full one here)
    numerical = numerical_jacobian(fn, inputs, eps)
    checks = []
    if check_backward_ad:
        checks.append(("", analytical_jacobian(fn, inputs)))
    if check_forward_ad:
        checks.append(("computed with forward mode ", forward_jacobian(fn, inputs)))
    for mode, analytical in checks:
        for k, (num_row, ana_row) in enumerate(zip(numerical, analytical)):
            for i, (n, a) in enumerate(zip(num_row, ana_row)):
                if n is None:
                    continue
                if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=False):
                    if not raise_exception:
                        return False
                    raise GradcheckError(f"Jacobian {mode}mismatch for output {k} with respect to input {i},\n"
                                         f"numerical:{Tensor._make(n)!r}\nanalytical:{Tensor._make(a)!r}\n")
    return True


def gradgradcheck(fn: Callable, inputs, grad_outputs=None, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, *, seed: int = 0, raise_exception: bool = True) -> bool:
    """``gradcheck`` of the vector–Jacobian product ``v ↦ vᵀ J(inputs)`` with respect to the inputs and ``v``.

    ``grad_outputs`` (one per floating output) default to seeded random float64 tensors
    that require grad, so the check covers the backward formulas' derivatives in every
    argument they read.
    """
    inputs = _as_tuple(inputs)
    diff = _differentiable(inputs)
    outs = _outputs(fn, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = tuple(Tensor._make(rng.standard_normal(o._data.shape), o._dtype, requires_grad=True)
                             for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)

    def first_derivative(*args):
        xs, vs = args[:n], args[n:]
        pairs = [(o, v) for o, v in zip(_outputs(fn, xs), vs) if o._requires_grad]
        ys, used = [o for o, _ in pairs], [v for _, v in pairs]
        if not ys:
            return tuple(Tensor._make(np.zeros(xs[i]._data.shape), xs[i]._dtype) for i in diff)
        gs = _grad(ys, [xs[i] for i in diff], used, create_graph=True, allow_unused=True)
        return tuple(g if g is not None else Tensor._make(np.zeros(xs[i]._data.shape), xs[i]._dtype)
                     for i, g in zip(diff, gs))

    return gradcheck(first_derivative, inputs + grad_outputs, eps, atol, rtol, raise_exception=raise_exception)


# ---------------------------------------------------------------- sampling domains
def _real(rng, shape):
    return rng.uniform(-2.0, 2.0, shape)


def _positive(rng, shape):
    return rng.uniform(0.5, 2.0, shape)


def _unit(rng, shape):
    return rng.uniform(-0.9, 0.9, shape)


def _nonzero(rng, shape):
    return rng.uniform(0.3, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def _distinct(rng, shape):
    """Values at least 0.1 apart (and from zero): no ties for max/min/sort, no kink within ±eps."""
    n = int(np.prod(shape, dtype=np.int64))
    values = (rng.permutation(n) + 1.0) * 0.25 * rng.choice([-1.0, 1.0])
    return (values + rng.uniform(-0.05, 0.05, n)).reshape(shape)


def _above_one(rng, shape):
    return rng.uniform(1.2, 3.0, shape)


def _probability(rng, shape):
    return rng.uniform(0.1, 0.9, shape)


def _square(rng, shape):
    """Well-conditioned square matrices (for det, inverse): a random matrix plus a multiple of I."""
    a = rng.uniform(-1.0, 1.0, shape)
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        a = a + 3.0 * np.eye(shape[-1])
    return a


DOMAINS: dict[str, Callable] = {
    "real": _real, "positive": _positive, "unit": _unit, "nonzero": _nonzero, "distinct": _distinct,
    "probability": _probability, "square": _square, "above_one": _above_one,
    # names that say which arguments are real-valued while the call supplies the rest
    # (conditions, masks, indices, lists, targets, shapes of matrix products)
    "where": _real, "mask": _real, "index": _real, "list": _real, "logprob": _real, "matrix": _real,
    "matrices": _real, "batched": _real, "matvec": _real, "vectors": _real, "addmm": _real,
    "nonzero_other": _nonzero,
}


def sample(domain: str, shape, rng=None, requires_grad=True) -> Tensor:
    """A float64 tensor of ``shape`` drawn from ``DOMAINS[domain]`` (leaf, requires grad by default)."""
    if domain not in DOMAINS:
        raise errors.ValueError(f"unknown sampling domain {domain!r}; known: {', '.join(sorted(DOMAINS))}")
    rng = rng if rng is not None else np.random.default_rng(0)
    data = np.array(DOMAINS[domain](rng, tuple(shape)), dtype=np.float64, order="C")    # (0-d stays 0-d)
    t = Tensor._make(data)
    t._requires_grad = requires_grad
    return t
