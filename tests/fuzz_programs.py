"""Random programs for the differential fuzzer (tests/test_differential_fuzz.py).

``program(seed)`` writes a short program of the language from a seed: tensors drawn with
``manual_seed`` + ``randn`` (bit-exact in gradexpr) or holding special values (tiny, huge,
subnormal, signed zeros, inf, nan), then a chain of ops (pointwise, binary with broadcasting,
reductions over dims with keepdim, cumulative ops, views, in-place ops), printed as tensors
and at full precision (``tolist()``, ``item()``), with a backward pass and its gradients.
``run_under_torch(programs, python)`` runs them under real PyTorch after the prelude, in one
process, and returns what each printed (or the type of the error it raised).
"""
from __future__ import annotations

import json
import random
import subprocess

DTYPES = ("float32", "float64")
UNARY = ("exp", "tanh", "sigmoid", "relu", "abs", "neg", "sin", "cos", "square", "floor", "round", "sign",
         "reciprocal", "sqrt", "log", "atan", "expm1", "log1p", "ceil", "trunc", "frac",
         "sinh", "cosh", "erf", "erfc", "tan", "exp2", "log2", "log10", "rsqrt", "asinh", "F.softplus", "F.silu",
         "F.gelu", "F.elu", "F.mish", "F.hardswish", "F.logsigmoid", "F.softsign", "F.selu", "F.celu",
         "clamp", "F.hardtanh", "F.leaky_relu", "F.relu6", "torch.nan_to_num", "torch.sgn", "torch.logit")
SAFE_ARG = {"sqrt": "abs", "log": "abs", "log1p": "abs", "reciprocal": None, "log2": "abs", "log10": "abs",
            "rsqrt": "abs"}
BINARY = ("+", "-", "*", "/", "maximum", "minimum", "atan2", "pow2", "copysign", "where", "fmod", "remainder",
          "hypot", "clamp_min", "lerp", "addcmul", "xlogy")
REDUCTIONS = ("sum", "mean", "prod", "max", "min", "amax", "amin", "logsumexp", "std", "var", "norm", "nansum",
              "softmax", "log_softmax")
# ops whose results are correctly rounded (or exact), so gradexpr must match PyTorch bit for bit; the
# transcendental ones differ in the last bit between libm and PyTorch's SLEEF/MKL kernels (so does
# float32 sqrt: PyTorch's is not correctly rounded, sqrt(2.9625184535980225) is 1.7211968898773193)
EXACT_UNARY = ("relu", "abs", "neg", "square", "floor", "round", "sign", "reciprocal", "ceil", "trunc", "frac",
               "clamp", "F.hardtanh", "F.leaky_relu", "F.relu6", "torch.nan_to_num", "torch.sgn")
EXACT_BINARY = ("+", "-", "*", "/", "maximum", "minimum", "pow2", "copysign", "where", "clamp_min", "lerp",
                "addcmul")
EXACT_REDUCTIONS = ("sum", "mean", "max", "min", "amax", "amin", "nansum")
CUMULATIVE = ("cumsum", "cumprod", "logcumsumexp")
SPECIALS = ("1e-30", "-1e-30", "3e38", "-3e38", "1e-45", "0.", "-0.", "float('inf')", "float('-inf')",
            "float('nan')", "1.5", "-2.25", "1e8", "123456.789", "1e-7")


def _shape(rng):
    return rng.choice([(5,), (3, 4), (2, 3, 4), (1, 4), (4, 1), (7,), (2, 1, 3), (16,), (33,), (9, 17),
                       (17, 9), (40, 5), (3, 70), (5, 8, 3)])


def _tensor(rng, name, shape, dtype, lines):
    kind = rng.random()
    dims = ", ".join(map(str, shape))
    if kind < 0.7:
        lines.append(f"{name} = (torch.randn({dims}, dtype=torch.{dtype}) * {rng.choice([1, 3, 0.01, 100])})"
                     f".requires_grad_()")
    else:
        n = 1
        for s in shape:
            n *= s
        values = ", ".join(rng.choice(SPECIALS) for _ in range(n))
        lines.append(f"{name} = torch.tensor([{values}], dtype=torch.{dtype}).reshape({dims}).requires_grad_()")


# the ops written otherwise than torch.<op>(x) / torch.<op>(a, b): a form of the operands and the rng
_UNARY_FORMS = {
    "square": lambda rng, x: f"{x}.square()",
    "clamp": lambda rng, x: f"{x}.clamp({rng.choice(['-0.5, 0.5', 'min=0.25', 'max=-0.1'])})",
    "torch.logit": lambda rng, x: f"torch.logit({x}.sigmoid())",
}
_BINARY_FORMS = {
    # (x ** -2's gradient takes x.pow(-3), a powf: not among the exact ops)
    "pow2": lambda rng, a, b, ops: f"({a} ** {rng.choice([2, 3, -1] if ops == 'exact' else [2, 3, 0.5, -1, -2])})",
    "where": lambda rng, a, b, ops: f"torch.where({a} > 0, {a}, {b})",
    "clamp_min": lambda rng, a, b, ops: f"torch.clamp({a}, min={b})",
    "lerp": lambda rng, a, b, ops: f"torch.lerp({a}, {b}, {rng.choice([0.3, 0.5, 0.75])})",
    "addcmul": lambda rng, a, b, ops: f"torch.addcmul({a}, {b}, {b}, value={rng.choice([0.5, -2.0, 1.0])})",
}


