"""The ``torch.nn.functional`` pooling functions with PyTorch's signatures, checks and nodes, over the
entries of ``ops/nn_pooling.py``. As ATen does, the 1-d forms pool the input unsqueezed at -2 with
the 2-d op and squeeze it back (``SqueezeBackward1`` over the 2-d node), and an adaptive average
pooling to all ones is a mean (``MeanBackward1``)."""
from __future__ import annotations

from .. import errors
from .. import functions as T
from ..op import apply, apply_ex
from ..ops import nn_pooling as P


def _tuple(value, n):
    if isinstance(value, (tuple, list)):
        return tuple(int(v) for v in value) * (n if len(value) == 1 else 1)
    return (int(value),) * n


def _ntuple(value, n):
    """torch's ``_ntuple``: a value repeated n times (kept as it is: ratios are floats)."""
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


def _stride(stride, kernel, n):
    """() when not given: the 2-d and 3-d nodes keep it so (the kernel then strides by the kernel size)."""
    return () if stride is None or stride == [] or stride == () else _tuple(stride, n)


def _check_padding(padding, kernel, dilation):
    for p, k in zip(padding, kernel):
        if p > k // 2:
            raise errors.RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                                      f"kernel_size={k} and dilation={dilation[0]}")


def _check_rank(input, ranks, message):
    if input.dim() not in ranks:
        raise errors.RuntimeError(message)


def _check_1d(name, input):
    if input.dim() not in (2, 3):
        raise errors.RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for "
                                  f"argument #1 'self' (while checking arguments for {name})")


