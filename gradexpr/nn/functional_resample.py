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


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _check_block_args(kernel_size, dilation, padding, stride):
    """ATen's im2col/col2im checks of the block arguments (im2col_shape_check.h)."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    if not (kw > 0 and kh > 0):
        raise errors.RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {kh} "
                                  f"kernel_width: {kw}")
    if not (dw > 0 and dh > 0):
        raise errors.RuntimeError(f"dilation should be greater than zero, but got dilation_height: {dh} "
                                  f"dilation_width: {dw}")
    if not (pw >= 0 and ph >= 0):
        raise errors.RuntimeError(f"padding should be non-negative, but got pad_height: {ph} pad_width: {pw}")
    if not (sw > 0 and sh > 0):
        raise errors.RuntimeError(f"stride should be greater than zero, but got stride_height: {sh} "
                                  f"stride_width: {sw}")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """``F.unfold``: ATen's im2col (Im2ColBackward0)."""
    params = {"kernel_size": _pair(kernel_size), "dilation": _pair(dilation), "padding": _pair(padding),
              "stride": _pair(stride)}
    _check_block_args(*params.values())
    shape = tuple(input.shape)
    for d in (1, 2):                # ATen reads input.size(1) and input.size(2) before checking the dims
        if d >= len(shape):
            if not shape:
                raise errors.IndexError(f"dimension specified as {d} but tensor has no dimensions")
            raise errors.IndexError(f"Dimension out of range (expected to be in range of [-{len(shape)}, "
                                    f"{len(shape) - 1}], but got {d})")
    valid = len(shape) in (3, 4) and all(s != 0 for s in shape[-3 if len(shape) == 3 else 1:][:2])
    if len(shape) == 3:
        valid = valid and shape[0] != 0
    if not valid:
        raise errors.RuntimeError("Expected 3D or 4D (batch mode) tensor input with possible 0 batch size and "
                                  f"non-zero dimensions, but got: {list(shape)}")
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = params.values()
    oh, ow = R.blocks(shape[-2:], *params.values())
    if oh < 1 or ow < 1:
        raise errors.RuntimeError(f"Given input with spatial size ({shape[-2]}, {shape[-2]}), kernel_size=({kh}, "
                                  f"{kw}), dilation=({dh}, {dw}), padding=({ph}, {pw}), calculated shape of the array "
                                  f"of sliding blocks as ({oh}, {ow}), but its components must be at least one.")
    return apply(R.im2col, (input,), params)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """``F.fold``: ATen's col2im (Col2ImBackward0)."""
    output_size = _pair(output_size)
    params = {"kernel_size": _pair(kernel_size), "dilation": _pair(dilation), "padding": _pair(padding),
              "stride": _pair(stride)}
    _check_block_args(*params.values())
    shape = tuple(input.shape)
    if not ((len(shape) == 2 and shape[0] != 0 and shape[1] != 0)
            or (len(shape) == 3 and shape[1] != 0 and shape[2] != 0)):
        raise errors.RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
                                  f"non-zero dimensions for input, but got: {list(shape)}")
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = params.values()
    planes, length = shape[-2], shape[-1]
    if planes % (kh * kw) != 0:
        raise errors.RuntimeError("Expected size of input's dimension 1 to be divisible by the product of "
                                  f"kernel_size, but got input.size(1)={planes} and kernel_size=({kh}, {kw}).")
    bh, bw = R.blocks(output_size, *params.values())
    where = (f"Given output_size=({output_size[0]}, {output_size[1]}), kernel_size=({kh}, {kw}), dilation=({dh}, "
             f"{dw}), padding=({ph}, {pw}), stride=({sh}, {sw}), ")
    if length != bh * bw:
        raise errors.RuntimeError(where + "expected size of input's dimension 2 to match the calculated number of "
                                  f"sliding blocks {bh} * {bw} = {bh * bw}, but got input.size(2)={length}.")
    if bh < 1 or bw < 1:
        raise errors.RuntimeError(where + f"calculated shape of the array of sliding blocks as ({bh}, {bw}), which "
                                  "is too small (non-positive)")
    return apply(R.col2im, (input,), {"output_size": output_size, **params})


NAMES = "pixel_shuffle pixel_unshuffle channel_shuffle interpolate unfold fold".split()
