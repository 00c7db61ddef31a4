"""The import structure, read with ``ast`` from the sources (nothing is imported).

Module-level imports of ``gradexpr/``, ``grammar/`` and ``cli/`` form a tree (no cycle), and they
go one way: ``cli`` -> ``grammar`` -> ``gradexpr``. Imports written inside functions (done lazily,
for start-up time) are not part of the first check: the engine still closes cycles that way (the
report of issue 14 lists them); the direction rule holds for them too, except for
``gradexpr/session.py``, whose evaluation API runs program text through the interpreter.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"gradexpr": ROOT / "gradexpr", "gradexpr.grammar": ROOT / "grammar", "gradexpr.cli": ROOT / "cli"}


def _modules() -> dict:
    found = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


MODULES = _modules()


def _absolute(name: str) -> str:
    for bare in ("grammar", "cli"):
        if name == bare or name.startswith(bare + "."):
            return "gradexpr." + name
    return name


def _known(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path):
    """(imported module, inside a function?) for each import statement of ``module``."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def targets(node):
        if isinstance(node, ast.Import):
            return [_absolute(a.name) for a in node.names]
        if node.level:
            base = package.split(".")[:len(package.split(".")) - node.level + 1]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = _absolute(node.module)
        return [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in MODULES else prefix for a in node.names]

    def walk(node, lazy):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.dump(child.test):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for target in targets(child):
                    known = _known(target)
                    if known and known != module:
                        yield known, lazy
            yield from walk(child, lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    yield from walk(ast.parse(path.read_text()), False)


EDGES = {m: list(_imports(m, p)) for m, p in MODULES.items()}


def _layer(module: str) -> int:
    """0 the engine, 1 the language, 2 the command line (``python -m gradexpr`` is the command line)."""
    if module.startswith("gradexpr.cli") or module == "gradexpr.__main__":
        return 2
    return 1 if module.startswith("gradexpr.grammar") else 0


def test_module_level_imports_form_a_tree():
    graph = {m: sorted({t for t, lazy in edges if not lazy}) for m, edges in EDGES.items()}
    state, cycle = {}, []

    def visit(m, path):
        state[m] = "open"
        for t in graph[m]:
            if state.get(t) == "open":
                cycle.extend(path[path.index(t):] + [t])
                return True
            if t not in state and visit(t, path + [t]):
                return True
        state[m] = "done"
        return False

    for m in sorted(graph):
        if m not in state and visit(m, [m]):
            break
    assert not cycle, " -> ".join(cycle)


def test_imports_go_from_cli_to_grammar_to_the_engine():
    backwards = sorted(f"{m} imports {t}" for m, edges in EDGES.items() for t, lazy in edges
                       if _layer(t) > _layer(m) and not (m == "gradexpr.session" and lazy and
                                                         t.startswith("gradexpr.grammar")))
    assert not backwards, backwards


def test_the_check_sees_a_cycle_and_a_backward_import():
    """The checks above read real edges (a broken parser of imports would pass them vacuously)."""
    assert ("gradexpr.ops", False) in EDGES["gradexpr.surface"]
    assert ("gradexpr.composites.arithmetic", False) in EDGES["gradexpr.composites.methods"]
    assert ("gradexpr.composites.linalg", True) in EDGES["gradexpr.composites.methods"]   # (on first use)
    assert ("gradexpr.grammar.running", True) in EDGES["gradexpr.session"]
    assert ("gradexpr.grammar.source", False) in EDGES["gradexpr.cli.run_cmd"]
