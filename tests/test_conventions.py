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


def test_shell_completion_as_the_readme_documents_it():
    p = gx(env={"_GRADEXPR_COMPLETE": "bash_source"})
    assert p.returncode == 0 and "_gradexpr_completion()" in p.stdout
    p = gx(env={"_GRADEXPR_COMPLETE": "bash_complete", "COMP_WORDS": "gradexpr re", "COMP_CWORD": "1"})
    assert "plain,repl" in p.stdout
    readme = open(os.path.join(os.path.dirname(__file__), "..", "README.md"), encoding="utf-8").read()
    assert 'eval "$(_GRADEXPR_COMPLETE=bash_source gradexpr)"' in readme


def test_without_a_terminal_plain_gradexpr_shows_the_help():
    p = gx(input="")
    assert p.returncode == 0 and "Usage: gradexpr" in p.stdout and "repl" in p.stdout
