"""The Python builtins a gradexpr program may use, and the guards that keep them safe.

``BUILTINS`` maps each allowed name to the *real* builtin (so ``print(float)`` shows
``<class 'float'>``, ``isinstance(v, list)`` works and ``max(t)`` on a tensor does what
Python does), except ``print``, which writes to the running interpreter's ``out``.

Builtins that could exhaust memory or time are guarded where they are *called*: the
interpreter looks every called builtin up in ``CALL_GUARDS`` and calls the guard instead.

- ``list``/``tuple``/``dict``/``sorted`` of a ``range`` longer than ``max_str_len``, or of a
  lazy iterator yielding more, are refused;
- ``sum``/``min``/``max``/``any``/``all`` over a ``range`` or lazy iterator count its items
  as loop iterations (``max_loop_iterations``, and the wall-time check);
- ``pow`` refuses integer results of more than ``max_int_digits`` digits (estimated first);
- ``str``/``repr`` (and ``print``, f-strings, ``format``, ``%``) refuse containers too large
  or too deeply nested to render (``text_guards.py``, loaded by the first of them);
- ``type`` only has its one-argument form.

The size guards for operators (``'ab' * n``, ``l + l``, ``2 ** n``, ``1 << n``) live here too.
"""
from __future__ import annotations

import builtins as _py
import contextvars
import math
import sys
import types

from gradexpr import errors, limits
from gradexpr.limits import LOG10_2 as _LOG10_2

__all__ = ["BUILTINS", "CALL_GUARDS", "NAMES", "current_runtime"]

# The interpreter's runtime (out stream, loop budget) while a program runs; None otherwise.
current_runtime: contextvars.ContextVar = contextvars.ContextVar("gradexpr_runtime", default=None)

_SEQ = (str, list, tuple, bytes, bytearray)
_LAZY_TYPES = frozenset({
    zip, enumerate, reversed, map, filter,
    type(iter(range(0))), type(iter([])), type(iter(())), type(reversed([])), type(iter("")),
    type(iter({}.keys())), type(iter({}.values())), type(iter({}.items())),
    type(reversed(range(0))), type((lambda: (yield))()), type(iter(range(1 << 70))),
})


# ============================================================================ limits

def _limits():
    return limits.current()


def _charge(n: int) -> None:
    """Count ``n`` loop iterations against the running program's budget."""
    rt = current_runtime.get()
    if rt is not None:
        rt.charge(n)
    else:
        lim = limits.current().max_loop_iterations
        if lim and n > lim:
            raise limits.exceeded("the number of loop iterations", lim, "max_loop_iterations")


def _too_long(what: str, n: int):
    return limits.exceeded(f"{what} of {n:,} items", limits.current().max_str_len, "max_str_len")


def check_length(n: int, what: str = "a list") -> None:
    lim = limits.current().max_str_len
    if lim and n > lim:
        if what == "a string":
            raise limits.exceeded(f"a string of {n:,} characters", lim, "max_str_len")
        raise _too_long(what, n)


def check_int_digits(digits: float) -> None:
    lim = limits.current().max_int_digits
    if lim and digits > lim:
        raise limits.exceeded(f"an integer of about {int(digits):,} digits", lim, "max_int_digits")




def _is_int(x):
    return type(x) is int or type(x) is bool or isinstance(x, int)


def _seq_len_check(seq, times):
    try:
        n = len(seq) * times
    except TypeError:
        return
    check_length(n, "a string" if isinstance(seq, str) else f"a {type(seq).__name__}")


# ============================================================================ operator guards

def _count_of(x):
    """``x`` as a repetition count (an int, or a non-engine object with ``__index__``), or None."""
    t = type(x)
    if t is int or t is bool:
        return x
    if getattr(t, "_gx_exposed", False) or not hasattr(t, "__index__"):
        return None
    try:
        return x.__index__()
    except Exception:
        return None


def _mul_check(a, b):
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        if a.bit_length() + b.bit_length() > 64:
            check_int_digits((a.bit_length() + b.bit_length()) * _LOG10_2)
    elif isinstance(a, _SEQ):
        n = _count_of(b)
        if n is not None:
            _seq_len_check(a, max(0, n))
    elif isinstance(b, _SEQ):
        n = _count_of(a)
        if n is not None:
            _seq_len_check(b, max(0, n))
    elif isinstance(a, int) and isinstance(b, int):
        check_int_digits((int(a).bit_length() + int(b).bit_length()) * _LOG10_2)


def guarded_mul(a, b):
    """``a * b``, refusing huge sequence repetitions and integer products before computing."""
    if type(a) is float or type(b) is float:
        return a * b
    _mul_check(a, b)
    return a * b


