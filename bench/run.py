"""Run every workload of the performance issue in gradexpr and, side by side, in its peers.

    .venv/bin/python -m bench                 # the full run (a few minutes)
    .venv/bin/python -m bench --quick         # tiny sizes, one repetition (seconds)
    .venv/bin/python -m bench --json          # the same figures as JSON
    .venv/bin/python -m bench --only perop,startup --repeat 9

PyTorch is used when a Python that has it is found (``--torch-python``, else
``$GRADEXPR_BENCH_TORCH_PYTHON``, else ``/tmp/torchref/bin/python``); it runs in its
own worker process, so gradexpr's processes never import torch. Thread pools are
pinned (``--threads``, default 1) for every process. Each workload is repeated and
the sides' repetitions are interleaved; the table shows medians, min–max and the
ratio of medians, next to the target.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from protocol import THREAD_VARIABLES, pinned_env
else:
    from .protocol import THREAD_VARIABLES, pinned_env

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
TORCH_CANDIDATES = ("/tmp/torchref/bin/python",)
EXPR = "((x + 2) ** 2 * 3).mean()"
EQUIVALENT_PROGRAM = ("x = ones(2, 2, requires_grad=True)\ny = ((x + 2) ** 2 * 3).mean()\ny.backward()\n"
                      "print(y)\nprint(x.grad)\n")
TORCH_ONE_SHOT = ("import torch\nx = torch.ones(2, 2, requires_grad=True)\ny = ((x + 2) ** 2 * 3).mean()\n"
                  "y.backward()\nprint(y)\nprint(x.grad)\n")

FULL = {
    "perop": {"n": 10_000}, "elementwise": {"n": 10_000_000},
    "mlp": {"batch": 512, "inp": 1024, "hidden": 1024, "out": 256}, "train": {"batch": 32},
    "jacobian": {"n": 1024}, "hessian": {"n": 256}, "parse": {"lines": 1000}, "batch": {"lines": 1000},
    "forward": {"inputs": 16, "outputs": 4096, "batch": 256},
    "scale": {"sizes": [10_000, 100_000, 1_000_000]},
    "function": {"n": 10_000},
}
QUICK = {
    "perop": {"n": 200}, "elementwise": {"n": 10_000}, "mlp": {"batch": 8, "inp": 16, "hidden": 16, "out": 4},
    "train": {"batch": 8},
    "jacobian": {"n": 16}, "hessian": {"n": 8}, "parse": {"lines": 50}, "batch": {"lines": 20},
    "forward": {"inputs": 4, "outputs": 64, "batch": 8},
    "scale": {"sizes": [100, 1000]},
    "function": {"n": 200},
}
ORDER = ("startup", "perop", "elementwise", "mlp", "train", "jacobian", "hessian", "forward", "parse", "batch",
         "scale", "function")


# ====================================================================== measurement helpers
class Samples:
    """Repeated measurements of one quantity (seconds or MiB) of one side."""

    def __init__(self, label: str, unit: str = "s"):
        self.label, self.unit, self.values = label, unit, []

    def add(self, v):
        self.values.append(float(v))

    @property
    def median(self):
        return statistics.median(self.values) if self.values else None

    def as_json(self):
        return {"label": self.label, "unit": self.unit, "median": self.median,
                "min": min(self.values, default=None), "max": max(self.values, default=None),
                "samples": self.values}


def _row(workload, metric, gx: Samples, ref: Samples | None = None, *, max_ratio=None, limit=None, note=""):
    """One line of the table: gradexpr against a reference (a ratio target) or an absolute limit."""
    ratio = None
    if ref is not None and gx.median is not None and ref.median:
        ratio = gx.median / ref.median
    met, target = None, ""
    if max_ratio is not None:
        target = f"≤ {max_ratio:g}×"
        met = None if ratio is None else ratio <= max_ratio
    elif limit is not None:
        target = f"< {_fmt(limit, gx.unit)}"
        met = None if gx.median is None else gx.median < limit
    return {"workload": workload, "metric": metric, "gradexpr": gx.as_json(),
            "reference": ref.as_json() if ref is not None else None, "ratio": ratio, "target": target,
            "met": met, "note": note}


def _fmt(v, unit):
    if v is None:
        return "—"
    if unit == "MiB":
        return f"{v:.0f} MiB"
    if unit == "x":
        return f"{v:.2f}×"
    a = abs(v)
    if a >= 1:
        return f"{v:.2f} s"
    if a >= 1e-3:
        return f"{v * 1e3:.1f} ms"
    return f"{v * 1e6:.2f} µs"


def _cell(s):
    if s is None or s["median"] is None:
        return "—"
    text = _fmt(s["median"], s["unit"])
    if len(s["samples"]) > 1:
        text += f" ({_fmt(s['min'], s['unit'])}–{_fmt(s['max'], s['unit'])})".replace(" s–", "–").replace(
            " ms–", "–").replace(" µs–", "–").replace(" MiB–", "–")
    return text


# ====================================================================== worker processes
class Worker:
    """A long-lived process answering workload requests (see protocol.py)."""

    def __init__(self, python, script, threads):
        self.proc = subprocess.Popen([python, str(BENCH / script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=pinned_env(threads), text=True, cwd=str(REPO))

    def run(self, workload, variant, size):
        self.proc.stdin.write(json.dumps({"workload": workload, "variant": variant, "size": size}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the {variant} worker stopped (exit {self.proc.wait()})")
        answer = json.loads(line)
        if not answer["ok"]:
            raise RuntimeError(answer["error"])
        return answer["metrics"]

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


def _interleaved(sides, workload, size, repeat, metrics):
    """Run each side ``repeat`` times, alternating sides; one Samples per (side, metric)."""
    out = {(label, m): Samples(label) for label, _, _ in sides for m in metrics}
    errors = {}
    for label, worker, variant in sides:            # a warm-up run each (caches, page faults)
        try:
            worker.run(workload, variant, size)
        except RuntimeError as e:
            errors[label] = str(e)
    for _ in range(repeat):
        for label, worker, variant in sides:
            if label in errors:
                continue
            got = worker.run(workload, variant, size)
            for m in metrics:
                out[(label, m)].add(got[m])
    return out, errors


def _process(cmd, env, stdin=None):
    """Wall seconds, CPU seconds and peak memory (MiB) of one whole process; its exit status."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if stdin is not None:
        proc.stdin.write(stdin.encode())
        proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode, err


