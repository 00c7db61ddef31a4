"""Programs whose output depends on the order of a set of strings (``vocab = set(words)`` in
pytorch/tutorials' NLP tutorials): CPython's order follows the process's string-hashing seed, so
CPython itself prints something else on each run. The oracle records them with PYTHONHASHSEED=0;
gradexpr, run with the same seed, must print the same. They run as subprocesses (the suite's own
process has a random seed), and their recordings are named ``X.gx.hashseed0`` and kept outside tests/programs so that
neither the in-process plugin nor ``gradexpr check tests/programs`` takes them."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).parent / "hash_order"
PROGRAMS = sorted(HERE.glob("*.gx"))


def test_there_are_programs():
    assert PROGRAMS


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.stem)
def test_prints_what_cpython_prints_with_the_same_seed(program):
    env = dict(os.environ, PYTHONHASHSEED="0")
    run = subprocess.run([sys.executable, "-m", "gradexpr", "run", str(program)], capture_output=True,
                         text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout == program.with_name(program.name + ".hashseed0").read_text()
