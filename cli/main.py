"""The ``gradexpr`` command: a thin Click group whose subcommands load on demand.

Start-up matters (a one-shot ``gradexpr eval`` should cost little more than
importing NumPy), so each subcommand's module is imported only when it runs.
"""
from __future__ import annotations

import importlib
import sys

import click

from gradexpr import __version__

_COMMANDS = {
    "run": ("gradexpr.cli.run_cmd", "run", "Run a program; stdout is what it prints."),
    "eval": ("gradexpr.cli.eval_cmd", "eval_", "Evaluate, differentiate and show an expression."),
    "check": ("gradexpr.cli.check_cmd", "check", "Regression-test programs against recorded output."),
    "graph": ("gradexpr.cli.graph_cmd", "graph", "Draw the autograd graph of an expression."),
    "ops": ("gradexpr.cli.ops_cmd", "ops", "List the operations: name, node name, differentiable inputs."),
    "repl": ("gradexpr.cli.repl_cmd", "repl", "An interactive session (also plain gradexpr on a terminal)."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return [name for name, (mod, _, _) in _COMMANDS.items() if importlib.util.find_spec(mod) is not None]

    def get_command(self, ctx, name):
        entry = _COMMANDS.get(name)
        if entry is None:
            return None
        module, attr, _ = entry
        try:
            return getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError:
            return None

    def resolve_command(self, ctx, args):
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as e:
            if args and not args[0].startswith("-"):
                from .suggest import did_you_mean
                hint = did_you_mean(args[0], _COMMANDS)
                if hint:
                    e.message += f" ({hint[0].upper() + hint[1:]})"
            raise

    def format_commands(self, ctx, formatter):
        rows = [(name, help_) for name, (mod, _, help_) in _COMMANDS.items()
                if importlib.util.find_spec(mod) is not None]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


import importlib.util  # noqa: E402  (used by LazyGroup)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]}, invoke_without_command=True)
@click.version_option(__version__, "--version", prog_name="gradexpr")
@click.option("--color", "--colour", type=click.Choice(("auto", "always", "never")), default="auto", is_eager=True,
              expose_value=False, callback=lambda ctx, param, value: _set_colour(value),
              help="colour the output: auto (a terminal, unless NO_COLOR; FORCE_COLOR forces it), always, never")
@click.pass_context
def cli(ctx):
    """gradexpr — PyTorch's autograd for expressions typed in a shell.

    \b
    gradexpr run prog.gx            run a program (or - for stdin)
    gradexpr eval "EXPR" -v x=...   value, grad_fn chain, gradients, Jacobian
    gradexpr check tests/           compare programs with their recorded output

    gradexpr repl                   an interactive session (plain gradexpr on a terminal)

    Exit status: 0 success, 1 runtime error or failed check, 2 usage or syntax error.
    """
    if ctx.invoked_subcommand is None:
        if sys.stdin.isatty() and sys.stdout.isatty():
            ctx.invoke(ctx.command.get_command(ctx, "repl"))
        else:
            click.echo(ctx.get_help())


def _set_colour(choice):
    from .terminal import set_colour
    set_colour(choice)


def configure_process():
    """The command's process settings (the bench uses them too)."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    # Autograd graphs are large but nearly acyclic: collect rarely, so a 10^6-op chain is not
    # dominated by repeated scans of live nodes.
    import gc
    gc.set_threshold(100_000, 50, 100)
    keep_freed_memory()


def keep_freed_memory() -> bool:
    """Let glibc keep freed big blocks for reuse instead of unmapping them.

    Every op on big tensors allocates its result; by default glibc gives a block of tens of
    MiB a fresh mapping and unmaps it when freed, so each new array's pages fault in one by
    one: about a third of the cost of a pass over a 10^7-element float32 array (the bench's
    elementwise workload went from 1.15x to 1.0x of hand-written NumPy). Kept blocks are
    reused instead; the peak memory is unchanged. Without glibc nothing changes. Returns
    whether the setting took.
    """
    try:
        import ctypes       # already loaded by NumPy
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3
    return bool(mallopt(m_mmap_threshold, 1 << 30)) and bool(mallopt(m_trim_threshold, 1 << 30))


def end_process(code: int) -> None:
    """End the process as soon as the command's output is out, without CPython's finalisation.

    Finalisation tears down every module (NumPy's, the engine's, the parser's tables) and frees
    every object still alive one by one: about 10 ms of a one-shot ``gradexpr eval``, for nothing
    a finished command needs -- its files are closed and its worker processes joined when it
    returns. Only the standard streams still hold output: they are flushed first. If flushing
    fails (a reader closed the pipe), this returns and the interpreter's own exit reports it,
    as it always did.
    """
    import os
    try:
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            if stream is not None:
                stream.flush()
    except BaseException:
        return
    os._exit(code)


def main(argv=None):
    """The ``gradexpr`` command. It exits (SystemExit); run as the process's command (``argv``
    None: the ``gradexpr`` script, ``python -m gradexpr``) it ends the process (end_process)."""
    configure_process()
    try:
        # not Click's standalone mode: it turns Ctrl-C into "Aborted!" and exit status 1
        code = cli.main(args=argv, prog_name="gradexpr", standalone_mode=False)
    except SystemExit as e:                  # the commands end with sys.exit(status)
        code = e.code
    except click.exceptions.Abort:           # Ctrl-C (or end of input) inside Click's own prompts
        code = interrupted()
    except KeyboardInterrupt:
        code = interrupted()
    except click.ClickException as e:
        args = sys.argv[1:] if argv is None else list(argv)
        if wants_json(args):
            sys.stdout.write(json_error(e, args) + "\n")
        show_error(e)
        code = e.exit_code
    if code is not None and not isinstance(code, int):    # sys.exit("message"), as Python shows it
        sys.stderr.write(f"{code}\n")
        code = 1
    code = code or 0
    if argv is None:
        end_process(code)
    sys.exit(code)


def show_error(e: click.ClickException) -> None:
    """Click's errors in the diagnostics' style: ``gradexpr CMD: message`` and a ``hint:`` line (Click's
    "(Did you mean …?)"); the usage banner only for a real usage mistake (an unknown option or command,
    a missing argument), not for a bad option value."""
    import re
    from .terminal import write_error
    ctx = getattr(e, "ctx", None)
    message, hint = e.format_message(), None
    m = re.search(r"\s*\((Did you mean [^()]*)\)$", message)
    if m:
        message, hint = message[:m.start()], "d" + m.group(1)[1:]
    choice = re.search(r"'([^']*)' is not one of", message)
    if choice and isinstance(getattr(e, "param", None), click.Parameter) and isinstance(e.param.type, click.Choice):
        from .suggest import did_you_mean
        hint = did_you_mean(choice.group(1), e.param.type.choices)
    if ctx is not None and isinstance(e, click.UsageError) and not isinstance(e, click.BadParameter):
        help_option = max(ctx.help_option_names, key=len)
        sys.stderr.write(f"{ctx.get_usage()}\nTry '{ctx.command_path} {help_option}' for help.\n\n")
    where = ctx.command_path if ctx is not None else "gradexpr"
    write_error(f"{where}: {message}\n" + (f"hint: {hint}\n" if hint else ""))


def wants_json(args) -> bool:
    """Whether the command line asked for JSON (so even a usage error is a JSON object on stdout)."""
    return "--json" in args or "--format=json" in args or any(
        a == "--format" and b == "json" for a, b in zip(args, args[1:]))


def json_error(e, args) -> str:
    """A usage error as JSON: for ``eval``, an evaluation object whose ``errors`` holds it (the schema of
    docs/eval.schema.json); for other commands ``{"error": {...}}`` with the same fields."""
    import json
    from .diagnostics import error_object
    error = error_object("UsageError", e.format_message(), None, e.exit_code)
    if "eval" in args:
        from gradexpr.session import Evaluation
        from . import render
        ev = Evaluation("", "<expr>")
        ev.error, ev.error_code = e, e.exit_code
        doc = render.to_json(ev)
        doc["errors"] = [error]
        return json.dumps(doc)
    return json.dumps({"error": error})


def interrupted() -> int:
    """Ctrl-C: a new line on stderr (the terminal showed ``^C``), exit status 130, no traceback."""
    sys.stderr.write("\n")
    return 130


if __name__ == "__main__":
    main()
