"""The attribute policy: what a program may read and write with ``obj.name`` (and
``getattr``/``setattr``/``hasattr``/``delattr``), in one place.

- No dunder name, ever, and no ``_gx_`` name (the engine's own markers).
- Objects of classes marked ``_gx_exposed = True`` (the library: tensors, modules ...) expose
  their public attributes, and the underscored names of the class's ``_gx_readable`` (those PyTorch's
  tutorials read: ``module._forward_pre_hooks``); writes need the name in the class's ``_gx_settable``
  (where an underscored name is one a program may write: a pruning method's ``_tensor_name``).
- Instances of the program's own classes (see ``grammar/classes.py``), and the classes
  themselves, expose every public attribute and the single-underscore names the program
  defined (in a class body, or by assigning them): ``self._cache`` works in a subclass of
  ``nn.Module`` while the library's own ``_parameters`` stays out of reach.
- ``super()`` objects give the methods of the next class, the special methods a class may
  define among them (``super().__init__(...)``), with ``__setattr__``/``__delattr__``
  checked as a program's own writes.
- Builtin and NumPy types: a whitelist of methods (``SAFE_ATTRIBUTES``).
"""
from __future__ import annotations

import operator
import types
import weakref

import numpy as _np

from gradexpr import errors

from .. import builtins as _b

__all__ = ["SAFE_ATTRIBUTES", "attribute_getter", "attribute_hint", "set_attribute", "register_program_class",
           "SPECIAL_METHODS"]

SAFE_ATTRIBUTES: dict = {
    list: frozenset("append extend insert pop remove index count reverse sort copy clear".split()),
    dict: frozenset("keys values items get pop update setdefault copy clear".split()),
    str: frozenset(("join split rsplit strip lstrip rstrip upper lower replace startswith endswith find "
                    "count title capitalize zfill center ljust rjust splitlines isdigit isalpha "
                    "isspace format index rfind rindex partition rpartition removeprefix removesuffix "
                    "isupper islower isalnum isnumeric isdecimal istitle swapcase casefold").split()),
    tuple: frozenset(("index", "count")),
    int: frozenset("real imag conjugate bit_length as_integer_ratio".split()),
    float: frozenset("real imag conjugate is_integer as_integer_ratio".split()),
}
# What ``tensor.numpy()`` gives: reading it, reducing it, reshaping it -- never its memory
# (data, ctypes, view) or files (tofile, dump).
_NUMPY_READ = ("shape dtype ndim size itemsize nbytes T real imag tolist item sum mean std var prod min max "
               "argmin argmax any all cumsum cumprod round clip reshape ravel flatten transpose squeeze "
               "astype copy nonzero conjugate")
SAFE_ATTRIBUTES[_np.ndarray] = frozenset(_NUMPY_READ.split())
SAFE_ATTRIBUTES[_np.generic] = frozenset((_NUMPY_READ + " is_integer as_integer_ratio").split())
"""Methods and attributes allowed on builtin and NumPy types (and their subclasses that are
not ``_gx_exposed``)."""

_policy_cache: dict = {}


def _raiser(exc_factory):
    def refuse(obj):
        raise exc_factory(obj)
    return refuse


def attribute_getter(t: type, name: str):
    """A function ``get(obj)`` reading attribute ``name`` of objects of type ``t`` under the
    safety policy (or raising the AttributeError that refuses it). Cached per (type, name)."""
    key = (t, name)
    g = _policy_cache.get(key)
    if g is None:
        g = _policy_cache[key] = _decide(t, name)
    return g


# Underscored attributes PyTorch documents for programs to read (the in-place tutorials print
# ``x._version``): read-only properties of the engine's classes.
_PUBLIC_UNDERSCORED = frozenset({"_version"})


def _decide(t, name):
    if name.startswith("_gx_"):
        return _raiser(lambda obj: errors.AttributeError(f"access to '{name}' is not allowed in gradexpr"))
    if _is_program_type(t):
        return _program_instance_getter(name)
    if t is super:
        return _super_getter(name)
    if issubclass(t, type):         # a class: the program's own, or any other
        program_get = _program_class_getter(name)
        other_get = _decide_library(t, name)
        public = not name.startswith("_")

        def get_class_attribute(obj):
            if _is_program_type(obj):
                return program_get(obj)
            if public and getattr(obj, "_gx_exposed", False) is True:
                # a library class's public methods and constants, as its instances expose them:
                # ``torch.Tensor.sum(x)``, ``nn.Module.train``; not its properties (their fset
                # would write what ``_gx_settable`` does not allow)
                # (what the class defines, never what ``type`` gives every class: ``mro``)
                value = getattr(obj, name)
                if not isinstance(value, property) and any(name in b.__dict__ for b in obj.__mro__[:-1]):
                    return value
            return other_get(obj)
        return get_class_attribute
    return _decide_library(t, name)