def _max_pool(nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    kernel = _tuple(kernel_size, nd)
    padding, dilation = _tuple(padding, nd), _tuple(dilation, nd)
    _check_padding(padding, kernel, dilation)
    _check_rank(input, (nd + 1, nd + 2), f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")
    entry = P.max_pool2d_with_indices if nd == 2 else P.max_pool3d_with_indices
    out, extras = apply_ex(entry, (input,), {"kernel_size": kernel, "stride": _stride(stride, kernel, nd),
                                             "padding": padding, "dilation": dilation, "ceil_mode": bool(ceil_mode)})
    return (out, _indices(extras)) if return_indices else out


def _indices(extras):
    indices = extras["indices"]
    return indices if isinstance(indices, T.Tensor) else T.Tensor._make(indices)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if input.dim() not in (2, 3):
        raise errors.RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch "
                                  f"size for input, but got:{list(input.shape)}")
    kernel = _tuple(kernel_size, 1)
    stride = kernel if stride is None or stride == [] or stride == () else _tuple(stride, 1)
    result = _max_pool(2, input.unsqueeze(-2), (1,) + kernel, (1,) + stride, (0,) + _tuple(padding, 1),
                       (1,) + _tuple(dilation, 1), ceil_mode, True)
    out, indices = result[0].squeeze(-2), result[1].squeeze(-2)
    return (out, indices) if return_indices else out


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _avg_pool(nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    kernel = _tuple(kernel_size, nd)
    padding = _tuple(padding, nd)
    _check_padding(padding, kernel, (1,))
    if nd == 2:
        _check_rank(input, (3, 4), "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for "
                                   f"input, but got:{list(input.shape)}")
    else:
        _check_rank(input, (4, 5), "non-empty 4D or 5D (batch mode) tensor expected for input")
    entry = P.avg_pool2d if nd == 2 else P.avg_pool3d
    return apply(entry, (input,), {"kernel_size": kernel, "stride": _stride(stride, kernel, nd), "padding": padding,
                                   "ceil_mode": bool(ceil_mode), "count_include_pad": bool(count_include_pad),
                                   "divisor_override": divisor_override})


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    _check_1d("avg_pool1d", input)
    kernel = _tuple(kernel_size, 1)
    stride = kernel if stride is None or stride == [] or stride == () else _tuple(stride, 1)
    out = _avg_pool(2, input.unsqueeze(-2), (1,) + kernel, (1,) + stride, (0,) + _tuple(padding, 1), ceil_mode,
                    count_include_pad, None)
    return out.squeeze(-2)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _output_size(input, output_size, nd):
    """The adaptive output size, None standing for the input's size in that dim."""
    size = list(output_size) if isinstance(output_size, (tuple, list)) else [output_size] * nd
    return tuple(int(input.shape[input.dim() - nd + i]) if s is None else int(s) for i, s in enumerate(size))


def _adaptive_avg(nd, input, output_size):
    if input.dim() not in (nd + 1, nd + 2):
        raise errors.RuntimeError(f"adaptive_avg_pool{nd}d(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
                                  f"{list(input.shape)}")
    size = _output_size(input, output_size, nd)
    if all(s == 1 for s in size):          # ATen's shortcut: a mean over the pooled dims (MeanBackward1)
        return input.mean(tuple(range(-1, -nd - 1, -1)), keepdim=True)
    return apply(P.adaptive_avg_pool2d if nd == 2 else P.adaptive_avg_pool3d, (input,), {"output_size": size})


def adaptive_avg_pool1d(input, output_size):
    _check_1d("adaptive_avg_pool1d", input)
    return _adaptive_avg(2, input.unsqueeze(-2), (1,) + _tuple(output_size, 1)).squeeze(-2)


def adaptive_avg_pool2d(input, output_size):
    return _adaptive_avg(2, input, output_size)


def adaptive_avg_pool3d(input, output_size):
    return _adaptive_avg(3, input, output_size)


def _adaptive_max(nd, input, output_size, return_indices):
    if input.dim() not in (nd + 1, nd + 2):
        raise errors.RuntimeError(f"adaptive_max_pool{nd}d(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                                  f"{list(input.shape)}")
    entry = P.adaptive_max_pool2d if nd == 2 else P.adaptive_max_pool3d
    out, extras = apply_ex(entry, (input,), {"output_size": _output_size(input, output_size, nd)})
    return (out, _indices(extras)) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    _check_1d("adaptive_max_pool1d", input)
    out, indices = _adaptive_max(2, input.unsqueeze(-2), (1,) + _tuple(output_size, 1), True)
    out, indices = out.squeeze(-2), indices.squeeze(-2)
    return (out, indices) if return_indices else out


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _adaptive_max(2, input, output_size, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _adaptive_max(3, input, output_size, return_indices)


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    nd = len(kernel_size)
    default = [(input.shape[input.dim() - nd + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(nd)]
    if output_size is None:
        return default
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise errors.ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                                f"length of '{len(output_size)}'")
    for d in range(nd):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise errors.ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})')
    return list(output_size)


def _max_unpool(nd, input, indices, kernel_size, stride, padding, output_size):
    kernel = _tuple(kernel_size, nd)
    stride = kernel if stride is None else _tuple(stride, nd)
    size = _unpool_output_size(input, kernel, stride, _tuple(padding, nd), output_size)
    return apply(P.max_unpool2d if nd == 2 else P.max_unpool3d, (input, indices), {"output_size": tuple(size)})


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    kernel = _tuple(kernel_size, 1)
    stride = kernel if stride is None else _tuple(stride, 1)
    size = _unpool_output_size(input, kernel, stride, _tuple(padding, 1), output_size)
    out = apply(P.max_unpool2d, (input.unsqueeze(-1), indices.unsqueeze(-1)), {"output_size": tuple(size) + (1,)})
    return out.squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


def _lp_pool(nd, input, norm_type, kernel_size, stride, ceil_mode):
    """PyTorch's Python: the average of the powers, times the window's size, to the 1/p (max pooling
    of |x| for p = inf)."""
    max_pool, avg_pool = ((max_pool1d, avg_pool1d), (max_pool2d, avg_pool2d), (max_pool3d, avg_pool3d))[nd - 1]
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    window = kernel_size if nd == 1 else 1
    if nd > 1:
        for k in _tuple(kernel_size, nd):
            window *= k
    from .. import nn_functional as NF
    return (T.sign(out) * NF.relu(T.abs(out))).mul(window).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


def _fractional(nd, input, kernel_size, output_size, output_ratio, return_indices, _random_samples):
    """``F.fractional_max_pool{2,3}d`` as torch/nn/functional.py: the output size from the ratio, one
    uniform sample per plane and dim drawn with torch.rand unless given, then ATen's kernel."""
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise errors.ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        ratio = _ntuple(output_ratio, nd)
        if len(ratio) > nd:
            raise errors.ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
        output_size = [int(input.size(d - nd) * ratio[d]) for d in range(nd)]
    kernel = _tuple(kernel_size, nd)
    output_size = _tuple(output_size, nd)
    if _random_samples is not None and _random_samples.dtype != input.dtype:      # (ATen's first check)
        raise errors.RuntimeError("Expect _random_samples to have the same dtype as input")
    if input.dim() not in (nd + 1, nd + 2):
        raise errors.RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    if _random_samples is None:
        n_batch = 1 if input.dim() == nd + 1 else input.size(0)
        _random_samples = T.rand(n_batch, input.size(-nd - 1), nd, dtype=input.dtype)
    names = ("time", "height", "width")[3 - nd:]
    # (ATen's 3-d kernel wants the last window to end before the input's end, and names itself _out)
    last, label = (1, f"{name}_out") if nd == 3 else (0, name)
    for d in range(nd):
        if output_size[d] + kernel[d] - 1 + last > input.size(d - nd):
            raise errors.RuntimeError(f"{label}(): pool {names[d]} {kernel[d]} too large relative to input "
                                      f"{names[d]} {input.size(d - nd)}")
    entry = P.fractional_max_pool2d if nd == 2 else P.fractional_max_pool3d
    out, extras = apply_ex(entry, (input,), {"kernel_size": kernel, "output_size": tuple(output_size),
                                             "random_samples": _random_samples._data})
    return (out, _indices(extras)) if return_indices else out


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    return _fractional(2, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    return _fractional(3, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


NAMES = ("fractional_max_pool2d fractional_max_pool3d max_pool1d max_pool2d max_pool3d avg_pool1d avg_pool2d avg_pool3d adaptive_avg_pool1d adaptive_avg_pool2d "
         "adaptive_avg_pool3d adaptive_max_pool1d adaptive_max_pool2d adaptive_max_pool3d max_unpool1d max_unpool2d max_unpool3d "
         "lp_pool1d lp_pool2d lp_pool3d").split()
