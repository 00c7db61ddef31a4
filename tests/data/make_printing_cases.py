"""Generate tests/data/printing_cases.json from real PyTorch.

Run with a Python that has torch (NOT the project venv):

    /tmp/torchref/bin/python tests/data/make_printing_cases.py

Each case is ``{"id", "dtype", "shape", "values", "tile", "grad_fn",
"requires_grad", "options", "expected"}`` (``tile``, ``grad_fn``,
``requires_grad`` and ``options`` are omitted when false/null):

* ``values`` is the flat C-order data: floats as ``float.hex`` strings (so nan,
  inf and -0.0 survive exactly), ints as ints, bools as bools.  Long ramps are
  stored as ``{"arange": [start, step], "set": [[index, value], ...]}``: element
  ``i`` is ``start + i * step`` computed in float64 (int64 for integer dtypes)
  and then cast to the dtype, with the listed elements overwritten.
* ``tile`` true means ``numpy.resize(values, prod(shape))`` (keeps big,
  summarised tensors small in the file; the data passed to torch is exactly that).
* ``options`` are ``torch.set_printoptions`` keyword arguments (or null).
* ``expected`` is ``repr(t)`` of the torch tensor.
"""
from __future__ import annotations

import json
import math
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "printing_cases.json")

NP = {
    "float32": np.float32, "float64": np.float64, "float16": np.float16,
    "int64": np.int64, "int32": np.int32, "int16": np.int16, "int8": np.int8,
    "uint8": np.uint8, "bool": np.bool_,
}
TORCH = {name: getattr(torch, name) for name in NP}
FLOATS = ("float32", "float64", "float16")
INTS = ("int64", "int32", "int16", "int8", "uint8")

rng = np.random.default_rng(20240613)
cases: list[dict] = []
seen_ids: set[str] = set()


def hexf(v: float) -> str:
    """``float.hex`` without the mantissa's trailing zeros (``0x1.8p+0``); exact."""
    h = float(v).hex()
    if "p" in h:
        mant, exp = h.split("p")
        if "." in mant:
            mant = mant.rstrip("0").rstrip(".")
        h = mant + "p" + exp
    return h


def encode(flat: np.ndarray, dtype: str) -> list:
    if dtype in FLOATS:
        return [hexf(v) for v in flat.tolist()]
    if dtype == "bool":
        return [bool(v) for v in flat.tolist()]
    return [int(v) for v in flat.tolist()]


def decode_list(values: list, dtype: str) -> np.ndarray:
    if dtype in FLOATS:
        return np.array([float.fromhex(v) for v in values], dtype=np.float64).astype(NP[dtype])
    return np.array(values, dtype=NP[dtype])


def decode(values, dtype: str, n: int) -> np.ndarray:
    """Inverse of ``encode``/``encode_compact`` (``n``: number of elements)."""
    if isinstance(values, list):
        return decode_list(values, dtype)
    if dtype in FLOATS:
        start, step = (float.fromhex(v) for v in values["arange"])
        out = np.float64(start) + np.arange(n, dtype=np.float64) * np.float64(step)
    else:
        start, step = values["arange"]
        out = np.int64(start) + np.arange(n, dtype=np.int64) * np.int64(step)
    out = out.astype(NP[dtype])
    for i, v in values.get("set", []):
        out[i] = decode_list([v], dtype)[0]
    return out


def encode_compact(flat: np.ndarray, dtype: str):
    """A ramp (plus a few patched elements) when that is exact, else the plain list."""
    n = flat.size
    if n < 50 or dtype == "bool":
        return encode(flat, dtype)
    wide = flat.astype(np.float64 if dtype in FLOATS else np.int64)
    for i0 in (0, 1, n - 2):
        with np.errstate(all="ignore"):
            step = wide[i0 + 1] - wide[i0]
            start = wide[i0] - i0 * step
        if dtype in FLOATS:
            if not (math.isfinite(start) and math.isfinite(step)):
                continue
            cand = {"arange": [hexf(start), hexf(step)]}
        else:
            cand = {"arange": [int(start), int(step)]}
        with np.errstate(all="ignore"):
            got = decode(cand, dtype, n)
        bad = np.nonzero((got.view(np.uint8).reshape(n, -1)
                          != flat.view(np.uint8).reshape(n, -1)).any(axis=1))[0]
        if len(bad) <= 8:
            if len(bad):
                cand["set"] = [[int(i), encode(flat[i:i + 1], dtype)[0]] for i in bad]
            return cand
    return encode(flat, dtype)