def _decide_library(t, name):
    if name in _PUBLIC_UNDERSCORED and getattr(t, "_gx_exposed", False) is True \
            and isinstance(getattr(t, name, None), property):
        return operator.attrgetter(name)
    # what a graph node saved for backward (``y.grad_fn._saved_self``), as PyTorch shows it
    if name.startswith(("_saved_", "_raw_saved_")) and getattr(t, "_gx_saved_attributes", False) is True:
        return operator.attrgetter(name)
    if _library_readable(t, name):
        return operator.attrgetter(name)
    if name.startswith("_"):
        return _raiser(lambda obj: errors.AttributeError(f"access to '{name}' is not allowed in gradexpr"))
    if getattr(t, "_gx_exposed", False) is True:
        return operator.attrgetter(name)
    for base in t.__mro__:
        allowed = SAFE_ATTRIBUTES.get(base)
        if allowed is not None:
            if name in allowed:
                guard = _b.METHOD_GUARDS.get((base, name))
                if guard is None:
                    return operator.attrgetter(name)
                get = operator.attrgetter(name)
                return lambda obj: guard(get(obj))
            break
    if issubclass(t, type):         # a class: Python names the class itself
        def refuse_class_attribute(obj):
            if hasattr(obj, name):
                return errors.AttributeError(f"access to '{obj.__name__}.{name}' is not allowed in gradexpr")
            return errors.AttributeError(f"type object '{obj.__name__}' has no attribute '{name}'")
        return _raiser(refuse_class_attribute)
    tname = t.__name__
    if hasattr(t, name):
        return _raiser(lambda obj: errors.AttributeError(
            f"access to '{tname}.{name}' is not allowed in gradexpr"))
    return _raiser(lambda obj: errors.AttributeError(f"'{tname}' object has no attribute '{name}'"))


def _library_readable(t, name):
    """An underscored name a library class lets programs read (its ``_gx_readable``)."""
    return getattr(t, "_gx_exposed", False) is True and name in getattr(t, "_gx_readable", ())


def attribute_hint(obj, name):
    """``did you mean 'sum'?`` for a misspelt attribute: the closest name the policy allows."""
    import difflib
    t = type(obj)
    if getattr(t, "_gx_exposed", False) is True or _is_program_type(t):
        names = [n for n in dir(obj) if not n.startswith("_")]
    else:
        names = next((list(SAFE_ATTRIBUTES[b]) for b in t.__mro__ if b in SAFE_ATTRIBUTES), [])
    m = difflib.get_close_matches(name, names, n=1, cutoff=0.7)
    return f"did you mean '{m[0]}'?" if m else None


def set_attribute(obj, name, value):
    """``obj.name = value`` by a program, under the policy."""
    t = type(obj)
    if t in _PROGRAM_TYPES or _is_program_type(t):
        return _set_program_attribute(obj, name, value)
    if t is type or issubclass(t, type):
        if _is_program_type(obj):
            return _set_program_attribute(obj, name, value)
    exposed = getattr(t, "_gx_exposed", False) is True
    settable = getattr(t, "_gx_settable", ()) if exposed else ()
    if name.startswith("_") and name not in _PUBLIC_UNDERSCORED and name not in settable:
        raise errors.AttributeError(f"access to '{name}' is not allowed in gradexpr")
    if exposed:
        if name in settable:
            setattr(obj, name, value)
            return
        tname = t.__name__
        if hasattr(obj, "next_functions"):      # a graph node: PyTorch's class is named for the node
            tname = obj.type_name() if hasattr(obj, "type_name") else tname
            if not hasattr(type(getattr(t, name, None)), "__set__"):     # not a property or slot
                if hasattr(obj, name):
                    raise errors.AttributeError(f"'{tname}' object attribute '{name}' is read-only")
                raise errors.AttributeError(f"'{tname}' object has no attribute '{name}'")
        elif t.__module__ == "torch" and tname == "Tensor" and isinstance(getattr(t, name, None), property):
            tname = "torch._C.TensorBase"       # where PyTorch defines a tensor's attributes
        raise errors.AttributeError(f"attribute '{name}' of '{tname}' objects is not writable")
    if hasattr(t, name):
        raise errors.AttributeError(f"'{t.__name__}' object attribute '{name}' is read-only")
    raise errors.AttributeError(f"'{t.__name__}' object has no attribute '{name}'")


# ============================================================================ the program's classes

# program class -> the single-underscore names the program gave it (class body, assignments)
_PROGRAM: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_PROGRAM_TYPES: "weakref.WeakSet" = weakref.WeakSet()       # program classes and their subclasses

SPECIAL_METHODS = frozenset(
    f"__{n}__" for n in (
        "init call repr str len getitem setitem delitem iter next contains enter exit eq ne lt le gt ge "
        "hash bool neg pos abs invert index int float complex round trunc floor ceil format reversed "
        "getattr setattr delattr post_init missing length_hint matmul rmatmul imatmul divmod rdivmod").split()
    + [f"{p}{op}" for op in "add sub mul truediv floordiv mod pow and or xor lshift rshift".split()
       for p in ("", "r", "i")])
