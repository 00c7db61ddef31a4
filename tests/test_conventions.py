"""The conventions of a command-line tool: python -m, --version, colour, completion."""
import os
import subprocess
import sys

GRADEXPR = [sys.executable, "-m", "gradexpr"]


def gx(*args, env=None, input=None):
    full_env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    full_env.update(env or {})
    return subprocess.run([*GRADEXPR, *args], capture_output=True, text=True, env=full_env, input=input, timeout=120)


def test_python_m_gradexpr_and_version():
    p = gx("--version")
    assert p.returncode == 0 and p.stdout.startswith("gradexpr, version ")


def test_colour_is_one_decision_flag_and_environment():
    plain = gx("run", "-", input="x = 1 +\n")
    assert "\x1b[" not in plain.stderr and "SyntaxError" in plain.stderr
    forced = gx("run", "-", input="x = 1 +\n", env={"FORCE_COLOR": "1"})
    assert "\x1b[31m\x1b[1mSyntaxError\x1b[0m" in forced.stderr
    always = gx("--color", "always", "eval", "x * 2", "-v", "x=1.")
    assert "\x1b[" in always.stdout and "value" in always.stdout          # rich and coloured, even in a pipe
    never = gx("--color", "never", "run", "-", input="x = 1 +\n", env={"FORCE_COLOR": "1"})
    assert "\x1b[" not in never.stderr
    no_colour = gx("eval", "x * 2", "-v", "x=1.", "--rich", env={"NO_COLOR": "1"})
    assert "\x1b[" not in no_colour.stdout and "value" in no_colour.stdout


def test_shell_completion_as_docs_shell_completion_documents_it():
    p = gx(env={"_GRADEXPR_COMPLETE": "bash_source"})
    assert p.returncode == 0 and "_gradexpr_completion()" in p.stdout
    p = gx(env={"_GRADEXPR_COMPLETE": "bash_complete", "COMP_WORDS": "gradexpr re", "COMP_CWORD": "1"})
    assert "plain,repl" in p.stdout
    root = os.path.join(os.path.dirname(__file__), "..")
    doc = open(os.path.join(root, "docs", "shell-completion.md"), encoding="utf-8").read()
    assert 'eval "$(_GRADEXPR_COMPLETE=bash_source gradexpr)"' in doc
    assert "docs/shell-completion.md" in open(os.path.join(root, "README.md"), encoding="utf-8").read()


def test_without_a_terminal_plain_gradexpr_shows_the_help():
    p = gx(input="")
    assert p.returncode == 0 and "Usage: gradexpr" in p.stdout and "repl" in p.stdout


def test_graph_output_format_follows_the_suffix(tmp_path):
    import shutil
    p = gx("graph", "x * 2", "-v", "x=1.", "-o", str(tmp_path / "g.dot"))
    assert p.returncode == 0 and (tmp_path / "g.dot").read_text().startswith("digraph gradexpr {")
    p = gx("graph", "x * 2", "-v", "x=1.", "-o", str(tmp_path / "g.json"))
    assert json_loads((tmp_path / "g.json").read_text())["target"] == "n0"
    p = gx("graph", "x * 2", "-v", "x=1.", "-o", str(tmp_path / "g.txt"), "--format", "mermaid")
    assert (tmp_path / "g.txt").read_text().startswith("flowchart TB")      # a format given wins
    if shutil.which("dot"):
        p = gx("graph", "x * 2", "-v", "x=1.", "-o", str(tmp_path / "g.svg"))
        assert p.returncode == 0 and "<svg" in (tmp_path / "g.svg").read_text()


def json_loads(text):
    import json
    return json.loads(text)


def test_the_man_page_documents_every_command_and_option():
    import click
    from gradexpr.cli.main import _COMMANDS, cli
    page = open(os.path.join(os.path.dirname(__file__), "..", "docs", "gradexpr.1"), encoding="utf-8").read()
    assert page.startswith(".TH GRADEXPR 1")
    ctx = click.Context(cli, info_name="gradexpr")
    for name in _COMMANDS:
        assert f".SH COMMAND: {name.upper()}" in page, f"regenerate: python tools/gen_manpage.py ({name})"
        for param in cli.get_command(ctx, name).params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("--"):
                    assert opt in page, f"regenerate: python tools/gen_manpage.py ({name} {opt})"
