"""Python's pure modules as programs import them: each a list of its public names.

The values are CPython's own functions and classes (so ``random.seed(0)`` gives CPython's
numbers and ``math.log`` rounds as CPython's does); a few are wrapped where a C function could
run past the limits (``math.factorial(10**7)``, ``list(itertools.count())``), where the real
one would reach outside the program (``time.sleep`` beyond the wall-time limit), or where the
result must be readable by a program (``namedtuple``'s classes).
"""
from __future__ import annotations

import math as _math

from gradexpr import errors, limits

from . import guards
from .namespace import ModuleNamespace, names_of

__all__ = ["BUILDERS"]

# ---------------------------------------------------------------- math

_MATH = """acos acosh asin asinh atan atan2 atanh cbrt ceil comb copysign cos cosh degrees dist e erf erfc exp exp2
expm1 fabs factorial floor fmod frexp fsum gamma gcd hypot inf isclose isfinite isinf isnan isqrt lcm ldexp lgamma log
log10 log1p log2 modf nan nextafter perm pi pow prod radians remainder sin sinh sqrt tan tanh tau trunc ulp"""


def _digits_of_factorial(n):
    return _math.lgamma(n + 1) / _math.log(10) if n > 1 else 1


def _int_arg(x):
    return x if type(x) is int else None


def _factorial(n, /):
    k = _int_arg(n)
    if k is not None and k > 1:
        guards._b.check_int_digits(_digits_of_factorial(k))
    return _math.factorial(n)


def _comb_or_perm(real):
    def call(n, k=None, /):
        a, b = _int_arg(n), _int_arg(k)
        if a is not None and a > 1:
            b = a if b is None else min(b, a)
            if b is not None and b > 0:
                guards._b.check_int_digits(_digits_of_factorial(a) - _digits_of_factorial(a - b))
        return real(n) if k is None else real(n, k)
    return call


def _prod(iterable, /, *, start=1):
    return _math.prod(guards.bounded(iterable, consume=True), start=start)


def _fsum(iterable, /):
    return _math.fsum(guards.bounded(iterable, consume=True))


def build_math():
    for target, guard in ((_math.factorial, _factorial), (_math.comb, _comb_or_perm(_math.comb)),
                          (_math.perm, _comb_or_perm(_math.perm)), (_math.prod, _prod), (_math.fsum, _fsum)):
        guards.guard_call(target, guard)
    return ModuleNamespace("math", names_of(_math, _MATH))


# ---------------------------------------------------------------- itertools

_ITERTOOLS = """accumulate chain combinations combinations_with_replacement compress count cycle dropwhile filterfalse
groupby islice pairwise permutations product repeat starmap takewhile tee zip_longest"""


def build_itertools():
    import itertools
    names = {n: guards.counted(f) for n, f in names_of(itertools, _ITERTOOLS).items()}

    def from_iterable(iterables):
        return guards.Counted(itertools.chain.from_iterable(guards.bounded(iterables)))
    names["chain"] = _with_attributes(names["chain"], from_iterable=from_iterable)
    return ModuleNamespace("itertools", names)


class _FunctionWithAttributes:
    """A callable with public attributes (``itertools.chain.from_iterable``)."""

    _gx_exposed = True

    def __init__(self, f, attributes):
        self._f = f
        self.__dict__.update(attributes)

    def __call__(self, *args, **kwargs):
        return self._f(*args, **kwargs)

    def __repr__(self):
        return f"<class 'itertools.{self._f.__name__}'>"


def _with_attributes(f, **attributes):
    return _FunctionWithAttributes(f, attributes)


# ---------------------------------------------------------------- functools

_FUNCTOOLS = """cache cached_property cmp_to_key lru_cache partial partialmethod reduce singledispatch
singledispatchmethod total_ordering update_wrapper wraps WRAPPER_ASSIGNMENTS WRAPPER_UPDATES"""


def build_functools():
    import functools
    guards.guard_call(functools.reduce, lambda function, iterable, *initial:
                      functools.reduce(function, guards.bounded(iterable, consume=True), *initial))
    guards.allow_attributes(functools.partial, "func args keywords")
    cache_wrapper = type(functools.lru_cache()(lambda: None))
    guards.allow_attributes(cache_wrapper, "cache_info cache_clear cache_parameters")
    info = functools.lru_cache()(lambda: None).cache_info()
    guards.allow_attributes(type(info), "hits misses maxsize currsize")
    return ModuleNamespace("functools", names_of(functools, _FUNCTOOLS), star=functools.__all__)


