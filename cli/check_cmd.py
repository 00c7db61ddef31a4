"""``gradexpr check PATH...``: regression-test programs against their recorded behaviour.

The convention is that of ``../shared/conformance``. Beside a program ``X.gx``:

* ``X.gx.out`` -- the stdout it must print (every ``0x…`` address is normalised on both sides);
* ``X.gx.err`` -- the ``Type: message`` line it must fail with (exit status 1); its
  stdout up to the failure is still compared with ``X.gx.out`` (empty if there is none).

A program with neither file is a test only if it contains ``assert`` statements: it passes
when it exits 0, and its stdout is not compared. One with no recording and no ``assert``
fails ("nothing to check"), so a program committed without its ``.out`` cannot pass unseen.
A failing ``assert`` fails its file unless ``X.gx.err`` expects that very ``AssertionError``.

Programs run in this process, each from the state a new ``gradexpr run`` would start in:
fresh globals, grad mode on, default print options, an unseeded default random generator.
``--jobs N`` spreads them over N worker processes (the engine's random generator and print
options are per process, so threads could not isolate them).
"""
from __future__ import annotations

import builtins
import contextlib
import contextvars
import difflib
import fnmatch
import functools
import io
import os
import posixpath
import re
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import click

from .exitcodes import Exit
from .options import format_options, limit_options, limits_from, resolve_format

ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_ASSERT = re.compile(r"(?m)(?:^|;)[ \t]*assert\b")
STDOUT_DIFFERS = "stdout differs:"


def normalise(text: str) -> str:
    """Text as it is compared and recorded: ``\\n`` line ends, addresses written ``0x…``."""
    return ADDRESS.sub("0x…", text.replace("\r\n", "\n"))


def recordings(program: Path) -> tuple[Path, Path]:
    """The expected-stdout and expected-error files of ``program``."""
    return program.with_name(program.name + ".out"), program.with_name(program.name + ".err")


def has_asserts(source: str) -> bool:
    return _ASSERT.search(source) is not None


