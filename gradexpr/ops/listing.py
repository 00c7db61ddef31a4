"""The op table described for readers (``gradexpr ops``): each entry's signatures, variants, node,
differentiable inputs and the source text of its backward formulas.

Formula sources are read from the family files on demand (``inspect``/``ast``), never at import.
"""
from __future__ import annotations

import ast
import functools
import inspect
import textwrap

from .registry import NotDifferentiable


def describe(name, entry) -> dict:
    """One entry as plain data (JSON-ready)."""
    inputs = ["*" + entry.inputs[0]] if entry.variadic else list(entry.inputs)
    formulas = entry.formulas
    differentiable = [i for i, raw in zip(inputs, entry.inputs) if callable(formulas.get(raw))]
    not_implemented = [i for i, raw in zip(inputs, entry.inputs) if isinstance(formulas.get(raw), NotDifferentiable)]
    recorded = entry.differentiable
    return {
        "name": name,
        "node": entry.node if recorded else None,
        "signatures": list(entry.schema),
        "variants": sorted(entry.variants),
        "inputs": inputs,
        "differentiable": differentiable,
        "not_implemented": not_implemented,
        "formulas": {i: formula_source(formulas[raw], raw) for i, raw in zip(inputs, entry.inputs)
                     if callable(formulas.get(raw))},
        "domain": entry.domain if recorded else None,
        "second_order": bool(recorded and entry.twice and differentiable),
        "pointwise": entry.pointwise,
    }


def formula_source(f, input_name) -> str:
    """The source text of a backward formula: a named helper's whole definition, or a lambda's body
    as written in its entry (``grad / (1 + (other - self).exp())``)."""
    if f.__name__ != "<lambda>":
        try:
            return textwrap.dedent(inspect.getsource(f)).rstrip()
        except (OSError, TypeError):
            return "<source not available>"
    found = _module_lambdas(inspect.getsourcefile(f) or "").get(f.__code__.co_firstlineno, [])
    named = [body for arg, body in found if arg == input_name] or [body for _, body in found if len(found) == 1]
    return named[0] if named else "<source not available>"


@functools.lru_cache(maxsize=None)
def _module_lambdas(path) -> dict:
    """{line: [(keyword it is passed as, body text)]} for every lambda of a source file."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError:
        return {}
    out = {}
    tree = ast.parse(text)
    seen = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and isinstance(node.value, ast.Lambda):
            lam = node.value
            seen.add(id(lam))
            out.setdefault(lam.lineno, []).append((node.arg, ast.get_source_segment(text, lam.body)))
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda) and id(node) not in seen:
            out.setdefault(node.lineno, []).append((None, ast.get_source_segment(text, node.body)))
    return out
