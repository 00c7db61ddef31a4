"""sleef.vectorized_map splits elements between the vector and the scalar loop as ATen's cpu_kernel_vec does
(which elements go where decides their last bit: SLEEF's functions on one side, the C library's on the
other), and exact.fma64 stays exact with an operand too large for Veltkamp's split (SLEEF's double-double
division multiplies 1/x by x for x near 1e300)."""
from fractions import Fraction

import numpy as np

from gradexpr import sleef
from gradexpr.exact import fma64


def _which_loop(*arrays, threads=1, grain=sleef._GRAIN):
    """1 where the vector loop computes an element of the broadcast result, 0 where the scalar one does."""
    def vector(*xs):
        return np.ones(np.broadcast_shapes(*(x.shape for x in xs)), xs[0].dtype)

    def scalar(*xs):
        return np.zeros(np.broadcast_shapes(*(x.shape for x in xs)), xs[0].dtype)
    return sleef.vectorized_map(arrays, vector, scalar, threads, grain)


def test_contiguous_runs_of_two_vectors_and_a_scalar_tail():
    assert _which_loop(np.zeros(37, np.float32)).tolist() == [1] * 32 + [0] * 5
    assert _which_loop(np.zeros(37, np.float64)).tolist() == [1] * 32 + [0] * 5     # runs of 8 doubles
    assert _which_loop(np.zeros(7, np.float64)).tolist() == [0] * 7
    # a contiguous matrix is one coalesced loop of 60
    assert _which_loop(np.zeros((3, 20), np.float32)).ravel().tolist() == [1] * 48 + [0] * 12


def test_broadcast_rows_and_strided_views():
    rows = _which_loop(np.zeros((3, 20), np.float32), np.zeros(20, np.float32))
    assert rows.tolist() == [[1] * 16 + [0] * 4] * 3                 # rows of 20 (the row operand repeats)
    scalar_operand = _which_loop(np.zeros((3, 20), np.float32), np.zeros((), np.float32))
    assert scalar_operand.ravel().tolist() == [1] * 48 + [0] * 12   # a 0-d operand: still one loop
    assert not _which_loop(np.zeros(40, np.float32)[::2]).any()      # strided: all scalar
    transposed = _which_loop(np.zeros((20, 3), np.float32).T)
    assert transposed.T.ravel().tolist() == [1] * 48 + [0] * 12     # in memory order


def test_threads_split_the_range_and_each_piece_has_its_own_tail():
    n = 70001
    loops = _which_loop(np.zeros(n, np.float32), threads=2)
    half = -(-n // 2)                                                 # 35001 each, the last 35000
    expected = np.ones(n, np.float32)
    expected[half - half % 16:half] = 0
    expected[half + (n - half) // 16 * 16:] = 0
    assert np.array_equal(loops, expected)
    # GELU's own grain (one per thread above 16,384 elements) splits a 20,000-element input as well
    gelu = _which_loop(np.zeros(20000, np.float32), threads=2, grain=10000)
    assert gelu[9984:10000].tolist() == [1] * 16 and gelu[10000:].sum() == 10000 - 10000 % 16


def test_fma64_with_an_operand_beyond_the_split_range():
    rng = np.random.default_rng(0)
    a = rng.uniform(1, 2, 2000) * 2.0 ** rng.integers(996, 1023, 2000)
    b = 1 / a * rng.uniform(0.5, 2, 2000)
    c = np.concatenate([-rng.uniform(0.5, 2, 1000), -(a[1000:] * b[1000:])])   # (the latter: the product's error)
    got = fma64(a, b, c)
    exact = [float(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in zip(a, b, c)]
    assert got.tolist() == exact
    assert fma64(b, a, c).tolist() == exact


def test_fewer_elements_than_a_run_never_reach_the_vector_function():
    """An emulated vector function costs its whole fixed overhead (dozens of fmas) even on no elements: a
    tensor shorter than a run of two vectors goes to the scalar loop alone."""
    def vector(*xs):
        raise AssertionError("the vector loop has no element here")

    for dtype, run in ((np.float64, 8), (np.float32, 16)):
        for n in range(run):
            x = np.arange(n, dtype=dtype)
            assert sleef.vectorized_map((x,), vector, lambda v: v * 2, 1).tolist() == (x * 2).tolist()
        with np.testing.assert_raises(AssertionError):
            sleef.vectorized_map((np.zeros(run, dtype),), vector, lambda v: v * 2, 1)


def test_fma64_agrees_with_the_c_library_on_every_exponent_and_corner():
    """Above the few elements the C library's fma computes one by one, Dekker's path: its corners (a product
    that underflows to a signed zero with a zero addend, one that overflows against an infinite addend, nan,
    infinities, subnormals, cancellation) as the C library rounds them."""
    from gradexpr.special_math import c_function
    fma = c_function("fma", np.float64)
    rng = np.random.default_rng(9)
    n = 4000

    def operands(low, high):
        bits = (rng.integers(0, 2, n) << 63) | (rng.integers(low, high, n) << 52) | rng.integers(0, 1 << 52, n)
        v = bits.astype(np.uint64).view(np.float64)
        corner = rng.random(n) < 0.05
        v[corner] = rng.choice([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1e-310], int(corner.sum()))
        return v
    for low, high in ((0, 2047), (900, 1150)):
        a, b, c = operands(low, high), operands(low, high), operands(low, high)
        with np.errstate(all="ignore"):
            cancelling = -a * b * (1 + rng.standard_normal(n) * 1e-10)
        for addend in (c, cancelling, np.where(rng.random(n) < 0.5, 0.0, -0.0)):
            want = np.array([fma(x, y, z) for x, y, z in zip(a, b, addend)])
            got = fma64(a, b, addend)
            assert np.array_equal(got.view(np.int64), want.view(np.int64)) or \
                np.array_equal(np.isnan(got), np.isnan(want)) and \
                np.array_equal(got[~np.isnan(got)].view(np.int64), want[~np.isnan(want)].view(np.int64))
    assert fma64(np.full(30, 1.8539217395908733e+289), np.full(30, -4.206239866206916e+306),
                 np.full(30, np.inf)).tolist() == [np.inf] * 30
    assert np.signbit(fma64(np.full(30, -1e-200), np.full(30, 1e-200), np.zeros(30))).all()
