"""Write docs/gradexpr.1, the man page, from the commands' own --help texts (so the two never disagree).

    python tools/gen_manpage.py            # rewrite docs/gradexpr.1
    python tools/gen_manpage.py --check    # exit 1 if docs/gradexpr.1 is out of date (the tests run this)
"""
from __future__ import annotations

import pathlib
import sys

import click

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "gradexpr.1"


def _escape(text: str) -> str:
    """Plain text for roff: backslashes doubled, a leading dot or quote protected."""
    lines = []
    for line in text.replace("\\", "\\\\").splitlines():
        lines.append("\\&" + line if line.startswith((".", "'")) else line)
    return "\n".join(lines)


def _help(command, name: str) -> str:
    ctx = click.Context(command, info_name=name, terminal_width=78, max_content_width=78)
    return command.get_help(ctx)


def page() -> str:
    from gradexpr import __version__
    from gradexpr.cli.main import _COMMANDS, cli
    ctx = click.Context(cli, info_name="gradexpr")
    out = [f'.TH GRADEXPR 1 "" "gradexpr {__version__}" "User Commands"',
           ".SH NAME", "gradexpr \\- PyTorch's autograd for expressions typed in a shell",
           ".SH SYNOPSIS", ".B gradexpr", "[\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]...",
           ".SH DESCRIPTION", ".nf", _escape(_help(cli, "gradexpr")), ".fi"]
    for name in _COMMANDS:
        command = cli.get_command(ctx, name)
        if command is None:
            continue
        out += [f".SH COMMAND: {name.upper()}", ".nf", _escape(_help(command, f"gradexpr {name}")), ".fi"]
    out += [".SH ENVIRONMENT", "NO_COLOR, FORCE_COLOR: colour (see --color). GRADEXPR_MAX_*: the limits.",
            "_GRADEXPR_COMPLETE: shell completion (see the README).",
            ".SH EXIT STATUS", "0 success, 1 runtime error or failed check, 2 usage or syntax error, 130 Ctrl-C.",
            ".SH SEE ALSO", "The README and docs/ of gradexpr's repository."]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    text = page()
    if "--check" in sys.argv[1:]:
        sys.exit(0 if PAGE.exists() and PAGE.read_text(encoding="utf-8") == text else 1)
    PAGE.write_text(text, encoding="utf-8")
