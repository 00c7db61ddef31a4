"""Record how PyTorch prints its functions and methods, and write gradexpr/torch_callables.py.

    /tmp/torchref/bin/python tools/gen_torch_callables.py          # needs a Python with torch

``print(torch.dot)`` shows ``<built-in method dot of type object at 0x…>``, ``print(F.relu)``
``<function relu at 0x…>``, ``print(torch.linalg.norm)`` ``<built-in function linalg_norm>``,
``print(x.sum)`` ``<built-in method sum of Tensor object at 0x…>``, ``print(x.backward)``
``<bound method Tensor.backward of tensor(…)>``: which one depends on whether PyTorch wrote the
function in C++ or Python, which gradexpr (all Python) cannot tell by itself. This records,
for every public callable of the namespaces below, its repr as a template (``{n}`` the name,
``{a}`` an address, ``{s}`` the repr of the tensor a method is bound to, ``{t}`` its type's
name); ``gradexpr/callable_display.py`` reads them.
"""
from __future__ import annotations

import os
import re
import sys
import types

import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gradexpr", "torch_callables.py")
NAMESPACES = {"torch": torch, "torch.nn.functional": F, "torch.linalg": torch.linalg,
              "torch.special": torch.special, "torch.fft": torch.fft, "torch.autograd": torch.autograd,
              "torch.autograd.functional": torch.autograd.functional, "torch.func": torch.func,
              "torch.nn.init": torch.nn.init}
_ADDRESS = re.compile(r"0x[0-9a-f]+")
_KINDS = re.compile(r"(method|function|wrapper|descriptor) ('?)((?:Tensor\.)?\w+(?:\.<locals>)?(?:\.\w+)*)('?)")


def template(obj, name, self_repr=None):
    text = repr(obj).replace("{", "{{").replace("}", "}}")
    if self_repr is not None:
        text = text.replace(self_repr, "{s}").replace(" Tensor object at", " {t} object at")
    text = _ADDRESS.sub("{a}", text)

    def named(m):
        token = m.group(3)
        if token == name:
            token = "{n}"
        elif token == "Tensor." + name:
            token = "Tensor.{n}"
        elif token.endswith("_" + name):            # linalg_norm, special_expit, fft_fft
            token = token[:-len(name)] + "{n}"
        return f"{m.group(1)} {m.group(2)}{token}{m.group(4)}"
    return _KINDS.sub(named, text, count=1)


def public_callables(space, dunders=False):
    for name in sorted(dir(space)):
        if name.startswith("_") and not (dunders and name.startswith("__") and name.endswith("__")):
            continue
        try:
            obj = getattr(space, name)
        except Exception:
            continue
        if isinstance(obj, (type, types.ModuleType)) or not callable(obj) or type(obj).__module__ == "typing":
            continue
        yield name, obj


def main():
    templates: dict = {}

    def index(text):
        return templates.setdefault(text, len(templates))

    spaces = {}
    for prefix, space in NAMESPACES.items():
        spaces[prefix] = {name: index(template(obj, name)) for name, obj in public_callables(space)}
    sample = torch.ones(2)
    shown = repr(sample)
    tensor = {}
    for name, unbound in public_callables(torch.Tensor, dunders=True):
        bound = getattr(sample, name, None)
        if bound is None or not callable(bound):
            continue
        tensor[name] = (index(template(unbound, name)), index(template(bound, name, shown)))
    with open(OUT, "w") as fh:
        fh.write(f'"""How PyTorch {torch.__version__} prints its public functions and Tensor methods (see\n'
                 'callable_display.py). Written by tools/gen_torch_callables.py under PyTorch: do not edit."""\n\n')
        fh.write("# {n} name, {a} address, {s} the repr of the tensor a method is bound to, {t} its type's name\n")
        fh.write("TEMPLATES = (\n")
        for text in templates:
            fh.write(f"    {text!r},\n")
        fh.write(")\n\n# namespace -> name -> template\nNAMESPACES = {\n")
        for prefix, names in spaces.items():
            fh.write(f"    {prefix!r}: {{\n")
            items = [f"{n!r}: {i}" for n, i in names.items()]
            for k in range(0, len(items), 6):
                fh.write("        " + ", ".join(items[k:k + 6]) + ",\n")
            fh.write("    },\n")
        fh.write("}\n\n# Tensor method -> (template of torch.Tensor.NAME, of tensor.NAME)\nTENSOR = {\n")
        items = [f"{n!r}: {v!r}" for n, v in tensor.items()]
        for k in range(0, len(items), 5):
            fh.write("    " + ", ".join(items[k:k + 5]) + ",\n")
        fh.write("}\n")
    print(f"wrote {OUT}: {len(templates)} templates, "
          f"{sum(map(len, spaces.values()))} functions, {len(tensor)} Tensor methods", file=sys.stderr)


if __name__ == "__main__":
    main()
