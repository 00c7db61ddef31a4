"""Generate tests/data/ops_cases.json from real PyTorch: random inputs, values and gradients per op.

Run with a Python that has torch (NOT the project venv):

    /tmp/torchref/bin/python tests/data/make_ops_cases.py

Each spec is an expression ``lambda a, b, ...: ...`` of the language (it is evaluated by
PyTorch here and by gradexpr's interpreter in tests/test_ops_values.py) and its inputs
(shape, sampling domain, dtype). For every spec ``n`` random input sets are drawn;
each case stores the inputs, the output (value, shape, dtype) and, when the spec asks,
the gradients of every floating input for a random cotangent of the output
(``torch.autograd.grad(out, inputs, cotangent, allow_unused=True)``; ``null`` for an
unused input). Numbers are plain JSON numbers (float32 values in their shortest
decimal form, which round-trips), non-finite ones the strings "nan", "inf", "-inf".
"""
from __future__ import annotations

import json
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "ops_cases.json")
rng = np.random.default_rng(20240614)

TORCH = {"float32": torch.float32, "float64": torch.float64, "int64": torch.int64, "bool": torch.bool}
NP = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "bool": np.bool_}


def _domain(name, shape):
    n = int(np.prod(shape, dtype=np.int64))
    if name == "real":
        return rng.uniform(-3, 3, shape)
    if name == "positive":
        return rng.uniform(0.2, 3, shape)
    if name == "unit":
        return rng.uniform(-0.95, 0.95, shape)
    if name == "nonzero":
        return rng.uniform(0.3, 3, shape) * rng.choice([-1.0, 1.0], shape)
    if name == "distinct":
        return ((rng.permutation(n) - n / 2) * 0.37 + rng.uniform(-0.1, 0.1, n)).reshape(shape)
    if name == "prob":
        return rng.uniform(0.05, 0.95, shape)
    if name == "wide":                   # large magnitudes: stable forms must stay finite
        return rng.uniform(-1e4, 1e4, shape)
    if name == "int":
        return rng.integers(-6, 7, shape)
    if name == "nonzero_int":
        return rng.integers(1, 7, shape) * rng.choice([-1, 1], shape)
    if name == "small_int":
        return rng.integers(0, 4, shape)
    if name == "bool":
        return rng.random(shape) < 0.5
    if name.startswith("index"):       # "index3": integers in [0, 3)
        return rng.integers(0, int(name[5:]), shape)
    if name == "square":
        return rng.uniform(-1, 1, shape) + 2.5 * np.eye(shape[-1])
    raise ValueError(name)


FAMILIES: dict[str, list[dict]] = {}


def spec(family, expr, inputs, n=10, grad=True):
    """``inputs``: (shape, domain, dtype) per argument of the lambda."""
    FAMILIES.setdefault(family, []).append({"expr": expr, "inputs": inputs, "n": n, "grad": grad})


def both(family, expr, inputs, n=6, grad=True):
    """The spec in float32 and in float64 (integer and bool inputs keep their dtype)."""
    for dt in ("float32", "float64"):
        spec(family, expr, [(s, d, dt if t == "float" else t) for s, d, t in inputs], n, grad)


R23, R3 = ((2, 3), "real", "float"), ((3,), "real", "float")

# ---------------------------------------------------------------- arithmetic
for e in ["lambda a, b: a + b", "lambda a, b: a - b", "lambda a, b: a * b", "lambda a, b: torch.add(a, b, alpha=0.5)",
          "lambda a, b: torch.sub(a, b, alpha=2)", "lambda a, b: torch.rsub(a, b)", "lambda a, b: torch.atan2(a, b)",
          "lambda a, b: torch.maximum(a, b)", "lambda a, b: torch.minimum(a, b)", "lambda a, b: torch.lerp(a, b, 0.3)",
          "lambda a, b: torch.where(a > b, a, b * 2)"]:
    both("arithmetic", e, [R23, R3])
for e in ["lambda a, b: a / b", "lambda a, b: torch.true_divide(a, b)", "lambda a, b: torch.remainder(a, b)",
          "lambda a, b: torch.fmod(a, b)", "lambda a, b: torch.div(a, b, rounding_mode='trunc')"]:
    both("arithmetic", e, [((2, 3), "real", "float"), ((3,), "nonzero", "float")])
