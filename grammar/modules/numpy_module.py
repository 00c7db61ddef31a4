"""``import numpy as np``: NumPy itself, behind lists of names.

Arrays, their creation and dtypes, math, reductions, ``np.linalg`` and ``np.random`` (the
legacy seeded functions and ``default_rng``) are NumPy's own, so values and printing are
NumPy's. Never reachable: files and pickles (SPEC 3: ``save``, ``load``, ``fromfile``,
``tofile``, ``memmap``, ``loadtxt``, ``savetxt``, ``genfromtxt``…, which say so when a program
reaches for them), raw memory (``ctypeslib``, ``frombuffer``, ``ndarray.data``/``ctypes``),
and NumPy's internals. Functions that allocate from a size argument check it against the
element limit first.
"""
from __future__ import annotations

import functools

import numpy as _np

from . import guards
from .namespace import ModuleNamespace, names_of, refusal

__all__ = ["build_numpy", "NDARRAY_ATTRIBUTES"]

_FILES = "it reads or writes files, and gradexpr allows no file, process or network access"
_MEMORY = "it reaches raw memory"
_REFUSED = {
    **{n: _FILES for n in """save savez savez_compressed load loadtxt savetxt genfromtxt fromfile fromregex memmap
                            DataSource lib""".split()},
    **{n: _MEMORY for n in "ctypeslib frombuffer from_dlpack fromiter".split()},
}

_CONSTANTS = "pi e inf nan newaxis euler_gamma"
_DTYPES = """dtype ndarray generic number integer floating bool bool_ int8 int16 int32 int64 uint8 uint16 uint32 uint64
float16 float32 float64 half single double longlong intp uintp complex64 complex128 finfo iinfo"""
_CREATION = """array asarray asanyarray ascontiguousarray copy zeros ones empty full zeros_like ones_like empty_like
full_like arange linspace logspace geomspace eye identity diag diagflat tri tril triu meshgrid indices"""
_MATH = """add subtract multiply divide true_divide floor_divide power float_power mod remainder fmod divmod negative
positive abs absolute fabs sign heaviside sqrt cbrt square reciprocal exp exp2 expm1 log log2 log10 log1p logaddexp
logaddexp2 sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh arcsinh arccosh arctanh hypot deg2rad rad2deg
degrees radians maximum minimum fmax fmin clip floor ceil round around rint trunc fix isnan isinf isfinite isclose
allclose array_equal array_equiv logical_and logical_or logical_not logical_xor greater greater_equal less
less_equal equal not_equal bitwise_and bitwise_or bitwise_xor invert left_shift right_shift where select
nan_to_num real imag conj conjugate angle sinc interp gcd lcm copysign nextafter spacing signbit modf frexp ldexp"""
_REDUCTIONS = """sum prod mean std var median average percentile quantile max min amax amin argmax argmin ptp cumsum
cumprod diff gradient any all count_nonzero nonzero argwhere flatnonzero nansum nanprod nanmean nanstd nanvar nanmax
nanmin nanargmax nanargmin nanmedian nancumsum unique sort argsort lexsort searchsorted partition argpartition
histogram bincount digitize trapezoid cov corrcoef correlate convolve"""
_LINALG_TOP = "dot vdot inner outer matmul tensordot einsum kron cross trace"
_SHAPE = """reshape ravel transpose swapaxes moveaxis squeeze expand_dims atleast_1d atleast_2d atleast_3d broadcast_to
broadcast_arrays broadcast_shapes concatenate concat stack vstack hstack dstack column_stack split array_split
hsplit vsplit tile repeat flip fliplr flipud roll rot90 take take_along_axis put put_along_axis append insert delete
resize shape ndim size squeeze isscalar result_type promote_types can_cast iscomplexobj isrealobj
polyfit polyval poly1d roots cumulative_sum"""
_PRINTING = "set_printoptions get_printoptions printoptions array2string array_repr array_str format_float_positional format_float_scientific"

_LINALG = """norm det inv pinv solve lstsq eig eigh eigvals eigvalsh svd qr cholesky matrix_rank matrix_power slogdet
cond trace multi_dot LinAlgError"""

_RANDOM_LEGACY = """seed rand randn randint random random_sample ranf sample normal uniform choice shuffle permutation
standard_normal binomial poisson exponential beta gamma laplace logistic lognormal multinomial multivariate_normal
geometric chisquare dirichlet standard_cauchy standard_exponential standard_gamma standard_t triangular vonmises
wald weibull zipf hypergeometric negative_binomial pareto power rayleigh gumbel bytes"""
_GENERATOR_METHODS = """random integers normal standard_normal uniform choice shuffle permutation permuted exponential
binomial poisson beta gamma laplace logistic lognormal multinomial multivariate_normal geometric chisquare dirichlet
standard_cauchy standard_exponential standard_gamma standard_t triangular vonmises wald weibull zipf bit_generator"""

NDARRAY_ATTRIBUTES = """shape dtype ndim size itemsize nbytes T mT real imag flat strides tolist item sum mean std var
prod min max ptp argmin argmax any all cumsum cumprod round clip reshape ravel flatten transpose swapaxes squeeze
astype copy nonzero conjugate conj dot trace diagonal sort argsort fill take put choose searchsorted
compress is_integer as_integer_ratio"""
"""What a program may read of an ndarray (SPEC 3): never ``data``, ``ctypes``, ``base``,
``tofile``, ``dump``/``dumps``, ``view``, ``__array_interface__``."""


