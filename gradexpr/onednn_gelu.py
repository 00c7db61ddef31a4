"""GELU (erf form) of a contiguous float32 tensor as PyTorch's CPU build computes it: with oneDNN.

ATen hands ``gelu`` and ``gelu_backward`` of a contiguous float32 input to oneDNN's eltwise primitive
(``use_mkldnn``: float32, contiguous, more than one element, mkldnn enabled) instead of its own kernel.
oneDNN's JIT kernel picks its code by processor, not by ATen's ``ATEN_CPU_CAPABILITY``:

* the backward, and the forward below AVX-512: erf by Abramowitz-Stegun 7.1.26 around oneDNN's own exp
  (a degree-5 polynomial after a floor-based reduction by ln 2), gelu = S + S·erf with S = x/2 fused
  (not ATen's x·0.5·(1 + erf));
* the forward on an AVX-512 processor (``avx512_core``): erf(x/√2) by one of 25 degree-5 minimax
  polynomials in x, chosen by x's exponent and two mantissa bits, then x·(1 + erf)·0.5.

The same steps with correctly rounded fma (exact.fma32) give its bits (measured: 0 of 400,000 values
differ from PyTorch's, forward and backward, on an AVX-512 machine). ``ONEDNN_MAX_CPU_ISA`` below
AVX512_CORE selects the AVX2 forward, as it does in oneDNN.
"""
from __future__ import annotations

import functools
import os

import numpy as np

from .exact import fma32
from .sleef import horner

_F = np.float32


def _bits(word):
    return np.array([word], np.uint32).view(_F)[0]


_LN2 = _bits(0x3F317218)
_LOG2E = _bits(0x3FB8AA3B)
_LN_FLT_MAX = _bits(0x42B17218)
_LN_FLT_MIN = _bits(0xC2AEAC50)
_EXP_POLY = tuple(_bits(w) for w in (0x3C07CFCE, 0x3D2B9D0D, 0x3E2AAD40, 0x3EFFFEE3, 0x3F7FFFFB))   # p5 .. p1
_P = _bits(0x3EA7BA05)                       # 0.3275911
_ONE_OVER_SQRT_TWO = _bits(0x3F3504F3)
_ONE_OVER_SQRT_PI = _bits(0x3F106EBA)
_ERF_POLY = tuple(_bits(w) for w in (0x3F87DC22, 0xBFBA00E3, 0x3FB5F0E3, 0xBE91A98E, 0x3E827906))   # p5 .. p1


def _exp(x):
    """oneDNN's exp_compute_vector_fwd: clamp to [ln FLT_MIN, ln FLT_MAX], n = floor(x·log2 e + 1/2),
    r = x - n·ln 2 (fused), 2·2^(n-1)·p(r); 0 below ln FLT_MIN."""
    underflow = x < _LN_FLT_MIN
    x = np.where(x < _LN_FLT_MAX, x, _LN_FLT_MAX)           # vminps / vmaxps (a nan takes the bound)
    x = np.where(x > _LN_FLT_MIN, x, _LN_FLT_MIN).astype(_F)
    n = np.floor(x * _LOG2E + _F(0.5)).astype(_F)
    r = fma32(-n, _LN2, x)
    scale = ((n - _F(1)).astype(np.int32) + 127) << 23
    scale = np.where(underflow, 0, scale).astype(np.int32).view(_F)
    p = horner(r, _EXP_POLY + (_F(1),))
    return p * scale * _F(2)


def _erf(x):
    """Abramowitz-Stegun's erf as the kernel evaluates it: sign(x)·(1 - r(t)·t·exp(-x²)), t = 1/(1 + p|x|)."""
    t = _F(1) / fma32(_P, np.abs(x), _F(1))
    e = -_exp(-(x * x)) * t
    r = horner(t, _ERF_POLY)
    return np.copysign(fma32(e, r, _F(1)), x).astype(_F)


def gelu(s):
    """oneDNN's gelu_erf forward of this processor's code path."""
    return _gelu_minimax(s) if _avx512_core() else _gelu_abramowitz_stegun(s)


def _gelu_abramowitz_stegun(s):
    """The forward below AVX-512: S + S·erf(s/√2) with S = s/2, fused."""
    s = np.asarray(s, _F)
    with np.errstate(all="ignore"):
        half = s * _F(0.5)
        return fma32(_erf(s * _ONE_OVER_SQRT_TWO), half, half)