both("arithmetic", "lambda a, b: torch.floor_divide(a, b)", [((2, 3), "real", "float"), ((3,), "nonzero", "float")],
     grad=False)
for e in ["lambda a: -a", "lambda a: a * 2.5", "lambda a: 3 - a", "lambda a: 2 / a", "lambda a: a / 3",
          "lambda a: a % 1.7", "lambda a: a ** 2", "lambda a: torch.square(a)", "lambda a: a.clamp(-1, 1.5)",
          "lambda a: torch.clip(a, min=0.2)", "lambda a: a.clamp(max=-0.5)", "lambda a: torch.reciprocal(a)",
          "lambda a: a.lerp(torch.ones_like(a), 0.7)"]:
    both("arithmetic", e, [((2, 3), "nonzero", "float")])
for e in ["lambda a, b: a ** b", "lambda a, b: torch.pow(a, b)"]:
    both("arithmetic", e, [((2, 3), "positive", "float"), ((3,), "real", "float")])
both("arithmetic", "lambda a: 1.5 ** a", [R23])
both("arithmetic", "lambda a: a ** 0.5", [((2, 3), "positive", "float")])
both("arithmetic", "lambda a, b, c: torch.clamp(a, b, c)",
     [R23, ((3,), "real", "float"), ((2, 1), "positive", "float")])
both("arithmetic", "lambda a, b, w: torch.lerp(a, b, w)", [R23, R3, ((2, 1), "unit", "float")])
for e in ["lambda i, j: i + j", "lambda i, j: i * j", "lambda i, j: i - j", "lambda i, j: i // j", "lambda i, j: i % j",
          "lambda i, j: i / j", "lambda i, j: torch.div(i, j, rounding_mode='floor')", "lambda i, j: torch.fmod(i, j)",
          "lambda i, j: torch.maximum(i, j)", "lambda i, j: i * 1.5 + j", "lambda i, j: i ** 2 + j"]:
    spec("arithmetic", e, [((2, 3), "int", "int64"), ((3,), "nonzero_int", "int64")], n=4, grad=False)
for e in ["lambda a, i: a * i", "lambda a, i: a + i", "lambda a, i: a / i", "lambda a, m: a * m", "lambda a, m: a + m"]:
    spec("arithmetic", e, [((2, 3), "real", "float32"), ((3,), "nonzero_int" if "i" in e else "bool",
                                                           "int64" if "i" in e else "bool")], n=5)

# ---------------------------------------------------------------- unary math
for name, domain in [("sqrt", "positive"), ("rsqrt", "positive"), ("exp", "real"), ("exp2", "real"),
                     ("expm1", "real"), ("log", "positive"), ("log2", "positive"), ("log10", "positive"),
                     ("log1p", "positive"), ("sin", "real"), ("cos", "real"), ("tan", "unit"), ("asin", "unit"),
                     ("acos", "unit"), ("atan", "real"), ("sinh", "real"), ("cosh", "real"), ("tanh", "real"),
                     ("sigmoid", "real"), ("relu", "nonzero"), ("erf", "real"), ("abs", "nonzero"),
                     ("sign", "nonzero"), ("floor", "real"), ("ceil", "real"), ("trunc", "real"),
                     ("frac", "real"), ("round", "real"), ("neg", "real"), ("reciprocal", "nonzero")]:
    both("unary", f"lambda a: torch.{name}(a)", [((2, 3), domain, "float")], n=5)
    both("unary", f"lambda a: a.{name}()", [((4,), domain, "float")], n=2)
for name in ["sqrt", "exp", "sin", "log1p", "sigmoid", "tanh", "abs", "neg", "square", "floor", "round"]:
    spec("unary", f"lambda i: torch.{name}(i)", [((5,), "small_int", "int64")], n=3, grad=False)
both("unary", "lambda a: a.round(decimals=2)", [((2, 3), "real", "float")], n=4)