def add(cid: str, data, dtype: str, *, op=None, requires_grad=False, options=None,
        tile_base=None):
    """Record one case.

    ``data``: array-like, already in the values wanted (cast to ``dtype``).
    ``op``: optional callable applied to a leaf with requires_grad=True; the result's
    values and grad_fn name are recorded (the result must keep ``dtype``).
    ``tile_base``: for big arrays, a 1-d base whose ``np.resize`` gives the data.
    """
    assert cid not in seen_ids, cid
    seen_ids.add(cid)
    arr = np.asarray(data).astype(NP[dtype])
    t = torch.from_numpy(arr.copy())
    grad_fn = None
    if op is not None:
        t = op(t.requires_grad_(True))
        grad_fn = type(t.grad_fn).__name__ if t.grad_fn is not None else None
        requires_grad = t.requires_grad and grad_fn is None
    elif requires_grad:
        t.requires_grad_(True)
    assert str(t.dtype) == "torch." + dtype, (cid, t.dtype)
    if options:
        torch.set_printoptions(**options)
    try:
        expected = repr(t)
    finally:
        torch.set_printoptions(profile="default")
    res = t.detach().numpy()
    shape = list(res.shape)
    flat = res.reshape(-1)
    tile = False
    if tile_base is not None and op is None:
        base = np.asarray(tile_base).astype(NP[dtype])
        assert np.array_equal(np.resize(base, flat.size).view(np.uint8),
                              flat.view(np.uint8)) if flat.size else True
        flat, tile = base, True
    values = encode_compact(flat, dtype)
    # Round-trip check.
    back = decode(values, dtype, flat.size)
    if tile:
        back = np.resize(back, int(np.prod(shape)))
    assert back.reshape(shape).tobytes() == res.tobytes(), cid
    case = {"id": cid, "dtype": dtype, "shape": shape, "values": values}
    # Keys at their default (tile false, grad_fn null, requires_grad false,
    # options null) are left out to keep the file small.
    if tile:
        case["tile"] = True
    if grad_fn is not None:
        case["grad_fn"] = grad_fn
    if requires_grad:
        case["requires_grad"] = True
    if options:
        case["options"] = options
    case["expected"] = expected
    cases.append(case)


def tiled(cid, shape, base, dtype, **kw):
    base = np.asarray(base).astype(NP[dtype])
    data = np.resize(base, int(np.prod(shape))).reshape(shape)
    add(cid, data, dtype, tile_base=base, **kw)


def f32(x):
    return np.asarray(x, dtype=np.float32)


nan, inf = math.nan, math.inf

