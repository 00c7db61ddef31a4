"""Record the Python-binding signatures of PyTorch's Tensor methods and torch functions gradexpr has.

Run with the oracle's Python (torch importable) and gradexpr importable (PYTHONPATH=. from the checkout):

    PYTHONPATH=. /tmp/torchref/bin/python tools/gen_binding_signatures.py   # rewrites gradexpr/ops/_bindings.py
    PYTHONPATH=. /tmp/torchref/bin/python tools/gen_binding_signatures.py --check

PyTorch's argument parser is built from signature strings compiled into libtorch_python.so
(``cumsum(int64_t dim, *, ScalarType? dtype=None)``; a function's start with ``Tensor input``, a method's
leave ``self`` out; ``|deprecated`` and ``|hidden`` ones are tried but never listed). For each method
gradexpr has, this takes the strings of that name that are a method's,
converts them to the op table's schema lines, and keeps them only if they are PyTorch's: the parser's own
error for a call no signature takes lists the visible ones, and gradexpr's rendering of the converted lines
must print exactly that list. Likewise for the torch functions. Those PyTorch writes
in Python (``split``, ``norm`` …) have no parser and are left out.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import types

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


def schema_line(text, method=True):
    """A parser string as a schema line (a method's with ``self`` first), or None if it has a type the
    table's lines cannot say. Returns (line, hidden)."""
    text, _, flag = text.partition("|")
    name, _, params = text.partition("(")
    params = params[:-1]
    if any(r in params for r in _REFUSED):
        return None
    out = ["Tensor self"] if method else []
    for p in filter(None, (x.strip() for x in params.split(", "))):
        if p == "*":
            out.append(p)
            continue
        for pattern, new in _TYPES:
            p = re.sub(pattern, new, p, count=1)
        p = p.replace("[]?[", "[").replace("[][", "[")     # int[][1] -> int[1]
        out.append(p)
    return f"{name}({', '.join(out)}) -> Tensor", bool(flag)


def listed_signatures(name, function=False):
    """The signatures PyTorch's parser lists for ``name`` (as it prints them), from its error for a call of
    25 positional arguments, which no signature takes; None for a method or function written in Python
    (or one without parameters, whose error lists none)."""
    target = getattr(torch, name) if function else getattr(torch.zeros(2, 2), name)
    if function and not isinstance(target, types.BuiltinFunctionType):
        return None
    try:
        target(*[None] * 25)
    except TypeError as e:
        message = str(e)
    except Exception:
        return None
    else:
        return None
    if "received an invalid combination of arguments" not in message:
        # one signature: the parser binds the call to it and names what does not fit
        one = re.search(r"takes (from \d+ to )?\d+ positional arguments? but 25 were given$", message)
        return [] if one and message.startswith(f"{name}()") else None
    first = message.splitlines()[0]
    single = re.search(r"but expected (\(.*\))$", first)
    if single:
        return [single.group(1)]
    return [line[3:] for line in message.splitlines() if line.startswith(" * (")]


def main(check=False):
    from gradexpr import api  # noqa: F401  (binds the table)
    from gradexpr.composites import methods as method_binding
    from gradexpr.signatures import Signature
    from gradexpr.tensor import Tensor
    method_binding.bind_lazy()
    names = sorted(n for n in vars(Tensor) if not n.startswith("_") and callable(getattr(Tensor, n, None))
                   and hasattr(torch.Tensor, n))
    strings = parser_strings()
    methods, skipped, used = _verified(names, strings, Signature, function=False)
    functions_, skipped_f, _ = _verified(_torch_functions(), strings, Signature, function=True, methods_used=used)
    skipped += [(f"torch.{name}", why) for name, why in skipped_f]
    text = ('"""GENERATED by tools/gen_binding_signatures.py from PyTorch 2.13: do not edit.\n\n'
            "The Python-binding signatures of the Tensor methods (self first) and torch functions gradexpr has,\n"
            "as schema lines, each with whether PyTorch hides it from its lists (deprecated and hidden\n"
            'signatures): the parser\'s words for a call none of them takes (signatures.Overloads)."""\n\n'
            "METHODS = {\n" + _entries(methods) + "}\n\nFUNCTIONS = {\n" + _entries(functions_) + "}\n")
    if check:
        with open(OUT) as f:
            same = f.read() == text
        print("up to date" if same else "out of date")
        return 0 if same else 1
    with open(OUT, "w") as f:
        f.write(text)
    print(f"{len(methods)} methods and {len(functions_)} functions written to {os.path.relpath(OUT)}; "
          f"{len(skipped)} left out:")
    for name, why in skipped:
        print(f"  {name}: {why}")
    return 0


def _entries(found):
    return "".join(f"    {name!r}: (\n" + "".join(f"        ({line!r}, {hidden}),\n" for line, hidden in lines)
                   + "    ),\n" for name, lines in sorted(found.items()))


def _torch_functions():
    """The torch functions gradexpr has, that PyTorch has too."""
    from gradexpr import api
    names = set(dir(api.build()["torch"]))
    return sorted(n for n in names if not n.startswith("_") and callable(getattr(torch, n, None))
                  and not isinstance(getattr(torch, n), type))


def _verified(names, strings, Signature, function, methods_used=None):
    """{name: [(line, hidden)]} of the names whose converted strings print PyTorch's own list,
    [(name, why)] of the others, and {name: the strings used}. A function's candidates are its name's
    strings the method of that name did not take (``methods_used``)."""
    found, skipped, used = {}, [], {}
    for name in names:
        own = [s for s in strings if s.startswith(name + "(")]
        if function:
            taken = (methods_used or {}).get(name)
            candidates = [s for s in own if s not in taken] if taken is not None else \
                [s for s in own if _looks_like_function(s) or not hasattr(torch.Tensor, name)]
        else:
            candidates = [s for s in own if not _looks_like_function(s)]
        listed = listed_signatures(name, function)
        if listed is None or not candidates:
            skipped.append((name, "written in Python" if listed is None else "no parser strings"))
            continue
        lines = [schema_line(s, method=not function) for s in candidates]
        origin = dict(zip(lines, candidates))
        if any(x is None for x in lines):
            skipped.append((name, "a type the schema lines cannot say"))
            continue
        try:
            shown = [Signature(line).display(not function) for line, hidden in lines if not hidden]
            for line, _ in lines:
                Signature(line)
        except ValueError as e:
            skipped.append((name, f"a default the schema lines cannot say ({e})"))
            continue
        if listed and set(listed) <= set(shown) and len(shown) > len(listed):
            # a visible string PyTorch does not list is the other namespace's (where(Tensor condition) is
            # torch.where's, not Tensor.where's)
            lines = [(line, hidden) for line, hidden in lines
                     if hidden or Signature(line).display(not function) in listed]
            shown = [Signature(line).display(not function) for line, hidden in lines if not hidden]
        if (listed and sorted(shown) != sorted(listed)) or (not listed and len(shown) != 1):
            skipped.append((name, f"rendered {shown} for {listed}"))
            continue
        # in the order PyTorch lists them (the library's string table has its own), the hidden ones last
        visible = [(line, hidden) for line, hidden in lines if not hidden]
        if listed:
            visible.sort(key=lambda lh: listed.index(Signature(lh[0]).display(not function)))
        found[name] = visible + [(line, hidden) for line, hidden in lines if hidden]
        used[name] = {origin[lh] for lh in found[name]}
    return found, skipped, used


def _looks_like_function(s):
    """A function's string names its tensor (input, self) or takes out=; a method's never does."""
    return bool(re.search(r"\b(Tensor|Scalar) (input|self)\b|Tensor out=", s))


if __name__ == "__main__":
    sys.exit(main("--check" in sys.argv))