def guarded_imul(a, b):
    if type(a) is not float and type(b) is not float:
        _mul_check(a, b)
    a *= b
    return a


def guarded_add(a, b):
    """``a + b``, refusing huge concatenations first."""
    ta = type(a)
    if ta is float or ta is int:
        return a + b
    if isinstance(a, _SEQ):
        try:
            n = len(a) + len(b)
        except TypeError:
            pass
        else:
            check_length(n, "a string" if isinstance(a, str) else f"a {ta.__name__}")
    return a + b


def guarded_iadd(a, b):
    if isinstance(a, _SEQ):
        try:
            n = len(a) + len(b)
        except TypeError:
            pass
        else:
            check_length(n, "a string" if isinstance(a, str) else f"a {type(a).__name__}")
    a += b
    return a


def _pow_check(a, b):
    if _is_int(a) and _is_int(b) and b > 0:
        a = abs(int(a))
        if a > 1:
            check_int_digits(math.log10(a) * int(b) if a.bit_length() < 1000 else
                             (a.bit_length() - 1) * _LOG10_2 * int(b))


def guarded_pow(a, b):
    """``a ** b``, estimating the digits of an integer result before computing it."""
    if type(a) is float or type(b) is float:
        return a ** b
    _pow_check(a, b)
    return a ** b


def guarded_ipow(a, b):
    if type(a) is not float and type(b) is not float:
        _pow_check(a, b)
    a **= b
    return a


def _lshift_check(a, b):
    if _is_int(a) and _is_int(b) and b > 0 and a:
        check_int_digits((int(a).bit_length() + int(b)) * _LOG10_2)


def guarded_lshift(a, b):
    _lshift_check(a, b)
    return a << b


def guarded_ilshift(a, b):
    _lshift_check(a, b)
    a <<= b
    return a


def guarded_mod(a, b):
    """``a % b``; for ``'%…' % args`` refuse field widths/precisions above ``max_str_len``."""
    if type(a) is str:
        from .text_guards import _check_percent_format, _percent_args
        _check_percent_format(a, b)
        b = _percent_args(b)
    return a % b


def guarded_imod(a, b):
    if type(a) is str:
        from .text_guards import _check_percent_format, _percent_args
        _check_percent_format(a, b)
        b = _percent_args(b)
    a %= b
    return a




# ============================================================================ iteration guards

def _counted(it, cap=None):
    """Yield from iterator ``it``, counting items as loop iterations (and against ``cap``)."""
    n = 0
    for v in it:
        n += 1
        if n & 1023 == 0:
            _charge(1024)
            if cap and n > cap:
                raise _too_long("a list", n)
        yield v
    _charge(n & 1023)
    if cap and n > cap:
        raise _too_long("a list", n)


def _bounded_input(x, consume: bool):
    """The iterable ``x`` made safe to hand to a C-level consumer.

    ``consume``: the builtin goes through it (sum, min, ...): a range is charged as loop
    iterations up front. Otherwise it materialises it (list, tuple, ...): a range longer
    than ``max_str_len`` is refused. Lazy iterators are counted item by item either way."""
    t = type(x)
    if t is range:
        n = len(x)
        if consume:
            _charge(n)
        else:
            check_length(n)
        return x
    if t in _LAZY_TYPES:
        return _counted(x, None if consume else (limits.current().max_str_len or None))
    return x


def g_sum(iterable, /, start=0):
    iterable = _bounded_input(iterable, True)
    if isinstance(start, (list, tuple)):
        total = start
        for v in iterable:
            total = guarded_add(total, v)
        return total
    return _py.sum(iterable, start)


def _minmax(fn, args, kwargs):
    if len(args) == 1:
        return fn(_bounded_input(args[0], True), **kwargs)
    return fn(*args, **kwargs)


def g_max(*args, **kwargs):
    return _minmax(_py.max, args, kwargs)


def g_min(*args, **kwargs):
    return _minmax(_py.min, args, kwargs)


def g_any(iterable, /):
    if type(iterable) is range:
        iterable = _counted(iterable)
    return _py.any(_bounded_input(iterable, True))


def g_all(iterable, /):
    if type(iterable) is range:
        iterable = _counted(iterable)
    return _py.all(_bounded_input(iterable, True))


def _materialising(container):
    """``container(iterable, ...)`` (list, tuple, dict, set, frozenset) with the iterable bounded first."""
    def guard(*args, **kwargs):
        if args:
            args = (_bounded_input(args[0], False),) + args[1:]
        return container(*args, **kwargs)
    return guard


