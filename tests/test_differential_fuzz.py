"""Differential fuzzing: generated programs must print exactly what PyTorch prints.

Always: the checked-in corpus ``tests/data/fuzz_corpus.json`` (programs from
``tests/fuzz_programs.py`` with the output PyTorch 2.13 printed for each) is replayed.
Fresh programs need a Python with torch (``GRADEXPR_TORCH_PYTHON``, else /tmp/torchref/bin/python),
so they are a maintainer's command, not a test that a machine without torch would skip:

    python tests/test_differential_fuzz.py --fresh N [FIRST_SEED [exact|all]]

runs N fresh programs under both and exits 1 if any differs. ``exact`` (the default) draws only the
ops whose results are correctly rounded (they must match bit for bit); ``all`` adds the
transcendental ones (libm and PyTorch's SLEEF kernels differ in the last bit).

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

from gradexpr import printing  # noqa: E402
from gradexpr.cli.runner import execute  # noqa: E402

CORPUS = os.path.join(os.path.dirname(__file__), "data", "fuzz_corpus.json")
TORCH_PYTHON = os.environ.get("GRADEXPR_TORCH_PYTHON", "/tmp/torchref/bin/python")


def run_gradexpr(text: str) -> dict:
    printing.set_printoptions(profile="default")    # as the torch worker does before each program
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


def fresh_mismatches(count, first, ops):
    """Fresh programs run under PyTorch and gradexpr: the (seed, program, torch, gradexpr) that differ."""
    seeds = list(range(first, first + count))
    programs = [fuzz_programs.program(s, ops) for s in seeds]
    expected = fuzz_programs.run_under_torch(programs, TORCH_PYTHON)
    mismatches = [(s, p, e, run_gradexpr(p)) for s, p, e in zip(seeds, programs, expected)]
    return [m for m in mismatches if m[2] != m[3]]


def _fresh(count, first, ops):
    mismatches = fresh_mismatches(count, first, ops)
    for s, p, e, g in mismatches[:5]:
        print(f"seed {s}:\n{p}--- torch\n{e}\n--- gradexpr\n{g}\n")
    print(f"{len(mismatches)} of {count} programs differ")
    return 1 if mismatches else 0


def _write_corpus(seeds):
    programs = [fuzz_programs.program(s) for s in seeds]
    expected = fuzz_programs.run_under_torch(programs, TORCH_PYTHON)
    keep = [{"seed": s, "program": p, "torch": e} for s, p, e in zip(seeds, programs, expected)
            if run_gradexpr(p) == e]
    with open(CORPUS, "w") as f:
        json.dump({"generator": "tests/fuzz_programs.py", "programs": keep}, f, indent=1)
    print(f"{len(keep)} of {len(seeds)} programs agree and were recorded into {CORPUS}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--fresh":      # --fresh N [FIRST_SEED [exact|all]]
        args = sys.argv[2:]
        sys.exit(_fresh(int(args[0]) if args else 20, int(args[1]) if len(args) > 1 else 100000,
                        args[2] if len(args) > 2 else "exact"))
    _write_corpus(range(int(sys.argv[1]) if len(sys.argv) > 1 else 120))
