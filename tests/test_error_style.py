"""Errors in one style: no usage banner for a well-formed command line, JSON on stdout under --json,
did-you-mean for commands, --of names, keywords (PyTorch's parameter names) and constants."""
import json

from click.testing import CliRunner

from eval_schema import validate
from gradexpr.cli.main import cli, main



def run(*args, input=None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def run_main(capsys, *args):
    """Through main(), which renders Click's own usage errors (standalone mode off)."""
    try:
        main(list(args))
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def test_a_bad_option_value_has_no_usage_banner_and_a_hint():
    r = run("eval", "y = x * 2", "-v", "x=1.", "--of", "yy")
    assert r.exit_code == 2 and "Usage:" not in r.stderr
    assert r.stderr == "gradexpr eval: --of yy: the program binds no name 'yy'\nhint: did you mean 'y'?\n"


def test_under_json_a_bad_option_value_is_an_evaluation_with_the_error():
    r = run("eval", "x * 2", "-v", "x=1.", "--wrt", "z", "--json")
    doc = json.loads(r.stdout)
    validate(doc)
    assert r.exit_code == 2 and doc["ok"] is False and doc["errors"][0]["type"] == "UsageError"
    assert "--wrt z" in doc["errors"][0]["message"]


def test_under_json_a_usage_error_of_click_is_json_too(capsys):
    code, out, err = run_main(capsys, "eval", "x", "--json", "--no-such-option")
    doc = json.loads(out)
    validate(doc)
    assert code == 2 and "No such option" in doc["errors"][0]["message"] and "Usage:" in err
    code, out, _ = run_main(capsys, "check", "--json", "/no/such/folder")
    assert code == 2 and json.loads(out)["error"]["exit_status"] == 2


def test_did_you_mean_a_command(capsys):
    code, _, err = run_main(capsys, "evl")
    assert code == 2 and "hint: did you mean 'eval'?" in err


def test_constants_spelled_as_in_other_languages():
    r = run("eval", "true")
    assert "NameError: name 'true' is not defined" in r.stderr and "hint: did you mean 'True'?" in r.stderr


def test_a_keyword_close_to_one_of_pytorchs_parameter_names():
    r = run("eval", "torch.nansum(x, dimm=0)", "-v", "x=ones(2)")
    assert "unexpected keyword argument 'dimm'" in r.stderr and "hint: did you mean 'dim'?" in r.stderr
    from gradexpr import errors
    from gradexpr.cli.diagnostics import better_hint
    listed = errors.TypeError("sum() received an invalid combination of arguments - got (dimm=int, ), but expected "
                              "one of:\n * (*, torch.dtype dtype = None)\n"
                              " * (tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None)")
    assert better_hint(listed) == "did you mean 'dim'?"


def test_click_errors_in_the_diagnostics_style_banner_only_for_real_usage_mistakes(capsys):
    code, out, err = run_main(capsys, "eval", "x", "-v", "x=1.", "--atol", "abc")
    assert code == 2 and out == "" and "Usage:" not in err
    assert err == "gradexpr eval: Invalid value for '--atol': 'abc' is not a valid float.\n"
    code, _, err = run_main(capsys, "graph", "x", "-v", "x=1.", "--format", "svgg")
    assert code == 2 and "Usage:" not in err and err.endswith("hint: did you mean 'svg'?\n")
    code, _, err = run_main(capsys, "eval", "x", "-v", "x=1.", "--wrtt", "x")
    assert code == 2 and err.startswith("Usage: gradexpr eval [OPTIONS]")
    assert err.endswith("gradexpr eval: No such option '--wrtt'.\nhint: did you mean one of: '--rtol', '--wrt'?\n")
    code, _, err = run_main(capsys, "evl", "x")
    assert code == 2 and err.endswith("gradexpr: No such command 'evl'.\nhint: did you mean 'eval'?\n")
    assert "Error:" not in err


def test_ops_patterns_get_did_you_mean_and_json_errors():
    r = run("ops", "sinn")
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr == "gradexpr ops: no entry matches sinn\nhint: did you mean 'sin'?\n"
    assert run("ops", "SoftmaxBackwrd").stderr.endswith("hint: did you mean 'SoftmaxBackward0'?\n")
    r = run("ops", "sinn", "--json")
    assert r.exit_code == 1 and json.loads(r.stdout)["error"] == {
        "type": "NoMatch", "message": "no entry matches sinn", "file": None, "line": None, "column": None,
        "hint": "did you mean 'sin'?", "exit_status": 1}
