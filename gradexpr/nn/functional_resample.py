"""``torch.nn.functional``'s resampling: pixel_shuffle, pixel_unshuffle, channel_shuffle and
interpolate (nearest, nearest-exact, area, linear, bilinear, trilinear), with PyTorch's checks, over
the entries of ``ops/nn_resample.py``; interpolate is PyTorch's Python, its ``area`` the adaptive
average pooling."""
from __future__ import annotations

import math

from .. import errors
from ..op import apply
from ..ops import nn_resample as R


def pixel_shuffle(input, upscale_factor):
    r = int(upscale_factor)
    if input.dim() < 3:
        raise errors.RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                                  f"{input.dim()} dimension(s)")
    if r <= 0:
        raise errors.RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    if input.shape[-3] % (r * r):
        raise errors.RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
                                  f"square of upscale_factor, but input.size(-3)={input.shape[-3]} is not divisible "
                                  f"by {r * r}")
    return apply(R.pixel_shuffle, (input,), {"upscale_factor": r})


def pixel_unshuffle(input, downscale_factor):
    r = int(downscale_factor)
    if input.dim() < 3:
        raise errors.RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input "
                                  f"with {input.dim()} dimension(s)")
    if r <= 0:
        raise errors.RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    for what, size in (("height", input.shape[-2]), ("width", input.shape[-1])):
        if size % r:
            raise errors.RuntimeError(f"pixel_unshuffle expects {what} to be divisible by downscale_factor, but "
                                      f"input.size({-2 if what == 'height' else -1})={size} is not divisible by {r}")
    return apply(R.pixel_unshuffle, (input,), {"downscale_factor": r})


def channel_shuffle(input, groups):
    groups = int(groups)
    if groups <= 0:
        raise errors.RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if input.dim() <= 2:
        raise errors.RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                                  f"{input.dim()} dimension(s)")
    if input.shape[1] % groups:
        raise errors.RuntimeError(f"Number of channels must be divisible by groups. Got {input.shape[1]} channels and "
                                  f"{groups} groups.")
    return apply(R.channel_shuffle, (input,), {"groups": groups})


_NEAREST = {("nearest", 1): R.upsample_nearest1d, ("nearest", 2): R.upsample_nearest2d,
            ("nearest", 3): R.upsample_nearest3d, ("nearest-exact", 1): R.upsample_nearest_exact1d,
            ("nearest-exact", 2): R.upsample_nearest_exact2d, ("nearest-exact", 3): R.upsample_nearest_exact3d}
_LINEAR = {("linear", 1): R.upsample_linear1d, ("bilinear", 2): R.upsample_bilinear2d,
           ("trilinear", 3): R.upsample_trilinear3d}
_NEEDS = {"linear": 3, "bilinear": 4, "trilinear": 5}


def _sizes(input, size, scale_factor, dim):
    """(output_size, scale_factors) as interpolate's Python settles them."""
    if size is not None and scale_factor is not None:
        raise errors.ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise errors.ValueError(
                    "Input and output must have the same number of spatial dimensions, but got input with spatial "
                    f"dimensions of {list(input.shape[2:])} and output size of {size}. Please provide input tensor in "
                    "(N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
            return list(size), None
        return [size] * dim, None
    if scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise errors.ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but got input with "
                    f"spatial dimensions of {list(input.shape[2:])} and scale_factor of shape {scale_factor}. Please "
                    "provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            return None, list(scale_factor)
        return None, [scale_factor] * dim
    raise errors.ValueError("either size or scale_factor should be defined")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise errors.ValueError("align_corners option can only be set with the interpolating modes: "
                                    "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    output_size, scale_factors = _sizes(input, size, scale_factor, dim)
    if recompute_scale_factor and size is not None:
        raise errors.ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [math.floor(float(input.shape[i + 2]) * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias or mode in ("bicubic", "lanczos"):         # (not written yet: refused, never approximated)
        raise errors.NotImplementedError(f"gradexpr: interpolate(mode={mode!r}, antialias={antialias}) is not "
                                         "supported")
    if mode == "area" and dim in (1, 2, 3):
        from . import functional_pooling as FP
        return (FP.adaptive_avg_pool1d, FP.adaptive_avg_pool2d, FP.adaptive_avg_pool3d)[dim - 1](input, output_size)
    entry = _NEAREST.get((mode, dim)) or _LINEAR.get((mode, dim))
    if entry is None:
        if mode in _NEEDS and input.dim() in (3, 4, 5):
            raise errors.NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {_NEEDS[mode]}D input")
        raise errors.NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the modes: nearest | "
            f"linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got {mode})")
    scales = tuple(float(s) for s in scale_factors) if scale_factors is not None else (None,) * dim
    if output_size is None:          # ATen's compute_output_size: the size times the scale, truncated
        output_size = [int(input.shape[i + 2] * float(scale_factors[i])) for i in range(dim)]
    params = {"output_size": tuple(int(s) for s in output_size), "scales": scales}
    if entry in _LINEAR.values():
        params["align_corners"] = bool(align_corners)
    return apply(entry, (input,), params)


NAMES = "pixel_shuffle pixel_unshuffle channel_shuffle interpolate".split()
