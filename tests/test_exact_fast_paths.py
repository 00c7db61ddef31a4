"""The numeric shortcuts of the training step give exactly the results of the paths they shortcut.

SLEEF's expf and logf check their fused multiply-adds for float32 ties once per call instead of once
per fma, and take some fmas' float64 sums as exact without checking; fma32 repairs the ties of a small
array with whole-array passes; a matrix summed down its rows goes straight to the outer sums; addmm's
gemm arguments are planned once per layout; nll_loss skips its masks when every target is a class.
Each is compared here, bit for bit, with the general path on inputs that exercise it.
"""
import numpy as np
import pytest

from gradexpr import exact, mkl, reduction_order, sleef
from gradexpr.ops import nn as nn_ops

RNG = np.random.default_rng(20261128)


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


def _float32_inputs(n):
    """Random values of every scale, few-bit dyadic values (whose fmas land on exact ties), specials."""
    parts = [RNG.standard_normal(n) * s for s in (1, 10, 40, 1e-3, 1e-20)]
    parts.append(RNG.integers(-4096, 4096, n) / 256)
    parts.append(RNG.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32))
    parts.append([0, -0.0, np.inf, -np.inf, np.nan, 1, 2, 0.5, 88.7, -87.3, -103.9, -104.1, 100, 100.1,
                  1e-45, 1.17549435e-38, 3.4e38])
    return np.concatenate([np.asarray(p, np.float32) for p in parts])


def _checked_fma(a, b, c):
    """An fma that checks its own ties (exact.fma32), standing in for sleef's unchecked one."""
    with np.errstate(all="ignore"):
        return exact.fma32(a, b, c)


@pytest.mark.parametrize("name, kernel, domain", [("expf", "_expf", lambda x: x), ("logf", "_logf", np.abs),
                                                  ("logf of any sign", "_logf", lambda x: x)])
def test_sleef_deferred_tie_checks_and_unchecked_fmas_match_checking_each_fma(monkeypatch, name, kernel, domain):
    x = domain(_float32_inputs(3000))
    fast = getattr(sleef, name.split()[0])(x)
    # every fma checked, the ones taken as exact included: the claims of exactness hold on these inputs
    monkeypatch.setattr(sleef, "_fma_exact", _checked_fma)
    slow = getattr(sleef, kernel)(x)
    assert np.array_equal(_bits(fast), _bits(slow))


def _reference_expf(d):
    """SLEEF's expf step by step, every fma through exact.fma32 (checking its own ties), the scaling by
    2^(q>>1) then 2^(q - (q>>1)) as SLEEF multiplies."""
    f = np.float32
    with np.errstate(all="ignore"):
        q = np.rint(d * sleef._R_LN2)
        s = exact.fma32(q, sleef._L2U, d)
        s = exact.fma32(q, sleef._L2L, s)
        u = np.full(d.shape, sleef._POLY[0], f)
        for c in sleef._POLY[1:]:
            u = exact.fma32(u, s, c)
        u = f(1) + exact.fma32(s * s, u, s)
        qi = np.clip(q, -1000, 1000).astype(np.int32)
        half = qi >> 1
        u = (u * np.ldexp(f(1), half).astype(f)) * np.ldexp(f(1), qi - half).astype(f)
        u = np.where(d < -104, f(0), u)
        u = np.where(d > 100, f(np.inf), u)
        return np.where(np.isnan(d), d, u).astype(f)


def test_expf_matches_slefs_steps_taken_one_by_one():
    x = np.concatenate([_float32_inputs(3000), np.linspace(-110, -80, 30001, dtype=np.float32)])
    assert np.array_equal(_bits(sleef.expf(x)), _bits(_reference_expf(x)))


def test_the_deferred_check_finds_an_inexact_tie_and_runs_the_checked_kernel():
    # a * b + c lands halfway between two float32 values in float64, and is not that value: rounded
    # unchecked it is 1.000000238418579, fused 1.0000001192092896
    a, b, c = np.float32(2.0 ** -12 * (1 - 2.0 ** -18)), np.float32(2.0 ** -12 * (1 + 2.0 ** -18)), np.float32(1 + 2.0 ** -23)
    x = np.full(5, b)
    assert sleef.horner(x, (a, c), sums=[]).tolist() == [1.000000238418579] * 5      # (the unchecked sum)
    kernel = lambda v, sums=None: sleef.horner(v, (a, c), sums)          # noqa: E731
    assert sleef._tie_checked(kernel, x).tolist() == [1.0000001192092896] * 5


def _inexact_ties(n):
    """fma operands whose float64 sums land halfway between two float32 values without being exact."""
    a = np.full(n, 2.0 ** -12 * (1 - 2.0 ** -18), np.float32) * RNG.choice([-1, 1], n).astype(np.float32)
    b = np.full(n, 2.0 ** -12 * (1 + 2.0 ** -18), np.float32)
    c = np.full(n, 1 + 2.0 ** -23, np.float32) * RNG.choice([-1, 1], n).astype(np.float32)
    mixed = RNG.integers(0, 2, n).astype(bool)          # and exact ties, and sums that are no tie
    a[mixed] = RNG.integers(-64, 64, mixed.sum()) / 8
    c[mixed] = RNG.integers(-64, 64, mixed.sum()) / 16
    return a, b, c


