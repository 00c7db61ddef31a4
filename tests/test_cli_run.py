"""``gradexpr run`` as users call it: files, stdin, exit codes, located errors, no tracebacks."""
import subprocess
import sys

from click.testing import CliRunner

from gradexpr.cli.main import cli


def run(source, *args):
    return CliRunner().invoke(cli, ["run", "-", *args], input=source)


def test_prints_what_pytorch_prints():
    r = run("x = torch.ones(2, 2, requires_grad=True)\ny = x + 2\nprint(y)\nprint(y.grad_fn)\n")
    assert r.exit_code == 0
    assert r.output.startswith("tensor([[3., 3.],\n        [3., 3.]], grad_fn=<AddBackward0>)\n<AddBackward0 object at 0x")


def test_runtime_error_is_located_with_caret_and_exit_1():
    r = run("x = tensor([1., 2.], requires_grad=True)\ny = x * 2\ny.backward()\n")
    assert r.exit_code == 1
    assert "<stdin>:3:1: RuntimeError: grad can be implicitly created only for scalar outputs" in r.stderr
    assert "    y.backward()\n    ^^^^^^^^^^^^" in r.stderr
    assert "hint:" in r.stderr and "Traceback" not in r.stderr


def test_syntax_error_exit_2():
    r = run("x = (1 +\n")
    assert r.exit_code == 2
    assert "SyntaxError" in r.stderr and "Traceback" not in r.stderr


def test_failed_assert_exit_1():
    r = run('assert tensor(1.) > 2, "too small"\n')
    assert r.exit_code == 1
    assert "AssertionError: too small" in r.stderr


def test_limit_option_and_environment(monkeypatch):
    r = run("x = zeros(1000, 1000)\n", "--max-elements", "1000")
    assert r.exit_code == 1 and "LimitError" in r.stderr
    monkeypatch.setenv("GRADEXPR_MAX_LOOP_ITERATIONS", "10")
    r = run("n = 0\nwhile True:\n    n += 1\n")
    assert r.exit_code == 1 and "LimitError" in r.stderr


def test_as_a_subprocess_from_a_file(tmp_path):
    prog = tmp_path / "p.gx"
    prog.write_text("x = tensor([1., 2., 3.], requires_grad=True)\n(x ** 2).sum().backward()\nprint(x.grad)\n")
    p = subprocess.run([sys.executable, "-m", "gradexpr.cli.main", "run", str(prog)], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "tensor([2., 4., 6.])\n"


def test_missing_file_is_a_usage_error(tmp_path):
    r = CliRunner().invoke(cli, ["run", str(tmp_path / "nope.gx")])
    assert r.exit_code == 2 and "cannot read" in r.stderr
