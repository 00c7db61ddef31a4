"""Compile-time scopes of a program: which names a function, class body or comprehension
binds, and where each name lives at run time.

A function's (or comprehension's) frame is a list ``[enclosing frame, return value, slot,
slot, ...]``; a class body's frame is ``[enclosing frame, None, namespace dict]``. Python's
rules: names assigned in a function are its locals unless declared ``global``/``nonlocal``;
a class body's names go to its namespace, and functions defined in it do not see them;
a comprehension has its own scope, but ``:=`` inside it binds in the enclosing function.
"""
from __future__ import annotations

from .. import ast

__all__ = ["Scope", "bound_names", "home", "mangle"]

FUNCTION, CLASS, COMPREHENSION = "function", "class", "comprehension"


class Scope:
    """The compile-time view of a function, class body or comprehension."""

    __slots__ = ("parent", "slots", "params", "qualname", "kind", "globals", "nonlocals", "class_name",
                 "generator")

    def __init__(self, parent, names, params, qualname, kind=FUNCTION, globals=(), nonlocals=()):
        self.parent = parent
        self.slots = {}
        self.globals = frozenset(globals)
        self.nonlocals = frozenset(nonlocals)
        for n in names:
            if n not in self.slots and n not in self.globals and n not in self.nonlocals:
                self.slots[n] = 2 + len(self.slots)
        self.params = frozenset(params)
        self.qualname = qualname
        self.kind = kind
        self.class_name = None      # the enclosing class, whose name mangles private names
        self.generator = False


def home(scope, name):
    """Where ``name`` lives seen from ``scope``: ``("global",)``, ``("class",)`` (the class
    namespace in the current frame), or ``("slot", depth, index)`` (``depth`` frames up)."""
    if scope is not None and scope.kind == CLASS:
        return ("class",)
    depth = 0
    s = scope
    while s is not None:
        if name in s.globals:
            return ("global",)
        if name in s.slots:
            return ("slot", depth, s.slots[name])
        s = s.parent
        depth += 1
    return ("global",)


def mangle(scope, name):
    """Python's private names: ``self.__x`` in a method of class ``C`` is ``self._C__x``."""
    if scope is None or scope.class_name is None or not name.startswith("__") or name.endswith("__"):
        return name
    owner = scope.class_name.lstrip("_")
    return f"_{owner}{name}" if owner else name


def _target_names(t, out):
    tt = type(t)
    if tt is ast.Name:
        out.append(t.id)
    elif tt is ast.Tuple or tt is ast.List:
        for e in t.elts:
            _target_names(e, out)
    elif tt is ast.Starred:
        _target_names(t.value, out)


_NESTED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _walrus_names(node, out):
    """Targets of ``:=`` in an expression (comprehensions included, lambdas not)."""
    todo = [node]
    while todo:
        n = todo.pop()
        if type(n) is ast.NamedExpr:
            out.append(n.target.id)
        if type(n) is ast.Lambda:
            continue
        todo.extend(ast.iter_child_nodes(n))
        if isinstance(n, (ast.ListComp, ast.DictComp)):
            for g in n.generators:
                todo.append(g.iter)
                todo.extend(g.ifs)


def bound_names(body, walrus=True):
    """Names bound by the statements of a body (not inside nested defs and classes), and its
    ``global`` and ``nonlocal`` declarations: ``(names, globals, nonlocals)``."""
    out, glob, nonloc = [], [], []
    todo = [body]
    while todo:
        for s in todo.pop():
            t = type(s)
            if walrus and t is not ast.FunctionDef and t is not ast.ClassDef and t is not ast.Decorated:
                for f in s._fields:
                    v = getattr(s, f)
                    if isinstance(v, ast.Expr):
                        _walrus_names(v, out)
            if t is ast.Assign:
                for tg in s.targets:
                    _target_names(tg, out)
            elif t is ast.AugAssign or t is ast.AnnAssign:
                _target_names(s.target, out)
            elif t is ast.For:
                _target_names(s.target, out)
                todo.append(s.body)
                todo.append(s.orelse)
            elif t is ast.While or t is ast.If:
                todo.append(s.body)
                todo.append(s.orelse)
            elif t is ast.With:
                for it in s.items:
                    if it.optional_vars is not None:
                        _target_names(it.optional_vars, out)
                    if walrus:
                        _walrus_names(it.context_expr, out)
                todo.append(s.body)
            elif t is ast.Try:
                todo.extend((s.body, s.orelse, s.finalbody))
                for h in s.handlers:
                    if h.name is not None:
                        out.append(h.name)
                    todo.append(h.body)
            elif t is ast.Delete:
                for tg in s.targets:
                    _target_names(tg, out)
            elif t is ast.FunctionDef or t is ast.ClassDef:
                out.append(s.name)
            elif t is ast.Decorated:
                out.append(s.definition.name)
            elif t is ast.Global:
                glob.extend(s.names)
            elif t is ast.Nonlocal:
                nonloc.extend(s.names)
            elif t is ast.Import:
                for a in s.names:
                    out.append(a.asname or a.name.split(".")[0])
            elif t is ast.ImportFrom:
                for a in s.names:
                    if a.name != "*":
                        out.append(a.asname or a.name)
    return out, glob, nonloc


def has_yield(body):
    """Whether a function body is a generator's (a yield outside nested defs and lambdas)."""
    todo = list(body)
    while todo:
        n = todo.pop()
        t = type(n)
        if t is ast.Yield or t is ast.YieldFrom:
            return True
        if t is ast.FunctionDef or t is ast.ClassDef or t is ast.Lambda or t is ast.Decorated:
            continue
        todo.extend(ast.iter_child_nodes(n))
    return False
