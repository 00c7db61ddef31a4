"""Record the Python-binding signatures of the Tensor methods gradexpr writes by hand.

Run with the oracle's Python (torch importable) and gradexpr importable (PYTHONPATH=. from the checkout):

    PYTHONPATH=. /tmp/torchref/bin/python tools/gen_binding_signatures.py   # rewrites gradexpr/ops/_bindings.py
    PYTHONPATH=. /tmp/torchref/bin/python tools/gen_binding_signatures.py --check

PyTorch's argument parser is built from signature strings compiled into libtorch_python.so
(``cumsum(int64_t dim, *, ScalarType? dtype=None)``; a function's start with ``Tensor input``, a method's
leave ``self`` out; ``|deprecated`` and ``|hidden`` ones are tried but never listed). For each method
gradexpr binds by hand (not from the op table), this takes the strings of that name that are a method's,
converts them to the op table's schema lines, and keeps them only if they are PyTorch's: the parser's own
error for a call no signature takes lists the visible ones, and gradexpr's rendering of the converted lines
must print exactly that list (a method of one signature, whose error lists nothing, must have one
candidate). Methods PyTorch writes in Python (``split``, ``norm`` …) have no parser and are left out.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

import torch

OUT = os.path.join(os.path.dirname(__file__), "..", "gradexpr", "ops", "_bindings.py")

# parser types -> the schema types of the op table's lines (gradexpr/signatures.py)
_TYPES = [(r"^int64_t", "int"), (r"^DeviceIndex", "int"), (r"^double", "float"),
          (r"^ArrayRef<double>", "float[]"), (r"^(?:at::)?OptionalIntArrayRef", "int[]?"),
          (r"^IntArrayRef", "int[]"), (r"^SymIntArrayRef", "SymInt[]"), (r"^TensorList", "Tensor[]"),
          (r"^ScalarList", "Scalar[]"), (r"^(?:c10|std)::string_view", "str"), (r"^std::string", "str"),
          (r"^PyObject\*", "PyObject")]
_REFUSED = ("c10::List", "Stream", "DispatchKeySet", "Storage", "{", "at::", "c10::MemoryFormat", "QScheme")


def parser_strings():
    lib = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_python.so")
    text = subprocess.run(["strings", lib], capture_output=True, text=True, check=True).stdout
    return [s for s in text.splitlines() if re.fullmatch(r"[a-z_][a-z_0-9]*\(.*\)(\|(deprecated|hidden))?", s)]


def schema_line(text):
    """A parser string of a method as a schema line (``self`` first), or None if it has a type the table's
    lines cannot say. Returns (line, hidden)."""
    text, _, flag = text.partition("|")
    name, _, params = text.partition("(")
    params = params[:-1]
    if any(r in params for r in _REFUSED):
        return None
    out = ["Tensor self"]
    for p in filter(None, (x.strip() for x in params.split(", "))):
        if p == "*":
            out.append(p)
            continue
        for pattern, new in _TYPES:
            p = re.sub(pattern, new, p, count=1)
        p = p.replace("[]?[", "[").replace("[][", "[")     # int[][1] -> int[1]
        out.append(p)
    return f"{name}({', '.join(out)}) -> Tensor", bool(flag)


def listed_signatures(name):
    """What the parser lists for ``name``'s call with an unknown keyword: [displays], [] for a method of one
    signature (its error names the keyword), None for a method written in Python."""
    t = torch.zeros(2, 2)
    try:
        getattr(t, name)(_gx_probe_=0)
    except TypeError as e:
        message = str(e)
    except Exception:
        return None
    else:
        return None
    if message.startswith("Tensor.") or message.startswith(f"{name}() got an unexpected keyword argument '"):
        return [] if message.startswith(f"{name}()") else None
    single = re.search(r"but expected (\(.*\))$", message.splitlines()[0])
    if single:
        return [single.group(1)]
    return [line[3:] for line in message.splitlines() if line.startswith(" * (")]


def main(check=False):
    from gradexpr import api  # noqa: F401  (binds the table)
    from gradexpr import surface
    from gradexpr.composites import methods
    from gradexpr.signatures import Signature
    from gradexpr.tensor import Tensor
    methods.bind_lazy()
    table = set(surface.bound()["method"]) | set(surface.bound()["inplace"])
    hand = sorted(n for n in vars(Tensor) if not n.startswith("_") and callable(getattr(Tensor, n, None))
                  and n not in table and hasattr(torch.Tensor, n))
    strings = parser_strings()
    found, skipped = {}, []
    for name in hand:
        # a function's strings name its tensor (input, self) and its out=; a method's never do
        candidates = [s for s in strings if s.startswith(name + "(")
                      and not re.search(r"\b(Tensor|Scalar) (input|self)\b|Tensor out=", s)]
        listed = listed_signatures(name)
        if listed is None or not candidates:
            skipped.append((name, "written in Python" if listed is None else "no parser strings"))
            continue
        lines = [schema_line(s) for s in candidates]
        if any(x is None for x in lines):
            skipped.append((name, "a type the schema lines cannot say"))
            continue
        try:
            shown = [Signature(line).display(True) for line, hidden in lines if not hidden]
            for line, _ in lines:
                Signature(line)
        except ValueError as e:
            skipped.append((name, f"a default the schema lines cannot say ({e})"))
            continue
        if (listed and sorted(shown) != sorted(listed)) or (not listed and len(shown) != 1):
            skipped.append((name, f"rendered {shown} for {listed}"))
            continue
        # in the order PyTorch lists them (the library's string table has its own), the hidden ones last
        visible = [(line, hidden) for line, hidden in lines if not hidden]
        if listed:
            visible.sort(key=lambda lh: listed.index(Signature(lh[0]).display(True)))
        found[name] = visible + [(line, hidden) for line, hidden in lines if hidden]
    body = "".join(f"    {name!r}: (\n" + "".join(f"        ({line!r}, {hidden}),\n" for line, hidden in lines) + "    ),\n"
                   for name, lines in sorted(found.items()))
    text = ('"""GENERATED by tools/gen_binding_signatures.py from PyTorch 2.13: do not edit.\n\n'
            "The Python-binding signatures of the Tensor methods written by hand, as schema lines (self first),\n"
            "each with whether PyTorch hides it from its lists (deprecated and hidden signatures): the parser's\n"
            'words for a call none of them takes (signatures.Overloads)."""\n\n'
            "METHODS = {\n" + body + "}\n")
    if check:
        with open(OUT) as f:
            same = f.read() == text
        print("up to date" if same else "out of date")
        return 0 if same else 1
    with open(OUT, "w") as f:
        f.write(text)
    print(f"{len(found)} methods written to {os.path.relpath(OUT)}; {len(skipped)} left out:")
    for name, why in skipped:
        print(f"  {name}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main("--check" in sys.argv))
