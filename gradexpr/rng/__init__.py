"""Bit-exact reproduction of PyTorch's CPU random number generation (PyTorch 2.13).

Every function returns a fresh NumPy array; the engine wraps it in a tensor.  With
``manual_seed(n)`` the numbers are exactly those of ``torch.manual_seed(n)`` followed by
the same calls on the CPU, for float32 and float64, every size, and successive calls.

How PyTorch does it (aten/src/ATen/core/MT19937RNGEngine.h, CPUGeneratorImpl.cpp,
core/DistributionsHelper.h, core/TransformationHelper.h, native/cpu/DistributionTemplates.h,
native/DistributionTemplates.h, native/TensorFactories.cpp, native/Dropout.cpp), checked
against the real library:

* One mt19937 engine per generator, seeded with the standard ``init_genrand`` on the low
  32 bits of the seed (the full 64-bit seed is what ``initial_seed()`` reports).  A seed
  may be any integer in [-2**63, 2**64); negative ones are taken modulo 2**64.
  ``random()`` is one tempered 32-bit word; ``random64()`` is two words, the first one
  being the high half.
* Uniform floats: float32 uses ``(word & (2**24-1)) * 2**-24``, float64 uses
  ``(random64() & (2**53-1)) * 2**-53``; ``uniform_(a, b)`` is then ``fma(x, b-a, a)``
  (the kernels are compiled with FMA contraction) and a result equal to ``b`` becomes ``a``.
* ``normal_``/``randn``: tensors of fewer than 16 elements take the scalar path, a double
  Box-Muller (u1, u2 from random64, ``r = sqrt(-2 log1p(-u2))``, ``theta = 2 pi u1``) that
  returns ``r cos(theta)`` and caches ``r sin(theta)`` in the generator for the next
  sample (the cache survives across calls and is cleared by reseeding); the result is
  ``fma(v, std, mean)``, then cast to the dtype.  Tensors of 16 or more elements take
  ``normal_fill``: all uniforms first, then Box-Muller over blocks of 16 (u1 from the first
  8, u2 from the last 8, cos to the first half, sin to the second); if the size is not a
  multiple of 16, 16 fresh uniforms recompute the last 16 outputs (float16 goes block by
  block through a float buffer, so its tail block takes the 16 draws right after the full
  blocks).  float64 uses glibc log/sincos (called here through ``math``, which is the same
  libm) and ``std::fma``; float32 and float16 use the AVX2 ``NormalFill16`` with the
  avx_mathfun ``log256_ps``/``sincos256_ps`` polynomials, which GCC compiled with fused
  multiply-adds -- emulated here operation by operation in float32, checked against the
  machine code for all 2**24 possible uniforms (the distribution kernels have no AVX-512
  build, so an AVX-512 machine runs the AVX2 one too).
* ``random_(from, to)`` / ``randint``: ``(w % range) + from`` with ``w = random()`` when
  ``range < 2**28`` and ``w = random64()`` otherwise.
* ``randperm(n)``: Fisher-Yates from the front, ``z = random() % (n - i)``, swap i, i+z.
* ``bernoulli_(p)`` with a float p: ``uniform53 < p`` per element (the MKL path of older
  releases is gone).  ``bernoulli(p_tensor)``: float probabilities compare a float32
  uniform (24 bits), double probabilities a double one (53 bits).
* ``F.dropout(x, p, training=True)`` on CPU: ``noise = empty_like(x).bernoulli_(1 - p)``;
  ``noise.div_(1 - p)`` (the divisor is rounded to the tensor's dtype first); ``x * noise``.
  p == 0 and p == 1 draw nothing.
* ``torch.normal`` with tensors: ``normal_(0, std)`` then ``add_(mean)`` (tensor mean,
  float std); otherwise ``normal_(0, 1)`` then ``mul_(std)`` then ``add_(mean)``.

``Generator(None)`` seeds itself from ``os.urandom`` (like the default generator at
start-up); a fresh ``torch.Generator()`` instead starts at ``DEFAULT_RNG_SEED``, so use
``Generator(DEFAULT_RNG_SEED)`` to mirror it.  ``get_state()`` returns the same 5056 bytes
as ``torch.get_rng_state()`` / ``Generator.get_state()``, and ``set_state`` accepts them.
"""
from __future__ import annotations

from .engine import (DEFAULT_RNG_SEED, Generator, default_generator, get_rng_state, initial_seed,
                     manual_seed, restore_rng_state, seed, set_rng_state, snapshot_rng_state)

__all__ = [
    "Generator", "default_generator", "manual_seed", "seed", "initial_seed",
    "get_rng_state", "set_rng_state", "snapshot_rng_state", "restore_rng_state", "DEFAULT_RNG_SEED",
    "rand", "randn", "randn_serial", "randint", "randperm", "normal", "uniform", "bernoulli", "dropout_mask", "random_",
    "exponential", "multinomial_with_replacement", "cauchy", "geometric", "log_normal",
]

# the distributions are loaded by the first draw: every program builds ``torch.Generator`` from
# the engine, few draw (start-up)
_DRAWS = {"bernoulli": "distributions", "dropout_mask": "distributions", "rand": "distributions",
          "randint": "distributions", "random_": "distributions", "randperm": "distributions",
          "uniform": "distributions", "exponential": "distributions", "cauchy": "distributions", "geometric": "distributions",
          "log_normal": "distributions",
          "multinomial_with_replacement": "distributions", "normal": "gaussian", "randn": "gaussian",
          "randn_serial": "gaussian"}


def __getattr__(name):
    module = _DRAWS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    loaded = importlib.import_module(f"{__name__}.{module}")
    for other, where in _DRAWS.items():     # all of them: importing rng.normal binds the name to the module
        if where == module:
            globals()[other] = getattr(loaded, other)
    return globals()[name]
