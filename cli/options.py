"""Options shared by several commands: resource limits and output format."""
from __future__ import annotations

import click

from gradexpr import limits as _limits

_LIMIT_HELP = {
    "max_elements": "elements of any one tensor (default 10^8)",
    "max_loop_iterations": "loop iterations of a program, all loops together (default 10^6)",
    "max_seconds": "wall time of a program in seconds (default 30)",
    "max_depth": "nesting depth of brackets, expressions and blocks (default 200)",
    "max_int_digits": "digits of an integer literal or result (default 10000)",
    "max_str_len": "length of a string (default 10^7)",
    "max_recursion": "depth of calls of the program's own functions and methods (default 1000)",
}


class _LimitValue(click.ParamType):
    """A limit on the command line: a number >= 0 (``1e8`` allowed), checked as the variables are."""

    name = "N"

    def __init__(self, limit_name):
        self.limit_name = limit_name

    def convert(self, value, param, ctx):
        try:
            return _limits.Limits.parse(self.limit_name, value)
        except ValueError as e:
            self.fail(str(e), param, ctx)


def limit_options(fn):
    """Add ``--max-elements`` … (each also read from ``GRADEXPR_MAX_ELEMENTS`` …; 0 means no limit)."""
    for name in reversed(list(_LIMIT_HELP)):
        fn = click.option(_limits.OPTION_NAMES[name], name, type=_LimitValue(name), default=None, metavar="N",
                          help=_LIMIT_HELP[name] + "; env GRADEXPR_" + name.upper() + "; 0: no limit")(fn)
    return fn


def limits_from(kwargs) -> _limits.Limits:
    """The limits: defaults, then the environment, then the options; a bad variable is a usage error."""
    overrides = {name: kwargs.pop(name, None) for name in _LIMIT_HELP}
    try:
        return _limits.Limits.from_env(**overrides)
    except ValueError as e:
        raise click.UsageError(str(e)) from None


def format_options(fn, formats=("rich", "plain", "json"), default_help="rich on a terminal, plain when piped"):
    """One ``fmt`` value fed by ``--format`` and the flag switches ``--json``/``--plain``/``--rich``."""
    for f in reversed(formats):
        fn = click.option(f"--{f}", "fmt", flag_value=f, help=f"same as --format {f}")(fn)
    fn = click.option("--format", "fmt", type=click.Choice(formats), default=None,
                      help=f"output format ({default_help})")(fn)
    return fn


def resolve_format(fmt, stream=None) -> str:
    """The format asked for, else rich on a terminal (or when colour is forced), plain in a pipe."""
    if fmt:
        return fmt
    import sys
    from .terminal import forced
    s = stream or sys.stdout
    return "rich" if s.isatty() or forced() else "plain"


class ExpressionCommand(click.Command):
    """A command whose EXPR argument may start with ``-`` (``gradexpr eval "-log(p)" -v p=0.5``).

    Click reads any word starting with ``-`` as options (``-log(p)`` as ``-l -o -g …``). A word
    that is not an option of this command (``-l`` unknown, or ``-c`` not followed by NAME=) and
    not the value of the option before it is the expression: it moves behind a ``--`` at the
    end of the arguments, where Click takes it as the positional argument."""

    def parse_args(self, ctx, args):
        args = list(args)
        takes_value, short = set(), {}
        for p in self.params:
            if isinstance(p, click.Option):
                for opt in p.opts + p.secondary_opts:
                    if not p.is_flag and not p.count:
                        takes_value.add(opt)
                    if len(opt) == 2 and opt[0] == "-" and opt[1] != "-":
                        short[opt] = p
        for i, word in enumerate(args):
            if word == "--":
                break
            if i and args[i - 1] in takes_value:
                continue
            if word.startswith("-") and word != "-" and not word.startswith("--"):
                if not _is_short_option(word, short):
                    return super().parse_args(ctx, args[:i] + args[i + 1:] + ["--", word])
                args[i] = _long_form(word, short, last=i == len(args) - 1)
        return super().parse_args(ctx, args)


def _long_form(word: str, short: dict, last: bool) -> str:
    """``-v`` as ``--var``, ``-vx=1`` as ``--var=x=1``: the same option. Click tries every word as a
    long option before a short one, and the failed try runs difflib's did-you-mean over all options
    (1-2 ms of a one-shot ``gradexpr eval``). A short option with nothing after it stays as typed,
    so that its error names it as the user wrote it."""
    param = short[word[:2]]
    long = next((o for o in param.opts if o.startswith("--")), None)
    if long is None or param.is_flag or param.count or (last and len(word) == 2):
        return word
    return long if len(word) == 2 else f"{long}={word[2:]}"


def _is_short_option(word: str, short: dict) -> bool:
    """``-v``, ``-vx=1``, ``-ffile.gx``: an option; ``-log(p)``, ``-cos(x)``, ``-2*x``: an expression."""
    param = short.get(word[:2])
    if param is None:
        return False
    rest = word[2:]
    if not rest:
        return True
    if param.is_flag or param.count:
        return False
    if (param.metavar or "").startswith("NAME="):
        import re
        return re.match(r"\s*[A-Za-z_]\w*\s*=(?!=)", rest) is not None
    return "(" not in rest and " " not in rest
