"""One grad_fn tree for eval, graph and the REPL: the same lines, the node ids of --trace and the
JSON graph, chains drawn as columns and a loop's repeated body folded."""
import json
import re

from click.testing import CliRunner

from gradexpr.cli.main import cli

LOOP = "y = x\nfor i in range(60):\n    y = (y * w).sin()\ny.sum()\n"
ARGS = ["-v", "x=ones(3)", "-v", "w=0.5"]


def run(*args, input=None):
    r = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    assert r.exit_code == 0, r.stderr
    return r.stdout


def eval_tree(stdout):
    return stdout.split("grad_fn:\n", 1)[1].split("\n\n", 1)[0] + "\n"


def test_a_60_iteration_loop_is_folded_and_narrow():
    tree = run("graph", LOOP, *ARGS)
    lines = tree.splitlines()
    assert len(lines) <= 12 and max(map(len, lines)) < 80
    fold = [line for line in lines if "× 58" in line]
    assert len(fold) == 1 and "(SinBackward0 ← MulBackward0)" in fold[0] and "with w (n4)" in fold[0]
    # every node is drawn or folded: the ids drawn plus the fold's range cover the JSON graph's
    nodes = json.loads(run("graph", LOOP, *ARGS, "--json"))["nodes"]
    first, last = re.search(r"\((n\d+)–(n\d+)\)", fold[0]).groups()
    ids = [n["id"] for n in nodes]
    folded = {i for i in ids[ids.index(first):ids.index(last) + 1] if i != "n4"}
    drawn = set(re.findall(r"\((n\d+)\)", tree))
    assert drawn | folded == set(ids) and len(folded) == 2 * 58


def test_eval_and_graph_draw_the_same_tree_with_the_ids_of_trace():
    program = "y = x * w\n(y.exp() + y * y).sum()"
    graph_tree = run("graph", program, "-v", "x=ones(2)", "-v", "w=2.")
    out = run("eval", program, "-v", "x=ones(2)", "-v", "w=2.", "--trace")
    assert eval_tree(out) == graph_tree
    drawn = dict((i, name) for name, i in re.findall(r"(\w+) \[[^]]*\] \w+ \((n\d+)\)", graph_tree))
    traced = re.findall(r"^\d+\. (\w+) \((n\d+)\)", out, re.M)
    assert traced and all(drawn[i] == name for name, i in traced)
    assert run("eval", LOOP, *ARGS).count("× 58 (SinBackward0 ← MulBackward0)") == 1


def test_a_chain_is_a_column_and_branches_only_where_a_node_has_several_inputs():
    tree = run("graph", "(x.exp() + b).tanh().sum()", "-v", "x=ones(2)", "-v", "b=1.")
    assert tree == ("SumBackward0 [] float32 (n0)  ← target\n"
                    "TanhBackward0 [2] float32 (n1)\n"
                    "AddBackward0 [2] float32 (n2)\n"
                    "├── ExpBackward0 [2] float32 (n3)\n"
                    "│   x: AccumulateGrad [2] float32 (n5)\n"
                    "└── b: AccumulateGrad [] float32 (n4)\n")


def test_a_chain_of_one_op_keeps_its_first_and_last_node_and_folds_the_rest():
    tree = run("graph", "y = x\nfor i in range(100):\n    y = y.exp()\ny.sum()", "-v", "x=ones(3)")
    assert tree.splitlines() == ["SumBackward0 [] float32 (n0)  ← target", "ExpBackward0 [3] float32 (n1)",
                                 "… × 98 ExpBackward0 [3] float32 (n2–n99)", "ExpBackward0 [3] float32 (n100)",
                                 "x: AccumulateGrad [3] float32 (n101)"]


def test_the_repl_graph_command_draws_the_same_tree():
    out = run("repl", input="x = ones(2, requires_grad=True)\ny = (x.exp() * 2).sum()\ny\n:graph\n")
    assert "ExpBackward0 [2] float32 (n2)\nx: AccumulateGrad [2] float32 (n3)" in out
