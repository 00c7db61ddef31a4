"""The gradexpr side of the bench (and the hand-written NumPy it is compared with).

Run by ``bench/run.py`` as a worker (``python bench/gx_worker.py``, requests on
stdin, see ``protocol.py``) or for one measurement in a fresh process
(``python bench/gx_worker.py --scale N``: a chain of N ops, with its peak memory).
This process never imports torch.
"""
from __future__ import annotations

import ast as python_ast
import contextlib
import gc
import io
import json
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from protocol import serve, steady_step_seconds, timed  # noqa: E402

_cache: dict = {}


def _torch():
    """gradexpr's ``torch`` namespace (what programs see as ``torch``)."""
    if "torch" not in _cache:
        from gradexpr import api
        _cache["torch"] = api.build()["torch"]
    return _cache["torch"]


def _arrays(key, make):
    """Inputs made once per size and shared by both variants (setup is not timed)."""
    if key not in _cache:
        _cache.clear() if len(_cache) > 8 else None
        _cache[key] = make()
    return _cache[key]


def _normal(rng, shape, scale=1.0):
    import numpy as np
    return (rng.standard_normal(shape, dtype=np.float32) * np.float32(scale))


# ------------------------------------------------------------------ per-op overhead
def perop_engine(size):
    """A chain ``y = y * 1.0001`` of (2, 2) tensors through the engine API: seconds per op."""
    torch = _torch()
    n = size["n"]
    x = torch.ones(2, 2, requires_grad=True)
    t0 = time.perf_counter()
    y = x
    for _ in range(n):
        y = y * 1.0001
    t1 = time.perf_counter()
    y.sum().backward()
    t2 = time.perf_counter()
    return {"forward/op": (t1 - t0) / n, "backward/op": (t2 - t1) / n}


@contextlib.contextmanager
def python_default_gc():
    """Python's default collector thresholds for a while, instead of the command's (which this
    worker applies: see the end of this file)."""
    kept = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        yield
    finally:
        gc.set_threshold(*kept)


def perop_engine_default_gc(size):
    """``perop_engine`` under Python's default collector thresholds instead of the command's.

    Every op leaves a few small objects the collector tracks (node, saved-tensor record, edge
    lists); with the default thresholds a growing graph is rescanned again and again. The
    gradexpr command collects rarely (``configure_process``); this variant shows what the
    engine costs in a process that does not.
    """
    with python_default_gc():
        return perop_engine(size)


def perop_language(size):
    """The same chain written as a ``for`` loop of a .gx program, run by the interpreter."""
    from gradexpr import limits as gx_limits
    from gradexpr.grammar.interpreter import Interpreter
    from gradexpr.grammar.parser import parse
    from gradexpr.grammar.prelude import make_globals
    n = size["n"]
    loop = parse(f"x = ones(2, 2, requires_grad=True)\ny = x\nfor i in range({n}):\n    y = y * 1.0001\n",
                 "chain.gx")
    back = parse("y.sum().backward()\n", "chain.gx")
    interp = Interpreter(make_globals(), filename="chain.gx", out=io.StringIO(),
                         limits=gx_limits.Limits.from_env(max_loop_iterations=0, max_seconds=0))
    forward, _ = timed(interp.run, loop)
    backward, _ = timed(interp.run, back)
    return {"forward/op": forward / n, "backward/op": backward / n}


# ------------------------------------------------------------------ big tensors
def _elementwise_data(n):
    import numpy as np
    rng = np.random.default_rng(0)
    return _arrays(("elementwise", n), lambda: tuple(_normal(rng, (n,)) for _ in range(3)))


def elementwise_gradexpr(size):
    """``((x*w+b).tanh()**2).mean()`` forward and backward; w and b require grad."""
    torch = _torch()
    X, W, B = _elementwise_data(size["n"])
    x = torch.from_numpy(X)
    w = torch.from_numpy(W).requires_grad_()
    b = torch.from_numpy(B).requires_grad_()

    def step():
        loss = ((x * w + b).tanh() ** 2).mean()
        loss.backward()
        return loss, w.grad, b.grad
    seconds, _ = timed(step)
    return {"fwd+bwd": seconds}


