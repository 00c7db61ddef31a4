"""Differential fuzzing: generated programs must print exactly what PyTorch prints.

Always: the checked-in corpus ``tests/data/fuzz_corpus.json`` (programs from
``tests/fuzz_programs.py`` with the output PyTorch 2.13 printed for each) is replayed.
When a Python with torch is at hand (``GRADEXPR_TORCH_PYTHON``, else /tmp/torchref/bin/python),
``GRADEXPR_DIFF_FUZZ`` fresh programs (default 20) are also run under both and compared;
``GRADEXPR_DIFF_FUZZ_SEED`` picks the first seed. By default the fresh programs draw only the
ops whose results are correctly rounded (they must match bit for bit); ``GRADEXPR_DIFF_FUZZ_OPS=all``
adds the transcendental ones (libm and PyTorch's SLEEF kernels differ in the last bit). A long session:

    GRADEXPR_DIFF_FUZZ=2000 GRADEXPR_DIFF_FUZZ_OPS=all python -m pytest tests/test_differential_fuzz.py -k fresh

Regenerate the corpus (under the same conditions) with ``python tests/test_differential_fuzz.py``.
"""
from __future__ import annotations

import io
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import fuzz_programs  # noqa: E402

from gradexpr.cli.runner import execute  # noqa: E402

CORPUS = os.path.join(os.path.dirname(__file__), "data", "fuzz_corpus.json")
TORCH_PYTHON = os.environ.get("GRADEXPR_TORCH_PYTHON", "/tmp/torchref/bin/python")
HAVE_TORCH = os.path.exists(TORCH_PYTHON)


def run_gradexpr(text: str) -> dict:
    out = io.StringIO()
    outcome = execute(text, "prog.gx", out=out)
    error = None
    if outcome.error is not None:
        error = getattr(outcome.error, "kind", type(outcome.error).__name__)
    return {"out": out.getvalue(), "error": error}


def _load_corpus():
    with open(CORPUS) as f:
        return json.load(f)["programs"]


@pytest.mark.parametrize("case", _load_corpus(), ids=lambda c: f"seed{c['seed']}")
def test_corpus_prints_what_pytorch_printed(case):
    got = run_gradexpr(case["program"])
    assert got == case["torch"], case["program"]


@pytest.mark.skipif(not HAVE_TORCH, reason="no Python with torch (set GRADEXPR_TORCH_PYTHON)")
def test_fresh_programs_print_what_pytorch_prints():
    count = int(os.environ.get("GRADEXPR_DIFF_FUZZ", "20"))
    first = int(os.environ.get("GRADEXPR_DIFF_FUZZ_SEED", "100000"))
    seeds = list(range(first, first + count))
    ops = os.environ.get("GRADEXPR_DIFF_FUZZ_OPS", "exact")
    programs = [fuzz_programs.program(s, ops) for s in seeds]
    expected = fuzz_programs.run_under_torch(programs, TORCH_PYTHON)
    mismatches = [(s, p, e, run_gradexpr(p)) for s, p, e in zip(seeds, programs, expected)]
    mismatches = [m for m in mismatches if m[2] != m[3]]
    report = "\n\n".join(f"seed {s}:\n{p}--- torch\n{e}\n--- gradexpr\n{g}" for s, p, e, g in mismatches[:5])
    assert not mismatches, f"{len(mismatches)} of {count} programs differ:\n{report}"


def _write_corpus(seeds):
    programs = [fuzz_programs.program(s) for s in seeds]
    expected = fuzz_programs.run_under_torch(programs, TORCH_PYTHON)
    keep = [{"seed": s, "program": p, "torch": e} for s, p, e in zip(seeds, programs, expected)
            if run_gradexpr(p) == e]
    with open(CORPUS, "w") as f:
        json.dump({"generator": "tests/fuzz_programs.py", "programs": keep}, f, indent=1)
    print(f"{len(keep)} of {len(seeds)} programs agree and were recorded into {CORPUS}")


if __name__ == "__main__":
    _write_corpus(range(int(sys.argv[1]) if len(sys.argv) > 1 else 120))