# ----------------------------------------------------------------- conformance corpus
CONF = {
    "conf_int_mode_1d": ([1., 2., 3.], "float32"),
    "conf_int_mode_2d": ([[1., -2.], [30., 4.]], "float32"),
    "conf_int_mode_zero": ([100., 2000., 0.], "float32"),
    "conf_sevens": (np.full((2, 3), 7.), "float32"),
    "conf_zeros3": (np.zeros(3), "float32"),
    "conf_prec_1": ([1.5, 2.25, 3.14159], "float32"),
    "conf_prec_2": ([0.1, 0.2, 0.3], "float32"),
    "conf_prec_3": (f32([1.0, 2.0]) / f32(3), "float32"),
    "conf_prec_4": ([123.456789, 0.5], "float32"),
    "conf_prec_5": ([[0.12345, 10.5], [99.99999, 1.0]], "float32"),
    "conf_f64_1": ([1., 2.], "float64"),
    "conf_f64_0d": (1.5, "float64"),
    "conf_f64_2": ([0.1, 0.2], "float64"),
    "conf_f16_ones": ([1., 1.], "float16"),
    "conf_f16_frac": ([1.5, 2.5], "float16"),
    "conf_int_1": ([1, 2, 3], "int64"),
    "conf_int32": ([1, 2], "int32"),
    "conf_bool": ([True, False], "bool"),
    "conf_arange5": (np.arange(5), "int64"),
    "conf_int_0d": (3, "int64"),
    "conf_bool_0d": (True, "bool"),
    "conf_int_2d": ([[1, -20], [300, 4]], "int64"),
    "conf_long_trunc": ([1, -1], "int64"),
    "conf_nan_inf_1": ([nan, inf, -inf, 1.], "float32"),
    "conf_nan_inf_2": ([1., nan], "float32"),
    "conf_nan_inf_3": ([inf, 2.5], "float32"),
    "conf_nan_inf_4": ([-inf, nan, 0.], "float32"),
    "conf_nan_inf_5": ([inf, inf], "float32"),
    "conf_nan_inf_6": ([nan], "float32"),
    "conf_neg_1": ([-1., 2.], "float32"),
    "conf_neg_2": ([-0.5, 0.25], "float32"),
    "conf_neg_3": ([[-1.5, 2.], [3., -4.25]], "float32"),
    "conf_neg_0d": (-3., "float32"),
    "conf_negzero": ([-0., 0.], "float32"),
    "conf_neg_ones": (-np.ones((2, 2)), "float32"),
    "conf_0d_3": (3., "float32"),
    "conf_0d_2_5": (2.5, "float32"),
    "conf_0d_small": (-1e-6, "float32"),
    "conf_0d_huge": (1e20, "float32"),
    "conf_sci_l1": ([1e8, 1.], "float32"),
    "conf_sci_l2": ([123456789.], "float32"),
    "conf_sci_l3": ([1e10, 2e10], "float32"),
    "conf_sci_l4": ([1000., 0.5], "float32"),
    "conf_sci_l5": ([99999., 0.25], "float32"),
    "conf_sci_l6": ([1e16, 1.5], "float32"),
    "conf_sci_s1": ([1e-5, 1.0], "float32"),
    "conf_sci_s2": ([0.0001, 0.001], "float32"),
    "conf_sci_s3": ([1e-8], "float32"),
    "conf_sci_s4": ([0.001, 0.5], "float32"),
    "conf_sci_s5": ([2.5e-7, -3.0e-6], "float32"),
    "conf_arange1000": (np.arange(1000.), "float32"),
    "conf_arange1001": (np.arange(1001.), "float32"),
    "conf_arange2000_40x50": (np.arange(2000).reshape(40, 50), "int64"),
    "conf_3d_arange24": (np.arange(24.).reshape(2, 3, 4), "float32"),
    "conf_3d_int_zeros": (np.zeros((2, 1, 2)), "int64"),
    "conf_wrap_thirds": (np.arange(30, dtype=np.float32) / np.float32(3), "float32"),
    "conf_wrap_linspace": (torch.linspace(0, 1, 25).numpy(), "float32"),
    "conf_wrap_arange40": (np.arange(40), "int64"),
    "conf_wrap_thousands": (np.arange(24.).reshape(2, 12) * 1000, "float32"),
}
for cid, (data, dtype) in CONF.items():
    add(cid, data, dtype)
add("conf_rg_ones3", np.ones(3), "float32", requires_grad=True)
add("conf_rg_halves", [0.5, 1.5], "float32", requires_grad=True)
add("conf_rg_f64", [1., 2.], "float64", requires_grad=True)
add("conf_rg_0d", 2., "float32", requires_grad=True)
add("conf_rg_zeros22", np.zeros((2, 2)), "float32", requires_grad=True)
add("conf_rg_3d_ones", np.ones((1, 2, 2)), "float32", requires_grad=True)
add("conf_gf_mul", [1., 2.], "float32", op=lambda x: x * 2)
add("conf_gf_sum", [1., 2.], "float32", op=lambda x: (x * 2).sum())
add("conf_gf_add_f64", [1., 2.], "float64", op=lambda x: x + 1)

# ----------------------------------------------------------------- empty tensors
for dtype in NP:
    for shape in [(0,), (0, 3), (2, 0), (2, 0, 3), (1, 0, 0, 2)]:
        add(f"empty_{dtype}_{'x'.join(map(str, shape))}", np.zeros(shape), dtype)
for dtype in FLOATS:
    add(f"empty_rg_{dtype}", np.zeros(0), dtype, requires_grad=True)
    add(f"empty_rg_{dtype}_0x3", np.zeros((0, 3)), dtype, requires_grad=True)
    add(f"empty_gf_{dtype}", np.zeros((0, 2)), dtype, op=lambda x: x * 2)