_MINIMAX = np.array([int(word, 16) for word in """
a6f2cb94 32827792 3381cc0c 34523d4a 351ac44d 35f36d88 36ee8229 37b8a3bb 3867a213 3940033b 3a2a5a1d 3ae35863 3b7828f2
3c08b14b 3c515ed3 bb503236 bd8d8e5e be8abcd9 bf0c19a2 beccb328 3e176ced 3f470d99 3f7abb28 3f800000 00000000
3f4c422a 3f4c421f 3f4c4207 3f4c41cb 3f4c413b 3f4c3fad 3f4c3a2f 3f4c2d40 3f4c146a 3f4bc341 3f4ad08c 3f48f8cf 3f45fac7
3f404e07 3f3b980f 3f48dff3 3f78b21b 3fbb0704 40019c32 3fe536d6 3f81331e 3e6c8684 3c98f936 00000000 3f800000
b62173f4 3735e4cf 37f2ff89 388c23be 3917535c 39ab2ab0 3a60fadb 3af9b960 3b6e5491 3c0a4ec5 3ca5aa8c 3d2138d9 3d8737d4
3ddfb660 3e0f27ab 3d94004b be0efdeb bf1d96c3 bf89db58 bf6d9897 bef69fb8 bdc4f8a8 bbde6422 00000000 00000000
be081a19 be084570 be08639b be089837 be08f409 be09ab95 be0b66d0 be0e400a be124df8 be1bde02 be2f19c9 be4931bf be685fbc
be89c95f be96cbca be8044aa be0550f2 3dcfd6a1 3e94c826 3e79345f 3decec91 3ca46568 3aa1e00a 00000000 00000000
ba3d61db 39f097a3 3a5845dc 3ab1fa35 3b0cefb8 3b653ab6 3bcae527 3c221712 3c6c5840 3cc0a703 3d1dcc19 3d63656d 3d955907
3dbf9910 3dd53f69 3db7dcef 3d639ebe ba6ede48 bd22be69 bd041cf1 bc64f5ab bb097a32 b8ebf380 00000000 00000000
3cb7d80c 3c9b6050 3c978d11 3c92e850 3c8d058b 3c848454 3c6cd623 3c4c824b 3c2a7935 3be0b390 3b0651ac bb232f53 bbd42fa0
bc2c5366 bc492c9e bc2a7aa6 bbd55d04 ba823a76 3b102aa8 3ae25a7e 3a31f792 38b84375 3689bb5a 00000000 00000000
""".split()], np.uint32).reshape(6, 25).view(_F)  # coefficient of degree d for polynomial i: _MINIMAX[d, i]
_INDEX_BIAS = np.int32(np.uint32(0xC21FFFFF).view(np.int32))
_RBOUND = _bits(0x40B15CEE)                   # beyond it erf(x/√2) is ±1 (polynomial 23)


def _gelu_minimax(s):
    """The AVX-512 forward: p_i(|x|) ≈ erf(|x|/√2) with i from |x|'s exponent and top two mantissa bits
    (1 ≤ i ≤ 24, 23 beyond the bound), the sign of x, then x·(1 + erf)·0.5."""
    s = np.asarray(s, _F)
    with np.errstate(all="ignore"):
        magnitude = np.abs(s)
        index = (magnitude.view(np.int32) + _INDEX_BIAS) >> 21     # (int32 add: wraps as vpaddd does)
        index = np.clip(index, 1, 24)
        index = np.where(_RBOUND < magnitude, 23, index)
        p = horner(magnitude, [_MINIMAX[degree][index] for degree in range(5, -1, -1)])
        p = np.where(np.signbit(s), -p, p)                        # (vxorps with x's sign bit)
        return s * (p + _F(1)) * _F(0.5)


def _isa_cap():
    return os.environ.get("ONEDNN_MAX_CPU_ISA", os.environ.get("DNNL_MAX_CPU_ISA", "ALL")).upper()


def _avx512_core():
    """Whether oneDNN runs its AVX-512 (avx512_core) code here: the processor has AVX-512 F, BW, VL and DQ
    and ``ONEDNN_MAX_CPU_ISA`` does not cap it below."""
    cap = _isa_cap()
    if cap not in ("ALL", "") and not cap.startswith("AVX512_CORE") and not cap.startswith("AVX10"):
        return False
    flags = _cpu_flags()
    return {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags


# the ISA caps at or above avx512_core_fp16 in oneDNN's order (avx10_1_512 is its other name)
_FP16_CAPS = ("ALL", "", "AVX512_CORE_FP16", "AVX512_CORE_AMX", "AVX512_CORE_AMX_FP16", "AVX10_1_512",
              "AVX10_1_512_AMX", "AVX10_1_512_AMX_FP16", "AVX10_2_512", "AVX10_2_512_AMX_2")


def takes_half():
    """Whether ATen hands float16 GELU to oneDNN (``use_mkldnn``'s ``mkldnn_fp16_device_check``: oneDNN's
    effective ISA has native fp16, avx512_core_fp16). Below it (``ONEDNN_MAX_CPU_ISA=AVX2``, or a processor
    without AVX512-FP16) ATen's own kernel computes halves in float32."""
    return _isa_cap() in _FP16_CAPS and _avx512_core() and "avx512_fp16" in _cpu_flags()


@functools.lru_cache(maxsize=1)
def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def gelu_backward(grad, s):
    """oneDNN's gelu_erf backward: grad · (R/√π·exp(-R²) + 1/2 + erf(R)/2) with R = s/√2."""
    s = np.asarray(s, _F)
    with np.errstate(all="ignore"):
        r = s * _ONE_OVER_SQRT_TWO
        density = r * _ONE_OVER_SQRT_PI * _exp(-(r * r))
        return grad * fma32(_erf(r), _F(0.5), density + _F(0.5))
