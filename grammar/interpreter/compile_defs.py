"""Compiling ``class`` statements, decorators and ``super()`` (a mixin of the compiler).

A class body runs in a frame ``[enclosing frame, cell, namespace]``: its statements store
into the namespace, its names are read there first, then outside; ``cell`` is a one-item
list that receives the class once it exists. Methods that use ``super()`` keep that cell
in a hidden local, ``__class__`` (as CPython does), which ``super()`` reads with the
method's first argument.
"""
from __future__ import annotations

from gradexpr import errors

from .. import ast
from . import scopes as _scopes
from .classes import make_class
from .scopes import Scope

__all__ = ["DefinitionCompiler", "mentions_super"]

_MISSING = object()


def mentions_super(body):
    """Whether ``super`` is named anywhere in a function body (nested functions included)."""
    for s in body:
        for n in ast.walk(s):
            if type(n) is ast.Name and n.id == "super":
                return True
    return False


class DefinitionCompiler:
    """``s_ClassDef``, ``s_Decorated``, class-body name loads and ``super()``."""

    def s_ClassDef(self, s, scope):
        make = self.class_maker(s, scope)
        st = self.store(ast.Name(s.name, s.line, s.col, s.end_line, s.end_col), scope)

        def class_stmt(fr):
            st(fr, make(fr))
        return class_stmt

    def class_maker(self, s, scope):
        """``make(frame) -> class`` for a class statement."""
        base_fns = tuple(self.expr(b, scope) for b in s.bases)
        kw_fns = tuple((k.arg, self.expr(k.value, scope)) for k in s.keywords)
        in_class = scope is not None and scope.kind == _scopes.CLASS
        qual = s.name if scope is None else f"{scope.qualname}.{s.name}" if in_class else \
            f"{scope.qualname}.<locals>.{s.name}"
        _bound, glob, nonloc = _scopes.bound_names(s.body, walrus=False)
        cscope = Scope(scope, (), (), qual, kind=_scopes.CLASS, globals=glob, nonlocals=nonloc)
        cscope.class_name = s.name
        body = self.block(s.body, cscope)
        loc = self.loc
        name = s.name

        def make(fr):
            bases = [f(fr) for f in base_fns]
            keywords = {k: f(fr) for k, f in kw_fns}
            ns = {}
            cell = [None]
            body([fr, cell, ns])
            try:
                cls = make_class(name, qual, bases, keywords, ns)
            except Exception as e:
                raise loc(e, s)
            cell[0] = cls
            return cls
        return make

    def s_Decorated(self, s, scope):
        d = s.definition
        if type(d) is ast.ClassDef:
            make = self.class_maker(d, scope)
        else:
            make = self.function(d, d.name, d.args, d.body, scope, is_lambda=False)
        decorators = tuple((self.expr(x, scope), x) for x in s.decorators)
        st = self.store(ast.Name(d.name, d.line, d.col, d.end_line, d.end_col), scope)
        loc = self.loc

        def decorated(fr):
            fns = [(f(fr), node) for f, node in decorators]     # evaluated first, as Python does
            obj = make(fr)
            for f, node in reversed(fns):
                try:
                    obj = f(obj)
                except Exception as e:
                    raise loc(e, node)
            st(fr, obj)
        return decorated

    def load_in_class(self, e, scope):
        """A name read in a class body: the namespace so far, then the enclosing scopes."""
        name = _scopes.mangle(scope, e.id)
        outer = self.load_name(e, scope.parent)

        def load_class(fr):
            v = fr[2].get(name, _MISSING)
            if v is _MISSING:
                return outer(fr[0])
            return v
        return load_class

    def super_call(self, e, scope):
        """Zero-argument ``super()`` in a method: ``super(<its class>, <its first argument>)``."""
        where = _scopes.home(scope, "__class__")
        loc = self.loc
        if where[0] != "slot" or scope.kind != _scopes.FUNCTION or not scope.params:
            message = "super(): __class__ cell not found" if where[0] != "slot" else "super(): no arguments"

            def bad_super(fr):
                raise loc(errors.RuntimeError(message), e)
            return bad_super
        cell_of = self.load_name(ast.Name("__class__", e.line, e.col, e.end_line, e.end_col), scope)

        def super_(fr):
            try:
                return super(cell_of(fr)[0], fr[2])
            except Exception as ex:
                raise loc(ex, e)
        return super_
