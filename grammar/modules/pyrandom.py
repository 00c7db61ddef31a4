"""``import random``: CPython's Mersenne Twister, so ``random.seed(0); random.random()`` is
CPython's number. The module functions are the methods of a ``random.Random`` of gradexpr's
own (as CPython's are those of a hidden instance), so a program seeding it does not reseed
anything of the host process; ``random.Random(seed)`` gives a program more of them."""
from __future__ import annotations

from . import guards
from .namespace import ModuleNamespace

__all__ = ["build_random"]

_METHODS = """seed random uniform triangular randint randrange choice choices shuffle sample gauss normalvariate
lognormvariate expovariate vonmisesvariate gammavariate betavariate paretovariate weibullvariate getrandbits
getstate setstate randbytes"""


def _checked_k(method):
    def choices(population, weights=None, *, cum_weights=None, k=1):
        if type(k) is int:
            guards.check_size(k)
        return method(population, weights, cum_weights=cum_weights, k=k)
    return choices


def _checked_bits(method):
    def getrandbits(k, /):
        if type(k) is int:
            guards._b.check_int_digits(k * 0.30103)
        return method(k)
    return getrandbits


def _checked_bytes(method):
    def randbytes(n, /):
        if type(n) is int:
            guards.check_size(n, "a string")
        return method(n)
    return randbytes


_GUARDED = {"choices": _checked_k, "getrandbits": _checked_bits, "randbytes": _checked_bytes}


def build_random():
    import random
    instance = random.Random()
    guards.allow_attributes(random.Random, _METHODS)
    for name, wrap in _GUARDED.items():
        guards.guard_method(random.Random, name, wrap)
    names = {n: getattr(instance, n) for n in _METHODS.split() if hasattr(instance, n)}
    for name, wrap in _GUARDED.items():
        if name in names:
            names[name] = wrap(names[name])
    names["Random"] = random.Random
    return ModuleNamespace("random", names, star=[n for n in random.__all__ if n in names])