def elementwise_numpy(size):
    """The same forward and backward written by hand in NumPy."""
    import numpy as np
    x, w, b = _elementwise_data(size["n"])

    def step():
        h = np.tanh(x * w + b)
        loss = (h * h).mean()
        gh = h * np.float32(2.0 / h.size)        # d loss / d h
        gz = gh * (1 - h * h)                    # through tanh
        return loss, gz * x, gz                  # d loss / d w, d loss / d b
    seconds, _ = timed(step)
    return {"fwd+bwd": seconds}


def _mlp_data(size):
    import numpy as np
    rng = np.random.default_rng(1)
    b, i, h, o = size["batch"], size["inp"], size["hidden"], size["out"]
    return _arrays(("mlp", b, i, h, o), lambda: (_normal(rng, (b, i)), _normal(rng, (i, h), i ** -0.5),
                                                 _normal(rng, (h, o), h ** -0.5)))


def mlp_gradexpr(size):
    """``((X @ W1).relu() @ W2).sum()`` forward and backward; W1 and W2 require grad."""
    torch = _torch()
    Xa, W1a, W2a = _mlp_data(size)
    X = torch.from_numpy(Xa)
    W1 = torch.from_numpy(W1a).requires_grad_()
    W2 = torch.from_numpy(W2a).requires_grad_()

    def step():
        loss = ((X @ W1).relu() @ W2).sum()
        loss.backward()
        return loss, W1.grad, W2.grad
    seconds, _ = timed(step)
    return {"fwd+bwd": seconds}


def mlp_numpy(size):
    import numpy as np
    X, W1, W2 = _mlp_data(size)

    def step():
        H = X @ W1
        R = np.maximum(H, 0)
        loss = (R @ W2).sum()
        dY = np.ones((X.shape[0], W2.shape[1]), np.float32)
        dW2 = R.T @ dY
        dH = (dY @ W2.T) * (H > 0)
        dW1 = X.T @ dH
        return loss, dW1, dW2
    seconds, _ = timed(step)
    return {"fwd+bwd": seconds}


def _train_data(size):
    import numpy as np
    rng = np.random.default_rng(4)
    return _arrays(("train", size["batch"]), lambda: (_normal(rng, (size["batch"], 64)),
                                                      rng.integers(0, 10, size["batch"])))


def train_gradexpr(size):
    """One training step of a small MLP as the tutorials write it: ``zero_grad``, forward through
    ``nn.Sequential(Linear(64, 128), ReLU(), Linear(128, 10))``, ``CrossEntropyLoss``, backward,
    ``Adam.step``."""
    torch = _torch()
    nn = torch.nn
    Xa, ya = _train_data(size)
    X, y = torch.from_numpy(Xa), torch.from_numpy(ya)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        loss = loss_fn(model(X), y)
        loss.backward()
        opt.step()
        return loss
    return {"step": steady_step_seconds(step)}


# ------------------------------------------------------------------ Jacobian, Hessian
def _square_data(n, seed):
    import numpy as np
    rng = np.random.default_rng(seed)
    return _arrays(("square", n, seed), lambda: (_normal(rng, (n, n), n ** -0.5), _normal(rng, (n,))))


def jacobian_gradexpr(size):
    """``jacobian(lambda x: tanh(W @ x), x)`` by ``torch.autograd.functional.jacobian``."""
    from gradexpr.functional import jacobian
    torch = _torch()
    Wa, xa = _square_data(size["n"], 2)
    W, x = torch.from_numpy(Wa), torch.from_numpy(xa)
    seconds, J = timed(jacobian, lambda v: torch.tanh(W @ v), x)
    assert tuple(J.shape) == (size["n"], size["n"])
    return {"jacobian": seconds}


def hessian_gradexpr(size):
    """``hessian(lambda x: (tanh(W @ x) ** 2).sum(), x)``."""
    from gradexpr.functional import hessian
    torch = _torch()
    Wa, xa = _square_data(size["n"], 3)
    W, x = torch.from_numpy(Wa), torch.from_numpy(xa)
    seconds, H = timed(hessian, lambda v: (torch.tanh(W @ v) ** 2).sum(), x)
    assert tuple(H.shape) == (size["n"], size["n"])
    return {"hessian": seconds}