g_list, g_tuple, g_dict, g_set, g_frozenset = (_materialising(c) for c in (list, tuple, dict, set, frozenset))


def g_sorted(iterable, /, *, key=None, reverse=False):
    return sorted(_bounded_input(iterable, False), key=key, reverse=reverse)


def g_reversed(*args, **kwargs):
    """``reversed(t)`` on a tensor is PyTorch's ``Tensor.__reversed__``: ``t.flip(0)`` (a 0-d
    tensor itself) -- a tensor, not an iterator."""
    if len(args) == 1 and not kwargs:
        seq = args[0]
        if type(seq).__name__ == "Tensor" and type(seq).__module__ == "torch":
            return seq if seq.dim() == 0 else seq.flip(0)
    return reversed(*args, **kwargs)


def g_pow(base, exp, mod=None):
    if mod is None:
        return guarded_pow(base, exp)
    return pow(base, exp, mod)


def g_str(*args, **kwargs):
    if len(args) == 1 and not kwargs:
        from .text_guards import safe_str
        return safe_str(args[0])
    return str(*args, **kwargs)


def g_repr(obj, /):
    from .text_guards import safe_repr
    return safe_repr(obj)


def g_type(*args, **kwargs):
    if len(args) != 1 or kwargs:
        raise errors.TypeError("type() takes 1 argument in gradexpr (the 3-argument form is not supported)")
    obj = args[0]
    t = type(obj)
    from .text_guards import CALLABLE_TYPES
    if t in CALLABLE_TYPES or t is _Print:
        return _callable_type(obj, t)
    if t.__module__ == "gradexpr.graph" and hasattr(t, "next_functions"):
        # one class per node type in PyTorch: <class 'MulBackward0'>, <class 'AccumulateGrad'>
        name = obj.type_name() if hasattr(obj, "type_name") else t.__name__
        return _display_class("builtins", name)
    if t.__name__ == "ReturnType" and t.__module__ == "gradexpr.composites.reductions":
        return _display_class("torch.return_types", obj._name)
    if isinstance(obj, errors.GxError):
        # an error of gradexpr's stands for Python's (PyTorch raises the builtin classes):
        # ``type(e) is IndexError`` holds and prints <class 'IndexError'>
        return next((b for b in t.__bases__ if b.__module__ == "builtins"), t)
    return t


def _callable_type(obj, t):
    """The type of a function as PyTorch's program sees it: PyTorch's C++ functions and Tensor methods
    (and Python's builtins, ``print`` included) are builtin_function_or_method, an unbound C++ Tensor
    method a method_descriptor (one class each, which ``is`` and ``isinstance`` compare); the others
    keep their own type (function, method)."""
    if t is _Print or t is types.BuiltinFunctionType:
        return _display_class("builtins", "builtin_function_or_method")
    from .text_guards import _callable_type_name, _torch_callable_text
    text = _torch_callable_text(obj)
    if text is None:
        return t
    name = _callable_type_name(text)
    if name in ("function", "method", "object"):
        return t
    return _display_class("builtins", name)


_DISPLAY_CLASSES: dict = {}


class _DisplayMeta(type):
    def __instancecheck__(cls, obj):
        return g_type(obj) is cls

    def __subclasscheck__(cls, sub):
        return sub is cls


def _display_class(module, qualname):
    """A class standing for PyTorch's class ``module.qualname`` where the engine has one class
    for many of PyTorch's (graph nodes, return types): it prints and compares as that class."""
    key = (module, qualname)
    cls = _DISPLAY_CLASSES.get(key)
    if cls is None:
        def __init__(self, *args, **kwargs):
            raise errors.TypeError(f"cannot create '{module}.{qualname}' instances"
                                   if module != "builtins" else f"cannot create '{qualname}' instances")
        cls = _DISPLAY_CLASSES[key] = _DisplayMeta(qualname.rpartition(".")[2], (), {
            "__module__": module, "__qualname__": qualname, "__slots__": (), "__init__": __init__})
    return cls


def bounded_star_args(value):
    """``f(*value)``: the tuple of arguments, refusing an unbounded range/iterator."""
    if type(value) is tuple:
        return value
    return tuple(_bounded_input(value, False))


def g_format(value, spec="", /):
    if not isinstance(spec, str):
        raise errors.TypeError(f"format() argument 2 must be str, not {type(spec).__name__}")
    from .text_guards import safe_format
    return safe_format(value, spec)


# ---------------------------------------------------------------- getattr & co, under the policy

def _policy():
    from .interpreter import policy
    return policy


