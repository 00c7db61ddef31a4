"""Where the forward recorded a node: the program line and sub-expression named in a ``note:`` under
an error of backward (a NaN in anomaly mode, a saved tensor changed in place).

A node keeps the statement that was running when it was recorded (``Node._origin``, published by
the interpreter); the sub-expression is found in that statement when an error needs it: the call,
method call or operator that records this kind of node (``SqrtBackward0`` <- ``.sqrt()``/``sqrt(…)``,
``MulBackward0`` <- ``*``, ``FnBackward`` <- ``Fn.apply(…)``), the first one in evaluation order; the
whole statement when none matches.
"""
from __future__ import annotations

_OPERATOR_OPS = {"+": ("add",), "-": ("sub", "rsub"), "*": ("mul",), "/": ("div",), "**": ("pow", "pow_scalar"),
                 "@": ("matmul", "mm", "mv", "dot", "bmm"), "//": ("floor_divide",), "%": ("remainder",)}


class Origin:
    """A located note: ``note: <text>`` then the source line with a caret under ``col..end_col``."""

    __slots__ = ("filename", "line", "col", "end_col", "text")

    def __init__(self, filename, line, col, end_col, text):
        self.filename, self.line, self.col, self.end_col, self.text = filename, line, col, end_col, text


def note_for(node) -> Origin | None:
    filename, stmt = node._origin
    name = node.name()
    expr = _find(stmt, _matcher(node)) or stmt
    end_col = expr.end_col if expr.end_line == expr.line else None
    return Origin(filename, expr.line, expr.col, end_col,
                  f"{name} was recorded by the forward at {filename}:{expr.line}:{expr.col}")


def _matcher(node):
    op = getattr(node, "_op", None)
    op_name = getattr(op, "name", "") or ""
    node_name = node.name()
    base = op_name.rstrip("_")
    if node_name.endswith("Backward") and not node_name[-1].isdigit():     # a custom Function
        fn_class = node_name[:-len("Backward")]

        def is_apply(e):
            return (type(e).__name__ == "Call" and type(e.func).__name__ == "Attribute" and e.func.attr == "apply"
                    and _tail_name(e.func.value) == fn_class)
        return is_apply

    def matches(e):
        kind = type(e).__name__
        if kind == "Call":
            return _tail_name(e.func) in (op_name, base, base + "_")
        if kind == "BinOp":
            return base in _OPERATOR_OPS.get(e.op, ())
        if kind == "UnaryOp":
            return e.op == "-" and base == "neg"
        if kind == "Subscript":
            return base in ("index", "select", "slice", "getitem")
        return False
    return matches


def _tail_name(e):
    kind = type(e).__name__
    if kind == "Attribute":
        return e.attr
    if kind == "Name":
        return e.id
    return None


def _find(node, matches):
    """The first sub-expression of ``node`` (in evaluation order: operands before the operation) that matches."""
    for child in _children(node):
        found = _find(child, matches)
        if found is not None:
            return found
    if matches(node):
        return node
    return None


def _children(node):
    for field in getattr(type(node), "__slots__", ()):
        if field in ("line", "col", "end_line", "end_col", "depth"):
            continue
        v = getattr(node, field, None)
        if isinstance(v, (list, tuple)):
            for x in v:
                if hasattr(x, "line"):
                    yield x
        elif hasattr(v, "line") and hasattr(v, "end_col"):
            yield v
