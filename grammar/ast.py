"""The abstract syntax tree of gradexpr programs.

Small slotted dataclasses named after (and shaped like) the classes of Python's own
:mod:`ast` module. (``__slots__`` and ``__init__`` are written out rather than generated:
generating them costs about a millisecond per class at import on this machine; the
decorator still makes them dataclasses, so ``dataclasses.fields`` works.)

Every node ends with four position fields: ``line`` and ``col`` (1-based: the first
character of the node), ``end_line`` and ``end_col`` (1-based and *exclusive*: one past
the last character, as Lark counts; ``end_col - col`` is the width of a one-line node).

Expression nodes (subclasses of ``Expr``) also carry ``depth``, not a dataclass field, not
compared, not shown: their nesting depth, computed by the parser to enforce ``max_depth``.
A left-associative chain such as ``a + b + c + d`` counts as one level above its deepest
operand, so long sums never look deep; real nesting (brackets, unary chains, ``**``,
calls on calls) does.

Node equality compares the fields and the positions; ``dump(node)`` renders a tree
without positions (handy in tests).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:       # the annotations are strings; typing is not imported at run time
    from typing import Any, Optional


_dc = dataclass(init=False, repr=False, eq=False)


class Node:
    """Base of all nodes."""

    __slots__ = ()
    _fields: tuple = ()         # the non-position fields, in order

    def __repr__(self):
        parts = [f"{f}={getattr(self, f)!r}" for f in self._fields]
        parts.append(f"at={self.line}:{self.col}-{self.end_line}:{self.end_col}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self._fields + _POSITION)

    __hash__ = None


class Stmt(Node):
    """Base of statements."""
    __slots__ = ()


class Expr(Node):
    """Base of expressions."""
    __slots__ = ()


_POSITION = ("line", "col", "end_line", "end_col")


@_dc
class Module(Stmt):
    """A whole program."""
    __slots__ = ('body', 'line', 'col', 'end_line', 'end_col')
    _fields = ('body',)
    body: list
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, body, line=0, col=0, end_line=0, end_col=0):
        self.body = body
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@_dc
class ExprStmt(Stmt):
    """An expression evaluated for its effect (``out.backward()``, ``print(x)``, a bare string)."""
    __slots__ = ('value', 'line', 'col', 'end_line', 'end_col')
    _fields = ('value',)
    value: Expr
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, value, line=0, col=0, end_line=0, end_col=0):
        self.value = value
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@_dc
class Assign(Stmt):
    """``t1 = t2 = value``; targets are Name, Attribute, Subscript, Tuple or List nodes."""
    __slots__ = ('targets', 'value', 'line', 'col', 'end_line', 'end_col')
    _fields = ('targets', 'value')
    targets: list
    value: Expr
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, targets, value, line=0, col=0, end_line=0, end_col=0):
        self.targets = targets
        self.value = value
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@_dc
class AugAssign(Stmt):
    """``target op= value``; ``op`` is the binary operator ('+', '**', '@', ...)."""
    __slots__ = ('target', 'op', 'value', 'line', 'col', 'end_line', 'end_col')
    _fields = ('target', 'op', 'value')
    target: Expr
    op: str
    value: Expr
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, target, op, value, line=0, col=0, end_line=0, end_col=0):
        self.target = target
        self.op = op
        self.value = value
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@_dc
class If(Stmt):
    """``if``/``elif``/``else``; an ``elif`` is an If alone in ``orelse``."""
    __slots__ = ('test', 'body', 'orelse', 'line', 'col', 'end_line', 'end_col')
    _fields = ('test', 'body', 'orelse')
    test: Expr
    body: list
    orelse: list
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, test, body, orelse, line=0, col=0, end_line=0, end_col=0):
        self.test = test
        self.body = body
        self.orelse = orelse
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@_dc
class While(Stmt):
    """``while test: body`` (``else: orelse``)."""
    __slots__ = ('test', 'body', 'orelse', 'line', 'col', 'end_line', 'end_col')
    _fields = ('test', 'body', 'orelse')
    test: Expr
    body: list
    orelse: list
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, test, body, orelse, line=0, col=0, end_line=0, end_col=0):
        self.test = test
        self.body = body
        self.orelse = orelse
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@_dc
class For(Stmt):
    """``for target in iter: body`` (``else: orelse``)."""
    __slots__ = ('target', 'iter', 'body', 'orelse', 'line', 'col', 'end_line', 'end_col')
    _fields = ('target', 'iter', 'body', 'orelse')
    target: Expr
    iter: Expr
    body: list
    orelse: list
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, target, iter, body, orelse, line=0, col=0, end_line=0, end_col=0):
        self.target = target
        self.iter = iter
        self.body = body
        self.orelse = orelse
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@_dc
class Param(Node):
    """One parameter of a ``def`` or ``lambda``; ``default`` is None when it has none."""
    __slots__ = ('name', 'default', 'line', 'col', 'end_line', 'end_col')
    _fields = ('name', 'default')
    name: str
    default: Optional[Expr]
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, name, default, line=0, col=0, end_line=0, end_col=0):
        self.name = name
        self.default = default
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@_dc
class Arguments(Node):
    """A parameter list ``(a, b=1, *args, c, d=2, **kw)``: ``params`` and ``kwonly`` are Param lists,
    ``vararg``/``kwarg`` the names after ``*``/``**`` (or None)."""
    __slots__ = ('params', 'vararg', 'kwonly', 'kwarg', 'line', 'col', 'end_line', 'end_col')
    _fields = ('params', 'vararg', 'kwonly', 'kwarg')
    params: list
    vararg: Optional[str]
    kwonly: list
    kwarg: Optional[str]
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, params, vararg, kwonly, kwarg, line=0, col=0, end_line=0, end_col=0):
        self.params = params
        self.vararg = vararg
        self.kwonly = kwonly
        self.kwarg = kwarg
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@_dc
class FunctionDef(Stmt):
    """``def name(args): body``."""
    __slots__ = ('name', 'args', 'body', 'line', 'col', 'end_line', 'end_col')
    _fields = ('name', 'args', 'body')
    name: str
    args: Arguments
    body: list
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, name, args, body, line=0, col=0, end_line=0, end_col=0):
        self.name = name
        self.args = args
        self.body = body
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@_dc
class Return(Stmt):
    """``return`` (value None) or ``return value``."""
    __slots__ = ('value', 'line', 'col', 'end_line', 'end_col')
    _fields = ('value',)
    value: Optional[Expr]
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, value, line=0, col=0, end_line=0, end_col=0):
        self.value = value
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@_dc
class WithItem(Node):
    """``context_expr as optional_vars`` in a ``with``."""
    __slots__ = ('context_expr', 'optional_vars', 'line', 'col', 'end_line', 'end_col')
    _fields = ('context_expr', 'optional_vars')
    context_expr: Expr
    optional_vars: Optional[Expr]
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, context_expr, optional_vars, line=0, col=0, end_line=0, end_col=0):
        self.context_expr = context_expr
        self.optional_vars = optional_vars
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@_dc
class With(Stmt):
    """``with item, ...: body``; items are WithItem nodes."""
    __slots__ = ('items', 'body', 'line', 'col', 'end_line', 'end_col')
    _fields = ('items', 'body')
    items: list
    body: list
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, items, body, line=0, col=0, end_line=0, end_col=0):
        self.items = items
        self.body = body
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@_dc
class Assert(Stmt):
    """``assert test`` / ``assert test, msg``."""
    __slots__ = ('test', 'msg', 'line', 'col', 'end_line', 'end_col')
    _fields = ('test', 'msg')
    test: Expr
    msg: Optional[Expr]
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, test, msg, line=0, col=0, end_line=0, end_col=0):
        self.test = test
        self.msg = msg
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@_dc
class Pass(Stmt):
    """``pass``."""
    __slots__ = ('line', 'col', 'end_line', 'end_col')
    _fields = ()
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, line=0, col=0, end_line=0, end_col=0):
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@_dc
class Break(Stmt):
    """``break``."""
    __slots__ = ('line', 'col', 'end_line', 'end_col')
    _fields = ()
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, line=0, col=0, end_line=0, end_col=0):
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@_dc
class Continue(Stmt):
    """``continue``."""
    __slots__ = ('line', 'col', 'end_line', 'end_col')
    _fields = ()
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, line=0, col=0, end_line=0, end_col=0):
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@_dc
class Alias(Node):
    """``name`` (dotted for ``import a.b``) ``as asname`` (or None)."""
    __slots__ = ('name', 'asname', 'line', 'col', 'end_line', 'end_col')
    _fields = ('name', 'asname')
    name: str
    asname: Optional[str]
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, name, asname, line=0, col=0, end_line=0, end_col=0):
        self.name = name
        self.asname = asname
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@_dc
class Import(Stmt):
    """``import a.b as c, ...``; names are Alias nodes."""
    __slots__ = ('names', 'line', 'col', 'end_line', 'end_col')
    _fields = ('names',)
    names: list
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, names, line=0, col=0, end_line=0, end_col=0):
        self.names = names
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@_dc
class ImportFrom(Stmt):
    """``from module import names``; names is ``[Alias('*', None)]`` for a star import."""
    __slots__ = ('module', 'names', 'line', 'col', 'end_line', 'end_col')
    _fields = ('module', 'names')
    module: str
    names: list
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, module, names, line=0, col=0, end_line=0, end_col=0):
        self.module = module
        self.names = names
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@_dc
class Name(Expr):
    """A name read or written."""
    __slots__ = ('id', 'line', 'col', 'end_line', 'end_col', 'depth')
    _fields = ('id',)
    id: str
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, id, line=0, col=0, end_line=0, end_col=0, depth=1):
        self.id = id
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.depth = depth


@_dc
class Constant(Expr):
    """int, float, str, bool, None or Ellipsis."""
    __slots__ = ('value', 'line', 'col', 'end_line', 'end_col', 'depth')
    _fields = ('value',)
    value: Any
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, value, line=0, col=0, end_line=0, end_col=0, depth=1):
        self.value = value
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.depth = depth


@_dc
class FormattedValue(Expr):
    """One ``{value!conversion:format_spec}`` field of an f-string; conversion is 'r', 's', 'a' or None,
    format_spec a JoinedStr or None."""
    __slots__ = ('value', 'conversion', 'format_spec', 'line', 'col', 'end_line', 'end_col', 'depth')
    _fields = ('value', 'conversion', 'format_spec')
    value: Expr
    conversion: Optional[str]
    format_spec: Optional[Expr]
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, value, conversion, format_spec, line=0, col=0, end_line=0, end_col=0, depth=1):
        self.value = value
        self.conversion = conversion
        self.format_spec = format_spec
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.depth = depth


@_dc
class JoinedStr(Expr):
    """An f-string: Constant (str) and FormattedValue parts."""
    __slots__ = ('values', 'line', 'col', 'end_line', 'end_col', 'depth')
    _fields = ('values',)
    values: list
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, values, line=0, col=0, end_line=0, end_col=0, depth=1):
        self.values = values
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.depth = depth


@_dc
class BinOp(Expr):
    """``left op right``; op as written: + - * / // % @ ** << >> & | ^"""
    __slots__ = ('left', 'op', 'right', 'line', 'col', 'end_line', 'end_col', 'depth')
    _fields = ('left', 'op', 'right')
    left: Expr
    op: str
    right: Expr
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, left, op, right, line=0, col=0, end_line=0, end_col=0, depth=1):
        self.left = left
        self.op = op
        self.right = right
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.depth = depth


