"""``gradexpr eval``: a program's target with its value, grad_fn graph, gradients, Jacobian, Hessian.

The command parses its options into ``gradexpr.session``'s ``Bindings`` and ``Request``,
calls ``session.evaluate`` and renders the ``Evaluation`` it returns (``render.py``: rich,
plain text or JSON). It computes nothing itself.
"""
from __future__ import annotations

import sys

import click

from gradexpr.session import Bindings, Evaluation, Request, RequestError, evaluate

from .exitcodes import Exit
from .options import ExpressionCommand, format_options, limit_options, limits_from, resolve_format


def _read_lines(path):
    if path == "-":
        return sys.stdin.read().splitlines(), "<stdin>"
    from .run_cmd import read_source
    text, name = read_source(path)
    return text.splitlines(), name


@click.command("eval", cls=ExpressionCommand)
@click.argument("expr", required=False, metavar="[EXPR | -]")
@click.option("-f", "--file", "file", metavar="FILE", help="read the program from FILE")
@click.option("-v", "--var", "variables", multiple=True, metavar="NAME=VALUE",
              help="bind a variable: an expression (ones(2, 2), [1., 2.], 3.5) or @file.npy|csv|json; "
                   "a floating one is a leaf that requires grad")
@click.option("-c", "--const", "constants", multiple=True, metavar="NAME=VALUE",
              help="bind a constant (never differentiated)")
@click.option("--of", "of", metavar="NAME", help="the target: this name (default: the last expression)")
@click.option("--wrt", multiple=True, metavar="NAME", help="differentiate only with respect to these leaves")
@click.option("--jacobian", is_flag=True, help="show the Jacobian (the default for a non-scalar target)")
@click.option("--grad-output", metavar="VALUE", help="a vector–Jacobian product with VALUE instead of the Jacobian")
@click.option("--mode", type=click.Choice(["reverse", "forward", "auto"]), default="reverse", show_default=True,
              metavar="MODE", help="how the Jacobian is computed: reverse (a row per target element), forward (a column per leaf "
                   "element, re-running the program on dual tensors), auto (forward when the leaves have fewer "
                   "elements than the target)")
@click.option("--jvp", "jvp", multiple=True, metavar="NAME=VALUE",
              help="a Jacobian-vector product in forward mode: leaf NAME's tangent (repeatable; other leaves 0)")
@click.option("--hessian", is_flag=True, help="show the Hessian of a scalar target (f'' of an elementwise one)")
@click.option("--pointwise", is_flag=True,
              help="the target is elementwise in its leaves: show x | f(x) | f'(x) without the Jacobian "
                   "(detected by itself when the Jacobian is diagonal)")
