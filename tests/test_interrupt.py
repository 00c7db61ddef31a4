"""Ctrl-C: exit status 130, no "Aborted!", and check reports the programs it finished."""
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def test_run_exits_130_without_aborted(tmp_path):
    prog = tmp_path / "loop.gx"
    prog.write_text("print('started', flush=True)\nwhile True:\n    pass\n")
    p = subprocess.Popen([sys.executable, "-m", "gradexpr", "run", str(prog), "--max-seconds", "0",
                          "--max-loop-iterations", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "started\n"
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130
    assert "Aborted" not in err and "Traceback" not in err


def test_check_prints_what_it_finished(tmp_path):
    (tmp_path / "a_first.gx").write_text("print(1)\n")
    (tmp_path / "a_first.gx.out").write_text("1\n")
    (tmp_path / "b_loop.gx").write_text("while True:\n    pass\n")
    (tmp_path / "b_loop.gx.out").write_text("")
    p = subprocess.Popen([sys.executable, "-m", "gradexpr", "check", str(tmp_path), "--plain", "--max-seconds", "0",
                          "--max-loop-iterations", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(6)            # start-up, then the first program; the second one loops
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "a_first.gx" in out and "1 passed, 0 failed" in out
    assert "interrupted: 1 of 2 programs checked" in err and "Aborted" not in err and "Traceback" not in err