@_dc
class UnaryOp(Expr):
    """op is '-', '+', '~' or 'not'."""
    __slots__ = ('op', 'operand', 'line', 'col', 'end_line', 'end_col', 'depth')
    _fields = ('op', 'operand')
    op: str
    operand: Expr
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, op, operand, line=0, col=0, end_line=0, end_col=0, depth=1):
        self.op = op
        self.operand = operand
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.depth = depth


@_dc
class BoolOp(Expr):
    """``a and b and c`` / ``a or b``: op 'and' or 'or', two or more values."""
    __slots__ = ('op', 'values', 'line', 'col', 'end_line', 'end_col', 'depth')
    _fields = ('op', 'values')
    op: str
    values: list
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, op, values, line=0, col=0, end_line=0, end_col=0, depth=1):
        self.op = op
        self.values = values
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.depth = depth


@_dc
class Compare(Expr):
    """``left op0 c0 op1 c1 ...``; ops: '<' '>' '==' '!=' '<=' '>=' 'in' 'not in' 'is' 'is not'."""
    __slots__ = ('left', 'ops', 'comparators', 'line', 'col', 'end_line', 'end_col', 'depth')
    _fields = ('left', 'ops', 'comparators')
    left: Expr
    ops: list
    comparators: list
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, left, ops, comparators, line=0, col=0, end_line=0, end_col=0, depth=1):
        self.left = left
        self.ops = ops
        self.comparators = comparators
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.depth = depth