# ----------------------------------------------------------------- per dtype, random
SHAPES = [(), (1,), (5,), (2, 3), (2, 3, 4), (2, 1, 3, 2), (3, 1), (1, 1, 1)]


def sname(shape):
    return "0d" if shape == () else "x".join(map(str, shape))


for dtype in INTS:
    info = np.iinfo(NP[dtype])
    for shape in SHAPES:
        add(f"int_{dtype}_small_{sname(shape)}",
            rng.integers(max(info.min, -9), 10, size=shape), dtype)
        add(f"int_{dtype}_wide_{sname(shape)}",
            rng.integers(info.min, info.max, size=shape, endpoint=True), dtype)
    add(f"int_{dtype}_extremes", [info.min, 0, info.max], dtype)
    add(f"int_{dtype}_zeros", np.zeros((2, 2)), dtype)
add("int64_big_row", rng.integers(-10**12, 10**12, size=30), "int64")
add("int32_row_50", rng.integers(-999, 1000, size=50), "int32")
add("uint8_row_40", rng.integers(0, 256, size=40), "uint8")

for shape in SHAPES:
    add(f"bool_{sname(shape)}", rng.random(shape) < 0.5, "bool")
add("bool_all_true", np.ones((2, 3), bool), "bool")
add("bool_all_false", np.zeros(4, bool), "bool")
add("bool_0d_false", False, "bool")
add("bool_row_30", rng.random(30) < 0.5, "bool")
add("bool_row_30_true", np.ones(30, bool), "bool")

for dtype in FLOATS:
    for shape in SHAPES:
        for scale_name, scale in [("unit", 1.0), ("e-3", 1e-3), ("e3", 1e3), ("e-6", 1e-6),
                                  ("e9", 1e9)]:
            if dtype == "float16" and scale in (1e9, 1e-6):
                continue
            if scale != 1.0 and shape in ((1,), (3, 1), (1, 1, 1), (2, 3, 4)):
                continue
            add(f"rand_{dtype}_{scale_name}_{sname(shape)}",
                rng.standard_normal(shape) * scale, dtype)
        add(f"randint_{dtype}_{sname(shape)}",
            rng.integers(-50, 51, size=shape).astype(np.float64), dtype)
        add(f"uniform_{dtype}_{sname(shape)}", rng.random(shape), dtype)

# ----------------------------------------------------------------- special values
SPECIALS = {
    "nan_only": [nan], "inf_only": [inf], "ninf_only": [-inf],
    "nan_inf_mix": [nan, inf, -inf], "nan_zero": [nan, 0.], "nonfinite_frac": [nan, 0.5, -inf],
    "nonfinite_int": [inf, 3., -inf, nan], "nonfinite_sci": [1e-6, inf, nan, -1e10],
    "negzero_only": [-0.], "negzero_pair": [-0., 0.], "negzero_one": [-0., 1.],
    "negzero_frac": [-0., 0.5], "negzero_sci": [-0., 1e-7], "zeros": [0., 0., 0.],
    "neg_int_wide": [-1000., 5., 2.], "all_neg": [-1.5, -2.25, -100.],
    "ratio_1000": [1., 1000.], "ratio_1001": [1., 1001.], "max_1e8": [1e8],
    "max_above_1e8": [100000008.], "min_1e-4": [1e-4], "min_1e-4_f64": [1e-4, 1e-3],
    "round_up_width": [9.99996, 1.], "round_up_sci": [9.99996e-5, 1.],
    "round_neg": [-99.99999, 0.5], "exp_3digits_small": [1e-100, 1.],
    "exp_3digits_large": [1e200, -1e-200], "denormal": [1e-310, 1.],
    "huge_int_mode": [1e15, 2.], "half_values": [0.5, 1.5, 2.5, 3.5],
    "tiny_and_one": [1e-30, 1.0], "pi_e": [math.pi, math.e, -math.pi],
}
for name, vals in SPECIALS.items():
    for dtype in FLOATS:
        arr = np.asarray(vals, dtype=np.float64)
        with np.errstate(over="ignore", under="ignore"):
            cast = arr.astype(NP[dtype])
        add(f"special_{name}_{dtype}", cast, dtype)
        if len(vals) == 1:
            add(f"special_{name}_{dtype}_0d", cast.reshape(()), dtype)