@click.option("--trace", is_flag=True, help="show the backward pass step by step")
@click.option("--check", is_flag=True, help="compare with float64 central differences; exit 1 beyond tolerance")
@click.option("--atol", type=float, default=1e-5, show_default=True, help="--check absolute tolerance")
@click.option("--rtol", type=float, default=1e-3, show_default=True, help="--check relative tolerance")
@click.option("--batch", metavar="FILE|-", help="one expression per line; one JSON object per line")
@format_options
@limit_options
@click.option("--debug", is_flag=True, help="show a Python traceback for errors (for gradexpr developers)")
def eval_(expr, file, variables, constants, of, wrt, jacobian, grad_output, mode, jvp, hessian, pointwise, trace, check, atol,
          rtol, batch, fmt, debug, **kwargs):
    """Evaluate a program, differentiate its target and show it all.

    \b
    The program is EXPR, - (stdin) or -f FILE; its target is its last expression (or --of NAME).
    Shows the value, the grad_fn graph, the leaves' gradients (scalar target), the Jacobian
    (non-scalar target or --jacobian) and, on request, the Hessian, a trace, a gradient check.

    \b
      gradexpr eval "((x + 2) ** 2 * 3).mean()" -v x="ones(2, 2)"
      gradexpr eval "tanh(W @ x + b)" -v W="randn(3, 4)" -v x="ones(4)" -c b="zeros(3)" --jacobian
      gradexpr eval -f model.gx --of loss --hessian
      gradexpr eval --batch exprs.txt -v x="linspace(0, 1, 5)"
    """
    limits = limits_from(kwargs)
    sources = [s for s in (expr, file, batch) if s is not None]
    if len(sources) != 1:
        raise click.UsageError("give exactly one program: EXPR, - (stdin), -f FILE or --batch FILE")
    if batch is not None and fmt not in (None, "json"):
        raise click.UsageError("--batch writes one JSON object per line (--format json)")
    request = Request(of, tuple(wrt), jacobian, grad_output, hessian, trace, check, atol, rtol, pointwise, mode=mode,
                      jvp=tuple(jvp))
    try:
        bindings = Bindings.parse(variables, constants, limits)
    except RequestError as e:
        _request_failed(e, fmt, expr or "", "<expr>")
    if batch is not None:
        sys.exit(_run_batch(batch, bindings, request, limits, debug))
    if file is not None:
        from .run_cmd import read_source
        source, filename = read_source(file)
    elif expr == "-":
        source, filename = sys.stdin.read(), "<stdin>"
    else:
        source, filename = expr, "<expr>"
    fmt = resolve_format(fmt)
    from gradexpr.session import reporting
    # a Jacobian's rows, --check's runs: a bar on a terminal's stderr (not under --json, whose
    # start-up loads no bar)
    if fmt == "json":
        progress = None
    else:
        from .progress import Progress
        progress = Progress()
    try:
        with reporting(progress):
            ev = evaluate(source, filename, bindings, request, limits=limits, debug=debug)
    except RequestError as e:
        if progress is not None:
            progress.close()
        _request_failed(e, fmt, source, filename)
    finally:
        if progress is not None:
            progress.close()
    from . import render
    if fmt == "json":
        sys.stdout.write(render.dumps(render.to_json(ev)) + "\n")
    elif fmt == "plain":
        sys.stdout.write(render.plain(ev))
    else:
        from .rich_view import show
        show(ev)
    sys.stdout.flush()
    _report_error(ev)
    if ev.error is not None:
        sys.exit(int(ev.error_code))
    sys.exit(int(Exit.OK if ev.ok else Exit.RUNTIME))


def _request_failed(e: RequestError, fmt, source: str, filename: str):
    """A bad option value: the error in the diagnostics' style (no usage banner: the command line
    was well formed), and under --json an evaluation object whose ``errors`` holds it; exit 2."""
    from .terminal import write_error
    if resolve_format(fmt) == "json":
        from . import render
        ev = Evaluation(source, filename)
        ev.error, ev.error_code = e, Exit.USAGE
        sys.stdout.write(render.dumps(render.to_json(ev)) + "\n")
        sys.stdout.flush()
    from .diagnostics import request_error_text
    text = request_error_text(e)
    write_error((text if e.error is not None else f"gradexpr eval: {text}") + "\n" +
                (f"hint: {e.hint}\n" if e.hint else ""))
    sys.exit(int(Exit.USAGE))


def _report_error(ev: Evaluation, prefix: str = ""):
    if ev.error is not None:
        from .diagnostics import render
        from .terminal import write_error
        write_error(prefix + render(ev.error, ev.source, ev.filename))
    elif ev.check is not None and not ev.check.ok:
        bad = ", ".join(c.leaf for c in ev.check.leaves if not c.ok)
        sys.stderr.write(f"{prefix}{ev.filename}: gradient check failed for {bad}\n")


def _run_batch(path, bindings: Bindings, request: Request, limits, debug) -> int:
    """One JSON object per non-blank, non-comment line; returns the exit status."""
    from . import render
    lines, name = _read_lines(path)
    failed = False
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        label = f"{name}:{number}"
        # blank lines before the expression so that its errors carry the input's line number
        source = "\n" * (number - 1) + text
        try:
            ev = evaluate(source, name, bindings, request, limits=limits, debug=debug)
        except RequestError as e:
            from .diagnostics import request_error_text
            ev = Evaluation(source, name)
            ev.error, ev.error_code = RequestError(request_error_text(e)), Exit.USAGE
        if ev.error is not None:
            failed = True
            obj = {"line": number, "expression": text, "error": render.error_json(ev)}
        else:
            failed = failed or not ev.ok
            obj = {"line": number, "expression": text, **render.to_json(ev)}
        sys.stdout.write(render.dumps(obj) + "\n")
        sys.stdout.flush()
        if ev.error is not None and not isinstance(ev.error, RequestError):
            _report_error(ev)
        elif isinstance(ev.error, RequestError):
            sys.stderr.write(f"{label}: {ev.error}\n")
    return int(Exit.RUNTIME if failed else Exit.OK)