@_dc
class IfExp(Expr):
    """``body if test else orelse``."""
    __slots__ = ('test', 'body', 'orelse', 'line', 'col', 'end_line', 'end_col', 'depth')
    _fields = ('test', 'body', 'orelse')
    test: Expr
    body: Expr
    orelse: Expr
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, test, body, orelse, line=0, col=0, end_line=0, end_col=0, depth=1):
        self.test = test
        self.body = body
        self.orelse = orelse
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.depth = depth


@_dc
class Lambda(Expr):
    """``lambda args: body``."""
    __slots__ = ('args', 'body', 'line', 'col', 'end_line', 'end_col', 'depth')
    _fields = ('args', 'body')
    args: Arguments
    body: Expr
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, args, body, line=0, col=0, end_line=0, end_col=0, depth=1):
        self.args = args
        self.body = body
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.depth = depth


@_dc
class Starred(Expr):
    """``*value`` -- only as a call argument."""
    __slots__ = ('value', 'line', 'col', 'end_line', 'end_col', 'depth')
    _fields = ('value',)
    value: Expr
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, value, line=0, col=0, end_line=0, end_col=0, depth=1):
        self.value = value
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.depth = depth


@_dc
class Keyword(Node):
    """``arg=value`` in a call; ``arg`` is None for ``**value``."""
    __slots__ = ('arg', 'value', 'line', 'col', 'end_line', 'end_col')
    _fields = ('arg', 'value')
    arg: Optional[str]
    value: Expr
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, arg, value, line=0, col=0, end_line=0, end_col=0):
        self.arg = arg
        self.value = value
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@_dc
class Call(Expr):
    """``func(*args, **keywords)``; args may hold Starred, keywords are Keyword nodes."""
    __slots__ = ('func', 'args', 'keywords', 'line', 'col', 'end_line', 'end_col', 'depth')
    _fields = ('func', 'args', 'keywords')
    func: Expr
    args: list
    keywords: list
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, func, args, keywords, line=0, col=0, end_line=0, end_col=0, depth=1):
        self.func = func
        self.args = args
        self.keywords = keywords
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.depth = depth


