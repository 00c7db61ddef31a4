"""The line protocol between the bench driver and its worker processes.

A worker reads one JSON request per line on stdin and answers one JSON line on
stdout: ``{"workload": NAME, "variant": NAME, "size": {...}}`` -> ``{"ok": true,
"metrics": {metric: seconds, ...}}`` (or ``{"ok": false, "error": text}``). Workers
live for the whole run, so ``import torch`` (3 s) is paid once, and the driver can
interleave the repetitions of each side (a load spike on this shared machine then
hits both sides alike).

This module imports neither gradexpr nor torch: both workers use it.
"""
from __future__ import annotations

import gc
import json
import os
import sys
import time

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def pinned_env(threads: int, base=None) -> dict:
    """The environment of a worker: BLAS/OpenMP thread pools pinned to ``threads``."""
    env = dict(os.environ if base is None else base)
    for name in THREAD_VARIABLES:
        env[name] = str(threads)
    return env


def serve(workloads: dict) -> None:
    """Answer requests until stdin closes; ``workloads[name][variant](size) -> metrics``."""
    out = sys.stdout
    sys.stdout = sys.stderr          # stray prints of a workload must not break the protocol
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        # each measurement starts without the previous one's garbage (a graph kept alive by a
        # reference cycle until a rare full collection would slow the next one's allocations)
        gc.collect()
        try:
            run = workloads[request["workload"]][request["variant"]]
            metrics = run(request.get("size", {}))
            answer = {"ok": True, "metrics": metrics}
        except Exception as e:      # reported in the table, the run goes on
            answer = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(answer) + "\n")
        out.flush()


def timed(fn, *args):
    """Seconds taken by ``fn(*args)`` (and its result)."""
    t0 = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - t0, result


def steady_step_seconds(step, warm_up=5, steps=20):
    """Seconds per call of ``step`` once it runs as a loop does: the first calls (an optimiser's state
    made, caches filled, PyTorch's dispatch warmed) are not timed, then the mean of ``steps`` calls.
    A training loop runs thousands of steps: timing the first one alone measured set-up, not steps."""
    for _ in range(warm_up):
        step()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - t0) / steps