add("special_f32_denormal", [1e-40, 1e-45, 2.], "float32")
add("special_f32_max", [3.4028234e38, -3e38, 1.], "float32")
add("special_f16_max", [65504., -65504., 1.], "float16")
add("special_f16_subnormal", [6e-8, 1e-5, 0.5], "float16")
add("special_f16_thirds", [0.1, 1 / 3, 2 / 3, 0.2], "float16")
add("special_f16_0d_third", 1 / 3, "float16")
add("special_f16_2049", [2049., 1.], "float16")
add("special_f32_0.1_0d", 0.1, "float32")
add("special_f64_0.1_0d", 0.1, "float64")
add("special_f32_sci_0d", 12345678912., "float32")
add("special_negzero_2d", [[-0., 0.], [0., -0.]], "float32")
add("special_nan_2d", [[nan, 1.5], [-inf, 2.]], "float64")

# ----------------------------------------------------------------- wide rows / wrapping
for n in (7, 8, 9, 10, 12, 13, 17, 18, 19, 25, 26, 37, 60):
    add(f"wrap_arange_i64_{n}", np.arange(n), "int64")
    add(f"wrap_int_mode_{n}", np.arange(n) * 7.0, "float32")
    add(f"wrap_frac_{n}", rng.standard_normal(n), "float32")
for n in (6, 7, 8, 11, 12):
    add(f"wrap_sci_{n}", rng.standard_normal(n) * 1e6, "float32")
    add(f"wrap_sci_neg_{n}", -rng.random(n) * 1e-6, "float64")
for shape in [(2, 12), (3, 20), (2, 2, 15), (2, 1, 2, 11), (4, 9)]:
    add(f"wrap_nd_{sname(shape)}", rng.standard_normal(shape) * 10, "float32")
    add(f"wrap_nd_int_{sname(shape)}", rng.integers(-1000, 1000, size=shape), "int64")
add("wrap_bool_2x30", rng.random((2, 30)) < 0.5, "bool")
add("wrap_wide_element", [123456789012345., 1.], "float64",
    options={"sci_mode": False})

# ----------------------------------------------------------------- summarised (> threshold)
base_f = rng.standard_normal(31)
base_i = rng.integers(-500, 500, size=29)
for shape in [(1001,), (1200,), (40, 50), (11, 11, 11), (7, 1, 7, 8), (2, 1000), (1000, 2),
              (3, 400), (1, 1001), (6, 200), (7, 150), (13, 1, 80), (2, 2, 2, 130)]:
    tiled(f"summ_f32_{sname(shape)}", shape, base_f, "float32")
    tiled(f"summ_i64_{sname(shape)}", shape, base_i, "int64")
tiled("summ_f64_sci_40x30", (40, 30), base_f * 1e-6, "float64")
tiled("summ_f16_1100", (1100,), base_f, "float16")
tiled("summ_bool_33x33", (33, 33), base_i > 0, "bool")
tiled("summ_int8_1001", (1001,), base_i % 100, "int8")
tiled("summ_int_mode_20x60", (20, 60), np.arange(29.) * 3, "float32")
# a huge value hidden in the middle does not affect the shown formatting
hidden = np.arange(2000.)
hidden[1000] = 1e30
add("summ_hidden_huge", hidden, "float32")
add("summ_hidden_nan", np.where(np.arange(1500) == 700, nan, np.arange(1500) * 0.5),
    "float64")
add("summ_rg", np.arange(1001.), "float32", requires_grad=True)
add("summ_gf", np.arange(1100.).reshape(11, 100) / 8, "float32", op=lambda x: x * 1)

# ----------------------------------------------------------------- grad_fn / requires_grad
OPS = {
    "mul": lambda x: x * 2, "add": lambda x: x + 1, "sub": lambda x: x - 0.5,
    "div": lambda x: x / 3, "neg": lambda x: -x, "exp": lambda x: x.exp(),
    "sum": lambda x: x.sum(), "mean": lambda x: x.mean(), "pow": lambda x: x ** 2,
    "relu": lambda x: x.relu(), "tanh": lambda x: x.tanh(), "clone": lambda x: x.clone(),
    "view": lambda x: x.view(-1), "t": lambda x: x.t(), "select": lambda x: x[0],
    "sigmoid": lambda x: x.sigmoid(), "unsq": lambda x: x.unsqueeze(0),
    "mm": lambda x: x @ x.t(),
}
for dtype in ("float32", "float64"):
    for oname, op in OPS.items():
        add(f"gf_{oname}_{dtype}", rng.standard_normal((2, 3)), dtype, op=op)
