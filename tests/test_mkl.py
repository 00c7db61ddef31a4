"""gradexpr/mkl.py: MKL where PyTorch uses it, NumPy where it is missing.

The exact results themselves are checked by the recorded programs (tests/programs/exact/mkl_*.gx);
these tests check what holds around them: the library is found where the package declares it, a
missing or refused library leaves every op working (NumPy's results, within rounding of PyTorch's),
and the recordings really depend on MKL (without it they differ)."""
import os
import pathlib
import platform
import subprocess
import sys

import numpy as np

from gradexpr import mkl

EXACT = pathlib.Path(__file__).parent / "programs" / "exact"
MKL_PROGRAMS = sorted(str(p) for p in EXACT.glob("mkl_*.gx"))
# the programs whose fallback agrees within rounding (the LAPACK one also overflows det to inf, where
# PyTorch's LU solve makes the gradient nan and NumPy's inverse makes it inf)
WELL_CONDITIONED = [p for p in MKL_PROGRAMS if "lapack" not in p]


def _check(*args, env_extra):
    env = dict(os.environ, **env_extra)
    return subprocess.run([sys.executable, "-m", "gradexpr", "check", *args, "--plain"], env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_library_is_found_where_the_package_declares_it():
    # pyproject.toml: mkl==2024.2.0 on x86-64 Linux (the version PyTorch 2.13 links); elsewhere none
    declared = sys.platform == "linux" and platform.machine() == "x86_64" and "GRADEXPR_MKL" not in os.environ
    assert mkl.available() == declared
    assert (mkl.elementwise("sin", np.ones(3, np.float32)) is not None) == declared


def test_there_are_mkl_programs_to_check():
    assert len(MKL_PROGRAMS) >= 3 and len(WELL_CONDITIONED) >= 2


def test_without_mkl_every_op_runs_and_agrees_within_rounding():
    result = _check(*WELL_CONDITIONED, "--rtol", "1e-4", "--atol", "1e-5", env_extra={"GRADEXPR_MKL": "0"})
    assert result.returncode == 0, result.stdout + result.stderr


def test_without_mkl_the_recordings_differ():
    # the recordings hold MKL's last bits: NumPy's libm and OpenBLAS do not give them
    result = _check(*MKL_PROGRAMS, env_extra={"GRADEXPR_MKL": "0"})
    assert result.returncode == 1
    assert f"0 passed, {len(MKL_PROGRAMS)} failed" in result.stdout


def test_a_library_that_is_not_there_is_no_error():
    result = _check(*WELL_CONDITIONED, "--rtol", "1e-4", "--atol", "1e-5",
                    env_extra={"GRADEXPR_MKL": "/nonexistent/libmkl_rt.so.2"})
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_result_is_laid_out_as_its_input_and_computed_from_it():
    # TensorIterator gives exp's output its input's strides, and a reduction after it (logsumexp's sum)
    # adds in that memory order; a permuted input is copied into that order first (a copy the call
    # must keep alive: a bare address of a freed copy gave nan)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((2, 3, 4, 5)).transpose(1, 0, 3, 2), rng.standard_normal((3, 4)).T,
              rng.standard_normal((3, 8))[:, ::2], rng.standard_normal((4, 5)).astype(np.float32).T]
    for a in inputs:
        got = mkl.elementwise("tanh", a)
        if not mkl.available():
            assert got is None
            continue
        assert got.shape == a.shape and got.dtype == a.dtype
        assert got.strides == np.empty_like(a).strides
        assert np.allclose(got, np.tanh(a), rtol=1e-6, atol=0)
        assert np.array_equal(got, mkl.elementwise("tanh", np.ascontiguousarray(a)))
