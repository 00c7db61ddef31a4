"""The benchmark suite runs end to end on tiny sizes (``python -m bench --quick``).

Only that it runs and reports every workload is checked here, not the figures: they
depend on the machine. PyTorch is not used (``--no-torch``): tests never import it.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_quick_bench_reports_every_workload_as_json():
    proc = subprocess.run([sys.executable, "-m", "bench", "--quick", "--no-torch", "--json"], cwd=REPO,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["threads"]["count"] == 1
    assert report["threads"]["env"] == {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    assert report["torch_python"] is None and report["quick"] is True
    workloads = {row["workload"] for row in report["rows"]}
    assert {"start-up", "per-op", "elementwise", "mlp", "jacobian", "hessian", "parse", "scale"} <= workloads
    assert not [n for n in report["notes"] if "failed" in n or "Error" in n], report["notes"]
    for row in report["rows"]:
        assert row["gradexpr"]["median"] is not None and row["gradexpr"]["median"] > 0, row
        if row["reference"] is not None and row["reference"]["median"]:
            assert row["ratio"] == row["gradexpr"]["median"] / row["reference"]["median"]
        if row["target"] and row["met"] is not None:
            assert isinstance(row["met"], bool)
    ratio_rows = [r for r in report["rows"] if r["target"].startswith("≤") and r["reference"] is not None]
    assert ratio_rows, "rows against NumPy and ast.parse have ratios even without PyTorch"


def test_bench_prints_a_table_and_says_which_threads_it_pinned():
    proc = subprocess.run([sys.executable, "-m", "bench", "--quick", "--no-torch", "--only", "parse,mlp"],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "threads: 1 (OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1, MKL_NUM_THREADS=1)" in out
    assert "gradexpr: median (min–max)" in out and "vs Python's ast.parse" in out and "hand-written NumPy" in out


def test_unknown_workload_is_a_usage_error():
    proc = subprocess.run([sys.executable, "-m", "bench", "--only", "nope"], cwd=REPO, capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 2 and "unknown workload" in proc.stderr
