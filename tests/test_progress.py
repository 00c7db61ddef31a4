"""Long work shows progress on a terminal's stderr, and nowhere else: the session reports a
Jacobian's rows and --check's runs; check and eval draw them as a transient bar."""
import os
import subprocess
import sys

from click.testing import CliRunner

from gradexpr import session
from gradexpr.cli.main import cli


def reports(expr, variables, **request):
    seen = []
    bindings = session.Bindings.parse(variables)
    with session.reporting(lambda task, done, total: seen.append((task, done, total))):
        ev = session.evaluate(expr, "<expr>", bindings, session.Request(**request))
    assert ev.error is None, ev.error
    return seen


def test_the_session_reports_the_rows_of_a_jacobian_and_the_runs_of_a_check():
    seen = reports("tanh(W @ x)", ["W=randn(40, 40)", "x=ones(40)"], wrt=("x",))
    assert {task for task, _, _ in seen} == {"Jacobian"} and seen[-1] == ("Jacobian", 40, 40)
    assert [done for _, done, _ in seen] == sorted(done for _, done, _ in seen)
    seen = reports("(x * x).sum()", ["x=ones(5)"], check=True)
    assert [s for s in seen if s[0] == "--check x"] == [("--check x", k, 5) for k in range(1, 6)]
    assert reports("(x * x).sum()", ["x=ones(5)"]) == []          # nothing long: nothing reported


def test_no_progress_in_a_pipe_or_under_json():
    for extra in ([], ["--json"]):
        r = CliRunner().invoke(cli, ["eval", "tanh(W @ x)", "-v", "W=randn(30, 30)", "-v", "x=ones(30)", *extra])
        assert r.exit_code == 0 and r.stderr == ""


def test_check_draws_a_bar_on_a_terminal_and_lists_results_on_stdout(tmp_path):
    import pty
    for i in range(3):
        (tmp_path / f"p{i}.gx").write_text(f"print({i})\n")
        (tmp_path / f"p{i}.gx.out").write_text(f"{i}\n")
    master, slave = pty.openpty()
    env = dict(os.environ, COLUMNS="80", TERM="xterm-256color")
    p = subprocess.Popen([sys.executable, "-m", "gradexpr", "check", "-v", str(tmp_path)], stdout=subprocess.PIPE,
                         stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    out = p.stdout.read().decode()
    assert p.wait(timeout=60) == 0
    assert "checking" in b"".join(chunks).decode()          # the bar, on the terminal
    assert "3 passed, 0 failed" in out and "checking" not in out
