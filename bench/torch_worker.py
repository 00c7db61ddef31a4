"""The PyTorch side of the bench: the same work as ``gx_worker.py``, in PyTorch.

Run by ``bench/run.py`` with the Python that has PyTorch (``--torch-python``);
it never imports gradexpr, and gradexpr's worker never imports torch. Inputs are
drawn with the same NumPy generators and seeds as the gradexpr side.
"""
from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from protocol import serve, steady_step_seconds, timed  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
_cache: dict = {}


def _arrays(key, make):
    if key not in _cache:
        _cache.clear() if len(_cache) > 8 else None
        _cache[key] = make()
    return _cache[key]


def _normal(rng, shape, scale=1.0):
    return torch.from_numpy(rng.standard_normal(shape, dtype=np.float32) * np.float32(scale))


def perop(size):
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


def elementwise(size):
    n = size["n"]
    rng = np.random.default_rng(0)
    x, W, B = _arrays(("elementwise", n), lambda: tuple(_normal(rng, (n,)) for _ in range(3)))
    w = W.detach().requires_grad_()
    b = B.detach().requires_grad_()

    def step():
        loss = ((x * w + b).tanh() ** 2).mean()
        loss.backward()
        return loss
    seconds, _ = timed(step)
    return {"fwd+bwd": seconds}


def mlp(size):
    bs, i, h, o = size["batch"], size["inp"], size["hidden"], size["out"]
    rng = np.random.default_rng(1)
    X, W1a, W2a = _arrays(("mlp", bs, i, h, o), lambda: (_normal(rng, (bs, i)), _normal(rng, (i, h), i ** -0.5),
                                                         _normal(rng, (h, o), h ** -0.5)))
    W1 = W1a.detach().requires_grad_()
    W2 = W2a.detach().requires_grad_()

    def step():
        loss = ((X @ W1).relu() @ W2).sum()
        loss.backward()
        return loss
    seconds, _ = timed(step)
    return {"fwd+bwd": seconds}


def train(size):
    """gx_worker.train_gradexpr's step in PyTorch."""
    rng = np.random.default_rng(4)
    X, y = _arrays(("train", size["batch"]), lambda: (_normal(rng, (size["batch"], 64)),
                                                      torch.from_numpy(rng.integers(0, 10, size["batch"]))))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    loss_fn = torch.nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        loss = loss_fn(model(X), y)
        loss.backward()
        opt.step()
        return loss
    return {"step": steady_step_seconds(step)}


def _square(n, seed):
    rng = np.random.default_rng(seed)
    return _arrays(("square", n, seed), lambda: (_normal(rng, (n, n), n ** -0.5), _normal(rng, (n,))))


def jacrev(size):
    W, x = _square(size["n"], 2)
    seconds, _ = timed(torch.func.jacrev(lambda v: torch.tanh(W @ v)), x)
    return {"jacobian": seconds}


def jacobian_looped(size):
    W, x = _square(size["n"], 2)
    seconds, _ = timed(torch.autograd.functional.jacobian, lambda v: torch.tanh(W @ v), x)
    return {"jacobian": seconds}


def func_hessian(size):
    W, x = _square(size["n"], 3)
    seconds, _ = timed(torch.func.hessian(lambda v: (torch.tanh(W @ v) ** 2).sum()), x)
    return {"hessian": seconds}


def hessian_looped(size):
    W, x = _square(size["n"], 3)
    seconds, _ = timed(torch.autograd.functional.hessian, lambda v: (torch.tanh(W @ v) ** 2).sum(), x)
    return {"hessian": seconds}


def forward(size):
    """torch.func.jacfwd/jacrev of tanh(W @ x) and per-sample gradients by vmap(grad) and by a loop of grad
    (the gradexpr worker's data)."""
    rng = np.random.default_rng(4)
    n, m, b = size["inputs"], size["outputs"], size["batch"]
    W, x, w1, w2, X, Y = _arrays(("forward", n, m, b), lambda: (
        _normal(rng, (m, n), n ** -0.5), _normal(rng, (n,)), _normal(rng, (32, 64), 32 ** -0.5),
        _normal(rng, (64, 10), 64 ** -0.5), _normal(rng, (b, 32)), _normal(rng, (b, 10))))
    fwd, _ = timed(torch.func.jacfwd(lambda v: torch.tanh(W @ v)), x)
    rev, _ = timed(torch.func.jacrev(lambda v: torch.tanh(W @ v)), x)

    def loss(w1, w2, x, y):
        return ((((x @ w1).tanh() @ w2) - y) ** 2).sum()
    g = torch.func.grad(loss, argnums=(0, 1))
    batched, _ = timed(torch.func.vmap(g, in_dims=(None, None, 0, 0)), w1, w2, X, Y)
    looped, _ = timed(lambda: [g(w1, w2, X[i], Y[i]) for i in range(X.shape[0])])
    return {"jacfwd": fwd, "jacrev": rev, "per-sample": batched, "per-sample loop": looped}


class Scale(torch.autograd.Function):
    """The one-line custom Function of the ``function`` workload."""

    @staticmethod
    def forward(ctx, x):
        return x * 1.0001

    @staticmethod
    def backward(ctx, grad):
        return grad * 1.0001


def function(size):
    n = size["n"]
    x = torch.ones(2, 2, requires_grad=True)
    t0 = time.perf_counter()
    y = x
    for _ in range(n):
        y = Scale.apply(y)
    t1 = time.perf_counter()
    y.sum().backward()
    t2 = time.perf_counter()
    return {"forward/call": (t1 - t0) / n, "backward/call": (t2 - t1) / n}


WORKLOADS = {
    "function": {"torch": function},
    "perop": {"torch": perop},
    "elementwise": {"torch": elementwise},
    "mlp": {"torch": mlp},
    "train": {"torch": train},
    "jacobian": {"torch.func": jacrev, "torch looped": jacobian_looped},
    "hessian": {"torch.func": func_hessian, "torch looped": hessian_looped},
    "forward": {"torch.func": forward},
}

if __name__ == "__main__":
    serve(WORKLOADS)
