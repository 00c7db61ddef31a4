"""Beyond PyTorch: an error of backward names, in a ``note:``, the program line and sub-expression
whose forward recorded the failing node (a NaN found in anomaly mode; a saved tensor changed in
place), in or out of anomaly mode."""
import os
import subprocess
import sys

GRADEXPR = os.path.join(os.path.dirname(sys.executable), "gradexpr")


def run(tmp_path, source):
    p = tmp_path / "prog.gx"
    p.write_text(source)
    r = subprocess.run([GRADEXPR, "run", str(p)], capture_output=True, text=True,
                       timeout=120)
    return r.returncode, r.stderr.replace(str(p), "prog.gx")


def test_nan_in_anomaly_mode_names_the_forward_sub_expression(tmp_path):
    code, err = run(tmp_path, "torch.autograd.set_detect_anomaly(True)\n"
                              "a = torch.tensor([0., 1.], requires_grad=True)\n"
                              "b = a * 2\n"
                              "y = b.sqrt() * 0\n"
                              "y.sum().backward()\n")
    assert code != 0
    assert err.splitlines()[0] == ("prog.gx:5:1: RuntimeError: Function 'SqrtBackward0' returned nan values in "
                                   "its 0th output.")
    assert err.splitlines()[3:] == ["note: SqrtBackward0 was recorded by the forward at prog.gx:4:5",
                                    "    y = b.sqrt() * 0",
                                    "        ^^^^^^^^"]


def test_version_counter_error_names_the_node_that_saved_the_tensor(tmp_path):
    code, err = run(tmp_path, "a = torch.tensor([0., 1.], requires_grad=True)\n"
                              "def f(t):\n"
                              "    return t.exp() + 1\n"
                              "y = f(a * 2)\n"
                              "c = 3 * (y * y)\n"
                              "y.mul_(2)\n"
                              "c.sum().backward()\n")
    lines = err.splitlines()
    assert lines[0].startswith("prog.gx:7:1: RuntimeError: one of the variables needed for gradient computation "
                               "has been modified by an inplace operation")
    assert lines[-3:] == ["note: MulBackward0 was recorded by the forward at prog.gx:5:9",
                          "    c = 3 * (y * y)",
                          "            ^^^^^^^"]


def test_node_recorded_inside_a_function_names_the_line_in_the_function(tmp_path):
    code, err = run(tmp_path, "a = torch.tensor([0., 1.], requires_grad=True)\n"
                              "def f(t):\n"
                              "    s = t.sqrt()\n"
                              "    return s\n"
                              "with torch.autograd.detect_anomaly():\n"
                              "    y = f(a) * 0\n"
                              "    y.sum().backward()\n")
    assert "note: SqrtBackward0 was recorded by the forward at prog.gx:3:9" in err
    assert "        s = t.sqrt()\n            ^^^^^^^^" in err