# ---------------------------------------------------------------- reductions
D = ((2, 3, 4), "real", "float")
for e in ["lambda a: a.sum()", "lambda a: a.sum(1)", "lambda a: a.sum((0, 2), keepdim=True)", "lambda a: a.sum(-1)",
          "lambda a: a.mean()", "lambda a: a.mean(0)", "lambda a: torch.mean(a, (1, 2))", "lambda a: a.prod()",
          "lambda a: a.prod(2)", "lambda a: a.prod(1, keepdim=True)", "lambda a: a.std()", "lambda a: a.std(1)",
          "lambda a: a.var(0, keepdim=True)", "lambda a: a.var(correction=0)", "lambda a: a.std(2, unbiased=False)",
          "lambda a: a.norm()", "lambda a: a.norm(1)", "lambda a: a.norm(3, dim=1)", "lambda a: a.norm(dim=(0, 2))",
          "lambda a: torch.linalg.norm(a, dim=-1, keepdim=True)", "lambda a: torch.linalg.vector_norm(a, 0.5)",
          "lambda a: a.logsumexp(1)", "lambda a: torch.logsumexp(a, (0, 1))", "lambda a: a.cumsum(1)",
          "lambda a: a.cumsum(-1)", "lambda a: torch.var_mean(a, 1)[0]", "lambda a: torch.std_mean(a)[1]"]:
    both("reductions", e, [D], n=5)
Dd = ((2, 3, 4), "distinct", "float")
for e in ["lambda a: a.max()", "lambda a: a.min()", "lambda a: a.max(1)[0]", "lambda a: a.min(-1, keepdim=True)[0]",
          "lambda a: a.amax()", "lambda a: a.amax((0, 2))", "lambda a: a.amin(1)", "lambda a: a.norm(float('inf'))",
          "lambda a: a.max(2)[1]", "lambda a: a.argmax()", "lambda a: a.argmax(1)",
          "lambda a: a.argmin(0, keepdim=True)"]:
    both("reductions", e, [Dd], n=5, grad="[1]" not in e and "arg" not in e)
for e in ["lambda a: (a > 0).all()", "lambda a: (a > 0).any(1)", "lambda a: (a > -2).all(2)", "lambda a: a.cumprod(1)"]:
    both("reductions", e, [((2, 3, 2), "positive" if "cumprod" in e else "real", "float")], n=4,
         grad="cumprod" in e)
for e in ["lambda i: i.sum()", "lambda i: i.sum(0)", "lambda i: i.prod(1)", "lambda i: i.max()",
          "lambda i: i.cumsum(1)",
          "lambda i: i.amin(0)", "lambda i: i.argmax(1)", "lambda i: i.sum(dtype=torch.float32)"]:
    spec("reductions", e, [((3, 4), "int", "int64")], n=3, grad=False)

# ---------------------------------------------------------------- linear algebra
for e, shapes in [("lambda a, b: a @ b", ((2, 3), (3, 4))), ("lambda a, b: a.mm(b)", ((3, 2), (2, 2))),
                  ("lambda a, b: a @ b", ((3,), (3,))), ("lambda a, b: a @ b", ((2, 3), (3,))),
                  ("lambda a, b: a @ b", ((3,), (3, 2))), ("lambda a, b: torch.matmul(a, b)", ((2, 2, 3), (3, 2))),
                  ("lambda a, b: a @ b", ((2, 2, 3), (2, 3, 4))), ("lambda a, b: a @ b", ((2, 1, 2, 3), (3, 3, 2))),
                  ("lambda a, b: a @ b", ((3,), (2, 3, 2))), ("lambda a, b: a @ b", ((2, 2, 3), (3,))),
                  ("lambda a, b: torch.bmm(a, b)", ((2, 2, 3), (2, 3, 2))), ("lambda a, b: a.mv(b)", ((2, 3), (3,))),
                  ("lambda a, b: torch.dot(a, b)", ((4,), (4,))), ("lambda a, b: torch.outer(a, b)", ((3,), (2,))),
                  ("lambda a, b: F.linear(a, b)", ((2, 3), (4, 3))), ("lambda a, b: a @ b.mT", ((2, 3), (2, 3)))]:
    both("linalg", e, [(s, "real", "float") for s in shapes], n=5)