# ------------------------------------------------------------------ forward mode and vmap (issue 17)
def _forward_data(size):
    """W (outputs × inputs) and x for jacfwd; an MLP's weights and a batch of samples for per-sample grads."""
    import numpy as np
    rng = np.random.default_rng(4)
    n, m, b = size["inputs"], size["outputs"], size["batch"]
    return _arrays(("forward", n, m, b), lambda: (
        _normal(rng, (m, n), n ** -0.5), _normal(rng, (n,)), _normal(rng, (32, 64), 32 ** -0.5),
        _normal(rng, (64, 10), 64 ** -0.5), _normal(rng, (b, 32)), _normal(rng, (b, 10))))


def per_sample_loss(w1, w2, x, y):
    """The per-sample loss of the bench's 2-layer MLP (gradexpr's and torch's workers share it)."""
    return ((((x @ w1).tanh() @ w2) - y) ** 2).sum()


def forward_gradexpr(size):
    """jacfwd vs jacrev of tanh(W @ x) (few inputs, many outputs); per-sample gradients of an MLP by
    vmap(grad) and by a Python loop of grad."""
    torch = _torch()
    Wa, xa, w1a, w2a, Xa, Ya = _forward_data(size)
    W, x, w1, w2, X, Y = (torch.from_numpy(a) for a in (Wa, xa, w1a, w2a, Xa, Ya))
    f = lambda v: torch.tanh(W @ v)          # noqa: E731
    fwd, J = timed(torch.func.jacfwd(f), x)
    rev, J2 = timed(torch.func.jacrev(f), x)
    assert tuple(J.shape) == (size["outputs"], size["inputs"]) and J.allclose(J2, atol=1e-5)
    g = torch.func.grad(per_sample_loss, argnums=(0, 1))
    batched, G = timed(torch.func.vmap(g, in_dims=(None, None, 0, 0)), w1, w2, X, Y)
    looped, rows = timed(lambda: [g(w1, w2, X[i], Y[i]) for i in range(X.shape[0])])
    assert G[0].allclose(torch.stack([r[0] for r in rows]), atol=1e-5)
    return {"jacfwd": fwd, "jacrev": rev, "per-sample": batched, "per-sample loop": looped}


# ------------------------------------------------------------------ parsing
def program_lines(count: int) -> str:
    """A program of ``count`` lines in the style of the tutorials (valid gradexpr and Python)."""
    shapes = (
        "x{j} = ones(2, 2, requires_grad=True)",
        "y{j} = ((x{j} + 2) ** 2 * 3).mean()",
        "z{j} = torch.tanh(x{j} @ x{j}.t() - 0.5).sum(dim=0, keepdim=True)",
        "print(f'value {{y{j}.item():.4f}}', z{j}.shape, y{j}.grad_fn)",
        "w{j} = [x{j}, 2.5, 'name', (1, 2)] if y{j} > 0 and not False else None",
    )
    lines = [shapes[i % len(shapes)].format(j=i - i % len(shapes)) for i in range(count)]
    return "\n".join(lines) + "\n"


# Both parsers run under Python's default collector thresholds: ast.parse as Python runs it
# (with the command's rare collections it is a quarter faster, as it builds ~100,000 objects
# the collector would scan); gradexpr's parser turns the collector off while it parses anyway.
def parse_gradexpr(size):
    from gradexpr.grammar.parser import parse
    src = _arrays(("program", size["lines"]), lambda: program_lines(size["lines"]))
    parse("x = 1\n", "warm.gx")      # the parser's tables are built once per process: not part of this
    with python_default_gc():
        seconds, _ = timed(parse, src, "bench.gx")
    return {"parse": seconds}


def parse_python(size):
    src = _arrays(("program", size["lines"]), lambda: program_lines(size["lines"]))
    with python_default_gc():
        seconds, _ = timed(python_ast.parse, src)
    return {"parse": seconds}


