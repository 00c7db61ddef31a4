"""Random programs for the differential fuzzer (tests/test_differential_fuzz.py).

``program(seed)`` writes a short program of the language from a seed: tensors drawn with
``manual_seed`` + ``randn`` (bit-exact in gradexpr) or holding special values (tiny, huge,
subnormal, signed zeros, inf, nan), in float32, float64 or float16, then a chain of ops
(pointwise, binary with broadcasting, clamps by tensor bounds, reductions over a dim or a tuple of
dims with keepdim, on contiguous inputs and on views, norms of several orders, cumulative ops,
views, in-place ops on the tensor and on views of it), printed as tensors (sometimes under
``torch.set_printoptions``) and at full precision (``tolist()``, ``item()``), with a backward pass
and its gradients. One program in eight is an integer one (int64/int32, no backward).
``run_under_torch(programs, python)`` runs them under real PyTorch after the prelude, in one
process, and returns what each printed (or the type of the error it raised).
"""
from __future__ import annotations

import json
import random
import subprocess

DTYPES = ("float32", "float64", "float16")
INT_DTYPES = ("int64", "int32")
UNARY = ("exp", "tanh", "sigmoid", "relu", "abs", "neg", "sin", "cos", "square", "floor", "round", "sign",
         "reciprocal", "sqrt", "log", "atan", "expm1", "log1p", "ceil", "trunc", "frac",
         "sinh", "cosh", "erf", "erfc", "tan", "exp2", "log2", "log10", "rsqrt", "asinh", "F.softplus", "F.silu",
         "F.gelu", "F.elu", "F.mish", "F.hardswish", "F.logsigmoid", "F.softsign", "F.selu", "F.celu",
         "clamp", "F.hardtanh", "F.leaky_relu", "F.relu6", "torch.nan_to_num", "torch.sgn", "torch.logit")
SAFE_ARG = {"sqrt": "abs", "log": "abs", "log1p": "abs", "reciprocal": None, "log2": "abs", "log10": "abs",
            "rsqrt": "abs"}
BINARY = ("+", "-", "*", "/", "maximum", "minimum", "atan2", "pow2", "copysign", "where", "fmod", "remainder",
          "hypot", "clamp_min", "clamp_tensor", "lerp", "addcmul", "xlogy")
REDUCTIONS = ("sum", "mean", "prod", "max", "min", "amax", "amin", "logsumexp", "std", "var", "norm", "nansum",
              "softmax", "log_softmax", "vector_norm")
# the reductions that take a tuple of dims
TUPLE_DIM_REDUCTIONS = ("sum", "mean", "amax", "amin", "logsumexp", "std", "var", "norm", "nansum", "vector_norm")
# ops whose results are correctly rounded (or exact), so gradexpr must match PyTorch bit for bit; the
# transcendental ones differ in the last bit between libm and PyTorch's SLEEF/MKL kernels (so does
# float32 sqrt: PyTorch's is not correctly rounded, sqrt(2.9625184535980225) is 1.7211968898773193)
EXACT_UNARY = ("relu", "abs", "neg", "square", "floor", "round", "sign", "reciprocal", "ceil", "trunc", "frac",
               "clamp", "F.hardtanh", "F.leaky_relu", "F.relu6", "torch.nan_to_num", "torch.sgn")
EXACT_BINARY = ("+", "-", "*", "/", "maximum", "minimum", "pow2", "copysign", "where", "clamp_min",
                "clamp_tensor", "lerp", "addcmul")
EXACT_REDUCTIONS = ("sum", "mean", "max", "min", "amax", "amin", "nansum")
CUMULATIVE = ("cumsum", "cumprod", "logcumsumexp")
SPECIALS = ("1e-30", "-1e-30", "3e38", "-3e38", "1e-45", "-1e-45", "0.", "-0.", "float('inf')", "float('-inf')",
            "float('nan')", "1.5", "-2.25", "1e8", "123456.789", "1e-7", "6e4", "65504.", "-7e4", "6e-8", "1e-5",
            "-0.5", "2.5", "1e-38", "1e300")


def _shape(rng):
    if rng.random() < 0.02:         # past 32,768 elements: the kernels split their work between threads
        return rng.choice([(150, 250), (40000,), (3, 110, 120)])
    return rng.choice([(5,), (3, 4), (2, 3, 4), (1, 4), (4, 1), (7,), (2, 1, 3), (16,), (33,), (9, 17),
                       (17, 9), (40, 5), (3, 70), (5, 8, 3)])


