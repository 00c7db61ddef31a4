"""``gradexpr run FILE|-``: run a program; stdout is exactly what it prints."""
from __future__ import annotations

import sys

import click

from .diagnostics import render
from .exitcodes import Exit
from .options import limit_options, limits_from
from .runner import execute


def read_source(path: str) -> tuple[str, str]:
    """The program text and the name to report it by (``<stdin>`` for ``-``)."""
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    except OSError as e:
        raise click.UsageError(f"cannot read {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise click.UsageError(f"cannot read {path}: not UTF-8 text") from None


@click.command("run")
@click.argument("file", default="-", metavar="[FILE | -]")
@limit_options
@click.option("--debug", is_flag=True, help="show a Python traceback for errors (for gradexpr developers)")
def run(file, debug, **kwargs):
    """Run a program; stdout is what it prints (PyTorch's output for the same program)."""
    limits = limits_from(kwargs)
    source, name = read_source(file)
    outcome = execute(source, name, limits=limits, debug=debug)
    sys.stdout.flush()
    if outcome.error is not None:
        from .terminal import write_error
        write_error(render(outcome.error, source, name))
    sys.exit(int(outcome.code))
