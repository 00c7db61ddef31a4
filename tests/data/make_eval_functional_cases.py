"""Generate tests/data/eval_functional_cases.json: PyTorch's numbers for ``gradexpr eval``.

The cases are the programs of ``conformance/functional`` restated as ``gradexpr eval``
invocations (an expression, ``-v`` bindings, options). For each one a .gx program
computes with PyTorch's own API what eval must show — the value, ``grad`` of the
target (or the vector–Jacobian product with ``--grad-output``), ``jacobian`` and
``hessian`` from ``torch.autograd.functional`` — and prints them as lists. The
programs are run by the oracle with real PyTorch (stdlib only here):

    python3 tests/data/make_eval_functional_cases.py [--python /tmp/torchref/bin/python]

``tests/test_eval.py`` runs each invocation with ``--json`` and compares.
"""
from __future__ import annotations

import argparse
import json
import os

from oracle_printed import printed

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "eval_functional_cases.json")

# (id, conformance program it restates, expression, [(name, value)], options, grad_output)
CASES = [
    ("hessian_scalar_fn", "hessian_scalar_fn.gx", "(x ** 3).sum() + x[0] * x[1]", [("x", "tensor([1., 2.])")],
     ["--hessian"], None),
    ("hessian_sum_of_squares", "hessian_scalar_fn.gx", "(t * t).sum()", [("t", "tensor([3., 4., 5.])")],
     ["--hessian"], None),
    ("hessian_two_inputs", "hessian_two_inputs.gx", "(x * y ** 2).sum()", [("x", "tensor([1.])"), ("y", "tensor([2.])")],
     ["--hessian", "--jacobian"], None),
    ("hvp_vjp_scalar", "hvp_and_vjp_scalar.gx", "(x.sin() * x).sum()", [("x", "tensor([0., 1.])")],
     ["--hessian"], None),
    ("jacobian_cube", "jacobian_create_graph.gx", "x ** 3", [("x", "tensor([1., 2.])")], [], None),
    ("jacobian_exp_reducer", "jacobian_exp_reducer_fixed.gx", "x.exp().sum(dim=1)",
     [("x", "tensor([[0., 1.], [2., -1.]])")], [], None),
    ("jacobian_multiple_inputs", "jacobian_multiple_inputs.gx", "a * b + b.sin()",
     [("a", "tensor([1., 2.])"), ("b", "tensor([0., 3.])")], [], None),
    ("jacobian_square", "jacobian_single_input.gx", "t ** 2", [("t", "tensor([1., 2., 3.])")], [], None),
    ("jacobian_sum", "jacobian_single_input.gx", "t.sum()", [("t", "tensor([1., 2., 3.])")], ["--jacobian"], None),
    ("jacobian_select", "jacobian_single_input.gx", "t.exp() * 0 + t[0] * t", [("t", "tensor([1., 2., 3.])")],
     [], None),
    ("jacobian_outer_flatten", "jacobian_vectorize.gx", "(x @ x.t()).flatten()",
     [("x", "tensor([[1., 2.], [0., -1.]])")], [], None),
    ("vjp_matrix", "vjp_jvp.gx", "tensor([[1., 2.], [3., 4.]]) @ x ** 2", [("x", "tensor([1., -1.])")],
     ["--jacobian"], "tensor([1., 0.])"),
    ("tanh_layer", "jacobian_multiple_inputs.gx", "tanh(W @ x + b)",
     [("W", "tensor([[0.5, -1., 2., 0.], [1., 1., -0.5, 0.25], [0., 0.3, 0.2, -1.]])"),
      ("x", "tensor([0.1, -0.2, 0.05, 0.3])"), ("b", "tensor([0.1, -0.2, 0.3])")], [], None),
]


def program(expr, variables, options, grad_output):
    names = [n for n, _ in variables]
    args = ", ".join(names)
    lines = [f"{n}0 = {v}" for n, v in variables]
    lines += [f"{n} = {n}0.clone().requires_grad_(True)" for n in names]
    lines.append(f"out = {expr}")
    lines.append('print("value", out.tolist())')
    lines.append(f"def f({args}):\n    return {expr}")
    inputs = "(" + ", ".join(f"{n}0" for n in names) + ",)"
    if grad_output is not None:
        lines.append(f"gs = grad(out, ({args},), grad_outputs={grad_output}, allow_unused=True, retain_graph=True)")
    else:
        lines.append(f"gs = grad(out, ({args},), allow_unused=True, retain_graph=True) if out.numel() == 1 else None")
    lines.append('print("grads", None if gs is None else [None if g is None else g.tolist() for g in gs])')
    wanted = "True" if "--jacobian" in options else "out.numel() != 1" if grad_output is None else "False"
    lines.append(f"J = jacobian(f, {inputs}) if {wanted} else None")
    lines.append('print("jacobian", None if J is None else [j.tolist() for j in J])')
    if "--hessian" in options:
        lines.append(f"H = hessian(f, {inputs})")
        lines.append('print("hessian", [[h.tolist() for h in row] for row in H])')
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default="/tmp/torchref/bin/python", help="a Python with torch")
    a = ap.parse_args()
    results = printed(a.python, {case_id: program(expr, variables, options, grad_output)
                                 for case_id, _, expr, variables, options, grad_output in CASES})
    cases = []
    for case_id, conformance, expr, variables, options, grad_output in CASES:
        got = results[case_id]
        names = [n for n, _ in variables]
        expected = {"value": got["value"]}
        if got["grads"] is not None:
            expected["grads"] = dict(zip(names, got["grads"]))
        if got["jacobian"] is not None:
            expected["jacobian"] = dict(zip(names, got["jacobian"]))
        if "hessian" in got:
            expected["hessian"] = {a: dict(zip(names, row)) for a, row in zip(names, got["hessian"])}
        cases.append({"id": case_id, "conformance": "functional/" + conformance, "expr": expr,
                      "vars": [list(v) for v in variables], "options": options, "grad_output": grad_output,
                      "expected": expected})
    with open(OUT, "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(c) for c in cases) + "\n]\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