def _attribute_name(name, fn):
    if not isinstance(name, str):
        raise errors.TypeError(f"attribute name must be string, not '{type(name).__name__}'")
    if name.startswith("__"):
        raise errors.AttributeError(f"access to '{name}' is not allowed in gradexpr")
    return name


_NO_DEFAULT = object()


def g_getattr(obj, name, default=_NO_DEFAULT, /):
    _attribute_name(name, "getattr")
    try:
        return _policy().attribute_getter(type(obj), name)(obj)
    except AttributeError:
        if default is _NO_DEFAULT:
            raise
        return default


def g_hasattr(obj, name, /):
    _attribute_name(name, "hasattr")
    try:
        _policy().attribute_getter(type(obj), name)(obj)
    except AttributeError:
        return False
    return True


def g_setattr(obj, name, value, /):
    _attribute_name(name, "setattr")
    _policy().set_attribute(obj, name, value)


def g_delattr(obj, name, /):
    _attribute_name(name, "delattr")
    _policy().delete_attribute(obj, name)


# ============================================================================ print

class _Print:
    """``print(*args, sep=' ', end='\\n', flush=False)``, writing to the running interpreter's ``out``."""

    __slots__ = ()

    def __call__(self, *args, sep=" ", end="\n", flush=False, **kwargs):
        if kwargs:
            bad = next(iter(kwargs))
            if bad == "file":
                raise errors.TypeError(f"print({bad}=...) is not supported in gradexpr")
            raise errors.TypeError(f"print() got an unexpected keyword argument '{bad}'")
        if flush is not False:
            flush = True if flush else False     # Python converts it before writing anything
        if sep is None:
            sep = " "
        elif not isinstance(sep, str):
            raise errors.TypeError(f"sep must be None or a string, not {type(sep).__name__}")
        if end is None:
            end = "\n"
        elif not isinstance(end, str):
            raise errors.TypeError(f"end must be None or a string, not {type(end).__name__}")
        from .text_guards import safe_str
        text = sep.join([safe_str(a) for a in args]) + end
        check_length(len(text), "a string")
        rt = current_runtime.get()
        out = rt.out if rt is not None else None
        if out is None:
            out = sys.stdout
        out.write(text)
        if flush:                       # print(..., flush=True) in training loops
            f = getattr(out, "flush", None)
            if f is not None:
                f()

    def __repr__(self):
        return "<built-in function print>"


# ``type(print)`` reads as Python's
_Print.__module__ = "builtins"
_Print.__name__ = _Print.__qualname__ = "builtin_function_or_method"
PRINT = _Print()


class _Input:
    """Python's ``input``, present as the builtin is (docstrings pass ``input`` around as their
    tensor's name, and a program that never defines it gets the builtin, as in Python), but never
    callable: a program's stdin is not for it to read (SPEC 3)."""

    __slots__ = ()

    def __call__(self, *args, **kwargs):
        raise errors.RuntimeError("input() is not available in gradexpr: it allows no file, process or network "
                                  "access")

    def __repr__(self):
        return "<built-in function input>"


_Input.__module__ = "builtins"
_Input.__name__ = _Input.__qualname__ = "builtin_function_or_method"
INPUT = _Input()


# ============================================================================ the table

BUILTINS: dict = {
    "abs": abs, "all": all, "any": any, "bool": bool, "float": float, "int": int,
    "max": max, "min": min, "pow": pow, "range": range, "round": round, "sum": sum,
    "print": PRINT, "input": INPUT, "len": len, "list": list, "tuple": tuple, "dict": dict, "str": str,
    "enumerate": enumerate, "zip": zip, "reversed": reversed, "sorted": sorted,
    "isinstance": isinstance, "repr": repr, "type": type,
    "next": next, "iter": iter, "map": map, "filter": filter, "callable": callable, "id": id, "hash": hash,
    "getattr": getattr, "setattr": setattr, "hasattr": hasattr, "delattr": delattr,
    "super": super, "object": object, "property": property, "staticmethod": staticmethod,
    "classmethod": classmethod, "issubclass": issubclass, "divmod": divmod, "chr": chr, "ord": ord,
    "hex": hex, "bin": bin, "oct": oct, "slice": slice, "set": set, "frozenset": frozenset, "format": format,
    "NotImplemented": NotImplemented, "Ellipsis": Ellipsis,
}
# Python's exception classes under Exception (not SystemExit, KeyboardInterrupt, BaseException,
# GeneratorExit), and its warning categories
BUILTINS.update({name: getattr(_py, name) for name in (
    "Exception ArithmeticError AssertionError AttributeError EOFError FloatingPointError ImportError "
    "IndexError KeyError LookupError MemoryError ModuleNotFoundError NameError NotImplementedError "
    "OverflowError RecursionError ReferenceError RuntimeError StopIteration TypeError UnboundLocalError "
    "ValueError ZeroDivisionError UnicodeError Warning UserWarning DeprecationWarning RuntimeWarning "
    "FutureWarning SyntaxWarning ResourceWarning").split()})

