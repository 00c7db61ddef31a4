"""Record PyTorch's CPU sums, means and cumsums into reduction_cases.json (run under real PyTorch).

    /tmp/torchref/bin/python tests/data/make_reduction_cases.py

Inputs are ``torch.randn`` after ``torch.manual_seed(seed)`` (gradexpr.rng draws the same
numbers), scaled and shifted, then viewed (transposed, stepped, permuted) as each case says.
tests/test_reductions_exact.py rebuilds them and compares bit for bit: results are stored as
SHA-256 of the float bytes plus the first values as float.hex strings.  PyTorch splits a full
reduction of 32768 elements or more between its threads, so the thread count is recorded too.
"""
from __future__ import annotations

import hashlib
import json
import os

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reduction_cases.json")
SIZES = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 255, 256, 257,
         511, 512, 513, 1000, 1023, 1024, 1025, 4095, 4096, 4097, 10000, 16383, 16384, 16385, 32767,
         32768, 32769, 65535, 65536, 65537, 99999, 100000]
SHAPES = [(3, 5), (7, 9), (4, 8), (8, 4), (16, 33), (33, 16), (100, 100), (37, 1000), (1000, 37), (5, 4099),
          (300, 300), (2, 50000), (50000, 2), (40, 9), (9, 40), (64, 129), (1, 77), (77, 1)]
SHAPES3 = [((4, 5, 6), (0, 2)), ((4, 5, 6), (1,)), ((4, 5, 6), (0, 1)), ((10, 20, 30), (0, 2)),
           ((10, 20, 30), (2,)), ((3, 40, 50), (1, 2)), ((30, 40, 50), (0, 1, 2)), ((8, 1, 9), (0,)),
           ((6, 7, 8, 9), (1, 3)), ((40, 41, 42), (1,))]
VIEWS = {"plain": lambda x: x, "t": lambda x: x.t(), "step": lambda x: x[:, ::2],
         "rev": lambda x: x.permute(*reversed(range(x.dim())))}


def digest(t: torch.Tensor) -> dict:
    flat = t.contiguous().reshape(-1)
    return {"sha": hashlib.sha256(flat.numpy().tobytes()).hexdigest(),
            "head": [float(v).hex() for v in flat[:4].tolist()]}


def make_input(seed, shape, dtype):
    torch.manual_seed(seed)
    x = torch.randn(*shape) * 3 + 1
    return x.to(dtype)


def main():
    cases = []
    for dtype in ("float32", "float64"):
        dt = getattr(torch, dtype)
        for i, n in enumerate(SIZES):
            x = make_input(i, (n,), dt)
            cases.append({"seed": i, "shape": [n], "dtype": dtype, "view": "plain", "dim": None,
                          "sum": digest(x.sum()), "mean": digest(x.mean()), "cumsum": digest(x.cumsum(0)),
                          "nansum": digest(torch.where(x > 2, float("nan"), x).nansum())})
        for i, shape in enumerate(SHAPES):
            for view in ("plain", "t", "step"):
                x = VIEWS[view](make_input(100 + i, shape, dt))
                for dim in (0, 1, -1):
                    for keepdim in (False, True):
                        cases.append({"seed": 100 + i, "shape": list(shape), "dtype": dtype, "view": view,
                                      "dim": dim, "keepdim": keepdim,
                                      "sum": digest(x.sum(dim, keepdim)), "mean": digest(x.mean(dim, keepdim)),
                                      "cumsum": digest(x.cumsum(dim))})
                cases.append({"seed": 100 + i, "shape": list(shape), "dtype": dtype, "view": view, "dim": None,
                              "sum": digest(x.sum()), "mean": digest(x.mean()), "cumsum": None})
        for i, (shape, dims) in enumerate(SHAPES3):
            for view in ("plain", "rev"):
                x = VIEWS[view](make_input(200 + i, shape, dt))
                cases.append({"seed": 200 + i, "shape": list(shape), "dtype": dtype, "view": view,
                              "dim": list(dims), "keepdim": False,
                              "sum": digest(x.sum(dims)), "mean": digest(x.mean(dims)), "cumsum": None})
    with open(OUT, "w") as f:
        json.dump({"threads": torch.get_num_threads(), "capability": torch.backends.cpu.get_cpu_capability(),
                   "cases": cases}, f, indent=0)
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
