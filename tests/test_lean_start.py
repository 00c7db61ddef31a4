"""A one-shot ``gradexpr eval`` loads only what it uses (start-up is a target of the performance
issue: within 1.3x of ``python -c "import numpy"`` for --json, 1.6x for --rich), and the plain
records that replaced dataclasses on that path keep their value semantics."""
import ast
import json
import os
import pickle
import subprocess
import sys

import pytest

from gradexpr import limits

EXPR = "((x + 2) ** 2 * 3).mean()"

_LIST_MODULES = """
import io, sys
from gradexpr.cli.main import main
out, sys.stdout = sys.stdout, io.StringIO()
try:
    main(sys.argv[1:])
except SystemExit as e:
    code = e.code
sys.stdout, printed = out, sys.stdout.getvalue()
print(repr({"code": code, "printed": printed, "modules": sorted(sys.modules)}))
"""


def loaded_by(*args):
    """The modules a fresh ``gradexpr`` process has loaded when the command ends."""
    p = subprocess.run([sys.executable, "-c", _LIST_MODULES, *args], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    got = ast.literal_eval(p.stdout.splitlines()[-1])     # (not json: the listing must not load it)
    assert got["code"] in (0, None), got
    return got["printed"], set(got["modules"])


def _imported(modules, names):
    return sorted(m for m in modules if m.split(".")[0] in names or m in names)


def test_eval_json_loads_no_rich_no_signal_wrapper_no_other_commands():
    printed, modules = loaded_by("eval", EXPR, "-v", "x=ones(2,2)", "--json")
    assert json.loads(printed)["value"] == 27.0
    assert _imported(modules, {"rich", "signal"}) == [] and "gradexpr.cli.progress" not in modules
    assert not modules & {"gradexpr.cli.check_cmd", "gradexpr.cli.graph_cmd", "gradexpr.cli.ops_cmd",
                          "gradexpr.cli.run_cmd", "gradexpr.cli.pytest_plugin"}


def test_a_one_liner_loads_no_part_it_does_not_use():
    # the language's classes, exceptions, generators and f-strings, vmap's batch rules, the random
    # distributions and gradcheck load with the first program that uses them (SPEC 1, issue 20)
    printed, modules = loaded_by("eval", "x * 2", "-v", "x=3", "--json")
    assert json.loads(printed)["grads"]["x"]["value"] == 2.0
    lazy = {"gradexpr.grammar.interpreter.compile_defs", "gradexpr.grammar.interpreter.compile_flow",
            "gradexpr.grammar.interpreter.compile_generators", "gradexpr.grammar.fstrings",
            "gradexpr.grammar.text_guards",
            "gradexpr.batching", "gradexpr.rng.distributions", "gradexpr.rng.gaussian", "gradexpr.testing",
            "gradexpr.tie_order", "gradexpr.softmax_order",
            "gradexpr.func", "gradexpr.nn", "gradexpr.optim", "gradexpr.autograd_function",
            # the op families a product does not use (ops/_catalogue.py), and the orders of the
            # reductions and ranges it does not compute
            "gradexpr.ops.backward_ops", "gradexpr.ops.reductions", "gradexpr.ops.linalg", "gradexpr.ops.shape",
            "gradexpr.ops.indexing", "gradexpr.ops.linalg_triangular", "gradexpr.ops.linalg_lu_decomposition",
            "gradexpr.ops.linalg_orthogonal", "gradexpr.ops.linalg_vectors", "gradexpr.ops.sorting",
            "gradexpr.ops.nn", "gradexpr.ops.nn_layers", "gradexpr.reduction_product",
            "gradexpr.reduction_variance", "gradexpr.range_factories",
            # the composites, nn functions, devices, legacy classes, generator and autograd.functional
            # it does not use (the prelude makes their names on first use: api.PreludeNames)
            *(f"gradexpr.composites.{m}" for m in ("random_functions", "shape", "linalg", "reductions",
                                                   "conversion", "inplace", "indexing")),
            "gradexpr.nn_functional", "gradexpr.device", "gradexpr.legacy", "gradexpr.rng",
            "gradexpr.functional"}
    assert sorted(modules & lazy) == []
    # an integer -v is promoted by re-running the program from the same random state: copying a
    # generator nothing drew from must not build its mt19937 state (numpy.random costs 30 ms)
    assert _imported(modules, {"numpy.random"}) == []


def test_the_lazy_parts_load_when_a_program_uses_them():
    printed, modules = loaded_by("eval", "[t for t in (x, x)][0] * torch.rand(1).sum()", "-v", "x=2.", "--json")
    assert json.loads(printed)["ok"]
    assert {"gradexpr.grammar.interpreter.compile_generators", "gradexpr.rng.distributions"} <= modules


def test_eval_loads_no_difflib():
    # Our own uses of difflib (name suggestions, check's diffs) load it when needed. (Click would
    # load it for every short option such as -v: it tries "-v" as a long option first and builds
    # did-you-mean suggestions for the miss; eval hands it "--var" instead.)
    printed, modules = loaded_by("eval", "ones(2, 2).sum() * x", "-v", "x=1.", "--json")
    assert json.loads(printed)["value"] == 4.0
    assert "difflib" not in modules


def test_eval_rich_loads_no_json():
    printed, modules = loaded_by("eval", EXPR, "-v", "x=ones(2,2)", "--rich")
    assert "MeanBackward0" in printed
    assert _imported(modules, {"json", "signal"}) == []
    assert "rich.console" in modules and "rich._emoji_codes" not in modules   # titles as Text, no emoji


# ------------------------------------------------------------------ plain records, value semantics
def test_limits_are_immutable_values():
    a = limits.Limits(max_depth=30, max_seconds=2)
    assert a == limits.Limits(max_depth=30, max_seconds=2) and hash(a) == hash(limits.Limits(max_depth=30,
                                                                                            max_seconds=2))
    assert a != limits.Limits() and a.max_seconds == 2 and a.max_elements == 10**8
    with pytest.raises(AttributeError):
        a.max_depth = 1
    assert pickle.loads(pickle.dumps(a)) == a
    assert repr(limits.Limits()).startswith("Limits(max_elements=100000000, max_loop_iterations=1000000, ")
    with pytest.raises(ValueError, match="max_depth must be a whole number"):
        limits.Limits(max_depth=1.5)
    assert limits.Limits.from_env({"GRADEXPR_MAX_DEPTH": "7"}, max_seconds=3) == \
        limits.Limits(max_depth=7, max_seconds=3.0)
    assert list(limits.OPTION_NAMES.values()) == ["--max-elements", "--max-loop-iterations", "--max-seconds",
                                                  "--max-depth", "--max-int-digits", "--max-str-len",
                                                  "--max-recursion"]


def test_graph_description_records_compare_by_value():
    from gradexpr import api
    from gradexpr.graphview import GraphEdge, GraphNode, describe
    torch = api.build()["torch"]
    x = torch.ones(2, requires_grad=True)
    y = (x * 2).sum()
    nodes, edges = describe(y, {id(x): "x"})
    again = describe(y, {id(x): "x"})
    assert (nodes, edges) == again
    assert [n.name for n in nodes] == ["SumBackward0", "MulBackward0", "torch::autograd::AccumulateGrad"]
    assert nodes[2] == GraphNode("n2", "torch::autograd::AccumulateGrad", "leaf", (2,), "float32", "x")
    assert edges[0] == GraphEdge("n1", "n0", 0) and edges[0] != GraphEdge("n1", "n0", 1)
    assert "variable='x'" in repr(nodes[2])


# ------------------------------------------------------------------ eval's JSON, written faster, is the same text
def test_render_dumps_is_json_dumps():
    import numpy as np
    from gradexpr.cli import render
    values = np.array([0.1, 1 / 3, -0.0, 1e-45, 3.4e38, 2.5, -7, np.inf, -np.inf, np.nan], np.float32)
    obj = {"a": render.json_values(values), "b": render.json_values(values[:7].astype(np.float64)),
           "c": render.json_values(values[:7].astype(np.float16)), "d": render.json_values(np.float32(0.1)),
           "e": render.json_values(np.arange(6, dtype=np.int64).reshape(2, 3)), "f": [None, True, "é\n"]}
    assert obj["a"] == [0.1, 0.33333334, -0.0, 1e-45, 3.4e38, 2.5, -7.0, "inf", "-inf", "nan"]
    assert obj["d"] == 0.1 and obj["e"] == [[0, 1, 2], [3, 4, 5]]
    assert render.dumps(obj) == json.dumps(obj, allow_nan=False)
    with pytest.raises(ValueError):
        render.dumps({"x": float("nan")})
    big = np.linspace(-3, 3, 1000, dtype=np.float32).reshape(10, 100)     # the vectorised route
    assert render.json_values(big) == [[float(str(v)) for v in row] for row in big]


# ------------------------------------------------------------------ the end of the process
def _command(*args, stdin=None):
    """``python -m gradexpr ARGS`` as a user runs it: its output read through pipes, which Python
    buffers (unless PYTHONUNBUFFERED says otherwise: not here)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return subprocess.run([sys.executable, "-m", "gradexpr", *args], capture_output=True, text=True,
                          input=stdin, timeout=120, env=env)


def test_the_command_ends_with_all_its_output_written():
    # the process ends without the interpreter's finalisation (cli/main.py end_process): what
    # the streams buffered must still arrive, a pipe's worth and more
    p = _command("run", "-", stdin="for i in range(30000):\n    print(i)\n")
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == [str(i) for i in range(30000)]
    p = _command("eval", "ones(200, 200)", "--json")
    assert p.returncode == 0 and len(json.loads(p.stdout)["value"]) == 200


def test_the_command_keeps_its_exit_status_and_diagnostics():
    p = _command("run", "-", stdin="print(1)\nx = ones(2) @ ones(3)\n")
    assert (p.returncode, p.stdout) == (1, "1\n")
    assert "<stdin>:2:" in p.stderr and "RuntimeError" in p.stderr
    p = _command("run", "-", stdin="x = (\n")
    assert p.returncode == 2 and "SyntaxError" in p.stderr
    p = _command("eval", "x", "--json", "--no-such-option")    # main writes this one itself
    assert p.returncode == 2 and "No such option" in p.stderr
    assert json.loads(p.stdout)["errors"][0]["type"] == "UsageError"


def test_called_in_a_process_of_its_own_main_exits_as_python_does():
    from gradexpr.cli.main import main
    with pytest.raises(SystemExit) as exit_:
        main(["eval", "2 * 3", "--json"])
    assert exit_.value.code == 0