for e in ["lambda a: torch.det(a)", "lambda a: torch.inverse(a)", "lambda a: torch.linalg.inv(a)",
          "lambda a: torch.linalg.det(a)", "lambda a: a.trace()", "lambda a: torch.linalg.norm(a)",
          "lambda a: torch.linalg.norm(a, 1)", "lambda a: torch.linalg.norm(a, float('inf'))",
          "lambda a: torch.linalg.norm(a, 'fro')", "lambda a: torch.linalg.norm(a, 2)",
          "lambda a: torch.linalg.norm(a, 'nuc')", "lambda a: a.t() @ a", "lambda a: a.T.tril()",
          "lambda a: a.triu(1)", "lambda a: a.transpose(0, 1).exp()"]:
    both("linalg", e, [((3, 3), "square", "float")], n=5)
both("linalg", "lambda a: torch.det(a)", [((2, 3, 3), "square", "float")], n=4)
both("linalg", "lambda a: a.permute(2, 0, 1) * 2", [((2, 3, 2), "real", "float")], n=4)

# ---------------------------------------------------------------- shape and indexing
S = ((2, 3, 4), "real", "float")
for e in ["lambda a: a.view(6, 4)", "lambda a: a.reshape(4, -1)", "lambda a: a.transpose(0, 2).reshape(-1)",
          "lambda a: a.flatten()", "lambda a: a.flatten(1)", "lambda a: a.unsqueeze(1).squeeze(1)",
          "lambda a: a[:, :1].squeeze()", "lambda a: a[:1].expand(3, 3, 4)", "lambda a: a.repeat(1, 2, 1)",
          "lambda a: torch.cat([a, a * 2], 1)", "lambda a: torch.stack([a, -a], 3)", "lambda a: a.split(2, 2)[1]",
          "lambda a: a.split([1, 2], 1)[1]", "lambda a: a.chunk(3, 1)[2]", "lambda a: a.narrow(2, 1, 2)",
          "lambda a: a.select(1, -1)", "lambda a: a.index_select(2, torch.tensor([3, 0, 3]))",
          "lambda a: a.gather(2, torch.tensor([[[0, 3], [1, 1], [2, 0]], [[3, 3], [0, 1], [2, 2]]]))",
          "lambda a: a.masked_fill(a > 1, 0.5)", "lambda a: a.flip(0)", "lambda a: a.flip((1, 2))",
          "lambda a: a.roll(1, 2)", "lambda a: a.roll((1, -1), (0, 1))", "lambda a: a.tril(1)", "lambda a: a.triu()",
          "lambda a: a.diagonal(0, 1, 2)", "lambda a: a.clone()", "lambda a: a.permute(1, 2, 0).contiguous()",
          "lambda a: a[0, 1:, ::2]", "lambda a: a[..., 1]", "lambda a: a[:, None, 2]", "lambda a: a[[1, 0, 1]]",
          "lambda a: a[a > 0.5]", "lambda a: a[:, [0, 2], [1, 3]]", "lambda a: a[torch.tensor([True, False])]",
          "lambda a: a.unbind(2)[3]", "lambda a: a.movedim(0, 2)", "lambda a: a.expand(2, 2, 3, 4).sum(0)"]:
    both("shape", e, [S], n=4)
for e in ["lambda a: torch.diag(a)", "lambda a: torch.diag(a, 1)", "lambda a: a.diag(-1)"]:
    both("shape", e, [((3, 3), "real", "float")], n=3)
    both("shape", e, [((3,), "real", "float")], n=3)
both("shape", "lambda a, b: torch.cat((a, b), 0)", [((2, 3), "real", "float"), ((1, 3), "real", "float")], n=4)
both("shape", "lambda a, b: a.expand_as(b) * b", [((3, 1), "real", "float"), ((2, 3, 2), "real", "float")], n=4)
both("shape", "lambda a, v: torch.where(a > 0, a, v)", [((2, 3), "real", "float"), ((), "real", "float")], n=4)
both("shape", "lambda a, v: a.masked_fill(a < 0, v)", [((2, 3), "real", "float"), ((), "real", "float")], n=4)

