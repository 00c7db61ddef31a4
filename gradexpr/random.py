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

import math
import os
import struct

import numpy as np

__all__ = [
    "Generator", "default_generator", "manual_seed", "seed", "initial_seed",
    "get_rng_state", "set_rng_state", "DEFAULT_RNG_SEED",
    "rand", "randn", "randint", "randperm", "normal", "uniform", "bernoulli", "dropout_mask",
]

# The seed a fresh ``torch.Generator()`` has (c10's default_rng_seed_val).
DEFAULT_RNG_SEED = 67280421310721

_N = 624
_MASK24 = (1 << 24) - 1
_MASK53 = (1 << 53) - 1
_U64 = (1 << 64) - 1
_STATE_SIZE = 5056          # sizeof(CPUGeneratorImplState), what torch.get_rng_state() holds


def _as_uint64(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        try:
            seed = int(seed)
        except (TypeError, ValueError):
            raise TypeError(f"seed must be an integer, not {type(seed).__name__}") from None
    seed = int(seed)
    if seed < -(1 << 63) or seed > _U64:
        raise ValueError("Overflow when unpacking long long")
    return seed & _U64


_KEYS: dict = {}            # low 32 bits of a seed -> (key as a read-only uint32 array, as a tuple of ints)
_KEYS_KEPT = 64
_seeder = None              # a legacy RandomState, for its C init_genrand


def _seeded_key(s: int) -> tuple:
    """The mt19937 key ``init_genrand`` makes of the low 32 bits of ``s``: (array, tuple), shared.

    ``key[0] = s; key[j] = 1812433253 * (key[j-1] ^ (key[j-1] >> 30)) + j`` (mod 2**32) is
    the seeding of NumPy's legacy ``RandomState(seed)`` too, so its C loop computes it. A
    key is made once per seed (``eval --batch`` may ask for the state of the same unseeded
    generator on every line; programs reseed with the same few numbers). The tuple is what
    the engine is loaded from: NumPy's state setter copies a key word by word, 20 times
    faster from Python ints than from an array.
    """
    global _seeder
    s &= 0xFFFFFFFF
    entry = _KEYS.get(s)
    if entry is None:
        if _seeder is None:
            _seeder = np.random.RandomState()
        _seeder.seed(s)
        key = _seeder.get_state()[1]
        key.flags.writeable = False
        entry = (key, tuple(key.tolist()))
        if len(_KEYS) >= _KEYS_KEPT:
            _KEYS.clear()
        _KEYS[s] = entry
    return entry


def _init_genrand(s: int) -> np.ndarray:
    """init_genrand's key for ``s`` (a read-only uint32 array)."""
    return _seeded_key(s)[0]


def _nondeterministic_seed() -> int:
    return int.from_bytes(os.urandom(8), "little")


class Generator:
    """One mt19937 stream plus PyTorch's cached normal samples (torch.Generator on CPU)."""

    __module__, __qualname__ = "torch._C", "Generator"     # type(torch.manual_seed(0)), as PyTorch names it

    __slots__ = ("_seed", "_bitgen", "_pending", "_untouched",
                 "_next_double_normal", "_next_float_normal", "__weakref__")

    def __init__(self, seed: int | None = None):
        self._bitgen = None
        if seed is None:
            self.seed()
        else:
            self.manual_seed(seed)

    # -- seeding -------------------------------------------------------------------
    def manual_seed(self, seed: int) -> "Generator":
        self._seed = _as_uint64(seed)
        self._pending = True        # engine key not built yet (done lazily on first draw)
        self._untouched = True      # no word drawn since seeding (torch: left=1, next=0)
        self._next_double_normal = None
        self._next_float_normal = None
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        s = _nondeterministic_seed()
        self.manual_seed(s)
        return s

    # -- state ---------------------------------------------------------------------
    def _engine(self):
        bg = self._bitgen
        if bg is None:
            bg = self._bitgen = np.random.MT19937(0)
        if self._pending:
            bg.state = {"bit_generator": "MT19937", "state": {"key": _seeded_key(self._seed)[1], "pos": _N}}
            self._pending = False
        return bg

    def get_state(self) -> np.ndarray:
        """The state as the 5056 bytes ``torch.Generator.get_state()`` returns (uint8)."""
        if self._pending or self._untouched:
            key = _init_genrand(self._seed) if self._pending else \
                self._bitgen.state["state"]["key"]
            left, nxt = 1, 0
        else:
            st = self._bitgen.state["state"]
            key, pos = st["key"], int(st["pos"])
            left, nxt = _N + 1 - pos, pos
        buf = bytearray(_STATE_SIZE)
        struct.pack_into("<QiiQ", buf, 0, self._seed, left, 1, nxt)
        buf[24:24 + 8 * _N] = np.asarray(key, dtype=np.uint32).astype("<u8").tobytes()
        off = 24 + 8 * _N
        if self._next_double_normal is not None:
            struct.pack_into("<ddd i", buf, off, 0.0, self._next_double_normal, 0.0, 1)
        if self._next_float_normal is not None:
            struct.pack_into("<f?", buf, off + 32, self._next_float_normal, True)
        return np.frombuffer(bytes(buf), dtype=np.uint8).copy()

    def set_state(self, state) -> "Generator":
        raw = np.asarray(state, dtype=np.uint8).tobytes() if not isinstance(state, (bytes, bytearray)) \
            else bytes(state)
        if len(raw) != _STATE_SIZE:
            raise ValueError(f"Expected a CPUGeneratorImplState of size {_STATE_SIZE} "
                             f"but found the input RNG state size to be {len(raw)}")
        seed, left, seeded, nxt = struct.unpack_from("<QiiQ", raw, 0)
        if not (seeded and 0 < left <= _N and nxt <= _N):
            raise ValueError("Invalid mt19937 state")
        key = np.frombuffer(raw, dtype="<u8", count=_N, offset=24).astype(np.uint32)
        off = 24 + 8 * _N
        _, normal_y, _, normal_valid = struct.unpack_from("<dddi", raw, off)
        fnext, fvalid = struct.unpack_from("<f?", raw, off + 32)
        bg = self._bitgen
        if bg is None:
            bg = self._bitgen = np.random.MT19937(0)
        bg.state = {"bit_generator": "MT19937",
                    "state": {"key": key.tolist(), "pos": _N if left == 1 else int(nxt)}}
        self._seed = seed
        self._pending = False
        self._untouched = left == 1 and nxt == 0
        self._next_double_normal = float(normal_y) if normal_valid else None
        self._next_float_normal = float(fnext) if fvalid else None
        return self

    # -- raw draws -------------------------------------------------------------------
    def _words(self, n: int) -> np.ndarray:
        """n successive 32-bit outputs (``random()``), as uint64."""
        if n <= 0:
            return np.zeros(0, dtype=np.uint64)
        bg = self._engine()
        self._untouched = False
        return bg.random_raw(n)

    def _random64(self, n: int) -> np.ndarray:
        w = self._words(2 * n)
        return (w[0::2] << np.uint64(32)) | w[1::2]

    def _uniform24(self, n: int) -> np.ndarray:
        """at::uniform_real_distribution<float>(0, 1): float32 in [0, 1)."""
        w = self._words(n).astype(np.uint32)
        w &= np.uint32(_MASK24)
        x = w.view(np.int32).astype(np.float32)
        x *= np.float32(2.0 ** -24)
        return x

    def _uniform53(self, n: int) -> np.ndarray:
        """at::uniform_real_distribution<double>(0, 1): float64 in [0, 1)."""
        w = self._words(2 * n)
        v = ((w[0::2] & np.uint64(0x1FFFFF)) << np.uint64(32)) | w[1::2]
        return v.astype(np.float64) * (2.0 ** -53)

    def __repr__(self):
        # PyTorch's repr (torch.manual_seed returns the default generator, which programs print)
        return f"<torch._C.Generator object at {id(self):#x}>"


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Reseed the default generator (torch.manual_seed); returns it."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> np.ndarray:
    return default_generator.get_state()


def set_rng_state(state) -> None:
    default_generator.set_state(state)


# ====================================================================== helpers

def _gen(generator) -> Generator:
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a gradexpr.random.Generator, not {type(generator).__name__}")
    return generator


def _shape(shape) -> tuple:
    if shape is None:
        return ()
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimension in shape {shape}")
    return shape


def _numel(shape: tuple) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


_FLOATS = ("float16", "float32", "float64")


def _dtype(dtype) -> np.dtype:
    return np.dtype(dtype)


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _f64(v):
    """float64 view of float32 operands (exact); scalars become Python floats."""
    if isinstance(v, np.ndarray):
        return v if v.dtype == np.float64 else v.astype(np.float64)
    return float(v)


def _fma32(a, b, c, check: bool = True) -> np.ndarray:
    """Correctly rounded float32 fused multiply-add a*b + c, elementwise (vfmadd*ps).

    Operands are float32 values (float32 arrays, float64 arrays holding float32 values,
    or scalars); a or b must be an array of the result's shape.  a*b is exact in float64
    and a*b + c is rounded once to float64 and then to float32; that double rounding can
    only go wrong when the float64 sum lands exactly halfway between two float32 values,
    and those (rare) elements are redone exactly.  ``check`` may be turned off by callers
    that know a*b + c is exact in float64 or that c is a float32 and a*b a float32 too.
    """
    a64, b64, c64 = _f64(a), _f64(b), _f64(c)
    s = a64 * b64
    s += c64
    if check:
        flat = s.reshape(-1)
        mid = (flat.view(np.uint64) & np.uint64(0x1FFFFFFF)) == np.uint64(0x10000000)
        if mid.any():
            idx = np.flatnonzero(mid)

            def pick(v):
                if not isinstance(v, np.ndarray):
                    return v
                return np.broadcast_to(v, s.shape).reshape(-1)[idx]

            sm, err = _two_sum(pick(a64) * pick(b64), pick(c64))
            # nudge inexact ties toward the exact value so float32 rounding sees its side
            flat[idx] = np.where(err > 0, np.nextafter(sm, np.inf),
                                 np.where(err < 0, np.nextafter(sm, -np.inf), sm))
    return s.astype(np.float32)


_SPLIT = 134217729.0  # 2**27 + 1


def _split(x):
    t = _SPLIT * x
    hi = t - (t - x)
    return hi, x - hi


def _round_odd_sum(x, y):
    """x + y rounded to odd (Boldo-Melquiond), elementwise float64."""
    r, err = _two_sum(x, y)
    even = (r.view(np.uint64) & np.uint64(1)) == np.uint64(0)
    fix = (err != 0) & even
    if fix.any():
        r = np.where(fix, np.nextafter(r, np.where(err > 0, np.inf, -np.inf)), r)
    return r


def _fma64(a, b, c) -> np.ndarray:
    """Correctly rounded float64 fused multiply-add, elementwise (std::fma / vfmadd*sd)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    a, b, c = np.broadcast_arrays(a, b, c)
    with np.errstate(invalid="ignore", over="ignore"):
        ph = a * b
        ah, al = _split(a)
        bh, bl = _split(b)
        pl = ((ah * bh - ph) + ah * bl + al * bh) + al * bl
        uh, ul = ph, pl                       # a*b == uh + ul exactly
        th, tl = _two_sum(c, uh)
        v = _round_odd_sum(tl, ul)
        z = th + v
        # zero product, zero addend or non-finite values: the plain formula is exact/right
        plain = (ph == 0) | (c == 0) | ~np.isfinite(ph) | ~np.isfinite(c) | ~np.isfinite(z)
        if plain.any():
            z = np.where(plain, ph + c, z)
    return z


def _fma64_scalar_mean_std(v: np.ndarray, std: float, mean: float) -> np.ndarray:
    """fma(v, std, mean) with the common cheap cases done directly."""
    if std == 1.0:
        return v + mean                       # v*1 is exact
    if mean == 0.0 and math.copysign(1.0, mean) > 0:
        return v * std + 0.0                  # one rounding; +0.0 like the fma's exact -0 + +0
    return _fma64(v, std, mean)


def _fma32_scalar_mean_std(v: np.ndarray, std: np.float32, mean: np.float32) -> np.ndarray:
    if std == np.float32(1.0):
        return v + mean
    if mean == np.float32(0.0) and not np.signbit(mean):
        return v * std + np.float32(0.0)
    return _fma32(v, std, mean)


# ====================================================================== normal

_TWO_PI_D = 2.0 * math.pi


def _normal_scalar_path(g: Generator, n: int, mean: float, std: float) -> np.ndarray:
    """at::normal_distribution<double>, one sample at a time with the generator's cache."""
    out = np.empty(n, dtype=np.float64)
    if n == 0:
        return out
    cached = g._next_double_normal
    fresh = n - (1 if cached is not None else 0)
    pairs = (fresh + 1) // 2
    u = g._uniform53(2 * pairs).tolist() if pairs else []
    log1p, sqrt, sin, cos = math.log1p, math.sqrt, math.sin, math.cos
    k = 0
    for i in range(n):
        if cached is not None:
            out[i] = cached
            cached = None
        else:
            u1 = u[k]
            u2 = u[k + 1]
            k += 2
            r = sqrt(-2.0 * log1p(-u2))
            theta = _TWO_PI_D * u1
            cached = r * sin(theta)
            out[i] = r * cos(theta)
    g._next_double_normal = cached
    return _fma64_scalar_mean_std(out, float(std), float(mean))


def _normal_fill16_double(blocks: np.ndarray, mean: float, std: float) -> np.ndarray:
    """The scalar NormalFill16<double> over rows of 16 uniforms (glibc log/sincos, std::fma)."""
    u1 = (1.0 - blocks[:, :8]).ravel().tolist()
    u2 = blocks[:, 8:].ravel().tolist()
    log, sqrt, sin, cos = math.log, math.sqrt, math.sin, math.cos
    radius = [sqrt(-2.0 * log(x)) for x in u1]
    theta = [_TWO_PI_D * x for x in u2]
    rc = np.array([r * cos(t) for r, t in zip(radius, theta)], dtype=np.float64)
    rs = np.array([r * sin(t) for r, t in zip(radius, theta)], dtype=np.float64)
    out = np.empty(blocks.shape, dtype=np.float64)
    out[:, :8] = _fma64_scalar_mean_std(rc, std, mean).reshape(-1, 8)
    out[:, 8:] = _fma64_scalar_mean_std(rs, std, mean).reshape(-1, 8)
    return out


# avx_mathfun.h constants, as the float32 values in libtorch_cpu.so
_F = np.float32
_ONE = _F(1.0)
_ONE_BITS = np.uint32(0x3F800000)
_HALF = _F(0.5)
_SQRTHF = _F(0.707106781186547524)
_LOG_P = [_F(v) for v in (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
                          1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
                          3.3333331174e-1)]
_LOG_Q1 = _F(-2.12194440e-4)
_LOG_Q2 = _F(0.693359375)
_MINUS_DP1 = _F(-0.78515625)
_MINUS_DP2 = _F(-2.4187564849853515625e-4)
_MINUS_DP3 = _F(-3.77489497744594108e-8)
_SINCOF = [_F(-1.9515295891e-4), _F(8.3321608736e-3), _F(-1.6666654611e-1)]
_COSCOF = [_F(2.443315711809948e-005), _F(-1.388731625493765e-003), _F(4.166664568298827e-002)]
_FOPI = _F(1.27323954473516)
_TWO_PI_F = _F(2.0 * math.pi)
_MINUS_TWO = _F(-2.0)


def _log256_ps(x: np.ndarray) -> np.ndarray:
    """log256_ps as compiled into libtorch (AVX2 + FMA contraction), for float32 x > 0.

    (The ``max(x, FLT_MIN)`` and NaN-for-x<=0 steps are left out: the callers' x = 1 - u
    is always in [2**-24, 1].)
    """
    bits = x.view(np.uint32)
    e = (bits >> np.uint32(23)).view(np.int32)
    e -= np.int32(0x7F)
    e = e.astype(np.float32)
    e += _ONE
    m = bits & np.uint32(0x807FFFFF)
    m |= np.uint32(0x3F000000)
    x = m.view(np.float32)
    mask = x < _SQRTHF
    mask = mask.view(np.uint8).astype(np.uint32)
    np.negative(mask, out=mask)                      # all-ones where x < SQRTHF
    tmp = (m & mask).view(np.float32)
    e -= (mask & _ONE_BITS).view(np.float32)
    x = x + _F(-1.0)
    x += tmp
    z = x * x
    x64 = x.astype(np.float64)
    y = _fma32(x64, _LOG_P[0], _LOG_P[1])
    for p in _LOG_P[2:]:
        y = _fma32(y, x64, p)
    t = e * _LOG_Q1
    y *= x
    y = _fma32(y, z, t)                              # y*z + e*q1
    z *= _HALF                                       # exact
    y = _fma32(z, _F(-1.0), y, check=False)          # y - z*0.5 (vfnmadd): a float32 sum
    x += y
    return _fma32(e, _LOG_Q2, x)                     # e*q2 + x


def _sincos256_ps(theta: np.ndarray):
    """sincos256_ps as compiled into libtorch (AVX2 + FMA contraction)."""
    tb = theta.view(np.uint32)
    sign_sin = tb & np.uint32(0x80000000)
    x = (tb & np.uint32(0x7FFFFFFF)).view(np.float32)
    j = (x * _FOPI).astype(np.int32)
    j += np.int32(1)
    j &= np.int32(~1)
    y = j.astype(np.float32)
    swap = (j & np.int32(4)).view(np.uint32)
    swap <<= np.uint32(29)
    sign_sin ^= swap
    poly_mask = (j & np.int32(2)) == 0
    poly_mask = poly_mask.view(np.uint8).astype(np.uint32)
    np.negative(poly_mask, out=poly_mask)            # all-ones where j & 2 == 0
    sign_cos = j - np.int32(2)
    np.invert(sign_cos, out=sign_cos)
    sign_cos &= np.int32(4)
    sign_cos = sign_cos.view(np.uint32)
    sign_cos <<= np.uint32(29)
    # y is an even integer <= 8 and the DP constants are short, so these three sums are
    # exact in float64 (span < 53 bits) and need no tie check
    x = _fma32(y, _MINUS_DP1, x, check=False)
    x = _fma32(y, _MINUS_DP2, x, check=False)
    x = _fma32(y, _MINUS_DP3, x, check=False)
    z = x * x
    z64 = z.astype(np.float64)
    tmp = z * _HALF
    yc = _fma32(z64, _COSCOF[0], _COSCOF[1])
    yc = _fma32(yc, z64, _COSCOF[2])
    yc *= z
    np.negative(tmp, out=tmp)
    yc = _fma32(z64, yc, tmp)                        # z*y - tmp (vfmsub)
    yc += _ONE
    ys = _fma32(z64, _SINCOF[0], _SINCOF[1])
    ys = _fma32(ys, z64, _SINCOF[2])
    ys *= z
    ys = _fma32(x, ys, x)                            # x*y2 + x
    ysin2 = (ys.view(np.uint32) & poly_mask).view(np.float32)
    np.invert(poly_mask, out=poly_mask)
    ysin1 = (yc.view(np.uint32) & poly_mask).view(np.float32)
    ys -= ysin2
    yc -= ysin1
    s = ysin2 + ysin1
    c = ys + yc
    sb = s.view(np.uint32)
    sb ^= sign_sin
    cb = c.view(np.uint32)
    cb ^= sign_cos
    return s, c


_CHUNK_ROWS = 4096    # rows of 16 per pass: keeps the temporaries in cache


def _normal_fill16_float(blocks: np.ndarray, mean, std) -> np.ndarray:
    """NormalFill16<float> (AVX2) over rows of 16 float32 uniforms."""
    if len(blocks) > _CHUNK_ROWS:
        out = np.empty(blocks.shape, dtype=np.float32)
        for i in range(0, len(blocks), _CHUNK_ROWS):
            out[i:i + _CHUNK_ROWS] = _normal_fill16_float(blocks[i:i + _CHUNK_ROWS], mean, std)
        return out
    mean = np.float32(mean)
    std = np.float32(std)
    with np.errstate(all="ignore"):
        u1 = _ONE - blocks[:, :8].ravel()
        u2 = blocks[:, 8:].ravel()
        radius = np.sqrt(_MINUS_TWO * _log256_ps(u1))
        theta = _TWO_PI_F * u2
        s, c = _sincos256_ps(theta)
        n1 = radius * c
        n2 = radius * s
        out = np.empty(blocks.shape, dtype=np.float32)
        out[:, :8] = _fma32_scalar_mean_std(n1, std, mean).reshape(-1, 8)
        out[:, 8:] = _fma32_scalar_mean_std(n2, std, mean).reshape(-1, 8)
    return out


def _normal_kernel(g: Generator, n: int, mean: float, std: float, dt: np.dtype) -> np.ndarray:
    """Tensor.normal_(mean, std) on a contiguous tensor of n elements of dtype dt."""
    mean = float(mean)
    std = float(std)
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")   # PyTorch's type and words
    if dt.name not in _FLOATS:
        raise TypeError(f"normal_ is not implemented for dtype {dt.name}")
    if n < 16:
        v = _normal_scalar_path(g, n, mean, std)
        if dt.name == "float16":
            return v.astype(np.float32).astype(np.float16)
        return v.astype(dt)
    tail = n % 16
    full = n - tail
    # float/double fill the whole tensor with uniforms first; half (and bfloat16) go block
    # by block through a float buffer, so their tail block uses the next 16 draws after
    # the full blocks, not after n.
    drawn = full if dt.name == "float16" else n
    if dt.name == "float64":
        u = g._uniform53(drawn + (16 if tail else 0))
        fill = _normal_fill16_double
    else:
        u = g._uniform24(drawn + (16 if tail else 0))
        fill = _normal_fill16_float
    out = np.empty(n, dtype=u.dtype)
    out[:full] = fill(u[:full].reshape(-1, 16), mean, std).ravel()
    if tail:
        out[n - 16:] = fill(u[drawn:].reshape(1, 16), mean, std).ravel()
    if dt.name == "float16":
        out = out.astype(np.float16)
    return out


def _is_scalar(x) -> bool:
    return np.ndim(x) == 0 and not isinstance(x, np.ndarray)


def _inplace(out: np.ndarray, other, op) -> np.ndarray:
    """out.op_(other): computed in the promoted dtype, written back in out's dtype."""
    other = np.asarray(other)
    ct = np.result_type(out.dtype, other.dtype)
    res = op(out.astype(ct, copy=False), other.astype(ct, copy=False))
    return res.astype(out.dtype, copy=False)


def normal(mean, std, shape=None, dtype="float32", generator=None) -> np.ndarray:
    """torch.normal: (float, float, size), (Tensor, float), (float, Tensor), (Tensor, Tensor)."""
    g = _gen(generator)
    dt = _dtype(dtype)
    m_scalar, s_scalar = _is_scalar(mean), _is_scalar(std)
    if m_scalar and s_scalar:
        shp = _shape(shape)
        return _normal_kernel(g, _numel(shp), mean, std, dt).reshape(shp)
    if not s_scalar:
        std_a = np.asarray(std)
        if std_a.size and not (std_a >= 0).all():
            raise ValueError("normal expects all elements of std >= 0.0")
    if s_scalar:                                   # Tensor mean, float std
        mean_a = np.asarray(mean)
        shp = mean_a.shape
        out = _normal_kernel(g, _numel(shp), 0.0, std, dt).reshape(shp)
        return _inplace(out, mean_a, np.add)
    if m_scalar:                                   # float mean, Tensor std
        shp = std_a.shape
        out = _normal_kernel(g, _numel(shp), 0.0, 1.0, dt).reshape(shp)
        out = _inplace(out, std_a, np.multiply)
        return _inplace(out, np.asarray(mean, dtype=dt), np.add)
    mean_a = np.asarray(mean)
    shp = np.broadcast_shapes(mean_a.shape, std_a.shape)
    out = _normal_kernel(g, _numel(shp), 0.0, 1.0, dt).reshape(shp)
    out = _inplace(out, std_a, np.multiply)
    return _inplace(out, mean_a, np.add)


def randn(shape, dtype="float32", generator=None) -> np.ndarray:
    shp = _shape(shape)
    return _normal_kernel(_gen(generator), _numel(shp), 0.0, 1.0, _dtype(dtype)).reshape(shp)


# ====================================================================== uniform

def uniform(low=0.0, high=1.0, shape=None, dtype="float32", generator=None) -> np.ndarray:
    """Tensor.uniform_(low, high) on a new tensor of the given shape."""
    g = _gen(generator)
    dt = _dtype(dtype)
    shp = _shape(shape)
    n = _numel(shp)
    low, high = float(low), float(high)
    if dt.name not in _FLOATS:
        raise TypeError(f"uniform_ is not implemented for dtype {dt.name}")
    info = np.finfo(dt)
    lo, hi = float(info.min), float(info.max)
    if not (lo <= low <= hi):
        raise ValueError(f"from is out of bounds for {dt.name}")
    if not (lo <= high <= hi):
        raise ValueError(f"to is out of bounds for {dt.name}")
    if not low <= high:
        raise ValueError(f"uniform_ expects to return a [from, to) range, but found from={low} > to={high}")
    if not (high - low) <= hi:
        raise ValueError(f"uniform_ expects to-from <= std::numeric_limits<{dt.name}>::max(), "
                         f"but found to={high} and from={low} which result in to-from to exceed the limit")
    if n == 0:
        return np.empty(shp, dtype=dt)
    if dt.name == "float64":
        x = g._uniform53(n)
        span = high - low
        if span == 1.0 and low == 0.0:
            v = x
        else:
            v = _fma64(x, span, low)
        v = np.where(v == high, low, v)
        return v.reshape(shp)
    f_lo, f_hi = np.float32(low), np.float32(high)
    x = g._uniform24(n)
    span = f_hi - f_lo
    if span == np.float32(1.0) and f_lo == np.float32(0.0):
        v = x
    else:
        v = _fma32(x, span, f_lo)
    if dt.name == "float16":
        v = v.astype(np.float16)
        # static_cast<at::Half>(double) goes through float
        to_s, from_s = np.float16(np.float32(high)), np.float16(np.float32(low))
    else:
        to_s, from_s = f_hi, f_lo
    v = np.where(v == to_s, from_s, v).astype(dt, copy=False)
    return v.reshape(shp)


def rand(shape, dtype="float32", generator=None) -> np.ndarray:
    return uniform(0.0, 1.0, shape, dtype, generator)


# ====================================================================== integers

def _update_from(frm: int, digits: int) -> int:
    # native/DistributionTemplates.h update_from<scalar_t>
    f1 = int(_cast_float_digits(frm + 1, digits))
    if f1 < frm:
        a = abs(frm + 1)
        k = a.bit_length() - 1
        frm = f1 + (1 << (k - digits + 1))
    return frm


def _update_to(to: int, digits: int) -> int:
    t1 = int(_cast_float_digits(to - 1, digits))
    if t1 >= to:
        a = abs(to - 1)
        k = a.bit_length() - 1
        to = t1 - (1 << (k - digits + 1))
    return to


def _cast_float_digits(v: int, digits: int) -> float:
    if digits == 53:
        return float(np.float64(v))
    v32 = np.float32(v)                       # int64 -> float (-> Half, via float)
    return float(v32 if digits == 24 else np.float16(v32))


_DIGITS = {"float16": 11, "float32": 24, "float64": 53}


def randint(low: int, high: int, shape, dtype="int64", generator=None) -> np.ndarray:
    """torch.randint(low, high, size): Tensor.random_(low, high)."""
    g = _gen(generator)
    dt = _dtype(dtype)
    shp = _shape(shape)
    n = _numel(shp)
    low, high = int(low), int(high)
    if not low < high:
        raise ValueError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if dt.name in _DIGITS:
        low = _update_from(low, _DIGITS[dt.name])
        high = _update_to(high, _DIGITS[dt.name])
        if not low < high:
            raise ValueError("random_ expects 'from' casted to dtype to be less than 'to' casted to dtype")
        info = np.finfo(dt)
        if low < info.min or high - 1 > info.max:
            raise ValueError(f"random_ bounds are out of range for {dt.name}")
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        if low < info.min or high - 1 > info.max:
            raise ValueError(f"from/to - 1 is out of bounds for {dt.name}")
    elif dt.kind == "b":
        if low < 0 or high - 1 > 1:
            raise ValueError("from/to - 1 is out of bounds for bool")
    else:
        raise TypeError(f"random_ is not implemented for dtype {dt.name}")
    rng = (high - low) & _U64
    if n == 0:
        return np.empty(shp, dtype=dt)
    w = g._random64(n) if rng >= (1 << 28) else g._words(n)
    if rng == 0:                               # range 2**64 (not reachable with int64 bounds)
        v = w.view(np.int64)
    else:
        v = (w % np.uint64(rng) + np.uint64(low & _U64)).view(np.int64)
    if dt.name == "float16":
        v = v.astype(np.float32)               # static_cast<at::Half>(int64_t) goes through float
    return v.astype(dt).reshape(shp)


def randperm(n: int, dtype="int64", generator=None) -> np.ndarray:
    """torch.randperm(n): Fisher-Yates, z = random() % (n - i), swapping i and i + z."""
    g = _gen(generator)
    dt = _dtype(dtype)
    n = int(n)
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    if dt.kind == "f" and n > 2 ** _DIGITS.get(dt.name, 53) + 1:
        raise ValueError(f"n cannot be greater than 2^{_DIGITS[dt.name]}+1 for {dt.name} dtype")
    if dt.kind in "iu" and n > 0 and n - 1 > np.iinfo(dt).max:
        raise ValueError(f"n is too large for result tensor type: '{dt.name}'")
    perm = list(range(n))
    if n > 1:
        i = np.arange(n - 1, dtype=np.uint64)
        target = (g._words(n - 1) % (np.uint64(n) - i) + i).tolist()
        for i, z in enumerate(target):
            perm[i], perm[z] = perm[z], perm[i]
    return np.array(perm, dtype=np.int64).astype(dt)


# ====================================================================== bernoulli / dropout

def bernoulli(p, shape=None, dtype="float32", generator=None) -> np.ndarray:
    """Tensor.bernoulli_(p) for a float p (shape required), or torch.bernoulli(p_array)."""
    g = _gen(generator)
    dt = _dtype(dtype)
    if _is_scalar(p):
        p = float(p)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        shp = _shape(shape)
        u = g._uniform53(_numel(shp))
        return (u < p).astype(dt).reshape(shp)
    pa = np.asarray(p)
    if pa.dtype.kind != "f":
        raise TypeError(f"bernoulli expects a floating-point probability tensor, got {pa.dtype.name}")
    shp = pa.shape if shape is None else _shape(shape)
    pa = np.broadcast_to(pa, shp)
    if pa.size and not ((pa >= 0) & (pa <= 1)).all():
        raise ValueError("bernoulli expects all elements of p to be in [0, 1]")
    n = _numel(shp)
    if pa.dtype == np.float64:
        u = g._uniform53(n).reshape(shp)
        res = u < pa
    else:
        u = g._uniform24(n).reshape(shp)
        res = u < pa.astype(np.float32)
    return res.astype(dt)


def dropout_mask(shape, p: float, dtype="float32", generator=None) -> np.ndarray:
    """The tensor F.dropout(x, p, training=True) multiplies x by: bernoulli(1-p) / (1-p)."""
    dt = _dtype(dtype)
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    shp = _shape(shape)
    if p == 0.0 or _numel(shp) == 0:
        return np.ones(shp, dtype=dt)
    if p == 1.0:
        return np.zeros(shp, dtype=dt)
    q = 1.0 - p
    noise = bernoulli(q, shp, dt, generator)
    if dt.kind == "f":
        with np.errstate(all="ignore"):
            return noise / dt.type(q)
    return noise