@pytest.mark.parametrize("shape", [(7,), (300,), (40, 30)])
def test_fma32_whole_array_repair_matches_the_gathered_one(monkeypatch, shape):
    a, b, c = (v.reshape(shape) for v in _inexact_ties(int(np.prod(shape))))
    whole = exact.fma32(a, b, c)
    monkeypatch.setattr(exact, "_WHOLE_REPAIR", -1)
    gathered = exact.fma32(a, b, c)
    out = np.empty(shape, np.float32)
    exact.fma32(a, b, c, out=out)
    assert np.array_equal(_bits(whole), _bits(gathered)) and np.array_equal(_bits(out), _bits(gathered))
    assert float(exact.fma32(np.float32(2.0 ** -12 * (1 - 2.0 ** -18)), np.float32(2.0 ** -12 * (1 + 2.0 ** -18)),
                             np.float32(1 + 2.0 ** -23))) == 1.0000001192092896


@pytest.mark.parametrize("rows", [2, 3, 31, 32, 33, 64, 100, 257, 1000])
@pytest.mark.parametrize("cols", [8, 10, 31, 32, 33, 130])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_matrix_summed_down_its_rows_takes_the_general_plans_route(rows, cols, dtype):
    x = (RNG.standard_normal((rows, cols)) * 10.0 ** RNG.integers(-3, 4, (rows, cols))).astype(dtype)
    it, order, view_shape, full, kept_order, kept_shape = reduction_order._plan(x, (0,))
    general = reduction_order._serial(x.transpose(order).reshape(view_shape), it)
    assert np.array_equal(_bits(reduction_order.torch_sum(x, 0)), _bits(np.asarray(general).reshape(kept_shape)))


@pytest.mark.skipif(not mkl.available(), reason="MKL's gemm is what the plans call")
def test_gemm_plans_are_kept_per_layout():
    a = RNG.standard_normal((9, 5)).astype(np.float32)
    b = RNG.standard_normal((5, 7)).astype(np.float32)
    layouts = [lambda m: m, np.asfortranarray, lambda m: np.repeat(m, 2, axis=1)[:, ::2], lambda m: m.T.copy().T]
    fresh = {}
    for i, layout_a in enumerate(layouts):
        for j, layout_b in enumerate(layouts):
            mkl._GEMM_PLANS.clear()
            fresh[i, j] = mkl.addmm(None, layout_a(a), layout_b(b), 0, 1)
    for (i, j), expected in fresh.items():          # now each call finds the plans the others made
        again = mkl.addmm(None, layouts[i](a), layouts[j](b), 0, 1)
        assert np.array_equal(_bits(again), _bits(expected))
        assert np.allclose(again, a @ b, rtol=1e-5, atol=1e-5)
    bias = RNG.standard_normal(7).astype(np.float32)
    assert np.array_equal(_bits(mkl.addmm(bias, a, b, 1, 1)),
                          _bits(mkl.addmm(np.broadcast_to(bias, (9, 7)), a, b, 1, 1)))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_with_every_target_a_class_matches_the_masked_path(reduction, weighted):
    logp = RNG.standard_normal((45, 6)).astype(np.float32)
    target = RNG.integers(0, 5, 45)                      # class 5 never appears
    weight = RNG.random(6).astype(np.float32) if weighted else None
    unmasked = nn_ops._nll(logp, target, weight, reduction, -100)     # ignore_index is no class
    masked = nn_ops._nll(logp, target, weight, reduction, 5)          # a class, absent: the masks
    assert np.array_equal(_bits(unmasked), _bits(masked))


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nll_loss_backward_with_every_sample_counting_once_matches_the_weighted_path(reduction, dtype):
    from gradexpr.ops import backward_ops
    x = RNG.standard_normal((37, 6)).astype(dtype)
    target = RNG.integers(0, 6, 37)
    for g in (np.asarray(1.5, dtype), np.asarray(-0.0, dtype), np.asarray(np.nan, dtype)):
        unweighted = backward_ops._nll_loss_backward(g, x, target, None, reduction, -100)
        ones = backward_ops._nll_loss_backward(g, x, target, np.ones(6, dtype), reduction, -100)   # the masks
        assert np.array_equal(_bits(unweighted), _bits(ones))


@pytest.mark.parametrize("rows", [2, 3, 31, 256, 1000])
@pytest.mark.parametrize("cols", [8, 10, 31, 32, 33, 63, 64, 100, 130, 511])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_rows_of_a_matrix_summed_across_take_the_general_plans_route(rows, cols, dtype):
    x = (RNG.standard_normal((rows, cols)) * 10.0 ** RNG.integers(-3, 4, (rows, cols))).astype(dtype)
    x[0] = -0.0                                      # a row of negative zeros sums to +0
    x[1, ::3] = RNG.choice([np.inf, -np.inf, np.nan, 0.0, -0.0, 3e38], x[1, ::3].shape)
    it, order, view_shape, full, kept_order, kept_shape = reduction_order._plan(x, (1,))
    general = reduction_order._serial(x.transpose(order).reshape(view_shape), it)
    fast = reduction_order.torch_sum(x, 1)
    assert np.array_equal(_bits(fast), _bits(np.asarray(general).reshape(kept_shape)))
    if cols < 16 * 4 * reduction_order._VEC[x.itemsize]:     # each row as a whole 1-D sum of it adds
        assert np.array_equal(_bits(fast), _bits(np.array([reduction_order._line_sum(r) for r in x])))
