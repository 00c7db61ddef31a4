"""sum, mean, nansum and cumsum of float32/float64 tensors bit for bit against PyTorch's CPU kernels.

``tests/data/reduction_cases.json`` (written by ``tests/data/make_reduction_cases.py`` under the
reference PyTorch) holds, for 1-D tensors of 1 … 100,000 elements and 2-D/3-D tensors (contiguous,
transposed, stepped, permuted) along every dim, SHA-256 digests of PyTorch's results. The inputs
are ``randn`` after ``manual_seed``, which gradexpr draws identically, so each case is rebuilt
through the program-level ``torch`` namespace and its results hashed the same way.
"""
from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pytest

from gradexpr import api, reduction_order

DATA = os.path.join(os.path.dirname(__file__), "data", "reduction_cases.json")
with open(DATA) as f:
    DOC = json.load(f)
torch = api.build()["torch"]
VIEWS = {"plain": lambda x: x, "t": lambda x: x.t(), "step": lambda x: x[:, ::2],
         "rev": lambda x: x.permute(*reversed(range(x.dim())))}


@pytest.fixture(autouse=True)
def recorded_thread_count(monkeypatch):
    # a full reduction of 32768+ elements is split between PyTorch's threads: sum as the recording did
    monkeypatch.setattr(reduction_order, "_THREADS", DOC["threads"])


def digest(t) -> dict:
    flat = np.ascontiguousarray(t.numpy()).reshape(-1)
    return {"sha": hashlib.sha256(flat.tobytes()).hexdigest(), "head": [float(v).hex() for v in flat[:4].tolist()]}


def make_input(case):
    torch.manual_seed(case["seed"])
    x = torch.randn(*case["shape"]) * 3 + 1
    return VIEWS[case["view"]](x.to(getattr(torch, case["dtype"])))


def _id(case):
    return f"{case['dtype']}-{case['view']}-{'x'.join(map(str, case['shape']))}-dim{case['dim']}-{case.get('keepdim')}"


@pytest.mark.parametrize("case", DOC["cases"], ids=[_id(c) for c in DOC["cases"]])
def test_reduction_matches_pytorch_bit_for_bit(case):
    x = make_input(case)
    dim, keepdim = case["dim"], case.get("keepdim", False)
    if dim is None:
        got = {"sum": x.sum(), "mean": x.mean(), "cumsum": x.cumsum(0) if case["cumsum"] else None}
    else:
        d = tuple(dim) if isinstance(dim, list) else dim
        got = {"sum": x.sum(d, keepdim), "mean": x.mean(d, keepdim),
               "cumsum": x.cumsum(d) if case["cumsum"] else None}
    if "nansum" in case:
        got["nansum"] = torch.where(x > 2, float("nan"), x).nansum()
    for name, value in got.items():
        if value is None:
            continue
        want = case[name]
        have = digest(value)
        assert have["head"] == want["head"] and have["sha"] == want["sha"], (name, have["head"], want["head"])


def test_the_issue_example():
    torch.manual_seed(0)
    assert torch.randn(100000).sum().item() == -244.559814453125


def test_two_threads_split_a_long_sum_in_halves(monkeypatch):
    x = np.arange(70000, dtype=np.float32) * np.float32(0.1)
    monkeypatch.setattr(reduction_order, "_THREADS", 2)
    halves = np.array([reduction_order.torch_sum(x[:35000]), reduction_order.torch_sum(x[35000:])])
    assert reduction_order.torch_sum(x) == np.float32(halves[0] + halves[1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("width", [2, 3, 16, 32])
def test_chunk_sums_add_each_lane_in_order(dtype, width):
    """The cascade's chunk sums are running sums down each lane: values whose sum depends on the order
    (huge ones that cancel, small ones that vanish next to them) give the in-order result."""
    rng = np.random.default_rng(width)
    chunks, step = 50, 16
    a = (rng.standard_normal((chunks * step, width)) * 10.0 ** rng.integers(-8, 9, (chunks * step, width))).astype(dtype)
    a[::5] *= dtype(2) ** 30
    a[3::7] = -a[::7][:a[3::7].shape[0]]
    want = np.zeros((chunks, width), dtype)
    for r in range(step):
        want = want + a[r::step]
    assert np.array_equal(reduction_order._chunk_sums(a, chunks, step), want)