def is_test_program(program: Path) -> bool:
    """Whether ``program`` is a test: it has a recording or contains an ``assert``."""
    out, err = recordings(program)
    if out.exists() or err.exists():
        return True
    try:
        return has_asserts(program.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return False


# ------------------------------------------------------------------------ running

@dataclass
class Run:
    """What one program did: its stdout, its stderr as ``gradexpr run`` renders it, its exit status."""
    source: str
    stdout: str
    stderr: str
    code: int
    error: BaseException | None
    seconds: float


def run_program(program: Path, limits=None, name: str | None = None) -> Run:
    """Run ``program`` in this process from the state a new process starts in.

    Grad mode and the active limits live in ContextVars: the program runs in a copy of our
    context (not an empty one, which would also lose NumPy's quiet float errors) with grad
    mode enabled, so what it sets (``torch.set_grad_enabled(False)``) stays out of ours.
    Print options are restored afterwards; the default generator is reseeded unpredictably,
    as in a new process. Warnings are shown afresh (``catch_warnings``).
    """
    from gradexpr import printing, rng as random
    from gradexpr.limits import Limits

    from .diagnostics import render
    from .runner import execute

    _warm_up()
    name = name or str(program)
    try:
        source = program.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = getattr(e, "strerror", None) or "not UTF-8 text"
        return Run("", "", f"{name}: cannot read: {reason}\n", int(Exit.USAGE), None, 0.0)
    out, err = io.StringIO(), io.StringIO()
    random.default_generator.seed()
    _restart_module_hook_ids()
    start = time.perf_counter()
    with printing.printoptions(profile="default"), warnings.catch_warnings(), \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        warnings.simplefilter("default")
        outcome = contextvars.copy_context().run(_with_grad_enabled, execute, source, name, out=out,
                                                 limits=limits or Limits.from_env())
    seconds = time.perf_counter() - start
    stderr = err.getvalue()
    if outcome.error is not None:
        stderr += render(outcome.error, source, name)
    return Run(source, out.getvalue(), stderr, int(outcome.code), outcome.error, seconds)


def _restart_module_hook_ids():
    """Module hooks are numbered from 0 in a new process (a program prints ``module._forward_pre_hooks``);
    torch.nn is loaded only by the programs that use it."""
    module = sys.modules.get("gradexpr.nn.module")
    if module is not None:
        module.RemovableHandle._next_id = 0


def _with_grad_enabled(fn, *args, **kwargs):
    from gradexpr.graph import enable_grad
    with enable_grad():
        return fn(*args, **kwargs)


def error_line(run: Run) -> str | None:
    """The ``Type: message`` line to record in ``X.gx.err`` for a failed run."""
    from gradexpr import errors
    return errors.describe(run.error) if run.error is not None else None


# ------------------------------------------------------------------------ judging

@dataclass
class Result:
    """The verdict on one program, as reported in the table, ``--json`` and JUnit."""
    file: str
    passed: bool
    seconds: float
    exit_code: int
    problems: list[str] = field(default_factory=list)
    diff: str = ""
    stdout: str = ""
    updated: list[str] = field(default_factory=list)

    @property
    def result(self) -> str:
        return "pass" if self.passed else "fail"

    def as_json(self) -> dict:
        return {"file": self.file, "result": self.result, "seconds": round(self.seconds, 4),
                "exit_code": self.exit_code, "problems": self.problems, "diff": self.diff,
                "updated": self.updated}

    def explanation(self) -> str:
        """Every problem, the stdout diff under its own: the text shown for a failure."""
        return "\n".join(p + "\n" + self.diff.rstrip("\n") if p == STDOUT_DIFFERS else p
                         for p in self.problems)


def judge(program: Path, run: Run, name: str, tolerance=None) -> Result:
    """Compare ``run`` with the recordings beside ``program`` (numbers within ``tolerance``, an
    ``(rtol, atol)`` pair, when given)."""
    out_path, err_path = recordings(program)
    problems, diff = [], ""
    if out_path.exists() or err_path.exists():
        expected = normalise(out_path.read_text(encoding="utf-8")) if out_path.exists() else ""
        got = normalise(run.stdout)
        if got != expected and not (tolerance and same_within(got, expected, *tolerance)):
            diff = "".join(difflib.unified_diff(
                _diff_lines(expected), _diff_lines(got),
                f"{out_path.name} (expected)" if out_path.exists() else "(no .out: no output expected)",
                "stdout (actual)"))
            problems.append(STDOUT_DIFFERS)
    elif not has_asserts(run.source) and run.code == Exit.OK:
        problems.append(f"nothing to check: no {out_path.name}, no {err_path.name} and no assert "
                        f"(record the output with gradexpr check --update {name})")
    if err_path.exists():
        line = err_path.read_text(encoding="utf-8").strip()
        if run.code != Exit.RUNTIME:
            problems.append(f"expected exit status 1 with `{line}`, got {run.code}"
                            + (f":\n{run.stderr.rstrip()}" if run.stderr.strip() else ""))
        elif line not in normalise(run.stderr):
            problems.append(f"expected the error `{line}`; the program failed with:\n{run.stderr.rstrip()}")
    elif isinstance(run.error, builtins.AssertionError):
        problems.append(f"an assert failed:\n{run.stderr.rstrip()}")
    elif run.code != Exit.OK:
        problems.append(f"exit status {run.code} (no {err_path.name} expects an error):\n{run.stderr.rstrip()}")
    return Result(name, not problems, run.seconds, run.code, problems, diff, run.stdout)


_NUMBER = re.compile(r"[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf\b|nan\b)")


def same_within(got: str, expected: str, rtol: float, atol: float) -> bool:
    """Whether two outputs differ only in their numbers, each within ``atol + rtol * |expected|``.

    For recordings made with real PyTorch, whose last bits differ from ours where the order
    of a sum differs (matrix products). The text between the numbers must be the same, but
    for runs of spaces (PyTorch pads a column to its widest number)."""
    a, b = _NUMBER.split(got), _NUMBER.split(expected)
    if len(a) != len(b) or any(re.sub(r"[ \t]+", " ", x) != re.sub(r"[ \t]+", " ", y) for x, y in zip(a, b)):
        return False
    for x, y in zip(_NUMBER.findall(got), _NUMBER.findall(expected)):
        fx, fy = float(x), float(y)
        if fx != fx and fy != fy:
            continue
        if not abs(fx - fy) <= atol + rtol * abs(fy):
            return False
    return True


def _diff_lines(text: str) -> list[str]:
    """Lines for ``unified_diff``, a missing last newline marked as ``diff`` and git mark it."""
    lines = text.splitlines(True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def record(program: Path, run: Run, accept_errors: bool = False) -> tuple[list[str], str | None]:
    """Write ``X.gx.out``/``X.gx.err`` from ``run``: (the names of the files that changed, why
    nothing was recorded).

    An empty ``X.gx.out`` is not created beside an ``X.gx.err`` (no ``.out`` means no output).

    A syntax error (or another exit but 0 and 1) is never recorded, and a new runtime error
    (a failing assert included: no ``X.gx.err`` expects one yet) only with ``accept_errors``:
    ``--update`` must not turn a crash into a test that expects it unless asked.
    """
    out_path, err_path = recordings(program)
    if run.code not in (Exit.OK, Exit.RUNTIME):
        return [], f"not recorded: exit status {run.code} is never recorded"
    if run.code == Exit.RUNTIME and not err_path.exists() and not accept_errors:
        return [], (f"not recorded: it now fails with `{error_line(run)}`; "
                    "--update --accept-errors records a new error as expected")
    changed = []

    def write(path: Path, text: str):
        if not path.exists() or normalise(path.read_text(encoding="utf-8")) != text:
            changed.append(path.name + ("" if path.exists() else " (new)"))
            path.write_text(text, encoding="utf-8", newline="")

    stdout = normalise(run.stdout)
    if stdout or out_path.exists() or run.code != Exit.RUNTIME:   # no .out beside a .err: no output
        write(out_path, stdout)
    if run.code == Exit.RUNTIME:
        write(err_path, error_line(run) + "\n")
    elif err_path.exists():
        err_path.unlink()
        changed.append(err_path.name + " (removed)")
    return changed, None


def check_file(program: str, name: str, limits=None, update: bool = False, accept_errors: bool = False,
               tolerance=None) -> Result:
    """Run one program and judge it (recording it first with ``update``). Picklable, for workers."""
    path = Path(program)
    run = run_program(path, limits, name)
    updated, refused = record(path, run, accept_errors) if update else ([], None)
    result = judge(path, run, name, tolerance)
    result.updated = [posixpath.join(posixpath.dirname(name), f) for f in updated]
    if refused:
        result.problems.insert(0, refused)
        result.passed = False
    return result


# ------------------------------------------------------------------------ selecting

def discover(paths) -> list[tuple[Path, str]]:
    """``(program, display name)`` for each path: a file as given, a folder's ``*.gx`` recursively
    (skipping hidden folders), in sorted order, each file once."""
    found, seen = [], set()
    for given in paths:
        root = Path(given)
        if root.is_dir():
            programs = []
            for folder, dirs, files in os.walk(root):
                dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
                programs += [Path(folder) / f for f in files if f.endswith(".gx")]
            programs.sort()
        elif root.exists():
            programs = [root]
        else:
            raise click.UsageError(f"no such file or folder: {given}")
        for p in programs:
            key = p.resolve()
            if key not in seen:
                seen.add(key)
                found.append((p, display_name(p)))
    return found


def display_name(program: Path) -> str:
    """The path relative to the working folder when it is inside it, else as found."""
    try:
        return program.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return program.as_posix()


def selected(name: str, patterns) -> bool:
    """``-k``: a pattern with ``*?[`` is a glob on the path, any other a substring of it."""
    if not patterns:
        return True
    return any(fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(Path(name).name, p)
               if any(c in p for c in "*?[") else p in name for p in patterns)


def run_all(programs, limits, update: bool, jobs: int, accept_errors: bool = False, tolerance=None):
    """Yield each program's Result, in order, running them in ``jobs`` worker processes."""
    tasks = [(str(p), name, limits, update, accept_errors, tolerance) for p, name in programs]
    _warm_up()
    if jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            yield check_file(*task)
        return
    import concurrent.futures
    with concurrent.futures.ProcessPoolExecutor(max_workers=min(jobs, len(tasks))) as pool:
        yield from pool.map(check_file, *zip(*tasks))


@functools.cache
def _warm_up() -> None:
    """Import the engine and build the parser once, before timing anything (forked workers
    inherit them), and in our own context: importing the engine sets NumPy's quiet float
    errors, which NumPy keeps in a ContextVar, so an import inside a program's context copy
    would be forgotten after that program."""
    from gradexpr.grammar import interpreter, prelude  # noqa: F401
    from .runner import parse
    parse("0\n", "<warm-up>")
    prelude.make_globals()


# ------------------------------------------------------------------------ reporting

def write_junit(results, path: str, seconds: float) -> None:
    """A JUnit XML report: one testsuite, one testcase per program, a <failure> with the details."""
    import xml.etree.ElementTree as ET
    failures = sum(not r.passed for r in results)
    suites = ET.Element("testsuites", name="gradexpr check", tests=str(len(results)),
                        failures=str(failures), errors="0", time=f"{seconds:.3f}")
    suite = ET.SubElement(suites, "testsuite", name="gradexpr check", tests=str(len(results)),
                          failures=str(failures), errors="0", skipped="0", time=f"{seconds:.3f}")
    for r in results:
        folder, _, base = r.file.rpartition("/")
        case = ET.SubElement(suite, "testcase", classname=folder.replace("/", ".") or ".",
                             name=base, file=r.file, time=f"{r.seconds:.3f}")
        if not r.passed:
            failure = ET.SubElement(case, "failure", message=r.problems[0].splitlines()[0])
            failure.text = r.explanation()
            ET.SubElement(case, "system-out").text = r.stdout
    ET.indent(suites)
    with open(path, "wb") as f:
        ET.ElementTree(suites).write(f, encoding="utf-8", xml_declaration=True)


def summary_line(results, seconds: float) -> str:
    failed = sum(not r.passed for r in results)
    return f"{len(results) - failed} passed, {failed} failed in {seconds:.2f}s"


class PlainReport:
    """The plain report, written as the programs finish (a pipe or a CI log shows progress): a
    line per program (``-q``: per failing one), then the failures explained and the summary."""

    def __init__(self, names, verbose: bool = True, echo=click.echo):
        self.width = max([len("file")] + [len(n) for n in names])
        self.verbose = verbose
        self.echo = echo
        self.headed = False

    def add(self, r) -> None:
        if not (self.verbose or not r.passed):
            return
        if not self.headed:
            self.echo(f"{'file':<{self.width}}  result  {'time':>7}")
            self.headed = True
        self.echo(f"{r.file:<{self.width}}  {r.result:<6}  {r.seconds:>6.2f}s")

    def finish(self, results, seconds: float, update: bool) -> None:
        for r in results:
            if not r.passed:
                self.echo(f"\n=== FAIL {r.file}")
                self.echo(r.explanation())
        if update:
            report_updates(results, self.echo)
        self.echo(summary_line(results, seconds))


def report_rich(results, seconds: float, update: bool, verbose: bool = True) -> None:
    from rich.table import Table
    from rich.text import Text

    from .terminal import console as terminal_console
    console = terminal_console()
    table = Table()
    table.add_column("file", overflow="fold")
    table.add_column("result")
    table.add_column("time", justify="right")
    listed = results if verbose else [r for r in results if not r.passed]
    if listed:
        console.print(table)
    for r in listed:
        table.add_row(r.file, Text("pass", "green") if r.passed else Text("FAIL", "bold red"),
                      f"{r.seconds:.2f}s")
    for r in results:
        if r.passed:
            continue
        console.rule(Text(f"FAIL {r.file}", "bold red"), align="left")
        text = Text()
        for line in r.explanation().splitlines():
            style = ("green" if line.startswith("+") and not line.startswith("+++") else
                     "red" if line.startswith("-") and not line.startswith("---") else
                     "cyan" if line.startswith("@@") else "")
            text.append(line + "\n", style)
        console.print(text, end="")
    if update:
        report_updates(results, lambda s: console.print(s, markup=False))
    failed = any(not r.passed for r in results)
    console.print(Text(summary_line(results, seconds), "bold red" if failed else "bold green"))


def report_updates(results, echo) -> None:
    """After ``--update``: each recording written or removed, then how many."""
    changed = [f for r in results for f in r.updated]
    for f in changed:
        echo(f"updated {f}")
    echo(f"{len(changed)} recording{'s' if len(changed) != 1 else ''} changed" if changed
         else "no recording changed")


# ------------------------------------------------------------------------ the command

def _format_options(fn):
    return format_options(fn, default_help="rich on a terminal, plain when piped; json: one object per line")


@click.command("check")
@click.argument("paths", nargs=-1, type=click.Path(), metavar="[PATH...]")
@click.option("-v", "--verbose", is_flag=True, help="list every program (default: the failures and a summary)")
@click.option("--update", is_flag=True, help="record X.gx.out / X.gx.err from the current behaviour "
              "(a new error only with --accept-errors)")
@click.option("--accept-errors", is_flag=True,
              help="with --update, record a program's new runtime error as expected (X.gx.err)")
@click.option("--rtol", type=click.FloatRange(min=0), default=None, metavar="R",
              help="compare the numbers in outputs within atol + rtol*|expected| (default: exactly)")
@click.option("--atol", type=click.FloatRange(min=0), default=None, metavar="A",
              help="absolute tolerance of --rtol (default 0; alone, it compares with rtol 0)")
@click.option("-k", "patterns", multiple=True, metavar="PATTERN",
              help="only the files whose path contains PATTERN (a glob if it has * ? [); repeatable")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=1, show_default=True,
              help="run N programs at a time in worker processes (0: one per CPU)")
@click.option("--junit-xml", type=click.Path(dir_okay=False, writable=True), metavar="FILE",
              help="also write a JUnit XML report to FILE")
@_format_options
@limit_options
def check(paths, verbose, update, accept_errors, rtol, atol, patterns, jobs, junit_xml, fmt, **kwargs):
    """Run each program and compare it with its recordings.

    \b
    PATH: a .gx file, or a folder searched recursively for *.gx (default: .).
    X.gx.out  the stdout X.gx must print (0x… addresses normalised)
    X.gx.err  the `Type: message` line it must fail with (exit status 1)
    A program with neither passes if it has asserts and exits 0.

    Exit status: 0 when every program passes, 1 otherwise, 2 for a usage error.
    """
    limits = limits_from(kwargs)
    if accept_errors and not update:
        raise click.UsageError("--accept-errors goes with --update")
    tolerance = None if rtol is None and atol is None else (rtol or 0.0, atol or 0.0)
    programs = [(p, name) for p, name in discover(paths or (".",)) if selected(name, patterns)]
    if not programs:
        raise click.UsageError("no .gx programs found" + (" matching -k " + " ".join(patterns) if patterns else ""))
    fmt = resolve_format(fmt)
    start = time.perf_counter()
    results = []
    stopped = False
    from .progress import Progress
    from .terminal import is_terminal
    plain = PlainReport([name for _, name in programs], verbose) if fmt == "plain" else None
    # (plain lines stream as programs finish: no bar between them on the same terminal)
    bar = len(programs) > 1 and is_terminal(sys.stderr) and not (plain and is_terminal(sys.stdout))
    progress = Progress(enabled=bar, delay=0)
    try:
        for result in run_all(programs, limits, update, jobs or os.cpu_count() or 1, accept_errors, tolerance):
            results.append(result)
            progress.update("checking", len(results), len(programs), result.file)
            if plain is not None:
                plain.add(result)
            if fmt == "json":
                import json
                click.echo(json.dumps(result.as_json(), ensure_ascii=False))
    except KeyboardInterrupt:       # Ctrl-C: report what finished, then exit 130
        stopped = True
    finally:
        progress.close()
    seconds = time.perf_counter() - start
    if results and plain is not None:
        plain.finish(results, seconds, update)
    elif results and fmt == "rich":
        report_rich(results, seconds, update, verbose=verbose)
    if junit_xml and results:
        write_junit(results, junit_xml, seconds)
    if stopped:
        sys.stdout.flush()
        sys.stderr.write(f"\ninterrupted: {len(results)} of {len(programs)} programs checked\n")
        sys.exit(int(Exit.INTERRUPTED))
    sys.exit(int(Exit.OK if all(r.passed for r in results) else Exit.RUNTIME))