"""The special methods a program's class may define (and reach through ``super()``)."""


def register_program_class(cls, names):
    """Mark ``cls`` (just made from a class statement) as the program's, with the
    single-underscore ``names`` its body defined."""
    _PROGRAM[cls] = {n for n in names if n.startswith("_") and not n.startswith("__")}
    _PROGRAM_TYPES.add(cls)


def _is_program_type(t):
    try:
        if t in _PROGRAM_TYPES:
            return True
        mro = t.__mro__
    except (TypeError, AttributeError):
        return False
    for b in mro[1:]:
        if b in _PROGRAM:
            _PROGRAM_TYPES.add(t)
            return True
    return False


def _program_names_allow(t, name):
    for b in t.__mro__:
        names = _PROGRAM.get(b)
        if names is not None and name in names:
            return True
    return False


def _refused(name):
    return errors.AttributeError(f"access to '{name}' is not allowed in gradexpr")


def _program_instance_getter(name):
    if name.startswith("__"):
        return _raiser(lambda obj: _refused(name))
    if name.startswith("_"):
        def get_private(obj):
            if _program_names_allow(type(obj), name) or _library_readable(type(obj), name):
                return getattr(obj, name)
            raise _refused(name)
        return get_private
    return operator.attrgetter(name)


def _program_class_getter(name):
    """``C.name`` for a program class ``C``: what its classes' own namespaces hold (never
    the attributes of ``type`` itself: ``C.mro``, ``C.__subclasses__``)."""
    def get(cls):
        if name.startswith("__") or (name.startswith("_") and not _program_names_allow(cls, name)):
            raise _refused(name)
        for b in cls.__mro__:
            if name in b.__dict__:
                return getattr(cls, name)
        raise errors.AttributeError(f"type object '{cls.__name__}' has no attribute '{name}'")
    return get


def _set_program_attribute(obj, name, value):
    if name.startswith("__") or name.startswith("_gx_"):
        raise _refused(name)
    if name.startswith("_"):
        cls = obj if isinstance(obj, type) else type(obj)
        names = _PROGRAM.get(cls)
        if names is None:
            names = _PROGRAM[cls] = set()
        names.add(name)
    setattr(obj, name, value)


def _checked_name_method(method):
    """``super().__setattr__``/``__delattr__``: the name is checked as a program's own write."""
    def call(name, *rest):
        if type(name) is str and (name.startswith("__") or name.startswith("_gx_")):
            raise _refused(name)
        return method(name, *rest)
    return call


def _unbound_super_init(obj):
    """``super(C).__init__`` (one argument: an unbound super object). CPython's zero-argument form
    rebinds it to ``super(C, self)`` of the calling method, which changes nothing a program sees
    (PyTorch's docstrings write ``super(MyIterableDataset).__init__()``); with arguments it is the
    real initializer."""
    def init(*args):
        if args:
            obj.__init__(*args)
    return init


def _super_getter(name):
    if name == "__init__":
        return lambda obj: _unbound_super_init(obj) if obj.__self__ is None else obj.__init__
    if name in ("__setattr__", "__delattr__"):
        return lambda obj: _checked_name_method(getattr(obj, name))
    if name in SPECIAL_METHODS:
        return operator.attrgetter(name)
    if name.startswith("__"):
        return _raiser(lambda obj: _refused(name))
    if name.startswith("_"):
        def get_private(obj):
            if _program_names_allow(obj.__self_class__, name):
                return getattr(obj, name)
            raise _refused(name)
        return get_private
    return operator.attrgetter(name)


SAFE_ATTRIBUTES[types.GeneratorType] = frozenset(("send", "throw", "close"))
SAFE_ATTRIBUTES[property] = frozenset(("setter", "getter", "deleter", "fget", "fset", "fdel"))
SAFE_ATTRIBUTES[BaseException] = frozenset(("args", "with_traceback", "add_note"))
SAFE_ATTRIBUTES[StopIteration] = SAFE_ATTRIBUTES[BaseException] | {"value"}     # a generator's return value


def delete_attribute(obj, name):
    """``del obj.name`` by a program: its own objects' attributes, and the library's
    settable ones."""
    t = type(obj)
    program = _is_program_type(obj) if isinstance(obj, type) else _is_program_type(t)
    if name.startswith("__") or name.startswith("_gx_") or (name.startswith("_") and not program):
        raise _refused(name)
    if program or (getattr(t, "_gx_exposed", False) is True and name in getattr(t, "_gx_settable", ())):
        delattr(obj, name)
        return
    if hasattr(obj, name):
        raise errors.AttributeError(f"'{t.__name__}' object attribute '{name}' is read-only")
    raise errors.AttributeError(f"'{t.__name__}' object has no attribute '{name}'")
