"""Run with the oracle: /tmp/torchref/bin/python tests/data/make_pytorch_surface.py

Record PyTorch's public names (torch.*, torch.Tensor.*, torch.nn.functional.*, torch.linalg.*) with the
first line of each one's docstring (its Python signature where PyTorch documents one)."""
import re
import sys
import types

import torch
import torch.nn.functional as F

def first_sig(obj, name):
    doc = getattr(obj, "__doc__", None) or ""
    for line in doc.strip().splitlines()[:3]:
        line = line.strip()
        m = re.match(r"^(?:[\w.]*\.)?" + re.escape(name) + r"\((.*)\)(?:\s*->.*)?$", line)
        if m:
            return line
    return None

out = {}
spaces = {"torch": torch, "torch.Tensor": torch.Tensor, "torch.nn.functional": F, "torch.linalg": torch.linalg}
for prefix, space in spaces.items():
    for name in sorted(dir(space)):
        if name.startswith("_"):
            continue
        try:
            obj = getattr(space, name)
        except Exception:
            continue
        if isinstance(obj, types.ModuleType):
            kind = "module"
        elif isinstance(obj, type):
            kind = "class"
        elif callable(obj):
            kind = "function"
        else:
            kind = "value"
        if prefix == "torch.Tensor" and kind in ("value",):
            kind = "attribute"
        out[f"{prefix}.{name}"] = {"kind": kind, "signature": first_sig(obj, name) if kind == "function" else None}
path = sys.argv[1] if len(sys.argv) > 1 else "tests/data/pytorch_surface.tsv"
with open(path, "w") as fh:
    fh.write(f"# PyTorch {torch.__version__} public names: torch.*, torch.Tensor.*, torch.nn.functional.*, torch.linalg.*\n")
    fh.write("# recorded by tests/data/make_pytorch_surface.py: name, kind, the docstring's signature line\n")
    for n in sorted(out):
        fh.write(f"{n}\t{out[n]['kind']}\t{out[n]['signature'] or ''}\n")