def _unary(rng, x, ops):
    op = rng.choice(UNARY if ops == "all" else EXACT_UNARY)
    arg = f"{x}.abs()" if SAFE_ARG.get(op) == "abs" else x
    if op in _UNARY_FORMS:
        return _UNARY_FORMS[op](rng, arg)
    return f"{op}({arg})" if op.startswith(("F.", "torch.")) else f"torch.{op}({arg})"


def _binary(rng, a, b, ops):
    op = rng.choice(BINARY if ops == "all" else EXACT_BINARY)
    if op in ("+", "-", "*", "/"):
        return f"({a} {op} {b})"
    if op in _BINARY_FORMS:
        return _BINARY_FORMS[op](rng, a, b, ops)
    return f"torch.{op}({a}, {b})"


def _reduce(rng, x, ndim, ops):
    op = rng.choice(REDUCTIONS if ops == "all" else EXACT_REDUCTIONS)
    if op == "logsumexp":
        return f"torch.logsumexp({x}, {rng.randrange(ndim)})"
    if op in ("softmax", "log_softmax"):
        return f"{x}.{op}({rng.randrange(-ndim, ndim)})"
    if op in ("max", "min") and rng.random() < 0.5:
        return f"{x}.{op}()"
    if rng.random() < 0.4:
        return f"{x}.{op}()" if op not in ("amax", "amin") else f"{x}.{op}()"
    dim = rng.randrange(-ndim, ndim)
    keep = rng.random() < 0.5
    if op in ("max", "min"):
        return f"{x}.{op}({dim}, keepdim={keep}).values"
    if op == "norm":
        return f"{x}.norm(dim={dim}, keepdim={keep})"
    return f"{x}.{op}({dim}, keepdim={keep})"


def _view(rng, x, ndim):
    choices = [f"{x}.t()" if ndim == 2 else f"{x}.unsqueeze(0)", f"{x}.flatten()", f"{x}[..., ::2]",
               f"{x}.transpose(0, -1)", f"{x}.flip(0)", f"{x}.permute(*reversed(range({x}.ndim)))",
               f"{x}.contiguous()", f"{x}.narrow(-1, 0, 1)", f"{x}.movedim(0, -1)"]
    return rng.choice(choices)


def program(seed: int, ops: str = "all") -> str:
    """A program of a few lines, reproducible from ``seed``; ``ops="exact"`` draws only the ops
    whose results are correctly rounded (see EXACT_UNARY)."""
    rng = random.Random(seed)
    dtype = rng.choice(DTYPES)
    shape = _shape(rng)
    lines = [f"torch.manual_seed({seed % 1000})"]
    _tensor(rng, "a", shape, dtype, lines)
    other = rng.choice([shape, shape[-1:], (1,) * len(shape)])
    _tensor(rng, "b", other, dtype, lines)
    lines.append("x = a")
    for _ in range(rng.randint(1, 4)):
        r = rng.random()
        if r < 0.35:
            lines.append(f"x = {_unary(rng, 'x', ops)}")
        elif r < 0.7:
            lines.append(f"x = {_binary(rng, 'x', 'b', ops)}")
        elif r < 0.8:
            lines.append(f"x = {_view(rng, 'x', len(shape))}")
        elif r < 0.9:
            op = rng.choice(CUMULATIVE if ops == "all" else ("cumsum",))
            lines.append(f"x = x.{op}({rng.randrange(len(shape))})")
        else:
            lines.append(f"x = x * 1.0\nx.{rng.choice(['add_', 'mul_', 'sub_'])}(b)")
    lines.append("print(x)")
    lines.append("print(x.tolist())")
    lines.append(f"y = {_reduce(rng, 'x', len(shape), ops)}")
    lines.append("print(y, y.dtype, y.shape)")
    lines.append("print(y.tolist())")
    lines.append("y.sum().backward()")
    lines.append("print(a.grad)")
    lines.append("print(a.grad.tolist(), b.grad.tolist() if b.grad is not None else None)")
    return "\n".join(lines) + "\n"


_WORKER = r'''
import contextlib, io, json, sys
import torch
programs = json.load(sys.stdin)
prelude = ("import torch\nfrom torch import *\nfrom builtins import abs, all, any, bool, float, int, max, min, "
           "pow, range, round, sum\nimport torch.nn.functional as F\nfrom torch.autograd import grad\n"
           "from torch.autograd.functional import jacobian, hessian, vjp, jvp, hvp\n")
results = []
for text in programs:
    g = {}
    exec(compile(prelude, "<prelude>", "exec"), g)
    out = io.StringIO()
    error = None
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(text, "prog.gx", "exec"), g)
        except Exception as e:
            error = type(e).__name__
    results.append({"out": out.getvalue(), "error": error})
json.dump(results, sys.stdout)
'''


def run_under_torch(programs: list, python: str) -> list:
    """Each program's stdout and error type (or None) under real PyTorch, in one process."""
    p = subprocess.run([python, "-c", _WORKER], input=json.dumps(programs), capture_output=True, text=True,
                       timeout=600)
    if p.returncode:
        raise RuntimeError(p.stderr[-2000:])
    return json.loads(p.stdout)
