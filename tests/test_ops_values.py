"""Values and gradients of the ops against numbers recorded from PyTorch 2.13.

``tests/data/ops_cases.json`` (written by ``tests/data/make_ops_cases.py`` under the
reference PyTorch) holds, per op family, expressions ``lambda a, b: …`` of the language
with random inputs, PyTorch's outputs and the gradients of each floating input for a
random cotangent. Here each expression is compiled by gradexpr's interpreter and run
on the same inputs. Floating results must agree to 1e-5 (float32) or 1e-12 (float64)
relative to the largest magnitude of the tensor compared, integer and bool results
exactly, and the dtype and shape must be PyTorch's.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from gradexpr.grammar.interpreter import Interpreter
from gradexpr.grammar.parser import parse_expression
from gradexpr.grammar.prelude import make_globals

DATA = os.path.join(os.path.dirname(__file__), "data", "ops_cases.json")
with open(DATA) as f:
    DOC = json.load(f)
FAMILIES = DOC["families"]
RTOL = {"float32": 1e-5, "float64": 1e-12}
NP = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "bool": np.bool_}


def _array(values, dtype, shape=None):
    a = np.array([float(v) if isinstance(v, str) else v for v in values], dtype=NP[dtype])
    return a.reshape(shape) if shape is not None else a


def _close(actual: np.ndarray, expected: np.ndarray, dtype: str) -> bool:
    if dtype not in RTOL:
        return np.array_equal(actual, expected)
    finite = np.isfinite(expected)
    if not np.array_equal(finite, np.isfinite(actual)) or not np.array_equal(np.isnan(expected), np.isnan(actual)):
        return False
    if not np.array_equal(actual[~finite & ~np.isnan(expected)], expected[~finite & ~np.isnan(expected)]):
        return False                                     # infinities: same sign
    if not finite.any():
        return True
    scale = float(np.abs(expected[finite]).max())
    rtol = RTOL[dtype]
    return bool(np.all(np.abs(actual[finite].astype(np.float64) - expected[finite].astype(np.float64))
                       <= rtol * np.maximum(np.abs(expected[finite]), scale) + np.finfo(NP[dtype]).tiny))


def _run_spec(interp, torch, spec):
    """Problems found running every case of ``spec`` (an empty list when all agree)."""
    fn = interp.eval(parse_expression(spec["expr"], "<ops_cases>"))
    problems = []
    for k, case in enumerate(spec["cases"]):
        xs = []
        for values, (shape, dtype) in zip(case["inputs"], spec["inputs"]):
            x = torch.tensor(_array(values, dtype, shape).tolist(), dtype=getattr(torch, dtype))
            if dtype in RTOL and "grads" in case:
                x.requires_grad_()
            xs.append(x)
        out = interp.call(fn, *xs)
        where = f"{spec['expr']} case {k}"
        if str(out.dtype) != "torch." + case["out_dtype"] or list(out.shape) != case["out_shape"]:
            problems.append(f"{where}: {out.dtype} {list(out.shape)}, PyTorch torch.{case['out_dtype']} "
                            f"{case['out_shape']}")
            continue
        expected = _array(case["out"], case["out_dtype"], case["out_shape"])
        if not _close(out.detach().numpy(), expected, case["out_dtype"]):
            problems.append(f"{where}: value\n{out.detach().numpy()}\nPyTorch\n{expected}")
            continue
        if "grads" not in case:
            continue
        cot = torch.tensor(_array(case["cotangent"], case["out_dtype"], case["out_shape"]).tolist(),
                           dtype=out.dtype)
        diff = [x for x in xs if x.requires_grad]
        grads = torch.autograd.grad(out, diff, cot, allow_unused=True)
        for i, (g, want, x) in enumerate(zip(grads, case["grads"], diff)):
            if (g is None) != (want is None):
                problems.append(f"{where}: gradient {i} is {g}, PyTorch {want}")
            elif g is not None:
                dtype = str(x.dtype).replace("torch.", "")
                expected = _array(want, dtype, list(x.shape))
                if not _close(g.numpy(), expected, dtype):
                    problems.append(f"{where}: gradient {i}\n{g.numpy()}\nPyTorch\n{expected}")
    return problems


@pytest.fixture(scope="module")
def interp():
    return Interpreter(make_globals(), filename="<ops_cases>")


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family_matches_pytorch(family, interp):
    torch = interp.globals["torch"]
    problems = []
    for spec in FAMILIES[family]:
        problems += _run_spec(interp, torch, spec)
    assert not problems, f"{len(problems)} disagreements with PyTorch:\n" + "\n".join(problems[:20])


def test_every_family_has_a_few_hundred_recorded_cases():
    counts = {family: sum(len(s["cases"]) for s in specs) for family, specs in FAMILIES.items()}
    assert set(counts) >= {"arithmetic", "unary", "reductions", "linalg", "shape", "nn", "comparison"}
    assert min(counts.values()) >= 200, counts
    assert DOC["torch_version"].startswith("2.13")


def test_the_comparison_is_strict_enough_to_notice_a_wrong_value():
    expected = np.array([1.0, -2.0, 3.0], np.float32)
    assert _close(expected * (1 + 1e-6), expected, "float32")
    assert not _close(expected * (1 + 1e-4), expected, "float32")
    assert not _close(np.array([1.0, np.nan, 3.0], np.float32), expected, "float32")
    assert not _close(np.array([1.0, 2.0 + 1e-9, 3.0]), np.array([1.0, 2.0, 3.0]), "float64")
