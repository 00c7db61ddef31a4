"""The optimisers whose update takes a square root, against PyTorch's recorded steps.

PyTorch computes ``sqrt`` with MKL's vector library, which is not correctly rounded (about one
float32 result in six, one float64 result in a hundred, is the other neighbour); gradexpr's sqrt is
NumPy's, correctly rounded. Every other operation of these updates is PyTorch's to the bit (the
same updates in float64 without that difference are exact in tests/programs/nn/), so here each of
21 steps must agree to within a few ulps, and never drift further."""
import json
from pathlib import Path

import numpy as np
import pytest

from gradexpr import dtypes, optim
from gradexpr import functions as T

DATA = json.loads((Path(__file__).parent / "data" / "nn_optim_cases.json").read_text())


def _steps(name, dtype, options):
    dt = getattr(dtypes, dtype)
    w = T.tensor([0.5, -1.25, 3.0, 1e-3], dtype=dt, requires_grad=True)
    opt = getattr(optim, name)([w], **options)
    out = []
    for i in range(21):
        w.grad = T.tensor(DATA["grads"][i % 4]).to(dt) * (1.0 + 0.1 * i)
        opt.step()
        out.append(np.array(w.tolist(), dtype=dtype))
    return out


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: f"{c['optimizer']}-{c['dtype']}-{len(c['options'])}")
def test_steps_agree_with_pytorch_to_a_few_ulps(case):
    dtype = np.dtype(case["dtype"])
    for step, (mine, theirs) in enumerate(zip(_steps(case["optimizer"], case["dtype"], case["options"]),
                                              case["steps"])):
        theirs = np.array(theirs, dtype=dtype)
        ulps = np.abs(mine - theirs) / np.spacing(np.abs(theirs))
        assert ulps.max() <= 8, f"step {step}: {mine.tolist()} vs PyTorch's {theirs.tolist()}"