@_dc
class Attribute(Expr):
    """``value.attr``."""
    __slots__ = ('value', 'attr', 'line', 'col', 'end_line', 'end_col', 'depth')
    _fields = ('value', 'attr')
    value: Expr
    attr: str
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, value, attr, line=0, col=0, end_line=0, end_col=0, depth=1):
        self.value = value
        self.attr = attr
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.depth = depth


@_dc
class Slice(Expr):
    """``lower:upper:step`` inside a subscript; absent parts are None."""
    __slots__ = ('lower', 'upper', 'step', 'line', 'col', 'end_line', 'end_col', 'depth')
    _fields = ('lower', 'upper', 'step')
    lower: Optional[Expr]
    upper: Optional[Expr]
    step: Optional[Expr]
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, lower, upper, step, line=0, col=0, end_line=0, end_col=0, depth=1):
        self.lower = lower
        self.upper = upper
        self.step = step
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.depth = depth


@_dc
class Subscript(Expr):
    """``value[slice]``; a multi-dimensional index is a Tuple of expressions and Slices."""
    __slots__ = ('value', 'slice', 'line', 'col', 'end_line', 'end_col', 'depth')
    _fields = ('value', 'slice')
    value: Expr
    slice: Expr
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, value, slice, line=0, col=0, end_line=0, end_col=0, depth=1):
        self.value = value
        self.slice = slice
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.depth = depth


@_dc
class Tuple(Expr):
    """``(a, b)`` or a bare ``a, b``."""
    __slots__ = ('elts', 'line', 'col', 'end_line', 'end_col', 'depth')
    _fields = ('elts',)
    elts: list
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, elts, line=0, col=0, end_line=0, end_col=0, depth=1):
        self.elts = elts
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.depth = depth


@_dc
class List(Expr):
    """``[a, b]``."""
    __slots__ = ('elts', 'line', 'col', 'end_line', 'end_col', 'depth')
    _fields = ('elts',)
    elts: list
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, elts, line=0, col=0, end_line=0, end_col=0, depth=1):
        self.elts = elts
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.depth = depth


@_dc
class Dict(Expr):
    """``{k: v, ...}``."""
    __slots__ = ('keys', 'values', 'line', 'col', 'end_line', 'end_col', 'depth')
    _fields = ('keys', 'values')
    keys: list
    values: list
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, keys, values, line=0, col=0, end_line=0, end_col=0, depth=1):
        self.keys = keys
        self.values = values
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.depth = depth


def iter_child_nodes(node):
    """The direct child nodes of ``node``, in field order."""
    for name in node._fields:
        v = getattr(node, name)
        if isinstance(v, Node):
            yield v
        elif isinstance(v, list):
            for x in v:
                if isinstance(x, Node):
                    yield x


def walk(node):
    """Every node under ``node`` (itself included), iteratively, in no particular order."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        todo.extend(iter_child_nodes(n))


def dump(node) -> str:
    """A compact, position-free rendering: ``BinOp(Name('x'), '+', Constant(1))``."""
    if isinstance(node, Node):
        return f"{type(node).__name__}({', '.join(dump(getattr(node, f)) for f in node._fields)})"
    if isinstance(node, list):
        return "[" + ", ".join(dump(x) for x in node) + "]"
    return repr(node)
