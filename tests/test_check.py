"""``gradexpr check`` and the pytest plugin: regression tests of expression programs."""
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

from click.testing import CliRunner

from gradexpr import graph, printing
from gradexpr.cli.main import cli

pytest_plugins = ["pytester"]

GRAD_PROGRAM = "x = tensor([1., 2.], requires_grad=True)\ny = (x ** 2).sum()\ny.backward()\nprint(x.grad)\nprint(y.grad_fn)\n"
GRAD_OUTPUT = "tensor([2., 4.])\n<SumBackward0 object at 0x7f3a2c1d9e80>\n"
NONSCALAR_ERROR = "RuntimeError: grad can be implicitly created only for scalar outputs"


def write(folder, name, source, out=None, err=None):
    """``folder/name`` with its ``.out``/``.err`` recordings when given."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    if out is not None:
        path.with_name(path.name + ".out").write_text(out)
    if err is not None:
        path.with_name(path.name + ".err").write_text(err + "\n")
    return path


def check(*args):
    return CliRunner().invoke(cli, ["check", *map(str, args)])


def test_recorded_output_passes_with_addresses_normalised(tmp_path):
    write(tmp_path, "grad.gx", GRAD_PROGRAM, out=GRAD_OUTPUT)
    r = check(tmp_path, "-v")            # -v lists every program; by default only the failures
    assert r.exit_code == 0, r.output
    assert "grad.gx" in r.output and "pass" in r.output
    assert r.output.rstrip().splitlines()[-1].startswith("1 passed, 0 failed in ")


def test_stdout_mismatch_fails_with_a_unified_diff(tmp_path):
    write(tmp_path, "grad.gx", GRAD_PROGRAM, out="tensor([2., 5.])\n<SumBackward0 object at 0x…>\n")
    r = check(tmp_path)
    assert r.exit_code == 1
    assert "=== FAIL" in r.output and "stdout differs:" in r.output
    assert "--- grad.gx.out (expected)\n+++ stdout (actual)\n" in r.output
    assert "-tensor([2., 5.])\n+tensor([2., 4.])\n" in r.output
    assert "0 passed, 1 failed" in r.output


def test_expected_error_matched(tmp_path):
    write(tmp_path, "nonscalar.gx", "x = tensor([1., 2.], requires_grad=True)\nprint('before')\n(x * 2).backward()\n",
          out="before\n", err=NONSCALAR_ERROR)
    r = check(tmp_path)
    assert r.exit_code == 0, r.output


def test_expected_error_not_matched(tmp_path):
    # a different error than recorded
    write(tmp_path, "other_error.gx", "x = ones(2) + ones(3)\n", out="",
          err="RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)")
    # no error at all where one is expected
    write(tmp_path, "no_error.gx", "print(1)\n", out="1\n", err=NONSCALAR_ERROR)
    r = check(tmp_path)
    assert r.exit_code == 1
    assert "expected the error `RuntimeError: mat1 and mat2" in r.output
    assert "RuntimeError: The size of tensor a (2) must match the size of tensor b (3)" in r.output
    assert f"expected exit status 1 with `{NONSCALAR_ERROR}`, got 0" in r.output
    assert "0 passed, 2 failed" in r.output


def test_failing_assert_fails_the_file_with_line_and_caret(tmp_path):
    write(tmp_path, "asserts.gx", 'x = ones(2)\nassert x.sum() == 3, "sum is not 3"\n')
    r = check(tmp_path / "asserts.gx")
    assert r.exit_code == 1
    assert "an assert failed:" in r.output
    assert 'asserts.gx:2:1: AssertionError: sum is not 3\n    assert x.sum() == 3, "sum is not 3"\n    ^^^' in r.output


def test_unrecorded_program_passes_on_its_asserts_alone(tmp_path):
    write(tmp_path, "asserts.gx", "x = ones(2)\nassert x.sum() == 2\nprint('not compared')\n")
    write(tmp_path, "nothing.gx", "print(1)\n")
    r = check(tmp_path, "--json")
    results = {o["file"].rsplit("/", 1)[-1]: o for o in map(json.loads, r.output.splitlines())}
    assert results["asserts.gx"]["result"] == "pass"
    assert results["nothing.gx"]["result"] == "fail"
    assert "nothing to check" in results["nothing.gx"]["problems"][0]
    assert r.exit_code == 1


def test_syntax_error_fails_the_file(tmp_path):
    write(tmp_path, "broken.gx", "x = (1 +\n", out="")
    r = check(tmp_path)
    assert r.exit_code == 1
    assert "exit status 2" in r.output and "SyntaxError" in r.output and "Traceback" not in r.output


def test_update_round_trip(tmp_path):
    prog = write(tmp_path, "sub/grad.gx", GRAD_PROGRAM)
    failing = write(tmp_path, "sub/fails.gx", "x = tensor([1., 2.], requires_grad=True)\n(x * 2).backward()\n")
    bad_assert = write(tmp_path, "sub/bad_assert.gx", "assert ones(1) == 2\n")
    r = check(tmp_path, "--update")
    assert "sub/grad.gx.out (new)" in r.output and "1 recording changed" in r.output
    assert prog.with_name("grad.gx.out").read_text() == "tensor([2., 4.])\n<SumBackward0 object at 0x…>\n"
    # a new error (a failing assert too) is not recorded as expected unless asked: the files stay failed
    assert f"not recorded: it now fails with `{NONSCALAR_ERROR}`; --update --accept-errors" in r.output
    assert not failing.with_name("fails.gx.err").exists() and not bad_assert.with_name("bad_assert.gx.err").exists()
    assert r.exit_code == 1
    bad_assert.unlink()
    r = check(tmp_path, "--update", "--accept-errors")
    assert "sub/fails.gx.err (new)" in r.output and r.exit_code == 0
    assert failing.with_name("fails.gx.err").read_text() == NONSCALAR_ERROR + "\n"
    assert not failing.with_name("fails.gx.out").exists()     # it printed nothing before failing
    assert check(tmp_path).exit_code == 0
    # nothing changed: nothing rewritten
    r = check(tmp_path, "--update")
    assert "no recording changed" in r.output and r.exit_code == 0
    # the program changes: check fails, --update records the change and removes the stale .err
    failing.write_text("print(3)\n")
    assert check(tmp_path).exit_code == 1
    r = check(tmp_path, "--update")
    assert "sub/fails.gx.out (new)" in r.output and "sub/fails.gx.err (removed)" in r.output
    assert failing.with_name("fails.gx.out").read_text() == "3\n"
    assert not failing.with_name("fails.gx.err").exists()
    assert check(tmp_path).exit_code == 0


def test_junit_xml_report(tmp_path):
    write(tmp_path, "a/good.gx", GRAD_PROGRAM, out=GRAD_OUTPUT)
    write(tmp_path, "a/bad.gx", "print(2)\n", out="3\n")
    report = tmp_path / "report.xml"
    r = check(tmp_path / "a", "--junit-xml", report)
    assert r.exit_code == 1
    suite = ET.parse(report).getroot().find("testsuite")
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert set(cases) == {"good.gx", "bad.gx"}
    assert cases["good.gx"].find("failure") is None
    failure = cases["bad.gx"].find("failure")
    assert failure.get("message") == "stdout differs:"
    assert "-3\n+2" in failure.text
    assert float(cases["bad.gx"].get("time")) >= 0


def test_jobs_run_in_parallel_with_the_same_verdicts(tmp_path):
    for i in range(4):
        write(tmp_path, f"p{i}.gx", f"manual_seed({i})\nprint(randn(2) * {i})\n")
    write(tmp_path, "grad.gx", GRAD_PROGRAM, out=GRAD_OUTPUT)
    write(tmp_path, "bad.gx", "print(2)\n", out="3\n")
    assert check(tmp_path, "--update").exit_code == 0
    write(tmp_path, "bad.gx", "print(2)\n", out="3\n")     # a wrong recording again
    serial = [json.loads(line) for line in check(tmp_path, "--json").output.splitlines()]
    r = check(tmp_path, "--json", "--jobs", "2")
    parallel = [json.loads(line) for line in r.output.splitlines()]
    assert r.exit_code == 1
    assert [(o["file"], o["result"], o["problems"]) for o in parallel] == \
        [(o["file"], o["result"], o["problems"]) for o in serial]
    assert [o["result"] for o in parallel].count("fail") == 1


def test_k_selects_by_substring_or_glob(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)         # file names are shown relative to the working folder
    write(tmp_path, "ops/add.gx", "print(1)\n", out="1\n")
    write(tmp_path, "ops/mul.gx", "print(2)\n", out="2\n")
    write(tmp_path, "graph/add_chain.gx", "print(3)\n", out="3\n")

    def files(*args):
        return sorted(json.loads(line)["file"] for line in check(".", "--json", *args).output.splitlines())
    assert files() == ["graph/add_chain.gx", "ops/add.gx", "ops/mul.gx"]
    assert files("-k", "add") == ["graph/add_chain.gx", "ops/add.gx"]
    assert files("-k", "ops/*") == ["ops/add.gx", "ops/mul.gx"]
    assert files("-k", "mul*", "-k", "add_*") == ["graph/add_chain.gx", "ops/mul.gx"]
    r = check(".", "-k", "nothing-like-this")
    assert r.exit_code == 2 and "no .gx programs found matching" in r.output


def test_each_program_starts_from_fresh_state(tmp_path):
    write(tmp_path, "a_changes_state.gx",
          "manual_seed(0)\ntorch.set_grad_enabled(False)\nset_printoptions(precision=2)\nassert not is_grad_enabled()\n")
    write(tmp_path, "b_sees_fresh_state.gx",
          "assert is_grad_enabled()\nassert initial_seed() != 0\nprint(tensor([1.23456]))\n", out="tensor([1.2346])\n")
    r = check(tmp_path)
    assert r.exit_code == 0, r.output
    assert graph.is_grad_enabled() and printing.get_printoptions()["precision"] == 4


def test_a_saved_tensor_hook_block_left_open_ends_with_its_program(tmp_path):
    """A generator suspended inside ``with saved_tensors_hooks(...)`` keeps the block open after its program
    (it sits in a reference cycle with the program's globals: the collector closes it whenever it runs,
    maybe inside another program's block). The run gives the block back; the late close then takes no
    one else's entry."""
    from gradexpr import saved_hooks
    write(tmp_path, "a_leaves_a_block_open.gx",
          "import torch\n"
          "def gen():\n"
          "    with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 2, lambda t: t):\n"
          "        yield 1\n"
          "g = gen()\n"
          "assert next(g) == 1\n")
    import gc
    gc.disable()
    try:
        r = check(tmp_path / "a_leaves_a_block_open.gx")
        assert r.exit_code == 0, r.output
        assert saved_hooks._stack == []
        mine = saved_hooks.saved_tensors_hooks(lambda t: t, lambda t: t)
        mine.__enter__()
        gc.collect()                    # the generator's block closes now, inside ours
        assert len(saved_hooks._stack) == 1
        mine.__exit__(None, None, None)
        assert saved_hooks._stack == []
    finally:
        gc.enable()


def test_missing_path_is_a_usage_error(tmp_path):
    r = check(tmp_path / "nope")
    assert r.exit_code == 2 and "no such file or folder" in r.output


def test_rich_table_and_subprocess_plain_table(tmp_path):
    write(tmp_path, "grad.gx", GRAD_PROGRAM, out=GRAD_OUTPUT)
    r = check(tmp_path, "--rich", "-v")
    assert r.exit_code == 0 and "┃ file" in r.output and "1 passed, 0 failed" in r.output
    p = subprocess.run([sys.executable, "-m", "gradexpr.cli.main", "check", "-v", "grad.gx"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[:2] == ["file     result     time", p.stdout.splitlines()[1]]
    assert p.stdout.splitlines()[1].startswith("grad.gx  pass  ")


# ------------------------------------------------------------------ the pytest plugin

def test_plugin_collects_programs_and_reports_failures(pytester):
    for name, text in {"good.gx": GRAD_PROGRAM, "good.gx.out": GRAD_OUTPUT, "bad.gx": "print(2)\n",
                       "bad.gx.out": "3\n", "asserts.gx": "assert ones(2).sum() == 3\n",
                       "helper.gx": "print('no recording, no assert: not a test')\n"}.items():
        (pytester.path / name).write_text(text)
    r = pytester.runpytest("-p", "no:cacheprovider")
    r.assert_outcomes(passed=1, failed=2)
    r.stdout.fnmatch_lines([
        "*gradexpr program asserts.gx*", "an assert failed:", "asserts.gx:1:1: AssertionError",
        "    assert ones(2).sum() == 3", "    ^^^^^^^^^^^^^^^^^^^^^^^^^",
        "*gradexpr program bad.gx*", "stdout differs:", "--- bad.gx.out (expected)", "+++ stdout (actual)",
        "@@ -1 +1 @@", "-3", "+2",
        "FAILED asserts.gx::asserts - an assert failed:", "FAILED bad.gx::bad - stdout differs:",
    ])
    assert "helper" not in r.stdout.str()


def test_plugin_expected_error_and_switching_off(pytester):
    write(pytester.path, "nonscalar.gx", "x = tensor([1., 2.], requires_grad=True)\n(x * 2).backward()\n",
          err=NONSCALAR_ERROR)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    r = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:gradexpr")
    r.assert_outcomes()
    assert "no tests ran" in r.stdout.str()


def test_plain_lines_are_written_as_the_programs_finish(tmp_path):
    # a pipe or a CI log sees a program's line before the next program ends
    write(tmp_path, "a_quick.gx", "print(1)\n", out="1\n")
    write(tmp_path, "b_slow.gx", "x = torch.ones(1000, 1000)\nfor _ in range(30):\n    y = x @ x\nprint(2)\n", out="2\n")
    p = subprocess.Popen([sys.executable, "-m", "gradexpr", "check", "-v", "--plain", "--jobs", "1", str(tmp_path)],
                         stdout=subprocess.PIPE, text=True)
    header, first = p.stdout.readline(), p.stdout.readline()
    running = p.poll() is None
    rest = p.stdout.read()
    assert p.wait(timeout=120) == 0
    assert header.startswith("file") and "a_quick.gx" in first and running
    assert "b_slow.gx" in rest and "2 passed, 0 failed" in rest


def test_by_default_only_failures_and_a_summary_and_the_current_folder(tmp_path, monkeypatch):
    write(tmp_path, "grad.gx", GRAD_PROGRAM, out=GRAD_OUTPUT)
    write(tmp_path, "bad.gx", "print(2)\n", out="3\n")
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, ["check", "--plain"])
    assert r.exit_code == 1
    # (the columns are as wide as the longest name checked: lines are written as programs finish)
    assert re.search(r"^bad\.gx +fail ", r.output, re.M) and "grad.gx" not in r.output
    assert r.output.rstrip().splitlines()[-1].startswith("1 passed, 1 failed in ")


def test_a_crash_of_a_recorded_program_is_not_recorded_without_accept_errors(tmp_path):
    prog = write(tmp_path, "p.gx", "print(1)\n", out="1\n")
    prog.write_text("print(1)\nones(2).backward()\n")
    r = check(tmp_path, "--update")
    assert r.exit_code == 1 and "not recorded" in r.output and "no recording changed" in r.output
    assert prog.with_name("p.gx.out").read_text() == "1\n" and not prog.with_name("p.gx.err").exists()
    assert check(tmp_path, "--accept-errors").exit_code == 2          # only with --update


def test_rtol_atol_compare_the_numbers_of_the_output(tmp_path):
    # recorded by PyTorch, whose matrix products round differently in the last digits
    write(tmp_path, "mm.gx", "print(tensor([[1.23456, -2.5], [3., 10.]]) @ ones(2))\nprint('loss', 0.30000001)\n",
          out="tensor([-1.2655, 13.0001])\nloss 0.30000002\n")
    assert check(tmp_path).exit_code == 1
    assert check(tmp_path, "--rtol", "1e-4").exit_code == 0
    assert check(tmp_path, "--rtol", "1e-6").exit_code == 1
    assert check(tmp_path, "--atol", "2e-4").exit_code == 0
    # the text between the numbers must agree, whatever the tolerance (runs of spaces aside)
    write(tmp_path, "mm.gx", "print('loss',  0.3)\n", out="cost 0.3\n")
    assert check(tmp_path, "--rtol", "1").exit_code == 1
    write(tmp_path, "mm.gx", "print('loss',  0.3)\n", out="loss 0.3\n")
    assert check(tmp_path, "--rtol", "0").exit_code == 0
