"""Tests for gradexpr.printing: torch's tensor repr on NumPy arrays.

The bulk of the cases live in tests/data/printing_cases.json, recorded from real
PyTorch by tests/data/make_printing_cases.py (see its docstring for the format).
These tests need only NumPy, pytest and hypothesis.
"""
from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from gradexpr.printing import (
    format_item,
    format_tensor,
    get_printoptions,
    printoptions,
    set_printoptions,
)

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                    "printing_cases.json")

NP = {
    "float32": np.float32, "float64": np.float64, "float16": np.float16,
    "int64": np.int64, "int32": np.int32, "int16": np.int16, "int8": np.int8,
    "uint8": np.uint8, "bool": np.bool_,
}
FLOATS = ("float32", "float64", "float16")


@pytest.fixture(autouse=True)
def _default_printoptions():
    set_printoptions(profile="default")
    yield
    set_printoptions(profile="default")


# --------------------------------------------------------------------------- JSON cases


def _decode_list(values, dtype):
    if dtype in FLOATS:
        return np.array([float.fromhex(v) for v in values], dtype=np.float64).astype(NP[dtype])
    return np.array(values, dtype=NP[dtype])


def decode_case(case) -> np.ndarray:
    dtype, shape, values = case["dtype"], case["shape"], case["values"]
    n = math.prod(shape)
    if isinstance(values, dict):  # a ramp with a few patched elements
        if dtype in FLOATS:
            start, step = (float.fromhex(v) for v in values["arange"])
            flat = np.float64(start) + np.arange(n, dtype=np.float64) * np.float64(step)
        else:
            start, step = values["arange"]
            flat = np.int64(start) + np.arange(n, dtype=np.int64) * np.int64(step)
        flat = flat.astype(NP[dtype])
        for i, v in values.get("set", []):
            flat[i] = _decode_list([v], dtype)[0]
    else:
        flat = _decode_list(values, dtype)
    if case.get("tile"):
        flat = np.resize(flat, n)
    return flat.reshape(shape)


def _load_cases():
    with open(DATA) as fh:
        return json.load(fh)


CASES = _load_cases()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_recorded_case(case):
    arr = decode_case(case)
    before = arr.copy()
    set_printoptions(**(case.get("options") or {}))
    got = format_tensor(arr, case["dtype"], grad_fn=case.get("grad_fn"),
                        requires_grad=case.get("requires_grad", False))
    assert got == case["expected"]
    assert np.array_equal(arr, before, equal_nan=arr.dtype.kind == "f")


def test_case_file_is_diverse():
    dtypes = {c["dtype"] for c in CASES}
    assert dtypes == set(NP)
    assert len(CASES) >= 300
    assert any(math.prod(c["shape"]) > 1000 for c in CASES)
    assert any(c.get("grad_fn") for c in CASES) and any(c.get("requires_grad") for c in CASES)
    assert {len(c["shape"]) for c in CASES} >= {0, 1, 2, 3, 4}


# --------------------------------------------------------------------------- readable cases
# From /work/shared/conformance/printing (what PyTorch printed).

f32 = np.float32


def _ramp(n, dtype=np.float32):
    return np.arange(n).astype(dtype)


