"""gradexpr repl: through stdin (no terminal) and through a pseudo-terminal."""
import os
import select
import signal
import subprocess
import sys
import time

import pytest

GRADEXPR = [sys.executable, "-m", "gradexpr"]


def repl(text, *args):
    return subprocess.run([*GRADEXPR, "repl", *args], input=text, capture_output=True, text=True, timeout=120)


def test_stdin_session_keeps_bindings_and_echoes_values_as_python():
    p = repl("x = ones(2, requires_grad=True)\n(x * x).sum().backward()\nx.grad\n")
    assert p.returncode == 0, p.stderr
    assert p.stdout == "tensor([2., 2.])\n"


def test_settings_a_line_makes_hold_for_the_next_lines_and_the_echo():
    # torch.set_default_dtype in one line: the next lines' factories and the echoed reprs see it
    p = repl("torch.set_default_dtype(torch.float64)\ntorch.tensor([1.5])\ntorch.get_default_dtype()\n"
             "torch.ones(1, dtype=torch.float32)\n")
    assert p.returncode == 0, p.stderr
    assert p.stdout == "tensor([1.5000])\ntorch.float64\ntensor([1.], dtype=torch.float32)\n"


def test_echoed_torch_functions_print_as_pytorch_prints_them():
    p = repl("torch.dot\nF.relu\nx = ones(1)\nx.add\n")
    assert p.returncode == 0, p.stderr
    dot, relu, add = p.stdout.splitlines()
    assert dot.startswith("<built-in method dot of type object at 0x") and relu.startswith("<function relu at 0x")
    assert add.startswith("<built-in method add of Tensor object at 0x")


def test_blocks_strings_prints_and_none():
    p = repl('def f(x):\n    return x * 2\n\nf(3)\n"a"\nprint("hi")\nNone\ny = 1\n')
    assert p.stdout == "6\n'a'\nhi\n" and p.returncode == 0


def test_errors_are_located_and_the_session_goes_on_with_exit_1():
    p = repl("z +\nq\n1 + 1\n")
    assert p.stdout == "2\n"
    assert "<stdin>:1:4: SyntaxError" in p.stderr and "NameError: name 'q' is not defined" in p.stderr
    assert p.returncode == 1


def test_commands_show_the_eval_views_of_the_last_value():
    p = repl("w = tensor([1., 2.], requires_grad=True)\n(w * w).sum()\n:grad\n:graph\n:jacobain\n")
    assert "gradients:\nw [2] float32\n  tensor([2., 4.])" in p.stdout
    assert p.stdout.count("grad_fn:\nSumBackward0") == 2
    assert "did you mean ':jacobian'?" in p.stderr


def test_same_limits_and_safety():
    p = repl("().__class__\nwhile True:\n    pass\n\n1\n", "--max-seconds", "1")
    assert p.stdout == "1\n"
    assert "access to '__class__' is not allowed" in p.stderr
    assert "LimitError" in p.stderr        # the time limit (or, on a slow machine, the loop limit) stopped it


# ------------------------------------------------------------------ through a pseudo-terminal
def _read_until(fd, marker, timeout=60):
    out = b""
    end = time.time() + timeout
    while marker not in out:
        if time.time() > end:
            raise AssertionError(f"no {marker!r} in {out!r}")
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    return out


@pytest.mark.skipif(sys.platform == "win32", reason="pty is POSIX")
def test_on_a_terminal_prompts_completion_ctrl_c_and_ctrl_d(tmp_path):
    import pty
    pid, fd = pty.fork()
    if pid == 0:      # the child: gradexpr with no command on a terminal is the REPL
        os.environ.update(HOME=str(tmp_path), TERM="dumb", COLUMNS="80", GRADEXPR_HISTORY=str(tmp_path / "h"))
        os.execv(sys.executable, [*GRADEXPR])
    try:
        _read_until(fd, b">>> ")
        os.write(fd, b"x = ones(2, requires_grad=True)\r")
        _read_until(fd, b">>> ")
        os.write(fd, b"for i in range(2):\r")
        _read_until(fd, b"... ")
        os.write(fd, b"    y = x * i\r")
        _read_until(fd, b"... ")
        os.write(fd, b"\r")
        _read_until(fd, b">>> ")
        os.write(fd, b"(y * y).sum().backward()\r")
        _read_until(fd, b">>> ")
        os.write(fd, b"x.gra\t\r")                 # tab completes the attribute
        assert b"tensor([2., 2.])" in _read_until(fd, b">>> ")
        os.write(fd, b"unfinished(\x03")           # Ctrl-C cancels the line
        assert b"KeyboardInterrupt" in _read_until(fd, b">>> ")
        os.write(fd, b"\x04")                      # Ctrl-D leaves
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        assert "(y * y).sum().backward()" in (tmp_path / "h").read_text()     # history kept
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(fd)