NAMES = frozenset(BUILTINS)

# called object -> what the interpreter calls instead (looked up by identity)
CALL_GUARDS: dict = {
    sum: g_sum, max: g_max, min: g_min, any: g_any, all: g_all, pow: g_pow,
    list: g_list, tuple: g_tuple, dict: g_dict, sorted: g_sorted, str: g_str, repr: g_repr,
    type: g_type, reversed: g_reversed, set: g_set, frozenset: g_frozenset, format: g_format,
    getattr: g_getattr, hasattr: g_hasattr, setattr: g_setattr, delattr: g_delattr,
}

for _builtin, _guard in CALL_GUARDS.items():
    _guard.__name__ = _guard.__qualname__ = _builtin.__name__

# types of callables that may be in CALL_GUARDS (checked before the dict lookup)
GUARDED_CALLABLE_TYPES = frozenset(type(f) for f in CALL_GUARDS)


# ---------------------------------------------------------------- guarded methods of builtin types

def _width_guard(method):
    def call(width, *args):
        if hasattr(type(width), "__index__"):
            check_length(width.__index__(), "a string")
        return method(width, *args)
    return call


def _join_guard(method):
    sep = method.__self__

    def join(iterable, /):
        items = iterable if type(iterable) in (list, tuple) else list(_bounded_input(iterable, False))
        total = len(sep) * max(0, len(items) - 1)
        for s in items:
            if type(s) is str:
                total += len(s)
        check_length(total, "a string")
        return method(items)
    return join


def _replace_guard(method):
    s = method.__self__

    def replace(old, new, count=-1, /):
        if type(old) is str and type(new) is str and len(new) > len(old):
            k = s.count(old) if old else len(s) + 1
            if count is not None and count >= 0:
                k = min(k, count)
            check_length(len(s) + k * (len(new) - len(old)), "a string")
        return method(old, new, count)
    return replace


_FORMATTER = None


def _format_guard(method):
    """``'{} {:.4f}'.format(a, b)`` as Python formats it, with the program's own rules: a field's
    ``.attr`` goes through the attribute policy (no ``{0.__class__}``), ``[key]`` indexes as a
    subscript does, and widths and texts stay within ``max_str_len``."""
    global _FORMATTER
    if _FORMATTER is None:
        import string
        from .interpreter.policy import attribute_getter
        from .text_guards import safe_format, safe_repr, safe_str

        class Formatter(string.Formatter):
            def get_field(self, field_name, args, kwargs):
                first, rest = _string_field_split(field_name)
                obj = self.get_value(first, args, kwargs)
                for is_attr, key in rest:
                    obj = attribute_getter(type(obj), key)(obj) if is_attr else obj[key]
                return obj, first

            def get_value(self, key, args, kwargs):
                if type(key) is int and key >= len(args):
                    raise IndexError(f"Replacement index {key} out of range for positional args tuple")
                return super().get_value(key, args, kwargs)

            def format_field(self, value, format_spec):
                text = safe_format(value, format_spec)
                self.length += len(text)
                check_length(self.length, "a string")
                return text

            def convert_field(self, value, conversion):
                if conversion == "s":
                    return safe_str(value)
                if conversion == "r":
                    return safe_repr(value)
                return super().convert_field(value, conversion)

        _FORMATTER = Formatter
    fmt = method.__self__

    def format(*args, **kwargs):
        formatter = _FORMATTER()
        formatter.length = len(fmt)
        text = formatter.vformat(fmt, args, kwargs)
        check_length(len(text), "a string")
        return text
    return format


def _string_field_split(field_name):
    import _string
    return _string.formatter_field_name_split(field_name)


def _extend_guard(method):
    lst = method.__self__

    def extend(iterable, /):
        items = iterable if type(iterable) in (list, tuple) else list(_bounded_input(iterable, False))
        check_length(len(lst) + len(items))
        return method(items)
    return extend


# (type, method name) -> wrapper factory taking the bound method
METHOD_GUARDS: dict = {
    (str, "center"): _width_guard, (str, "ljust"): _width_guard, (str, "rjust"): _width_guard,
    (str, "zfill"): _width_guard, (str, "join"): _join_guard, (str, "replace"): _replace_guard,
    (list, "extend"): _extend_guard, (str, "format"): _format_guard,
}