# ====================================================================== the workloads
class Bench:
    def __init__(self, args):
        self.args = args
        self.sizes = QUICK if args.quick else FULL
        self.repeat = args.repeat
        self.rows = []
        self.notes = []
        self.threads = args.threads
        self.python = sys.executable
        self.torch_python = None if args.no_torch else find_torch_python(args.torch_python)
        self.gx, self.torch = None, None
        self.tmp = tempfile.TemporaryDirectory(prefix="gradexpr-bench-")
        self._has_eval = None

    def reps(self, full, quick=1):
        return self.repeat or (quick if self.args.quick else full)

    # ------------------------------------------------------------------ workers
    def gx_worker(self):
        if self.gx is None:
            self.gx = Worker(self.python, "gx_worker.py", self.threads)
        return self.gx

    def torch_worker(self):
        if self.torch is None and self.torch_python:
            self.torch = Worker(self.torch_python, "torch_worker.py", self.threads)
        return self.torch

    def close(self):
        for w in (self.gx, self.torch):
            if w is not None:
                w.close()
        self.tmp.cleanup()

    # ------------------------------------------------------------------ start-up
    def gradexpr_script(self):
        script = Path(self.python).parent / "gradexpr"
        return [str(script)] if script.exists() else [self.python, "-m", "gradexpr.cli.main"]

    def package_tree(self, name, compiled):
        """A copy of the package laid out as installed (``gradexpr``, ``gradexpr.cli``, ``gradexpr.grammar``),
        with or without bytecode: start-up is measured on it, not on the checkout's __pycache__."""
        root = Path(self.tmp.name) / name
        if root.exists():               # made already (start-up and batch share the bytecode copy)
            return str(root)
        skip = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(REPO / "gradexpr", root / "gradexpr", ignore=skip)
        shutil.copytree(REPO / "cli", root / "gradexpr" / "cli", ignore=skip)
        shutil.copytree(REPO / "grammar", root / "gradexpr" / "grammar", ignore=skip)
        if compiled:
            subprocess.run([self.python, "-m", "compileall", "-q", str(root)], check=True,
                           stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})
        return str(root)

    def has_eval(self):
        if self._has_eval is None:
            proc = subprocess.run(self.gradexpr_script() + ["eval", "--help"], capture_output=True, text=True)
            self._has_eval = proc.returncode == 0 and "--batch" in proc.stdout
        return self._has_eval

    def startup(self):
        base = pinned_env(self.threads)
        base["PYTHONDONTWRITEBYTECODE"] = "1"
        gx = self.gradexpr_script()
        use_eval = self.has_eval()
        if use_eval:
            json_cmd = gx + ["eval", EXPR, "-v", "x=ones(2,2)", "--json"]
            rich_cmd = gx + ["eval", EXPR, "-v", "x=ones(2,2)", "--rich"]
        else:
            prog = Path(self.tmp.name) / "oneshot.gx"
            prog.write_text(EQUIVALENT_PROGRAM)
            json_cmd = rich_cmd = gx + ["run", str(prog)]
            self.notes.append("`gradexpr eval` not available: start-up measured with `gradexpr run` of the "
                              "equivalent program (json and rich rows are the same command)")
        # bytecode: the users' usual case; source: no .pyc at all, so every start compiles gradexpr
        # (the state of this checkout under PYTHONDONTWRITEBYTECODE=1). --quick: the checkout as it is.
        trees = {"as-is": None} if self.args.quick else \
            {"bytecode": self.package_tree("pyc", True), "source": self.package_tree("src", False)}
        commands = {
            "python -c pass": ([self.python, "-c", "pass"], base),
            "python -c 'import numpy'": ([self.python, "-c", "import numpy"], base),
        }
        for mode, tree in trees.items():
            env = {**base, "PYTHONPATH": tree} if tree else base
            commands[f"eval --json ({mode})"] = (json_cmd, env)
            commands[f"eval rich ({mode})"] = (rich_cmd, env)
        if self.torch_python and not self.args.quick:
            commands["torch one-shot"] = ([self.torch_python, "-c", TORCH_ONE_SHOT], base)
        wall = {k: Samples(k) for k in commands}
        peak = {k: Samples(k, "MiB") for k in commands}
        failed = {}
        for rep in range(-1 if not self.args.quick else 0, self.reps(11)):    # -1: a warm-up round
            for name, (cmd, env) in commands.items():
                if name in failed:
                    continue
                w, _cpu, mib, code, err = _process(cmd, env)
                if code != 0:
                    failed[name] = err.strip().splitlines()[-1:] or [f"exit {code}"]
                elif rep >= 0:
                    wall[name].add(w)
                    peak[name].add(mib)
        for name, why in failed.items():
            self.notes.append(f"start-up command '{name}' failed: {why[0]}")
        numpy_ = wall["python -c 'import numpy'"]
        for mode in trees:
            # the targets hold for gradexpr as installed (bytecode: pip compiles it, and an editable
            # checkout caches it on first run); without any .pyc every start compiles gradexpr's
            # 19,000 lines, which no import strategy avoids: shown for scale
            targeted = mode != "source"
            label = f"({mode})" if targeted else f"({mode}: gradexpr without .pyc, for scale)"
            self.rows.append(_row("start-up", f"eval --json, whole process {label}", wall[f"eval --json ({mode})"],
                                  numpy_, max_ratio=1.3 if targeted else None))
            self.rows.append(_row("start-up", f"eval rich, whole process {label}", wall[f"eval rich ({mode})"],
                                  numpy_, max_ratio=1.6 if targeted else None))
        first = next(iter(trees))
        for kind in ("--json", "rich"):
            self.rows.append(_row("start-up", f"eval {kind} peak memory ({first})", peak[f"eval {kind} ({first})"],
                                  limit=60))
        self.rows.append(_row("start-up", "python -c pass (for scale)", wall["python -c pass"], numpy_))
        if "torch one-shot" in wall:
            self.rows.append(_row("start-up", "torch one-shot gradient (for scale)", wall["torch one-shot"], numpy_))

    # ------------------------------------------------------------------ in-process workloads
    def sides(self, workload, gx_variants, torch_variants):
        sides = [(label, self.gx_worker(), variant) for label, variant in gx_variants]
        tw = self.torch_worker()
        if tw is not None:
            sides += [(label, tw, variant) for label, variant in torch_variants]
        return sides

    def measure(self, workload, gx_variants, torch_variants, metrics, repeat):
        sides = self.sides(workload, gx_variants, torch_variants)
        samples, errors = _interleaved(sides, workload, self.sizes[workload], repeat, metrics)
        for label, why in errors.items():
            self.notes.append(f"{workload}: {label} failed: {why}")
        return lambda label, metric: samples.get((label, metric)) if label not in errors else None

    def note_worker_settings(self):
        note = ("the gradexpr worker applies the gradexpr command's process settings (cli/main.py configure_process: "
                "the collector's thresholds for big graphs, freed big blocks kept for reuse); the hand-written NumPy "
                "runs in the same process")
        if note not in self.notes:
            self.notes.append(note)

    def perop(self):
        self.note_worker_settings()
        n = self.sizes["perop"]["n"]
        get = self.measure("perop", [("gradexpr", "gradexpr"), ("gradexpr language", "language"),
                                     ("gradexpr, default gc", "default gc")],
                           [("torch", "torch")], ("forward/op", "backward/op"), self.reps(7))
        for what in ("forward", "backward"):
            m = f"{what}/op"
            self.rows.append(_row("per-op", f"{what} per op, engine API, {n}-op chain of (2,2)",
                                  get("gradexpr", m), get("torch", m), max_ratio=1.0))
        for what in ("forward", "backward"):
            m = f"{what}/op"
            self.rows.append(_row("per-op", f"{what} per op, engine API, Python's default gc (for scale)",
                                  get("gradexpr, default gc", m), get("torch", m)))
        for what in ("forward", "backward"):
            m = f"{what}/op"
            self.rows.append(_row("per-op", f"{what} per op, .gx for loop (vs torch engine)",
                                  get("gradexpr language", m), get("torch", m), max_ratio=3.0))

    def function(self):
        """A chain of calls of a one-line custom autograd.Function, forward and backward, vs torch."""
        n = self.sizes["function"]["n"]
        get = self.measure("function", [("gradexpr", "gradexpr"), ("gradexpr language", "language")],
                           [("torch", "torch")], ("forward/call", "backward/call"), self.reps(7))
        for what in ("forward", "backward"):
            m = f"{what}/call"
            self.rows.append(_row("function", f"{what} per call, engine API, {n}-call chain of a one-line "
                                  "custom Function", get("gradexpr", m), get("torch", m), max_ratio=1.0))
        for what in ("forward", "backward"):
            m = f"{what}/call"
            self.rows.append(_row("function", f"{what} per call, .gx class + for loop (vs torch engine)",
                                  get("gradexpr language", m), get("torch", m)))

    def big(self, workload, title):
        get = self.measure(workload, [("gradexpr", "gradexpr"), ("numpy", "numpy")], [("torch", "torch")],
                           ("fwd+bwd",), self.reps(9))
        self.rows.append(_row(workload, f"{title} fwd+bwd vs hand-written NumPy", get("gradexpr", "fwd+bwd"),
                              get("numpy", "fwd+bwd"), max_ratio=1.1))
        self.note_worker_settings()
        if get("torch", "fwd+bwd") is not None:
            self.rows.append(_row(workload, f"torch {title} fwd+bwd (for scale)", get("torch", "fwd+bwd"),
                                  get("numpy", "fwd+bwd")))

    def elementwise(self):
        self.big("elementwise", f"((x*w+b).tanh()**2).mean(), n={self.sizes['elementwise']['n']:.0e} float32,")

    def mlp(self):
        s = self.sizes["mlp"]
        self.big("mlp", f"((X@W1).relu()@W2).sum(), {s['batch']}×{s['inp']}×{s['hidden']}×{s['out']} float32,")

    def train(self):
        get = self.measure("train", [("gradexpr", "gradexpr")], [("torch", "torch")], ("step",), self.reps(9))
        self.rows.append(_row("train", f"training step: MLP 64-128-10, batch {self.sizes['train']['batch']}, "
                              "CrossEntropyLoss, Adam (vs torch)", get("gradexpr", "step"), get("torch", "step"),
                              max_ratio=1.0))
        self.tutorial_loop()

    def tutorial_loop(self):
        """pytorch/tutorials' examples_nn/polynomial_nn.py (2,000 steps of nn.Linear, MSELoss and SGD by
        hand), whole process: ``gradexpr run`` of the recorded program against the same file run by
        PyTorch's Python (it is plain Python; the oracle's prelude adds nothing it uses)."""
        program = REPO / "tests" / "programs" / "real" / "examples_nn" / "polynomial_nn.gx"
        if not self.torch_python:
            return
        env = pinned_env(self.threads)
        gx_env = env if self.args.quick else {**env, "PYTHONPATH": self.package_tree("pyc", True)}
        commands = {"gradexpr run": (self.gradexpr_script() + ["run", str(program)], gx_env),
                    "torch": ([self.torch_python, str(program)], env)}
        wall = {name: Samples(name) for name in commands}
        for rep in range(-1, self.reps(3)):                     # -1: a warm-up round
            for name, (cmd, cmd_env) in commands.items():
                w, _cpu, _mib, code, err = _process(cmd, cmd_env)
                if code != 0:
                    self.notes.append(f"tutorial loop: {name} exited {code}: {err.strip()[-200:]}")
                    return
                if rep >= 0:
                    wall[name].add(w)
        self.rows.append(_row("train", "examples_nn/polynomial_nn.py, 2,000 steps, whole process (vs torch)",
                              wall["gradexpr run"], wall["torch"], max_ratio=1.0))

    def derivative_matrix(self, workload, title, metric, func_name):
        get = self.measure(workload, [("gradexpr", "gradexpr")],
                           [("torch.func", "torch.func"), ("torch looped", "torch looped")], (metric,),
                           self.reps(7))
        n = self.sizes[workload]["n"]
        self.rows.append(_row(workload, f"{title}, n={n}, vs {func_name}", get("gradexpr", metric),
                              get("torch.func", metric), max_ratio=1.0))
        if get("torch looped", metric) is not None:
            self.rows.append(_row(workload, f"{title}, n={n}, vs torch.autograd.functional (looped)",
                                  get("gradexpr", metric), get("torch looped", metric)))

    def jacobian(self):
        self.derivative_matrix("jacobian", "Jacobian of tanh(W@x)", "jacobian", "torch.func.jacrev")

    def hessian(self):
        self.derivative_matrix("hessian", "Hessian of sum(tanh(W@x)**2)", "hessian", "torch.func.hessian")

    def forward(self):
        """Issue 17's targets: jacfwd (few inputs, many outputs) against jacrev and torch.func.jacfwd;
        per-sample gradients by vmap(grad) against a loop of grad and torch.func."""
        metrics = ("jacfwd", "jacrev", "per-sample", "per-sample loop")
        get = self.measure("forward", [("gradexpr", "gradexpr")], [("torch.func", "torch.func")], metrics,
                           self.reps(7))
        s = self.sizes["forward"]
        shape = f"{s['inputs']} inputs, {s['outputs']} outputs"
        self.rows.append(_row("forward", f"jacfwd of tanh(W@x), {shape}, vs gradexpr's jacrev",
                              get("gradexpr", "jacfwd"), get("gradexpr", "jacrev"), max_ratio=1.0))
        self.rows.append(_row("forward", f"jacfwd of tanh(W@x), {shape}, vs torch.func.jacfwd",
                              get("gradexpr", "jacfwd"), get("torch.func", "jacfwd"), max_ratio=1.0))
        title = f"per-sample grads vmap(grad) of a 2-layer MLP, batch {s['batch']}"
        self.rows.append(_row("forward", f"{title}, vs a Python loop of grad", get("gradexpr", "per-sample"),
                              get("gradexpr", "per-sample loop"), max_ratio=0.1))
        self.rows.append(_row("forward", f"{title}, vs torch.func", get("gradexpr", "per-sample"),
                              get("torch.func", "per-sample"), max_ratio=1.0))

    def parse(self):
        get = self.measure("parse", [("gradexpr", "gradexpr"), ("ast.parse", "python")], [], ("parse",),
                           self.reps(9))
        lines = self.sizes["parse"]["lines"]
        self.rows.append(_row("parse", f"parse a {lines}-line program vs Python's ast.parse",
                              get("gradexpr", "parse"), get("ast.parse", "parse"), max_ratio=3.0))

    def batch(self):
        lines = self.sizes["batch"]["lines"]
        if not self.has_eval():
            self.notes.append("eval --batch: `gradexpr eval` not available, not measured")
            return
        path = Path(self.tmp.name) / "batch.txt"
        path.write_text("".join(f"((x + {i % 7}) ** 2 * {1 + i % 3}).mean()\n" for i in range(lines)))
        cmd = self.gradexpr_script() + ["eval", "--batch", str(path), "-v", "x=ones(2,2)"]
        env = pinned_env(self.threads)
        mode = "as-is"
        if not self.args.quick:
            # on the bytecode-compiled copy, as installed: the checkout's __pycache__ is stale for
            # every file edited since Python last wrote it (PYTHONDONTWRITEBYTECODE=1), and
            # recompiling those on each run is not what users pay
            env["PYTHONPATH"] = self.package_tree("pyc", True)
            mode = "bytecode"
        wall = Samples("gradexpr")
        if not self.args.quick:
            _process(cmd, env)          # warm-up
        for _ in range(self.reps(3)):
            w, _cpu, _mib, code, err = _process(cmd, env)
            if code != 0:
                self.notes.append(f"eval --batch exited {code}: {err.strip()[-200:]}")
                return
            wall.add(w)
        self.rows.append(_row("batch", f"eval --batch of {lines} one-line expressions, whole process ({mode})",
                              wall, limit=1.5))

    def scale(self):
        """Chains of n ops through the engine API, each in a fresh process with the gradexpr
        command's settings (see gx_worker.scale): time and peak memory."""
        sizes = self.sizes["scale"]["sizes"]
        per_op = {}
        for n in sizes:
            total, peak = Samples("gradexpr"), Samples("gradexpr", "MiB")
            for _ in range(1 if n >= 1_000_000 else self.reps(3)):
                proc = subprocess.run([self.python, str(BENCH / "gx_worker.py"), "--scale", str(n)],
                                      capture_output=True, text=True, env=pinned_env(self.threads), cwd=str(REPO))
                if proc.returncode != 0:
                    self.notes.append(f"scale {n}: exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
                    break
                got = json.loads(proc.stdout)
                total.add(got["build"] + got["backward"])
                peak.add(got["peak_mib"])
            if not total.values:
                continue
            per_op[n] = Samples("gradexpr")
            for v in total.values:
                per_op[n].add(v / n)
            self.rows.append(_row("scale", f"chain of {n:,} ops: build + backward", total))
            self.rows.append(_row("scale", f"chain of {n:,} ops: per op", per_op[n]))
            self.rows.append(_row("scale", f"chain of {n:,} ops: peak memory of the process", peak,
                                  limit=2048 if n == max(sizes) else None))
        if len(per_op) >= 2:
            small, big = min(per_op), max(per_op)
            self.rows.append(_row("scale", f"cost per op at {big:,} vs at {small:,} (linear: ≈ 1)", per_op[big],
                                  per_op[small], max_ratio=1.5))

    # ------------------------------------------------------------------ the run
    def run(self, only):
        for name in ORDER:
            if only and name not in only:
                continue
            try:
                getattr(self, name)()
            except Exception as e:          # one broken workload must not lose the others' figures
                self.notes.append(f"{name}: {type(e).__name__}: {e}")
            if not self.args.json:
                print(f"  … {name} done", file=sys.stderr, flush=True)

    def report(self):
        return {
            "machine": {"python": platform.python_version(), "platform": platform.platform(),
                        "cpus": os.cpu_count(), "load_average": os.getloadavg()},
            "threads": {"count": self.threads, "env": {v: str(self.threads) for v in THREAD_VARIABLES},
                        "torch.set_num_threads": self.threads if self.torch_python else None},
            "torch_python": self.torch_python, "quick": self.args.quick, "rows": self.rows, "notes": self.notes,
        }


def find_torch_python(explicit):
    """A Python that can import torch (checked without importing it), or None."""
    candidates = [explicit] if explicit else [os.environ.get("GRADEXPR_BENCH_TORCH_PYTHON"), *TORCH_CANDIDATES]
    for python in candidates:
        if not python or not shutil.which(python):
            continue
        probe = subprocess.run([python, "-c", "import importlib.util, sys; "
                                "sys.exit(importlib.util.find_spec('torch') is None)"], capture_output=True)
        if probe.returncode == 0:
            return python
    if explicit:
        raise SystemExit(f"bench: {explicit} cannot import torch")
    return None


def print_table(report, out=sys.stdout):
    t = report["threads"]
    pins = ", ".join(f"{k}={v}" for k, v in t["env"].items())
    torch_note = f", torch.set_num_threads({t['torch.set_num_threads']})" if t["torch.set_num_threads"] else ""
    m = report["machine"]
    out.write(f"gradexpr bench — Python {m['python']}, {m['cpus']} CPUs, load average "
              f"{' '.join(f'{x:.1f}' for x in m['load_average'])}\n")
    out.write(f"threads: {t['count']} ({pins}{torch_note})\n")
    out.write(f"torch: {report['torch_python'] or 'not found (gradexpr and NumPy only)'}\n\n")
    header = ("workload", "measure", "gradexpr: median (min–max)", "reference: median (min–max)", "ratio",
              "target", "")
    lines = []
    for r in report["rows"]:
        ref = r["reference"]
        ref_text = "—" if ref is None else f"{ref['label']}: {_cell(ref)}"
        gx_label = r["gradexpr"]["label"]
        gx_text = _cell(r["gradexpr"]) if gx_label in ("gradexpr",) else f"{gx_label}: {_cell(r['gradexpr'])}"
        ok = "" if r["met"] is None else ("ok" if r["met"] else "MISSED")
        lines.append((r["workload"], r["metric"], gx_text, ref_text,
                      "" if r["ratio"] is None else f"{r['ratio']:.2f}×", r["target"], ok))
    widths = [max(len(str(x[i])) for x in [header] + lines) for i in range(len(header))]
    for row in [header] + lines:
        out.write("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() + "\n")
    for n in report["notes"]:
        out.write(f"note: {n}\n")


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="tiny sizes, one repetition (a smoke run)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--torch-python", metavar="PYTHON", help="a Python with PyTorch for the reference side")
    p.add_argument("--no-torch", action="store_true", help="do not run the PyTorch side")
    p.add_argument("--threads", type=int, default=1, help="thread count of BLAS/OpenMP and torch (default 1)")
    p.add_argument("--repeat", type=int, default=0, help="repetitions per workload (default: per workload)")
    p.add_argument("--only", default="", help=f"comma-separated workloads out of: {', '.join(ORDER)}")
    args = p.parse_args(argv)
    only = {w.strip() for w in args.only.split(",") if w.strip()}
    unknown = only - set(ORDER)
    if unknown:
        p.error(f"unknown workload(s): {', '.join(sorted(unknown))}")
    bench = Bench(args)
    try:
        bench.run(only)
    finally:
        bench.close()
    report = bench.report()
    if args.json:
        json.dump(report, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print_table(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
