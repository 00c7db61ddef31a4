"""tanh_backward in float32 is ``g * fma(-y, y, 1)`` (PyTorch's kernel, contracted); gradexpr computes
the fma's value as float64 ``1 - y²`` rounded to float32 (block by block). That is one rounding except
where the float64 difference would land exactly on a float32 midpoint while inexact, which no float32
``|y| <= 1`` does; these checks compare with the exactly rounded fma on the values most likely to differ."""
import numpy as np

from gradexpr.exact import fma32
from gradexpr import blocks
from gradexpr.ops.backward_ops import _tanh_backward


def _run_of_floats(start, count):
    """``count`` consecutive float32 values from ``start`` upwards."""
    bits = np.arange(count, dtype=np.uint32) + np.float32(start).view(np.uint32)
    return bits.view(np.float32)


def test_one_minus_square_is_the_fma_near_one_zero_and_at_random():
    samples = [_run_of_floats(1 - 2.0 ** -10, 2 ** 20),          # y near 1: the bits tanh's gradient loses
               _run_of_floats(0.125 - 2.0 ** -20, 2 ** 20),      # around |y| = 1/8
               _run_of_floats(2.0 ** -14, 2 ** 20),              # small y
               _run_of_floats(0.0, 2 ** 16),                     # subnormals
               np.random.default_rng(0).uniform(-1, 1, 2 ** 20).astype(np.float32)]
    for y in samples:
        for v in (y, -y):
            assert np.array_equal(_tanh_backward(np.ones_like(v), v), fma32(-v, v, 1.0)), v[:3]


def test_tanh_backward_multiplies_the_rounded_factor():
    rng = np.random.default_rng(1)
    y = np.tanh(rng.standard_normal(1000).astype(np.float32))
    g = rng.standard_normal(1000).astype(np.float32)
    assert np.array_equal(_tanh_backward(g, y), g * fma32(-y, y, 1.0))
    assert np.array_equal(_tanh_backward(np.float32(2.0), y), np.float32(2.0) * fma32(-y, y, 1.0))
    assert np.array_equal(_tanh_backward(g[:1], y), g[:1] * fma32(-y, y, 1.0))


def test_tanh_backward_across_blocks_for_every_layout_of_the_grad():
    """Blocks end inside the array; a same-layout grad is multiplied in per block, others after."""
    rng = np.random.default_rng(2)
    n = 2 * blocks.BLOCK + 3
    y = np.tanh(3 * rng.standard_normal(n).astype(np.float32))
    factor = fma32(-y, y, 1.0)
    g = rng.standard_normal(n).astype(np.float32)
    assert np.array_equal(_tanh_backward(g, y), g * factor)
    assert np.array_equal(_tanh_backward(g[::-1], y), g[::-1] * factor)
    assert np.array_equal(_tanh_backward(np.broadcast_to(np.float32(0.5), (n,)), y), np.float32(0.5) * factor)
    y2, g2 = y[:n - 3].reshape(2, -1), g[:n - 3].reshape(2, -1)
    assert np.array_equal(_tanh_backward(g2.T, y2.T), (g2 * factor[:n - 3].reshape(2, -1)).T)
    assert np.array_equal(_tanh_backward(g2, y2[:1]), g2 * factor[:n // 2 - 1])
