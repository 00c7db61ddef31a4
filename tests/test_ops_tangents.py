"""Forward mode over the op table: every entry with a tangent formula, on the sample calls of the
op-table tests (``test_ops_table.CASES``), against central differences and reverse mode."""
from __future__ import annotations

import numpy as np
import pytest

from gradexpr import ops as D
from test_ops_table import CASES, DIFFERENTIABLE, _inputs, _outputs, tensor, torch

WITH_TANGENT = [name for name in DIFFERENTIABLE if D.TABLE[name].tangent not in (None, "not_implemented")]


def _jvp_forward(fn, xs, vs):
    """The tangents of ``fn``'s float outputs when the inputs carry tangents ``vs`` (forward mode)."""
    fw = torch.autograd.forward_ad
    with fw.dual_level():
        outs = _outputs(fn(*[fw.make_dual(x, v) for x, v in zip(xs, vs)]))
        return [fw.unpack_dual(o).tangent for o in outs if o.dtype.is_floating_point]


@pytest.mark.parametrize("name", WITH_TANGENT)
def test_entry_tangent_matches_differences_and_reverse_mode(name):
    """Each entry's forward formula: J·v against central differences of float64 values, and against
    reverse mode through the identity uᵀ(J·v) = (Jᵀu)ᵀ·v on random probes u, v."""
    entry = D.TABLE[name]
    for k, c in enumerate(CASES[name]):
        xs = _inputs(entry, c, seed=k)
        rng = np.random.default_rng(100 + k)
        vs = [tensor(rng.standard_normal(x.shape), dtype=torch.float64) for x in xs]
        tangents = _jvp_forward(c.fn, xs, vs)
        eps = c.tol.get("eps", 1e-6)
        with torch.no_grad():
            plus = _outputs(c.fn(*[x + eps * v for x, v in zip(xs, vs)]))
            minus = _outputs(c.fn(*[x - eps * v for x, v in zip(xs, vs)]))
        outs = [o for o in _outputs(c.fn(*xs)) if o.dtype.is_floating_point]
        plus = [o for o in plus if o.dtype.is_floating_point]
        minus = [o for o in minus if o.dtype.is_floating_point]
        for t, p, m, o in zip(tangents, plus, minus, outs):
            # a float32 output (a cast) is compared at float32's precision
            atol, rtol = (c.tol.get("atol", 1e-5), c.tol.get("rtol", 1e-3)) if o.dtype == torch.float64 else (1e-2, 1e-2)
            assert t is not None, f"case {k} of {name}: no tangent"
            numerical = (p._data - m._data) / (2 * eps)
            assert np.allclose(t._data, numerical, atol=atol, rtol=rtol), (name, k, t, numerical)
            u = tensor(rng.standard_normal(o.shape), dtype=torch.float64)
            grads = torch.autograd.grad(o, xs, u, retain_graph=True, allow_unused=True)
            vjp_v = sum(float((g * v).sum()) for g, v in zip(grads, vs) if g is not None)
            assert np.isclose(float((t * u).sum()), vjp_v, atol=1e-7, rtol=1e-6), (name, k)
