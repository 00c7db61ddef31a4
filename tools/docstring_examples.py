"""Turn the ``>>>`` examples of PyTorch's docstrings into gradexpr programs, as written.

Run it under a Python that has PyTorch (the oracle's venv, never gradexpr's), then record and check:

    /tmp/torchref/bin/python tools/docstring_examples.py OUT_DIR
    MKL_ENABLE_INSTRUCTIONS=SSE4_2 ATEN_CPU_CAPABILITY=avx2 /tmp/torchref/bin/python ../shared/tools/torch-oracle --fast OUT_DIR
    MKL_ENABLE_INSTRUCTIONS=SSE4_2 gradexpr check OUT_DIR --plain

It reads the names gradexpr binds (tests/data/pytorch_surface.tsv less surface_unsupported.txt) and
writes one program per docstring with examples. The session becomes a script the way a reader runs
it: an expression line the session echoes is printed with ``print()``; an import the session takes
for granted (``math``, ``numpy``, ``F``, ``nn``, the docstring's own module's names) and a seed are added
with a comment saying so (the seed in every program: layers, init functions and samplers draw random
numbers without saying so). Nothing else of the example is changed. The programs that pass go into
tests/programs/real/docstrings/; the others show what gradexpr still lacks.
"""
import ast
import builtins
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data")
ASSUMED_IMPORTS = (
    (re.compile(r"\bmath\."), "import math"),
    (re.compile(r"\bnumpy\."), "import numpy"),
    (re.compile(r"\bnp\."), "import numpy as np"),
    (re.compile(r"\bF\."), "import torch.nn.functional as F"),
    (re.compile(r"\bnn\."), "import torch.nn as nn"),
)


def bound_names():
    """The function-like names of the surface that gradexpr binds."""
    refused = {line.strip() for line in open(os.path.join(DATA, "surface_unsupported.txt"))
               if line.strip() and not line.startswith("#")}
    for line in open(os.path.join(DATA, "pytorch_surface.tsv")):
        if line.startswith("#"):
            continue
        name, kind = line.split("\t")[:2]
        if kind not in ("class", "value") and name not in refused:
            yield name


# Modules whose public classes and functions are read as well (they are not in the surface file).
MODULES = ("torch.nn", "torch.nn.init", "torch.nn.utils", "torch.optim", "torch.optim.lr_scheduler",
           "torch.utils.data", "torch.autograd", "torch.autograd.graph", "torch.autograd.forward_ad",
           "torch.autograd.functional", "torch.func")


def module_names(torch):
    """``module.name`` of the public names of MODULES, each once."""
    import importlib
    seen = set()
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for attr in sorted(getattr(module, "__all__", None) or dir(module)):
            obj = getattr(module, attr, None)
            if attr.startswith("_") or obj is None or id(obj) in seen or not callable(obj):
                continue
            seen.add(id(obj))
            yield f"{module_name}.{attr}", obj


def session_lines(doc):
    """The code of a docstring's ``>>>``/``...`` lines, in order."""
    for line in doc.splitlines():
        s = line.strip()
        if s.startswith((">>>", "...")):
            yield s[4:] if len(s) > 3 else ""


def as_script(session):
    """The session as a script, or None when it is not Python (a doctest with output inline)."""
    try:
        tree = ast.parse(session)
    except SyntaxError:
        return None
    lines = session.splitlines()
    out = []
    for st in tree.body:
        if isinstance(st, ast.Expr) and not (isinstance(st.value, ast.Call)
                                             and isinstance(st.value.func, ast.Name)
                                             and st.value.func.id == "print"):
            out.append(f"print({ast.get_source_segment(session, st.value)})")
        else:
            out.append("\n".join(lines[st.lineno - 1:st.end_lineno]))
    return "\n".join(out)


def file_name(name):
    for prefix, short in (("torch.nn.functional.", "F_"), ("torch.nn.", "nn_"), ("torch.optim.", "optim_"),
                          ("torch.utils.data.", "data_"), ("torch.autograd.", "autograd_"),
                          ("torch.func.", "func_"), ("torch.Tensor.", "tensor_"),
                          ("torch.linalg.", "linalg_"), ("torch.", "torch_")):
        if name.startswith(prefix):
            return short + name[len(prefix):] + ".gx"
    return name + ".gx"


def free_names(code):
    """Names the script reads but never binds (the session took them from its module)."""
    tree = ast.parse(code)
    bound, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return sorted(read - bound)


def program(name, code):
    added = [] if "import torch" in code else ["import torch"]
    module = name.rsplit(".", 1)[0]
    if module != "torch" and not module.startswith("torch.Tensor"):
        import importlib
        home = importlib.import_module(module)
        assumed = {"torch", "math", "numpy", "np", "F", "nn"}
        for free in free_names(code):
            if free not in assumed and not hasattr(builtins, free) and hasattr(home, free):
                added.append(f"from {module} import {free}  # added: the session assumes it")
    for pattern, statement in ASSUMED_IMPORTS:
        if pattern.search(code) and statement not in code:
            added.append(f"{statement}  # added: the session assumes it")
    if "manual_seed" not in code:        # layers, init functions and samplers draw random numbers
        added.append("torch.manual_seed(0)  # added: the same numbers in both runs")
    return "\n".join([f"# Source: torch docstring of {name} (installed PyTorch 2.13)",
                      "# The >>> session as a script: each expression line the session echoes is "
                      "printed with print().", *added, code, ""])


def surface_objects(torch):
    for name in bound_names():
        obj = torch
        try:
            for part in name.split(".")[1:]:
                obj = getattr(obj, part)
        except AttributeError:
            continue
        yield name, obj


def main(out_dir):
    import torch        # only here: this tool runs beside PyTorch, never inside gradexpr
    os.makedirs(out_dir, exist_ok=True)
    written = 0
    for name, obj in [*surface_objects(torch), *module_names(torch)]:
        code = as_script("\n".join(session_lines(obj.__doc__ or "")))
        if not code or "cuda" in code:
            continue
        with open(os.path.join(out_dir, file_name(name)), "w") as f:
            f.write(program(name, code))
        written += 1
    print(f"{written} programs in {out_dir}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: docstring_examples.py OUT_DIR")
    main(sys.argv[1])