# ---------------------------------------------------------------- neural-network functions
for e in ["lambda a: F.softmax(a, 1)", "lambda a: F.softmax(a, 0)", "lambda a: F.log_softmax(a, -1)",
          "lambda a: torch.softmax(a, 1, dtype=torch.float64)", "lambda a: F.relu(a)", "lambda a: F.leaky_relu(a, 0.1)",
          "lambda a: F.elu(a)", "lambda a: F.elu(a, 0.7)", "lambda a: F.gelu(a)",
          "lambda a: F.gelu(a, approximate='tanh')",
          "lambda a: F.softplus(a)", "lambda a: F.softplus(a, 2.0, 3.0)", "lambda a: F.silu(a)",
          "lambda a: F.sigmoid(a)", "lambda a: F.tanh(a)", "lambda a: F.dropout(a, 0.5, False)"]:
    both("nn", e, [((3, 4), "nonzero", "float")], n=5)
for e in ["lambda a: F.log_softmax(a, 1)", "lambda a: torch.logsumexp(a, 1)", "lambda a: F.softplus(a)",
          "lambda a: F.softmax(a, 1)", "lambda a: F.sigmoid(a)"]:
    both("nn", e, [((2, 3), "wide", "float")], n=3)
for e in ["lambda a, b: F.mse_loss(a, b)", "lambda a, b: F.mse_loss(a, b, reduction='sum')",
          "lambda a, b: F.l1_loss(a, b)", "lambda a, b: F.l1_loss(a, b, reduction='none')",
          "lambda a, b: F.smooth_l1_loss(a, b)", "lambda a, b: F.smooth_l1_loss(a, b, beta=0.5, reduction='sum')",
          "lambda a, b: F.binary_cross_entropy_with_logits(a, b)",
          "lambda a, b: F.binary_cross_entropy_with_logits(a, b, "
          "pos_weight=torch.tensor([1., 2., 0.5], dtype=a.dtype))",
          "lambda a, b: F.binary_cross_entropy_with_logits(a, b, "
          "weight=torch.tensor([2., 1., 1.], dtype=a.dtype), reduction='none')",
          "lambda a, b: F.linear(a, b)", "lambda a, b: F.cross_entropy(a, b.softmax(1))",
          "lambda a, b: F.cross_entropy(a, b.softmax(1), label_smoothing=0.2)"]:
    both("nn", e, [((2, 3), "real", "float"), ((2, 3), "real" if "logits" not in e else "prob", "float")], n=5)
for e in ["lambda p, y: F.binary_cross_entropy(p, y)", "lambda p, y: F.binary_cross_entropy(p, y, reduction='none')",
          "lambda p, y: F.binary_cross_entropy(p, y, weight=torch.tensor([1., 3., 0.5], dtype=p.dtype))"]:
    both("nn", e, [((2, 3), "prob", "float"), ((2, 3), "prob", "float")], n=5)
for e in ["lambda a, t: F.cross_entropy(a, t)", "lambda a, t: F.cross_entropy(a, t, reduction='sum')",
          "lambda a, t: F.cross_entropy(a, t, reduction='none')",
          "lambda a, t: F.cross_entropy(a, t, weight=torch.tensor([1., 2., 0.5, 1.], dtype=a.dtype))",
          "lambda a, t: F.cross_entropy(a, t, label_smoothing=0.1)",
          "lambda a, t: F.cross_entropy(a, t, weight=torch.tensor([1., 2., 0.5, 1.], dtype=a.dtype), "
          "label_smoothing=0.3)",
          "lambda a, t: F.cross_entropy(a, t, ignore_index=1)", "lambda a, t: F.nll_loss(a, t)",
          "lambda a, t: F.nll_loss(F.log_softmax(a, 1), t, reduction='none')"]:
    both("nn", e, [((3, 4), "real", "float"), ((3,), "index4", "int64")], n=5)
both("nn", "lambda a, t: F.cross_entropy(a, t)", [((2, 4, 3), "real", "float"), ((2, 3), "index4", "int64")], n=4)
both("nn", "lambda a, t: F.cross_entropy(a, t)", [((2, 3), "wide", "float"), ((2,), "index3", "int64")], n=4)
both("nn", "lambda a, b: F.binary_cross_entropy_with_logits(a, b)",
     [((2, 3), "wide", "float"), ((2, 3), "prob", "float")], n=4)