# ---------------------------------------------------------------- collections

_COLLECTIONS = "ChainMap Counter OrderedDict UserDict UserList UserString defaultdict deque namedtuple"


def _namedtuple(typename, field_names, *, rename=False, defaults=None, module=None):
    """CPython's ``namedtuple``; its fields readable by the program (the class is exposed),
    and the class in ``__main__`` as the program's own classes are."""
    import collections
    cls = collections.namedtuple(typename, field_names, rename=rename, defaults=defaults,
                                 module="__main__" if module is None else module)
    cls._gx_exposed = True
    return cls


def _bounded_constructor(cls):
    def make(*args, **kwargs):
        if args:
            args = (guards.bounded(args[0]),) + args[1:]
        return cls(*args, **kwargs)
    return make


def build_collections():
    import collections
    names = names_of(collections, _COLLECTIONS, namedtuple=_namedtuple)
    for cls in (collections.deque, collections.Counter, collections.OrderedDict, collections.ChainMap):
        guards.guard_call(cls, _bounded_constructor(cls))
    guards.guard_call(collections.defaultdict, lambda factory=None, *args, **kwargs: collections.defaultdict(
        factory, *[guards.bounded(a) for a in args[:1]], *args[1:], **kwargs))
    guards.allow_attributes(collections.deque, "append appendleft pop popleft extend extendleft rotate clear copy "
                                               "count index insert remove reverse maxlen")
    guards.allow_attributes(collections.Counter, "most_common elements subtract total")
    guards.allow_attributes(collections.OrderedDict, "move_to_end popitem")
    guards.allow_attributes(collections.defaultdict, "default_factory")
    guards.allow_attributes(collections.ChainMap, "maps new_child parents keys values items get")
    return ModuleNamespace("collections", names, star=collections.__all__)


# ---------------------------------------------------------------- copy

def build_copy():
    import copy
    return ModuleNamespace("copy", names_of(copy, "copy deepcopy Error error"), star=copy.__all__)


# ---------------------------------------------------------------- typing

_TYPING = """Annotated Any AnyStr Callable ClassVar Collection Container Counter DefaultDict Deque Dict Final
FrozenSet Generator Generic Hashable Iterable Iterator List Literal Mapping MutableMapping MutableSequence MutableSet
NamedTuple NewType NoReturn Optional OrderedDict Protocol Sequence Set Sized SupportsFloat SupportsIndex SupportsInt
Tuple Type TypeVar TypedDict Union TYPE_CHECKING cast final overload runtime_checkable no_type_check ParamSpec Concatenate
TypeAlias Self Never Required NotRequired LiteralString Unpack TypeVarTuple assert_never assert_type reveal_type"""


def build_typing():
    import typing
    return ModuleNamespace("typing", names_of(typing, _TYPING), star=[n for n in typing.__all__])


# ---------------------------------------------------------------- time

def _sleep(seconds):
    """``time.sleep`` within the program's wall-time limit (beyond it: the limit's error now)."""
    import time
    rt = guards._b.current_runtime.get()
    deadline = getattr(rt, "deadline", None)
    if deadline is not None and time.monotonic() + float(seconds) > deadline:
        lim = limits.current().max_seconds
        raise limits.exceeded("the running time (seconds)", lim, "max_seconds")
    if seconds < 0:
        raise errors.ValueError("sleep length must be non-negative")
    time.sleep(seconds)


def build_time():
    import time
    names = names_of(time, """time time_ns perf_counter perf_counter_ns monotonic monotonic_ns process_time
                               process_time_ns thread_time thread_time_ns""", sleep=_sleep)
    return ModuleNamespace("time", names)


# ---------------------------------------------------------------- dataclasses

def build_dataclasses():
    import dataclasses
    names = names_of(dataclasses, """dataclass field fields asdict astuple replace is_dataclass Field
                                     FrozenInstanceError InitVar KW_ONLY MISSING""")
    return ModuleNamespace("dataclasses", names, star=[n for n in dataclasses.__all__ if n in names])


BUILDERS = {
    "math": build_math, "itertools": build_itertools, "functools": build_functools,
    "collections": build_collections, "copy": build_copy, "typing": build_typing, "time": build_time,
    "dataclasses": build_dataclasses,
}