READABLE = [
    ([1., 2., 3.], "float32", {}, "tensor([1., 2., 3.])"),
    ([[1., -2.], [30., 4.]], "float32", {}, "tensor([[ 1., -2.],\n        [30.,  4.]])"),
    ([100., 2000., 0.], "float32", {}, "tensor([ 100., 2000.,    0.])"),
    ([123.456789, 0.5], "float32", {}, "tensor([123.4568,   0.5000])"),
    ([[0.12345, 10.5], [99.99999, 1.0]], "float32", {},
     "tensor([[  0.1235,  10.5000],\n        [100.0000,   1.0000]])"),
    ([0.1, 0.2], "float64", {}, "tensor([0.1000, 0.2000], dtype=torch.float64)"),
    ([1.5, 2.5], "float16", {}, "tensor([1.5000, 2.5000], dtype=torch.float16)"),
    ([1, 2], "int32", {}, "tensor([1, 2], dtype=torch.int32)"),
    ([True, False], "bool", {}, "tensor([ True, False])"),
    ([[1, -20], [300, 4]], "int64", {}, "tensor([[  1, -20],\n        [300,   4]])"),
    ([math.nan, math.inf, -math.inf, 1.], "float32", {}, "tensor([nan, inf, -inf, 1.])"),
    ([math.inf, 2.5], "float32", {}, "tensor([   inf, 2.5000])"),
    ([-0., 0.], "float32", {}, "tensor([-0., 0.])"),
    (3., "float32", {}, "tensor(3.)"),
    (2.5, "float32", {}, "tensor(2.5000)"),
    (-1e-6, "float32", {}, "tensor(-1.0000e-06)"),
    (1e20, "float32", {}, "tensor(1.0000e+20)"),
    (3, "int64", {}, "tensor(3)"),
    (True, "bool", {}, "tensor(True)"),
    ([1e8, 1.], "float32", {}, "tensor([1.0000e+08, 1.0000e+00])"),
    ([1000., 0.5], "float32", {}, "tensor([1.0000e+03, 5.0000e-01])"),
    ([0.0001, 0.001], "float32", {}, "tensor([1.0000e-04, 1.0000e-03])"),
    ([0.001, 0.5], "float32", {}, "tensor([0.0010, 0.5000])"),
    ([2.5e-7, -3.0e-6], "float32", {}, "tensor([ 2.5000e-07, -3.0000e-06])"),
    (np.zeros((0, 3)), "float32", {}, "tensor([], size=(0, 3))"),
    (np.zeros((2, 0)), "float32", {}, "tensor([], size=(2, 0))"),
    (np.zeros(0), "int64", {}, "tensor([], dtype=torch.int64)"),
    (np.zeros(0), "float32", {}, "tensor([])"),
    ([2., 4.], "float32", {"grad_fn": "MulBackward0"},
     "tensor([2., 4.], grad_fn=<MulBackward0>)"),
    (6., "float32", {"grad_fn": "SumBackward0"}, "tensor(6., grad_fn=<SumBackward0>)"),
    ([2., 3.], "float64", {"grad_fn": "AddBackward0"},
     "tensor([2., 3.], dtype=torch.float64, grad_fn=<AddBackward0>)"),
    (np.zeros((2, 2)), "float32", {"requires_grad": True},
     "tensor([[0., 0.],\n        [0., 0.]], requires_grad=True)"),
    (np.arange(24.).reshape(2, 3, 4), "float32", {},
     "tensor([[[ 0.,  1.,  2.,  3.],\n"
     "         [ 4.,  5.,  6.,  7.],\n"
     "         [ 8.,  9., 10., 11.]],\n"
     "\n"
     "        [[12., 13., 14., 15.],\n"
     "         [16., 17., 18., 19.],\n"
     "         [20., 21., 22., 23.]]])"),
    (np.zeros((2, 1, 2)), "int64", {}, "tensor([[[0, 0]],\n\n        [[0, 0]]])"),
    (_ramp(1001), "float32", {}, "tensor([   0.,    1.,    2.,  ...,  998.,  999., 1000.])"),
    (np.arange(2000).reshape(40, 50), "int64", {},
     "tensor([[   0,    1,    2,  ...,   47,   48,   49],\n"
     "        [  50,   51,   52,  ...,   97,   98,   99],\n"
     "        [ 100,  101,  102,  ...,  147,  148,  149],\n"
     "        ...,\n"
     "        [1850, 1851, 1852,  ..., 1897, 1898, 1899],\n"
     "        [1900, 1901, 1902,  ..., 1947, 1948, 1949],\n"
     "        [1950, 1951, 1952,  ..., 1997, 1998, 1999]])"),
    (np.arange(40), "int64", {},
     "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
     "        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n"
     "        36, 37, 38, 39])"),
    (np.arange(24.).reshape(2, 12) * 1000, "float32", {},
     "tensor([[    0.,  1000.,  2000.,  3000.,  4000.,  5000.,  6000.,  7000.,  8000.,\n"
     "          9000., 10000., 11000.],\n"
     "        [12000., 13000., 14000., 15000., 16000., 17000., 18000., 19000., 20000.,\n"
     "         21000., 22000., 23000.]])"),
    # A suffix that would pass column 80 goes onto its own line, indented 7.
    (np.arange(10) * 1.5, "float64", {"requires_grad": True},
     "tensor([ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n"
     "        12.0000, 13.5000], dtype=torch.float64, requires_grad=True)"),
]


@pytest.mark.parametrize("data,dtype,kw,expected", READABLE,
                         ids=[r[3].split("\n")[0][:40] for r in READABLE])
def test_readable(data, dtype, kw, expected):
    arr = np.asarray(data).astype(NP[dtype])
    assert format_tensor(arr, dtype, **kw) == expected