def _tensor(rng, name, shape, dtype, lines):
    kind = rng.random()
    if dtype in INT_DTYPES:
        dims = ", ".join(map(str, shape))
        high = rng.choice([3, 10, 1000, 2**31 - 1])
        lines.append(f"{name} = torch.randint(-{high}, {high}, ({dims},), dtype=torch.{dtype})")
        return
    dims = ", ".join(map(str, shape))
    n = 1
    for s in shape:
        n *= s
    if kind < 0.7 or n > 4096:          # (a big tensor is drawn, never written out as a literal)
        lines.append(f"{name} = (torch.randn({dims}, dtype=torch.{dtype}) * {rng.choice([1, 3, 0.01, 100])})"
                     f".requires_grad_()")
    else:
        values = ", ".join(rng.choice(SPECIALS) for _ in range(n))
        lines.append(f"{name} = torch.tensor([{values}], dtype=torch.{dtype}).reshape({dims}).requires_grad_()")


# the ops written otherwise than torch.<op>(x) / torch.<op>(a, b): a form of the operands and the rng
_UNARY_FORMS = {
    "square": lambda rng, x: f"{x}.square()",
    "clamp": lambda rng, x: f"{x}.clamp({rng.choice(['-0.5, 0.5', 'min=0.25', 'max=-0.1', 'min=-0.0', 'max=0.0'])})",
    "torch.logit": lambda rng, x: f"torch.logit({x}.sigmoid())",
}
_BINARY_FORMS = {
    # (x ** -2's gradient takes x.pow(-3), a powf: not among the exact ops)
    "pow2": lambda rng, a, b, ops: f"({a} ** {rng.choice([2, 3, -1] if ops == 'exact' else [2, 3, 0.5, -1, -2])})",
    "where": lambda rng, a, b, ops: f"torch.where({a} > 0, {a}, {b})",
    "clamp_min": lambda rng, a, b, ops: f"torch.clamp({a}, min={b})",
    "clamp_tensor": lambda rng, a, b, ops: rng.choice([f"torch.clamp({a}, {b}, {b} + 1)", f"{a}.clamp(max={b})",
                                                       f"torch.clamp({a}, min={b}.neg(), max={b})"]),
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


def _dims(rng, ndim):
    """A dim, or (from 2-d up, one time in three) a tuple of distinct dims, some negative."""
    if ndim > 1 and rng.random() < 0.35:
        picked = rng.sample(range(ndim), rng.randint(2, ndim))
        return "(" + ", ".join(str(d - ndim if rng.random() < 0.3 else d) for d in picked) + ")"
    return str(rng.randrange(-ndim, ndim))


def _reduce(rng, x, ndim, ops):
    op = rng.choice(REDUCTIONS if ops == "all" else EXACT_REDUCTIONS)
    if op == "vector_norm":
        order = rng.choice(["2", "1", "3", "0.5", "float('inf')", "-float('inf')", "0"])
        keep = rng.random() < 0.5
        dim = f", dim={_dims(rng, ndim)}" if rng.random() < 0.7 else ""
        return f"torch.linalg.vector_norm({x}, {order}{dim}, keepdim={keep})"
    if op in TUPLE_DIM_REDUCTIONS and ndim > 1 and rng.random() < 0.3:
        dims, keep = _dims(rng, ndim), rng.random() < 0.5
        if op == "logsumexp":
            return f"torch.logsumexp({x}, {dims}, keepdim={keep})"
        if op == "norm":
            return f"{x}.norm({rng.choice(['2', '1', '3'])}, dim={dims}, keepdim={keep})"
        return f"{x}.{op}({dims}, keepdim={keep})"
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


def _inplace_on_view(rng, x, ndim, ops):
    """Lines writing in place through a view of (a copy of) ``x``: the view's base changes too."""
    view = rng.choice([f"{x}[..., ::2]", f"{x}.transpose(0, -1)" if ndim > 1 else f"{x}[1:]", f"{x}[0]",
                       f"{x}.narrow(-1, 0, 1)", f"{x}.unsqueeze(0)"])
    write = rng.choice(["mul_(2.5)", "add_(1.5)", "sub_(0.25)", "div_(3.0)",
                        "clamp_(-0.5, 0.5)", "neg_()", "abs_()", "relu_()", "zero_()", "fill_(0.75)",
                        "copy_(torch.ones_like(v))"] + (["exp_()", "sigmoid_()", "tanh_()"] if ops == "all" else []))
    return [f"{x} = {x} * 1.0", f"v = {view}", f"v.{write}"]


def _printoptions(rng):
    """A ``torch.set_printoptions`` call with random precision, sci_mode, linewidth or profile."""
    if rng.random() < 0.2:
        return f"torch.set_printoptions(profile={rng.choice(['short', 'full', 'default'])!r})"
    options = [f"precision={rng.choice([0, 1, 2, 6, 8, 10])}"]
    if rng.random() < 0.6:
        options.append(f"sci_mode={rng.choice([True, False])}")
    if rng.random() < 0.4:
        options.append(f"linewidth={rng.choice([20, 40, 120])}")
    if rng.random() < 0.2:
        options.append(f"threshold={rng.choice([5, 20])}, edgeitems={rng.choice([1, 2])}")
    return f"torch.set_printoptions({', '.join(options)})"


_INT_UNARY = ("x.abs()", "-x", "x.neg()", "x.sign()", "x.square()", "x.clamp(-2, 2)", "x.clamp(min=0)",
              "torch.relu(x)", "x.sgn()", "x.float().floor()", "x.double().round()", "x.half()",
              "x.to(torch.int32)", "x.to(torch.int64)", "x.flip(0)", "x.t() if x.ndim == 2 else x.flatten()")
_INT_BINARY = ("x + b", "x - b", "x * b", "x // b.clamp(min=1)", "x % b.clamp(min=1)", "torch.fmod(x, b.clamp(min=1))",
               "torch.remainder(x, -b.clamp(min=1))", "torch.maximum(x, b)", "torch.minimum(x, b)", "x * 3",
               "x + 2.5", "x / 2", "x * b.float()", "x ** 2", "torch.where(x > b, x, b)", "x & b", "x | b", "x ^ b",
               "x << 1", "x >> 1", "x << b.abs() % 8", "torch.clamp(x, min=b)", "torch.lerp(x.double(), b.double(), 0.5)",
               "torch.addcmul(x, b, b, value=2)", "x.add(b, alpha=3)")
_INT_REDUCTIONS = ("sum", "prod", "amax", "amin", "max", "min", "cumsum", "cumprod", "nansum", "mean_float",
                   "argmax", "count_nonzero")


def _int_program(rng, seed, dtype, shape):
    """Integer tensors: arithmetic with int64/int32 promotion and wrap-around, reductions (sum and
    prod promote to int64), no backward."""
    lines = [f"torch.manual_seed({seed % 1000})"]
    _tensor(rng, "a", shape, dtype, lines)
    _tensor(rng, "b", rng.choice([shape, shape[-1:]]), rng.choice(INT_DTYPES), lines)
    lines.append("x = a")
    for _ in range(rng.randint(1, 4)):
        form = rng.choice(_INT_UNARY if rng.random() < 0.4 else _INT_BINARY)
        lines.append(f"x = {form}")
    lines.append("print(x, x.dtype)")
    lines.append("print(x.tolist())")
    op = rng.choice(_INT_REDUCTIONS)
    dim = rng.randrange(len(shape))
    if op == "mean_float":
        lines.append(f"y = x.float().mean({dim})" if rng.random() < 0.5 else "y = x.double().mean()")
    elif op in ("cumsum", "cumprod"):
        lines.append(f"y = x.{op}({dim})")
    elif op in ("max", "min"):
        lines.append(f"y = x.{op}({dim}).values" if rng.random() < 0.5 else f"y = x.{op}()")
    else:
        lines.append(f"y = x.{op}({dim})" if rng.random() < 0.6 else f"y = x.{op}()")
    lines.append("print(y, y.dtype, y.shape)")
    lines.append("print(y.tolist())")
    return "\n".join(lines) + "\n"


def program(seed: int, ops: str = "all") -> str:
    """A program of a few lines, reproducible from ``seed``; ``ops="exact"`` draws only the ops
    whose results are correctly rounded (see EXACT_UNARY)."""
    rng = random.Random(seed)
    dtype = rng.choice(DTYPES)
    shape = _shape(rng)
    if rng.random() < 0.125:
        return _int_program(rng, seed, rng.choice(INT_DTYPES), shape)
    lines = [f"torch.manual_seed({seed % 1000})"]
    if rng.random() < 0.15:
        lines.append(_printoptions(rng))
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
        elif r < 0.95:
            lines.append(f"x = x * 1.0\nx.{rng.choice(['add_', 'mul_', 'sub_'])}(b)")
        else:
            lines.extend(_inplace_on_view(rng, "x", len(shape), ops))
    lines.append("print(x)")
    lines.append("print(x.tolist())")
    if rng.random() < 0.25:     # a reduction of a non-contiguous view of as many dims
        lines.append(f"x = {rng.choice(['x.transpose(0, -1)', 'x[..., ::2]', 'x.flip(-1)', 'x.movedim(0, -1)'])}")
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
    torch.set_printoptions(profile="default")   # a program's set_printoptions must not leak into the next
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
