"""Write gradexpr/builtin_reprs.py: how PyTorch prints its C-implemented functions.

    /tmp/torchref/bin/python tools/gen_builtin_reprs.py      # (under a Python with PyTorch)

``print(torch.dot)`` shows ``<built-in method dot of type object at 0x…>``, ``print(F.gelu)``
``<built-in function gelu>``, ``print(torch.Tensor.add)`` ``<method 'add' of 'torch._C.TensorBase'
objects>``; the Python-written ones (``torch.einsum``, ``F.relu``) print as functions do. gradexpr's
functions are all Python, so the program's printing (grammar/builtins.py) looks their PyTorch name up
in this table. The object address is written ``{addr}``.
"""
import os
import re
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "gradexpr", "builtin_reprs.py")
SPACES = {"torch": torch, "torch.Tensor": torch.Tensor, "torch.nn.functional": F, "torch.linalg": torch.linalg,
          "torch.special": torch.special, "torch.fft": None}


def main():
    table = {}
    for prefix, space in SPACES.items():
        if space is None:
            continue
        for name in sorted(dir(space)):
            if name.startswith("_"):
                continue
            try:
                obj = getattr(space, name)
            except Exception:
                continue
            text = repr(obj)
            if text.startswith(("<built-in ", "<method ")):
                table[f"{prefix}.{name}"] = re.sub(r"0x[0-9a-fA-F]+", "{addr}", text)
    with open(OUT, "w") as f:
        f.write('"""How PyTorch prints its C-implemented functions, by public name (``{addr}``: the address\n'
                f'of the object it names): written by tools/gen_builtin_reprs.py from PyTorch {torch.__version__}\n'
                '(do not edit)."""\n\n')
        f.write("REPRS = {\n")
        for name in sorted(table):
            f.write(f"    {name!r}: {table[name]!r},\n")
        f.write("}\n")
    print(f"{len(table)} names in {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
