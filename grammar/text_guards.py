"""How a program's values become text: ``str``, ``repr``, ``format``, ``'%s' % args``, ``print``
and f-strings, each refusing a text too large to make (widths and precisions above
``max_str_len``, containers whose text would exceed it or that nest deeper than ``max_depth``)
and showing PyTorch's functions and Tensor methods as PyTorch prints them.

Split from ``builtins.py`` so that a program loads it with the first value it turns into text
(an expression evaluated by ``gradexpr eval`` never does): the builtins and operators that
need it import it when called.
"""
from __future__ import annotations

import types

from gradexpr import errors, limits
from gradexpr.limits import LOG10_2 as _LOG10_2


# ============================================================================ %-formatting

_FMT_NUM = None


class _Shown:
    """A value of ``'%s' % args`` that prints as ``text`` (one of PyTorch's functions)."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __str__(self):
        return self.text

    __repr__ = __str__


def _percent_args(args):
    """``args`` of ``'…' % args`` with PyTorch's functions (and plain containers holding them) as
    PyTorch prints them."""
    def shown(v):
        t = type(v)
        if t in CALLABLE_TYPES:
            text = _torch_callable_text(v)
            return v if text is None else _Shown(text)
        if t in _PLAIN_CONTAINERS and check_render(v):
            return _Shown(_text_with_functions(v))
        return v
    t = type(args)
    if t is tuple:
        return tuple([shown(v) for v in args])
    if t is dict:
        return {k: shown(v) for k, v in args.items()}
    return shown(args)


def _check_percent_format(fmt, args):
    global _FMT_NUM
    if "%" not in fmt:
        return
    if _FMT_NUM is None:
        import re
        _FMT_NUM = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")
    lim = limits.current().max_str_len
    if not lim:
        return
    star = False
    for m in _FMT_NUM.finditer(fmt):
        for g in m.groups():
            if g == "*":
                star = True
            elif g and len(g) > 9 or (g and int(g) > lim):
                raise limits.exceeded(f"a format width of {g}", lim, "max_str_len")
    vals = args if isinstance(args, tuple) else tuple(args.values()) if isinstance(args, dict) else (args,)
    for v in vals:
        if star and type(v) is int and v > lim:
            raise limits.exceeded(f"a format width of {v:,}", lim, "max_str_len")
        if isinstance(v, _CONTAINERS):
            check_render(v)


def check_format_spec(spec: str) -> None:
    """Refuse a format spec whose width or precision exceeds ``max_str_len``."""
    lim = limits.current().max_str_len
    if not lim or not spec:
        return
    num = ""
    for ch in spec + " ":
        if ch.isdigit():
            num += ch
        elif num:
            if len(num) > 9 or int(num) > lim:
                raise limits.exceeded(f"a format width of {int(num):,}", lim, "max_str_len")
            num = ""


# ============================================================================ rendering guards

_CONTAINERS = (list, tuple, dict, set, frozenset)
# what PyTorch's functions and Tensor methods are here (gradexpr/callable_display.py)
CALLABLE_TYPES = frozenset((types.FunctionType, types.MethodType, types.BuiltinFunctionType))
_BIG = 10 ** 18


def check_render(x) -> None:
    """Before ``str``/``repr``/``format`` of a container: refuse one whose text would exceed
    ``max_str_len`` characters (estimated, counting shared parts every time they print) or
    that is nested deeper than ``max_depth`` (Python would recurse once per level). True when
    it holds a function (which may be one of PyTorch's, printed as PyTorch prints it)."""
    if not isinstance(x, _CONTAINERS):
        return False
    functions = []
    lim = limits.current()
    budget = lim.max_str_len or 0
    depth_limit = lim.max_depth or 0
    memo = {}
    path = set()

    def too_long():
        return limits.exceeded(f"the text of a {type(x).__name__} of more than {budget:,} characters",
                               budget, "max_str_len")

    def size(v, d):
        t = type(v)
        if t is str:
            return len(v) + 2
        if t is float:
            return len(repr(v))
        if t is int:
            return len(repr(v)) if -_BIG < v < _BIG else 2 + int(v.bit_length() * _LOG10_2)
        i = id(v)
        known = memo.get(i)
        if known is not None:
            return known
        if not isinstance(v, _CONTAINERS):
            if t in CALLABLE_TYPES:
                functions.append(v)
            try:
                n = len(repr(v))        # an engine value: its own text, once per object
            except Exception:
                n = 8
            memo[i] = n
            return n
        if i in path:
            return 5                # printed as [...]
        if depth_limit and d > depth_limit:
            raise limits.exceeded("the depth of a nested value to print", depth_limit, "max_depth")
        path.add(i)
        total = 2
        if isinstance(v, dict):
            for k, w in v.items():
                total += size(k, d + 1) + size(w, d + 1) + 4
                if budget and total > budget:
                    raise too_long()
        else:
            for w in v:
                tw = type(w)
                if tw is float or (tw is int and -_BIG < w < _BIG):
                    total += len(repr(w)) + 2
                else:
                    total += size(w, d + 1) + 2
                if budget and total > budget:
                    raise too_long()
        path.discard(i)
        memo[i] = total
        return total

    size(x, 1)
    return bool(functions)


def _torch_callable_text(x):
    """PyTorch's text for one of its functions or Tensor methods (``<built-in method dot of type
    object at 0x…>``), or None for any other callable."""
    from gradexpr.callable_display import display
    return display(x)


_PLAIN_CONTAINERS = frozenset((list, tuple, dict, set, frozenset))


def _text_with_functions(x):
    """Python's repr of a list, tuple, dict or set, with PyTorch's text for the functions in it
    (the container types' own repr would call Python's repr of each). Other containers (a
    ``torch.Size``, a namedtuple) keep their own repr."""
    active = set()

    def text(v):
        t = type(v)
        if t in CALLABLE_TYPES:
            shown = _torch_callable_text(v)
            return shown if shown is not None else repr(v)
        if t not in _PLAIN_CONTAINERS:
            return repr(v)
        i = id(v)
        if i in active:             # Python's marks of a container inside itself
            return "[...]" if t is list else "{...}" if t is dict else "(...)" if t is tuple else "..."
        active.add(i)
        try:
            if t is dict:
                return "{" + ", ".join(f"{text(k)}: {text(w)}" for k, w in v.items()) + "}"
            items = ", ".join(text(w) for w in v)
            if t is list:
                return f"[{items}]"
            if t is tuple:
                return f"({items},)" if len(v) == 1 else f"({items})"
            if not v:
                return f"{t.__name__}()"
            return "{" + items + "}" if t is set else "frozenset({" + items + "})"
        finally:
            active.discard(i)
    return text(x)


def _pytorch_text(x):
    """PyTorch's text for one of its functions, or for a plain container holding some; else None."""
    if isinstance(x, _CONTAINERS):
        if check_render(x) and type(x) in _PLAIN_CONTAINERS:
            return _text_with_functions(x)
    elif type(x) in CALLABLE_TYPES:
        return _torch_callable_text(x)
    return None


def safe_str(x):
    text = _pytorch_text(x)
    return str(x) if text is None else text


def safe_repr(x):
    text = _pytorch_text(x)
    return repr(x) if text is None else text


def safe_format(x, spec=""):
    if spec:
        check_format_spec(spec)
    if isinstance(x, _CONTAINERS):
        if check_render(x) and type(x) in _PLAIN_CONTAINERS:
            return format(_text_with_functions(x), spec)
    elif type(x) in CALLABLE_TYPES:
        text = _torch_callable_text(x)
        if text is not None:
            if spec:        # object.__format__ refuses a spec, naming PyTorch's type of the callable
                raise errors.TypeError(f"unsupported format string passed to {_callable_type_name(text)}.__format__")
            return text
    return format(x, spec)


def _callable_type_name(text):
    for prefix, name in (("<built-in", "builtin_function_or_method"), ("<function", "function"),
                         ("<bound method", "method"), ("<method-wrapper", "method-wrapper"),
                         ("<method", "method_descriptor"), ("<slot wrapper", "wrapper_descriptor")):
        if text.startswith(prefix):
            return name
    return "object"