def test_suffix_wraps_to_new_line():
    arr = (np.arange(9) * 1.5).astype(np.float64)
    got = format_tensor(arr, "float64", requires_grad=True)
    assert got == ("tensor([ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n"
                   "        12.0000], dtype=torch.float64, requires_grad=True)")
    arr = np.arange(7.) * 1.5
    got = format_tensor(arr, "float64", requires_grad=True)
    assert got == ("tensor([0.0000, 1.5000, 3.0000, 4.5000, 6.0000, 7.5000, 9.0000],\n"
                   "       dtype=torch.float64, requires_grad=True)")


# --------------------------------------------------------------------------- views, options


def test_views_match_copies():
    base = np.arange(24, dtype=np.float32).reshape(4, 6) / 7
    for view in (base.T, base[::2, ::-1], base[:, 1], np.broadcast_to(base[0], (3, 6)),
                 base.reshape(2, 3, 4).transpose(2, 0, 1)):
        assert format_tensor(view, "float32") == format_tensor(view.copy(), "float32")
    big = np.broadcast_to(np.float64(2.5), (1000, 1000))
    assert format_tensor(big, "float64") == (
        "tensor([[2.5000, 2.5000, 2.5000,  ..., 2.5000, 2.5000, 2.5000],\n"
        "        [2.5000, 2.5000, 2.5000,  ..., 2.5000, 2.5000, 2.5000],\n"
        "        [2.5000, 2.5000, 2.5000,  ..., 2.5000, 2.5000, 2.5000],\n"
        "        ...,\n"
        "        [2.5000, 2.5000, 2.5000,  ..., 2.5000, 2.5000, 2.5000],\n"
        "        [2.5000, 2.5000, 2.5000,  ..., 2.5000, 2.5000, 2.5000],\n"
        "        [2.5000, 2.5000, 2.5000,  ..., 2.5000, 2.5000, 2.5000]],\n"
        "       dtype=torch.float64)")


def test_printoptions_state():
    assert get_printoptions() == {"precision": 4, "threshold": 1000, "edgeitems": 3,
                                  "linewidth": 80, "sci_mode": None}
    x = np.array([1.12345, 2.5], dtype=np.float32)
    set_printoptions(precision=2, sci_mode=True)
    assert format_tensor(x, "float32") == "tensor([1.12e+00, 2.50e+00])"
    set_printoptions(precision=2)  # like torch, any call resets sci_mode to automatic
    assert format_tensor(x, "float32") == "tensor([1.12, 2.50])"
    set_printoptions(profile="default")
    with printoptions(threshold=5):
        assert format_tensor(np.arange(10), "int64") == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    assert format_tensor(np.arange(10), "int64") == "tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])"
    set_printoptions(profile="full")
    assert "..." not in format_tensor(np.arange(2000), "int64")
    set_printoptions(edgeitems=0, threshold=3)
    assert format_tensor(np.arange(5.), "float32") == "tensor([...], size=(5,))"


def test_format_item():
    assert format_item(0.1, "float32") == "0.10000000149011612"
    assert format_item(np.float64(0.1), "float64") == "0.1"
    assert format_item(2.5, "float16") == "2.5"
    assert format_item(3, "int64") == "3"
    assert format_item(True, "bool") == "True"
    assert format_item(np.array([[float("nan")]], np.float32), "float32") == "nan"


def test_dtype_spellings():
    x = np.array([1.0, 2.0])
    assert format_tensor(x, "torch.float64") == "tensor([1., 2.], dtype=torch.float64)"
    # data in another NumPy dtype is converted to the tensor's dtype
    assert format_tensor(np.array([0.1]), "float16") == "tensor([0.1000], dtype=torch.float16)"
    with pytest.raises(ValueError):
        format_tensor(x, "complex64")


# --------------------------------------------------------------------------- properties

_float_arrays = st.sampled_from([np.float32, np.float64, np.float16]).flatmap(
    lambda dt: hnp.arrays(
        dt, hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5),
        elements=hnp.from_dtype(np.dtype(dt), allow_nan=True, allow_infinity=True,
                                allow_subnormal=True),
    )
)


@settings(max_examples=300, deadline=None)
@given(arr=_float_arrays, grad=st.sampled_from([None, "MulBackward0"]),
       rg=st.booleans())
def test_never_raises(arr, grad, rg):
    name = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64",
            np.dtype(np.float16): "float16"}[arr.dtype]
    s = format_tensor(arr, name, grad_fn=grad, requires_grad=rg)
    assert s.startswith("tensor(") and s.endswith(")")
    assert s.count("[") == s.count("]")
