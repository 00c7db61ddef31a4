"""Generate tests/data/eval_forward_cases.json: PyTorch's forward-mode numbers for ``gradexpr eval``.

Each case is a ``gradexpr eval`` invocation in forward mode (``--mode forward|auto``, ``--jvp
NAME=VALUE``). For each one a .gx program computes with PyTorch's own forward-mode API what eval
must show — ``torch.func.jacfwd`` over every leaf (randomness "same": the program's draws are the
same for every column) and ``torch.autograd.functional.jvp`` with the ``--jvp`` tangents (zero for
the leaves not named) — and prints them as lists. The programs are run by the oracle with real
PyTorch (stdlib only here):

    python3 tests/data/make_eval_forward_cases.py [--python /tmp/torchref/bin/python]

``tests/test_eval_forward.py`` runs each invocation with ``--json`` and compares.
"""
from __future__ import annotations

import argparse
import json
import os

from oracle_printed import printed

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "eval_forward_cases.json")

# (id, program: statements then the target expression, [(name, value)], options, {name: tangent})
CASES = [
    ("tanh_layer_forward", "tanh(W @ x) ** 2",
     [("W", "tensor([[1., 2.], [3., 4.], [0.5, -1.]])"), ("x", "tensor([0.1, 0.2])")], ["--mode", "forward"], {}),
    ("tanh_layer_jvp", "tanh(W @ x) ** 2",
     [("W", "tensor([[1., 2.], [3., 4.], [0.5, -1.]])"), ("x", "tensor([0.1, 0.2])")], [],
     {"x": "tensor([1., 0.])", "W": "torch.ones(3, 2)"}),
    ("one_input_many_outputs_auto", "torch.outer(x.sin(), torch.arange(1., 6.)).exp()",
     [("x", "tensor([0.3, -0.7])")], ["--mode", "auto"], {"x": "tensor([2., -1.])"}),
    ("scalar_random_forward", "manual_seed(0); r = randn(4); (x.exp() * r).sum()",
     [("x", "tensor([0.5, -1., 2., 0.])")], ["--mode", "forward"], {}),
    ("softmax_rows_forward", "softmax(x @ y, dim=1)",
     [("x", "tensor([[1., 0.5], [-1., 2.], [0., 0.]])"), ("y", "tensor([[0.2, -0.3, 1.], [0.7, 0.1, -2.]])")],
     ["--mode", "forward"], {"y": "tensor([[1., 0., 0.], [0., 0., 1.]])"}),
    ("float64_norm_auto", "x / x.norm()", [("x", "tensor([3., 4., 12.], dtype=torch.float64)")],
     ["--mode", "auto"], {}),
]


def split(program):
    *statements, target = [s.strip() for s in program.split(";")]
    return statements, target


def source(program, variables, tangents):
    statements, target = split(program)
    names = [n for n, _ in variables]
    args = ", ".join(names)
    lines = ["from torch.func import jacfwd"] + [f"{n} = {v}" for n, v in variables]
    lines.append(f"def f({args}):\n" + "".join(f"    {s}\n" for s in statements) + f"    return {target}")
    lines.append(f'print("value", f({args}).tolist())')
    lines.append(f'print("jacobian", [j.tolist() for j in jacfwd(f, argnums=tuple(range({len(names)})), '
                 f'randomness="same")({args})])')
    if tangents:
        seeds = ", ".join(tangents.get(n, f"torch.zeros_like({n})") for n in names)
        lines.append(f'print("jvp", jvp(f, ({args},), ({seeds},))[1].tolist())')
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default="/tmp/torchref/bin/python", help="a Python with torch")
    a = ap.parse_args()
    results = printed(a.python, {case_id: source(program, variables, tangents)
                                 for case_id, program, variables, _, tangents in CASES})
    cases = []
    for case_id, program, variables, options, tangents in CASES:
        got = results[case_id]
        names = [n for n, _ in variables]
        expected = {"value": got["value"], "jacobian": dict(zip(names, got["jacobian"]))}
        if "jvp" in got:
            expected["jvp"] = got["jvp"]
        cases.append({"id": case_id, "program": program, "vars": [list(v) for v in variables], "options": options,
                      "tangents": tangents, "expected": expected})
    with open(OUT, "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(c) for c in cases) + "\n]\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