for oname in ("mul", "sum", "exp", "neg"):
    add(f"gf_{oname}_float16", rng.standard_normal((2, 3)), "float16", op=OPS[oname])
add("gf_0d_mul", 1.5, "float32", op=lambda x: x * 2)
add("gf_3d_add", rng.standard_normal((2, 2, 3)), "float32", op=lambda x: x + 1)
for dtype in FLOATS:
    for shape in [(), (3,), (2, 2), (2, 1, 2)]:
        add(f"rg_{dtype}_{sname(shape)}", rng.standard_normal(shape), dtype,
            requires_grad=True)


def custom_fn(name):
    """A value-preserving op whose grad_fn is ``<name>Backward``."""

    def fwd(ctx, x):
        return x.clone()

    def bwd(ctx, g):
        return g

    cls = type(name, (torch.autograd.Function,),
               {"forward": staticmethod(fwd), "backward": staticmethod(bwd)})
    return cls.apply


# suffix wrapping: rows whose last line ends near column 80
for n in range(5, 12):
    add(f"sfx_rg_f64_{n}", np.arange(n) * 1.5, "float64", requires_grad=True)
    add(f"sfx_rg_f16_{n}", np.arange(n) * 1.5, "float16", requires_grad=True)
    add(f"sfx_gf_f64_{n}", np.arange(n) * 1.5, "float64", op=lambda x: x * 1)
    add(f"sfx_long_f32_{n}", np.arange(n) * 1.25, "float32",
        op=custom_fn("AVeryLongCustomFunctionName"))
for n in range(60, 72):
    add(f"sfx_int_row_{n}", np.arange(n), "int32")
for rows in (1, 2):
    add(f"sfx_2d_f64_{rows}", np.arange(rows * 9).reshape(rows, 9) * 1.5, "float64",
        requires_grad=True)
add("sfx_2d_f64_gf", np.arange(18.).reshape(2, 9) * 1.5, "float64", op=lambda x: x * 1)
add("sfx_summ_f64", np.arange(1001.), "float64", requires_grad=True)
add("sfx_empty_long", np.zeros((0, 3)), "float16",
    op=custom_fn("SomethingQuiteLongAndWordyToForceAWrapOfTheSuffixLine"))

# ----------------------------------------------------------------- print options
OPTS = [
    {"precision": 2}, {"precision": 0}, {"precision": 8}, {"threshold": 5},
    {"threshold": 5, "edgeitems": 1}, {"edgeitems": 0, "threshold": 5}, {"edgeitems": 0},
    {"linewidth": 40}, {"linewidth": 120}, {"linewidth": 10}, {"sci_mode": True},
    {"sci_mode": False}, {"profile": "short"}, {"profile": "full"},
    {"profile": "short", "precision": 3}, {"threshold": 0},
]
OPT_DATA = {
    "f32_frac": (rng.standard_normal((3, 12)) * 5, "float32"),
    "f32_int": (np.arange(36.).reshape(3, 12), "float32"),
    "f64_sci": (rng.standard_normal(9) * 1e-7, "float64"),
    "i64": (np.arange(30).reshape(5, 6), "int64"),
    "bool": (rng.random(10) < 0.5, "bool"),
    "0d": (np.float32(2.5), "float32"),
    "big": (np.arange(1200.) / 4 - 100, "float32"),
    "3d": (np.arange(60.).reshape(3, 4, 5) - 30, "float32"),
}
for i, opts in enumerate(OPTS):
    for dname, (data, dtype) in OPT_DATA.items():
        if dname == "big" and not ({"threshold", "edgeitems", "profile", "linewidth"} & set(opts)):
            continue
        add(f"opt{i}_{'_'.join(f'{k}-{v}' for k, v in opts.items())}_{dname}", data, dtype,
            options=opts)
add("opt_rg_linewidth40", np.arange(8) * 1.5, "float64", requires_grad=True,
    options={"linewidth": 40})

with open(OUT, "w") as fh:
    json.dump(cases, fh, separators=(",", ":"))
    fh.write("\n")
print(f"wrote {len(cases)} cases, {os.path.getsize(OUT)} bytes -> {OUT}")