def _size_checked(f, size_positions=(), size_names=("size", "shape")):
    """``f`` refusing, before it allocates, a ``size``/``shape`` above the element limit."""
    @functools.wraps(f)
    def call(*args, **kwargs):
        for i in size_positions:
            if i == "*":
                if args and all(isinstance(a, int) for a in args):
                    guards.elements_of(args)
            elif i < len(args):
                guards.elements_of(args[i])
        for n in size_names:
            if n in kwargs:
                guards.elements_of(kwargs[n])
        return f(*args, **kwargs)
    return call


def _arange_checked(f):
    @functools.wraps(f)
    def call(*args, **kwargs):
        try:
            n = len(range(*(int(a) for a in args))) if args and all(isinstance(a, (int, float)) for a in args) else 0
        except (ValueError, OverflowError):
            n = 0
        guards.elements_of(n)
        return f(*args, **kwargs)
    return call


def _repeat_checked(f):
    @functools.wraps(f)
    def call(a, repeats, axis=None):
        if isinstance(repeats, int):
            guards.elements_of(_np.size(a) * repeats)
        return f(a, repeats, axis)
    return call


def _not_object(f):
    """``np.array(..., dtype=object)``: refused (pickles and arbitrary Python objects)."""
    @functools.wraps(f)
    def call(*args, **kwargs):
        dt = kwargs.get("dtype", args[1] if len(args) > 1 and f is not _np.full else None)
        if dt is object or (dt is not None and _np.dtype(dt).kind == "O" if isinstance(dt, (str, type, _np.dtype))
                            else False):
            raise TypeError("object arrays are not available in gradexpr")
        return f(*args, **kwargs)
    return call


def _random_namespace():
    legacy = names_of(_np.random, _RANDOM_LEGACY)
    sized = {n: _size_checked(f, (2,) if n in ("normal", "uniform", "randint", "binomial") else
                              (0,) if n in ("random", "random_sample", "ranf", "sample", "standard_normal") else (),
                              ) for n, f in legacy.items()}
    for n in ("rand", "randn"):
        sized[n] = _size_checked(legacy[n], ("*",))
    generator = _np.random.Generator
    guards.allow_attributes(generator, _GENERATOR_METHODS)
    guards.allow_attributes(_np.random.RandomState, _RANDOM_LEGACY.replace("bytes", ""))
    for name in _GENERATOR_METHODS.split():
        guards.guard_method(generator, name, lambda m: _size_checked(m, (), ("size",)))
    for name in _RANDOM_LEGACY.split():
        guards.guard_method(_np.random.RandomState, name, lambda m: _size_checked(m, (), ("size",)))
    return ModuleNamespace("numpy.random", {
        **sized, "default_rng": _np.random.default_rng, "Generator": generator,
        "RandomState": _np.random.RandomState, "PCG64": _np.random.PCG64, "SeedSequence": _np.random.SeedSequence})


def build_numpy():
    names = {}
    for group in (_CONSTANTS, _DTYPES, _CREATION, _MATH, _REDUCTIONS, _LINALG_TOP, _SHAPE, _PRINTING):
        names.update(names_of(_np, group))
    for n in ("zeros", "ones", "empty"):
        names[n] = _not_object(_size_checked(names[n], (0,)))
    names["full"] = _not_object(_size_checked(names["full"], (0,)))
    for n in ("array", "asarray"):
        names[n] = _not_object(names[n])
    names["eye"] = _size_checked(names["eye"], (0,), ())
    names["identity"] = _size_checked(names["identity"], (0,), ())
    names["arange"] = _arange_checked(names["arange"])
    for n in ("linspace", "logspace", "geomspace"):
        names[n] = _size_checked(names[n], (2,), ("num",))
    names["tile"] = _size_checked(names["tile"], (1,), ("reps",))
    names["resize"] = _size_checked(names["resize"], (1,), ("new_shape",))
    names["indices"] = _size_checked(names["indices"], (0,), ("dimensions",))
    names["repeat"] = _repeat_checked(names["repeat"])
    names["linalg"] = ModuleNamespace("numpy.linalg", names_of(_np.linalg, _LINALG))
    names["random"] = _random_namespace()
    guards.allow_attributes(_np.ndarray, NDARRAY_ATTRIBUTES)
    guards.allow_attributes(_np.generic, NDARRAY_ATTRIBUTES)
    guards.allow_attributes(_np.dtype, "name kind itemsize char type str")
    guards.allow_attributes(_np.finfo, "eps max min tiny bits resolution dtype smallest_normal")
    guards.allow_attributes(_np.iinfo, "max min bits dtype")
    return ModuleNamespace("numpy", names, refused=_REFUSED,
                           star=[n for n in names if n not in ("linalg", "random")])


def refused_reason(name: str):
    """Why ``numpy.name`` is refused (None if it is not): for messages elsewhere."""
    why = _REFUSED.get(name)
    return refusal(f"numpy.{name}", why) if why else None
