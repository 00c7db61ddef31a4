"""Records PyTorch's parameters after 21 steps of the optimisers whose update takes a square root
(tests/test_nn_optim.py). Run with the torch venv: /tmp/torchref/bin/python tests/data/make_nn_optim_cases.py"""
import json

import torch

GRADS = [[0.3, -1.7, 2.9e-3, 40.], [-0.5, 0.25, 1e-4, -3.], [1.1, 0.9, -2.2, 0.], [0.01, -0.02, 0.5, 7.]]
RUNS = [("RMSprop", "float32", {}),
        ("RMSprop", "float32", {"lr": 0.02, "alpha": 0.9, "eps": 1e-6, "weight_decay": 0.1, "momentum": 0.5,
                                "centered": True}),
        ("RMSprop", "float32", {"lr": 0.02, "centered": True, "maximize": True}),
        ("Adagrad", "float32", {}),
        ("Adagrad", "float32", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1, "initial_accumulator_value": 0.5,
                                "eps": 1e-6, "maximize": True}),
        ("Adadelta", "float32", {}), ("Adadelta", "float64", {}),
        ("Adadelta", "float64", {"lr": 0.5, "rho": 0.8, "eps": 1e-4, "weight_decay": 0.1, "maximize": True})]


def run(name, dtype, kw):
    dt = getattr(torch, dtype)
    w = torch.tensor([0.5, -1.25, 3.0, 1e-3], dtype=dt, requires_grad=True)
    opt = getattr(torch.optim, name)([w], **kw)
    out = []
    for i in range(21):
        w.grad = torch.tensor(GRADS[i % 4]).to(dt) * (1.0 + 0.1 * i)
        opt.step()
        out.append(w.tolist())
    return out


if __name__ == "__main__":
    cases = [{"optimizer": n, "dtype": d, "options": kw, "steps": run(n, d, kw)} for n, d, kw in RUNS]
    with open(__file__.replace("make_nn_optim_cases.py", "nn_optim_cases.json"), "w") as f:
        json.dump({"torch_version": torch.__version__, "grads": GRADS, "cases": cases}, f)
