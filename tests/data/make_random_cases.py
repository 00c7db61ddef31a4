"""Record PyTorch's CPU random numbers into random_cases.json (run under real PyTorch).

    /tmp/torchref/bin/python tests/data/make_random_cases.py

Each case seeds a generator (the default one via torch.manual_seed, or a
torch.Generator object), runs a list of calls, and records every result plus a hash of
the generator state afterwards.  tests/test_random.py replays the same calls through
gradexpr.rng and compares bit for bit.  Floats are stored as float.hex strings; for
large results only a SHA-256 of the array bytes and the first and last 20 values.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "random_cases.json")
SEEDS = [0, 1, 42, 2**31 - 1]
SIZES = [1, 7, 15, 16, 17, 100, 1000, 10000]
FULL_LIMIT = 1000          # results with more elements are stored as hash + head/tail
EDGE = 20
DT = {"float16": torch.float16, "float32": torch.float32, "float64": torch.float64,
      "int64": torch.int64, "int32": torch.int32, "int16": torch.int16, "int8": torch.int8,
      "uint8": torch.uint8, "bool": torch.bool}


# Input tensors are built from recipes; tests/test_random.py has the same function and
# checks it against the recorded input hash.
def recipe(name: str, shape, dtype: str) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64))
    i = np.arange(n, dtype=np.float64)
    if name == "mean":
        v = (np.mod(i, 13.0) - 6.0) * 0.37
    elif name == "std":
        v = (np.mod(i, 7.0) + 1.0) * 0.29
    elif name == "prob":
        v = np.mod(i, 11.0) / 10.0
    else:
        raise ValueError(name)
    return v.astype(dtype).reshape(shape)


def sha(a: np.ndarray) -> str:
    a = np.ascontiguousarray(a)
    if a.dtype.byteorder == ">":
        a = a.byteswap().view(a.dtype.newbyteorder("<"))
    return hashlib.sha256(a.tobytes()).hexdigest()


def enc_values(a: np.ndarray) -> list:
    if a.dtype.kind == "f":
        return [float(x).hex() for x in a.astype(np.float64).ravel().tolist()]
    if a.dtype.kind == "b":
        return [bool(x) for x in a.ravel().tolist()]
    return [int(x) for x in a.ravel().tolist()]


def encode(a: np.ndarray) -> dict:
    d = {"dtype": a.dtype.name, "shape": list(a.shape)}
    if a.size <= FULL_LIMIT:
        d["values"] = enc_values(a)
    else:
        flat = a.ravel()
        d["sha256"] = sha(a)
        d["head"] = enc_values(flat[:EDGE])
        d["tail"] = enc_values(flat[-EDGE:])
    return d


def tensor_arg(spec, dtype):
    """A call argument: a number, or {"recipe": name, "shape": [...], "dtype": ...}."""
    if isinstance(spec, dict):
        arr = recipe(spec["recipe"], tuple(spec["shape"]), spec["dtype"])
        return torch.from_numpy(arr.copy())
    return spec


def run(call: dict, g):
    fn = call["fn"]
    a = call["args"]
    gen = {} if g is None else {"generator": g}
    if fn == "rand":
        return torch.rand(a["shape"], dtype=DT[a["dtype"]], **gen)
    if fn == "randn":
        return torch.randn(a["shape"], dtype=DT[a["dtype"]], **gen)
    if fn == "randint":
        return torch.randint(a["low"], a["high"], a["shape"], dtype=DT[a["dtype"]], **gen)
    if fn == "randperm":
        return torch.randperm(a["n"], dtype=DT[a["dtype"]], **gen)
    if fn == "uniform":
        return torch.empty(a["shape"], dtype=DT[a["dtype"]]).uniform_(a["low"], a["high"], **gen)
    if fn == "normal":
        mean, std = tensor_arg(a["mean"], a["dtype"]), tensor_arg(a["std"], a["dtype"])
        if isinstance(mean, torch.Tensor) or isinstance(std, torch.Tensor):
            out = torch.normal(mean, std, **gen)
        else:
            out = torch.normal(mean, std, a["shape"], dtype=DT[a["dtype"]], **gen)
        assert out.dtype == DT[a["dtype"]], (out.dtype, a)
        return out
    if fn == "bernoulli":
        p = tensor_arg(a["p"], a["dtype"])
        if isinstance(p, torch.Tensor):
            out = torch.bernoulli(p, **gen)
            assert out.dtype == DT[a["dtype"]]
            return out
        return torch.empty(a["shape"], dtype=DT[a["dtype"]]).bernoulli_(p, **gen)
    if fn == "dropout":
        assert g is None, "F.dropout takes no generator"
        shape, dt, p = a["shape"], DT[a["dtype"]], a["p"]
        state = torch.get_rng_state()
        mask = F.dropout(torch.ones(shape, dtype=dt), p, training=True)
        # F.dropout(x) is x * mask bit for bit, also with requires_grad
        after = torch.get_rng_state()
        torch.set_rng_state(state)
        x = torch.randn(shape, generator=torch.Generator().manual_seed(7), dtype=dt) * 3
        x.requires_grad_(True)
        y = F.dropout(x, p, training=True)
        assert torch.equal(torch.get_rng_state(), after)
        assert torch.equal(y.detach(), x.detach() * mask), "dropout is not x * mask"
        return mask
    raise ValueError(fn)


def call(fn, **args):
    return {"fn": fn, "args": args}


def input_hashes(calls):
    out = {}
    for c in calls:
        for k, v in c["args"].items():
            if isinstance(v, dict):
                key = f'{v["recipe"]}/{v["dtype"]}/{"x".join(map(str, v["shape"]))}'
                out[key] = sha(recipe(v["recipe"], tuple(v["shape"]), v["dtype"]))
    return out


def R(name, shape, dtype):
    return {"recipe": name, "shape": list(shape), "dtype": dtype}


def single_calls(n: int):
    """(label, call) for every function at one size."""
    s = [n]
    out = []
    for dt in ("float32", "float64"):
        out.append((f"rand/{dt}", call("rand", shape=s, dtype=dt)))
        out.append((f"randn/{dt}", call("randn", shape=s, dtype=dt)))
        out.append((f"uniform/{dt}", call("uniform", low=-2.0, high=3.0, shape=s, dtype=dt)))
        out.append((f"normal_ss/{dt}", call("normal", mean=0.5, std=2.0, shape=s, dtype=dt)))
        out.append((f"normal_ts/{dt}", call("normal", mean=R("mean", s, dt), std=0.7, shape=s, dtype=dt)))
        out.append((f"normal_st/{dt}", call("normal", mean=-1.25, std=R("std", s, dt), shape=s, dtype=dt)))
        out.append((f"normal_tt/{dt}", call("normal", mean=R("mean", s, dt), std=R("std", s, dt), shape=s, dtype=dt)))
        out.append((f"bernoulli_s/{dt}", call("bernoulli", p=0.3, shape=s, dtype=dt)))
        out.append((f"bernoulli_t/{dt}", call("bernoulli", p=R("prob", s, dt), shape=s, dtype=dt)))
    out.append(("randint/small", call("randint", low=0, high=10, shape=s, dtype="int64")))
    out.append(("randint/wide", call("randint", low=-100, high=2**30, shape=s, dtype="int64")))
    out.append(("randint/huge", call("randint", low=-2**40, high=2**41 + 3, shape=s, dtype="int64")))
    out.append(("randint/int32", call("randint", low=3, high=1000, shape=s, dtype="int32")))
    out.append(("randperm", call("randperm", n=n, dtype="int64")))
    out.append(("dropout/0.5", call("dropout", p=0.5, shape=s, dtype="float32")))
    out.append(("dropout/0.2", call("dropout", p=0.2, shape=s, dtype="float32")))
    out.append(("dropout/0.021", call("dropout", p=0.021, shape=s, dtype="float32")))
    out.append(("dropout/0.2/float64", call("dropout", p=0.2, shape=s, dtype="float64")))
    return out


def build_cases():
    cases = []

    def add(cid, seed, calls, generator=False):
        cases.append({"id": cid, "seed": seed, "generator": generator, "calls": calls})

    for seed in SEEDS:
        for n in SIZES:
            for label, c in single_calls(n):
                add(f"{label}/seed{seed}/n{n}", seed, [c])
        # successive calls after one seed (the cached normal sample crosses calls)
        for dt in ("float32", "float64"):
            add(f"successive/randn/{dt}/seed{seed}", seed,
                [call("randn", shape=[n], dtype=dt) for n in (1, 1, 3, 20, 5, 16, 1, 33, 2)])
            add(f"successive/mixed/{dt}/seed{seed}", seed, [
                call("randn", shape=[3], dtype=dt), call("rand", shape=[5], dtype=dt),
                call("randn", shape=[17], dtype=dt), call("randn", shape=[1], dtype=dt),
                call("randint", low=0, high=7, shape=[9], dtype="int64"),
                call("normal", mean=1.0, std=0.5, shape=[4], dtype=dt),
                call("randperm", n=12, dtype="int64"),
                call("bernoulli", p=0.5, shape=[10], dtype=dt),
                call("dropout", p=0.5, shape=[40], dtype=dt),
                call("randn", shape=[1], dtype=dt),
                call("randn", shape=[1000], dtype=dt),
                call("rand", shape=[700], dtype=dt),
                call("randn", shape=[2], dtype=dt)])
        # torch.Generator objects
        add(f"generator/seed{seed}", seed, [
            call("randn", shape=[5], dtype="float32"), call("randn", shape=[40], dtype="float32"),
            call("rand", shape=[3, 4], dtype="float64"), call("randint", low=0, high=100, shape=[6], dtype="int64"),
            call("randperm", n=50, dtype="int64"), call("normal", mean=2.0, std=3.0, shape=[7], dtype="float64"),
            call("bernoulli", p=R("prob", [30], "float32"), shape=[30], dtype="float32"),
            call("randn", shape=[1], dtype="float64")], generator=True)
    # a fresh torch.Generator() (seed 67280421310721)
    add("generator/default_seed", None, [call("randn", shape=[20], dtype="float32"),
                                         call("rand", shape=[3], dtype="float32")], generator=True)
    # multi-dimensional shapes and other dtypes
    for seed in (0, 42):
        add(f"shapes/seed{seed}", seed, [
            call("randn", shape=[3, 5, 7], dtype="float32"), call("randn", shape=[2, 3], dtype="float64"),
            call("rand", shape=[4, 4], dtype="float32"), call("randn", shape=[0], dtype="float32"),
            call("rand", shape=[], dtype="float32"), call("randn", shape=[], dtype="float64"),
            call("normal", mean=R("mean", [4, 1], "float32"), std=R("std", [1, 5], "float32"),
                 shape=[4, 5], dtype="float32"),
            call("bernoulli", p=R("prob", [6, 6], "float64"), shape=[6, 6], dtype="float64"),
            call("dropout", p=0.3, shape=[5, 8], dtype="float32")])
        add(f"dtypes/seed{seed}", seed, [
            call("randn", shape=[10], dtype="float16"), call("randn", shape=[40], dtype="float16"),
            call("rand", shape=[30], dtype="float16"), call("uniform", low=-3.0, high=5.0, shape=[30], dtype="float16"),
            call("randint", low=-50, high=50, shape=[20], dtype="int8"),
            call("randint", low=0, high=2, shape=[20], dtype="bool"),
            call("randint", low=0, high=200, shape=[20], dtype="uint8"),
            call("randint", low=0, high=2**33, shape=[20], dtype="float64"),
            call("randperm", n=30, dtype="int32"), call("randperm", n=30, dtype="float32"),
            call("bernoulli", p=0.75, shape=[20], dtype="int64"),
            call("randint", low=-2**63, high=2**63 - 1, shape=[8], dtype="int64")])
    # large tensors: seed 0 only
    add("large/randn/float32/seed0/n100003", 0, [call("randn", shape=[100003], dtype="float32")])
    add("large/randn/float64/seed0/n100003", 0, [call("randn", shape=[100003], dtype="float64")])
    add("large/normal/float32/seed0/n65536", 0, [call("normal", mean=-3.5, std=0.01, shape=[65536], dtype="float32")])
    add("large/randperm/seed0/n100000", 0, [call("randperm", n=100000, dtype="int64")])
    return cases


def record(case):
    if case["generator"]:
        g = torch.Generator()
        if case["seed"] is not None:
            g.manual_seed(case["seed"])
    else:
        g = None
        torch.manual_seed(case["seed"])
    results = []
    for c in case["calls"]:
        results.append(encode(run(c, g).numpy()))
    state = (g.get_state() if g is not None else torch.get_rng_state()).numpy()
    return dict(case, results=results, state_sha256=sha(state), inputs=input_hashes(case["calls"]))


def main():
    torch.set_num_threads(1)
    cases = [record(c) for c in build_cases()]
    doc = {"torch_version": torch.__version__,
           "cpu_capability": torch.backends.cpu.get_cpu_capability(),
           "full_limit": FULL_LIMIT, "edge": EDGE, "cases": cases}
    with open(OUT, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print(f"{len(cases)} cases, {os.path.getsize(OUT) / 1e6:.2f} MB -> {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