# ------------------------------------------------------------------ custom autograd.Function
def _one_line_function():
    """``Scale``, the one-line custom Function of the ``function`` workload (made once)."""
    if "Scale" not in _cache:
        from gradexpr.autograd_function import Function

        class Scale(Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1.0001

            @staticmethod
            def backward(ctx, grad):
                return grad * 1.0001
        _cache["Scale"] = Scale
    return _cache["Scale"]


def function_engine(size):
    """A chain of ``n`` calls ``y = Scale.apply(y)`` of a one-line custom Function, then backward."""
    torch = _torch()
    scale = _one_line_function()
    n = size["n"]
    x = torch.ones(2, 2, requires_grad=True)
    t0 = time.perf_counter()
    y = x
    for _ in range(n):
        y = scale.apply(y)
    t1 = time.perf_counter()
    y.sum().backward()
    t2 = time.perf_counter()
    return {"forward/call": (t1 - t0) / n, "backward/call": (t2 - t1) / n}


def function_language(size):
    """The same chain as a .gx program: its class statement makes the Function, a for loop applies it."""
    from gradexpr import limits as gx_limits
    from gradexpr.grammar.interpreter import Interpreter
    from gradexpr.grammar.parser import parse
    from gradexpr.grammar.prelude import make_globals
    n = size["n"]
    loop = parse("class Scale(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
                 "        return x * 1.0001\n\n    @staticmethod\n    def backward(ctx, grad):\n"
                 f"        return grad * 1.0001\n\nx = ones(2, 2, requires_grad=True)\ny = x\nfor i in range({n}):\n"
                 "    y = Scale.apply(y)\n", "function.gx")
    back = parse("y.sum().backward()\n", "function.gx")
    interp = Interpreter(make_globals(), filename="function.gx", out=io.StringIO(),
                         limits=gx_limits.Limits.from_env(max_loop_iterations=0, max_seconds=0))
    forward, _ = timed(interp.run, loop)
    backward, _ = timed(interp.run, back)
    return {"forward/call": forward / n, "backward/call": backward / n}


WORKLOADS = {
    "function": {"gradexpr": function_engine, "language": function_language},
    "perop": {"gradexpr": perop_engine, "language": perop_language, "default gc": perop_engine_default_gc},
    "elementwise": {"gradexpr": elementwise_gradexpr, "numpy": elementwise_numpy},
    "mlp": {"gradexpr": mlp_gradexpr, "numpy": mlp_numpy},
    "train": {"gradexpr": train_gradexpr},
    "jacobian": {"gradexpr": jacobian_gradexpr},
    "hessian": {"gradexpr": hessian_gradexpr},
    "forward": {"gradexpr": forward_gradexpr},
    "parse": {"gradexpr": parse_gradexpr, "python": parse_python},
}


# ------------------------------------------------------------------ scale (one fresh process per size)
def _process_setting(name):
    """Apply ``gradexpr.cli.main.<name>()`` (absent in older checkouts, which the bench also measures)."""
    from gradexpr.cli import main
    setting = getattr(main, name, None)
    if setting is not None:
        setting()


def scale(n: int) -> dict:
    """Build a chain of ``n`` ops and back-propagate, with the gradexpr command's process settings
    (its garbage-collector policy for big graphs); time, and this process's peak memory."""
    _process_setting("configure_process")
    torch = _torch()
    x = torch.ones(2, 2, requires_grad=True)
    t0 = time.perf_counter()
    y = x
    for _ in range(n):
        y = y * 1.0001
    t1 = time.perf_counter()
    y.sum().backward()
    t2 = time.perf_counter()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024      # KiB on Linux
    return {"build": t1 - t0, "backward": t2 - t1, "peak_mib": peak}


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--scale":
        print(json.dumps(scale(int(sys.argv[2]))))
    else:
        # the gradexpr command's process settings (its collector policy for big graphs, freed big
        # blocks kept for reuse): the engine is measured as the command runs it; the hand-written
        # NumPy runs in this same process, so it has them too
        _process_setting("configure_process")
        serve(WORKLOADS)