both("nn", "lambda a, t: F.cross_entropy(a, t, label_smoothing=0.2)", [((2, 3), "wide", "float"),
                                                                         ((2,), "index3", "int64")], n=4)
both("nn", "lambda a, b, w: F.linear(a, b, w)", [((2, 3), "real", "float"), ((4, 3), "real", "float"),
                                                  ((4,), "real", "float")], n=5)
both("nn", "lambda a, b, w: F.linear(a, b, w)", [((2, 2, 3), "real", "float"), ((4, 3), "real", "float"),
                                                  ((4,), "real", "float")], n=4)

# ---------------------------------------------------------------- comparison
for e in ["lambda a, b: a == b", "lambda a, b: a != b", "lambda a, b: a < b", "lambda a, b: torch.le(a, b)",
          "lambda a, b: a > b", "lambda a, b: torch.ge(a, b)", "lambda a, b: torch.isclose(a, b, rtol=0.5)",
          "lambda a, b: torch.eq(a.round(), b.round())", "lambda a, b: torch.ne(a.floor(), b.floor())",
          "lambda a, b: torch.tensor(torch.allclose(a, b, atol=2.))",
          "lambda a, b: torch.tensor(torch.equal(a.round(), b.round()))",
          "lambda a, b: torch.isnan(a / b.round())", "lambda a, b: torch.isinf(a / b.round())"]:
    both("comparison", e, [R23, R3], n=10, grad=False)
for e in ["lambda i, j: i == j", "lambda i, j: i < j", "lambda i, j: torch.ge(i, j)", "lambda i, j: i != 2"]:
    spec("comparison", e, [((2, 3), "small_int", "int64"), ((3,), "small_int", "int64")], n=6, grad=False)


# ---------------------------------------------------------------- recording
def _num(v):
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def _values(array, dtype):
    flat = np.asarray(array).reshape(-1)
    if dtype == "float32":
        return [_num(str(np.float32(v))) if np.isfinite(v) else _num(v) for v in flat]   # shortest float32 form
    if dtype in ("float64",):
        return [_num(v) for v in flat]
    if dtype == "bool":
        return [bool(v) for v in flat]
    return [int(v) for v in flat]


def _name(dtype):
    return str(dtype).replace("torch.", "")


def record():
    env = {"torch": torch, "F": F}
    families = {}
    for family, specs in FAMILIES.items():
        out_specs = []
        for s in specs:
            fn = eval(s["expr"], env)            # the generator's own expressions
            cases = []
            for _ in range(s["n"]):
                arrays = [np.asarray(_domain(d, shape)).astype(NP[t]) for shape, d, t in s["inputs"]]
                xs = [torch.tensor(a, dtype=TORCH[t]) for a, (_, _, t) in zip(arrays, s["inputs"])]
                for x in xs:
                    if x.is_floating_point() and s["grad"]:
                        x.requires_grad_()
                out = fn(*xs)
                odt = _name(out.dtype)
                case = {"inputs": [_values(x.detach().numpy(), t) for x, (_, _, t) in zip(xs, s["inputs"])],
                        "out": _values(out.detach().numpy(), odt), "out_shape": list(out.shape), "out_dtype": odt}
                if s["grad"] and out.requires_grad:
                    cot = torch.tensor(rng.uniform(-1, 1, tuple(out.shape)), dtype=out.dtype)
                    diff = [x for x in xs if x.requires_grad]
                    gs = torch.autograd.grad(out, diff, cot, allow_unused=True)
                    case["cotangent"] = _values(cot.numpy(), odt)
                    case["grads"] = [None if g is None else _values(g.numpy(), _name(g.dtype)) for g in gs]
                cases.append(case)
            out_specs.append({"expr": s["expr"], "inputs": [[list(shape), t] for shape, _, t in s["inputs"]],
                              "cases": cases})
        families[family] = out_specs
    doc = {"torch_version": torch.__version__, "families": families}
    with open(OUT, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    counts = {k: sum(len(s["cases"]) for s in v) for k, v in families.items()}
    print(f"wrote {OUT} ({os.path.getsize(OUT) / 1e6:.2f} MB): {counts}")


if __name__ == "__main__":
    record()
