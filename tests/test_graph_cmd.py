"""``gradexpr graph``: every format shows exactly the engine's graph (``graphview.describe``)."""
import html
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter

import pytest
from click.testing import CliRunner

from gradexpr.cli.main import cli
from gradexpr.grammar.interpreter import Interpreter
from gradexpr.grammar.parser import parse
from gradexpr.grammar.prelude import make_globals
from gradexpr.graphview import describe
from gradexpr.tensor import Tensor

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")

X = "x = tensor([1., 2., 3.], requires_grad=True)\n"
# name -> (program, the leaf variables its graph must contain)
PROGRAMS = {
    "readme-example": ("x = ones(3, requires_grad=True)\nw = ones(3, requires_grad=True)\n"
                       "b = tensor(0.5, requires_grad=True)\n((x * w + b).tanh() ** 2).mean()\n", {"x", "w", "b"}),
    "shared-subexpression": (X + "w = tensor([0.5, -1., 2.], requires_grad=True)\ny = x * w\n"
                             "(y * y).sum() + y.mean()\n", {"x", "w"}),
    "detached-branch": (X + "d = tensor([1., 1., 1.], requires_grad=True)\n(x * 2 + (x * d).detach()).sum()\n", {"x"}),
    "no-grad-branch": (X + "d = tensor([1., 1., 1.], requires_grad=True)\nwith torch.no_grad():\n"
                       "    c = (x * d).exp()\n(x * c).sum()\n", {"x"}),
    "leaf-without-grad": (X + "k = tensor([1., 2., 3.])\ni = arange(3)\n(x * k + i).sum()\n", {"x"}),
    # a custom Function with two outputs: one node, reached by both
    "custom-function": (X + "class Two(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, a):\n"
                        "        ctx.save_for_backward(a)\n        return a ** 3, a * 2\n    @staticmethod\n"
                        "    def backward(ctx, g, h):\n        a, = ctx.saved_tensors\n"
                        "        return 3 * a ** 2 * g + 2 * h\n"
                        "u, v = Two.apply(x)\n(u * v).sum()\n", {"x"}),
}


def engine_graph(program):
    """The engine's own description of the program's graph, leaves named after the program's variables."""
    interp = Interpreter(make_globals())
    interp.run(parse(program, "<test>"))
    names = {}
    for name, value in interp.globals.items():
        if isinstance(value, Tensor):
            names.setdefault(id(value), name)
    return describe(interp.last_value, names)


def graph(*args, input=None):
    return CliRunner().invoke(cli, ["graph", *args], input=input)


def edge_pairs(edges):
    return Counter((e.source, e.target) for e in edges)


def short(node):
    return node.name.rsplit("::", 1)[-1]


# ---------------------------------------------------------------- parsers of each format

TREE_LINE = re.compile(r"^((?:│   |    )*)((?:├── |└── )?)(?:(\w+): )?(\w+) .*?\((n\d+)\)")


def parse_tree(text):
    """Node ids -> (variable, name), and the (input, consumer) edges, from the tree: a line with a
    ``├──``/``└──`` branch is an input of the last line whose text starts where the branch does; a
    line without one (a chain) is the input of the last line starting in its own column."""
    nodes, pairs, path = {}, Counter(), []       # path: (text column, node id)
    for line in text.splitlines():
        m = TREE_LINE.match(line)
        assert m, f"not a tree line: {line!r}"
        column = len(m[1])
        var, name, node_id = m[3], m[4], m[5]
        if "(shown above)" in line:
            assert node_id in nodes
        else:
            assert node_id not in nodes
            nodes[node_id] = (var, name)
        while path and path[-1][0] > column:
            path.pop()
        if path:
            assert path[-1][0] == column, line
            pairs[(node_id, path[-1][1])] += 1
        path.append((column + len(m[2]), node_id))
    return nodes, pairs


def parse_dot(text):
    nodes = {m[1]: (m[2].split("\\n")[0], m[3]) for m in re.finditer(r'^  (n\d+) \[label="([^"]*)"(.*)\]$', text, re.M)}
    pairs = Counter(re.findall(r"^  (n\d+) -> (n\d+)$", text, re.M))
    return nodes, pairs


def parse_mermaid(text):
    nodes = {m[1]: (m[2].split("<br/>")[0], m[3]) for m in re.finditer(r'^  (n\d+)\["(.*)"\]:::(\w+)$', text, re.M)}
    pairs = Counter(re.findall(r"^  (n\d+) --> (n\d+)$", text, re.M))
    return nodes, pairs


def parse_svg(text):
    titles = [html.unescape(t) for t in re.findall(r"<title>([^<]*)</title>", text)]
    nodes = {t for t in titles if re.fullmatch(r"n\d+", t)}
    pairs = Counter(tuple(t.split("->")) for t in titles if "->" in t)
    return nodes, pairs


# ---------------------------------------------------------------- every format equals the engine's graph

@pytest.fixture(params=sorted(PROGRAMS))
def program(request):
    source, leaves = PROGRAMS[request.param]
    nodes, edges = engine_graph(source)
    assert {n.variable for n in nodes if n.kind == "leaf"} == leaves   # the engine's graph itself is right
    return source, nodes, edges


def test_json_is_the_engine_graph(program):
    source, nodes, edges = program
    r = graph(source, "--format", "json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["version"] == 1 and doc["target"] == "n0"
    assert doc["nodes"] == [{"id": n.id, "name": n.name, "kind": n.kind, "shape": list(n.shape), "dtype": n.dtype,
                             "variable": n.variable, "is_target": n.is_target,
                             "saved": [{"name": k, "shape": list(s)} for k, s in n.saved]} for n in nodes]
    assert [(e["source"], e["target"], e["input"]) for e in doc["edges"]] == [(e.source, e.target, e.input)
                                                                             for e in edges]


def test_plain_tree_is_the_engine_graph(program):
    source, nodes, edges = program
    r = graph(source)                        # not a terminal: the plain-text tree
    assert r.exit_code == 0, r.stderr
    shown, pairs = parse_tree(r.stdout)
    assert shown == {n.id: (n.variable, short(n)) for n in nodes}
    assert pairs == edge_pairs(edges)
    assert r.stdout.splitlines()[0].endswith("(n0)  ← target")


def test_dot_is_the_engine_graph(program):
    source, nodes, edges = program
    r = graph(source, "--format", "dot")
    assert r.exit_code == 0, r.stderr
    shown, pairs = parse_dot(r.stdout)
    assert {i: title for i, (title, _) in shown.items()} == {
        n.id: n.variable if n.kind == "leaf" else short(n) for n in nodes}
    assert {i for i, (_, attrs) in shown.items() if "lightblue" in attrs} == {n.id for n in nodes if n.kind == "leaf"}
    assert {i for i, (_, attrs) in shown.items() if "darkgreen" in attrs} == {"n0"}
    assert pairs == edge_pairs(edges)


def test_mermaid_is_the_engine_graph(program):
    source, nodes, edges = program
    r = graph(source, "--mermaid")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("flowchart TB\n")
    shown, pairs = parse_mermaid(r.stdout)
    assert shown == {n.id: (n.variable if n.kind == "leaf" else short(n), "target" if n.is_target else n.kind)
                     for n in nodes}
    assert pairs == edge_pairs(edges)


@needs_dot
def test_svg_is_the_engine_graph_and_dot_accepts_the_dot(program, tmp_path):
    source, nodes, edges = program
    r = graph(source, "--format", "dot")
    p = subprocess.run(["dot", "-Tsvg"], input=r.stdout, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stderr == "", p.stderr     # no warnings either
    out = tmp_path / "g.svg"
    r = graph(source, "--format", "svg", "-o", str(out))
    assert r.exit_code == 0, r.stderr
    shown, pairs = parse_svg(out.read_text())
    assert shown == {n.id for n in nodes}
    assert pairs == edge_pairs(edges)


def test_rich_tree_on_a_terminal_is_the_engine_graph():
    pty = pytest.importorskip("pty", reason="needs a pseudo-terminal (POSIX)")
    source, _ = PROGRAMS["shared-subexpression"]
    nodes, edges = engine_graph(source)
    master, slave = pty.openpty()
    env = dict(os.environ, COLUMNS="120", TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    p = subprocess.Popen([sys.executable, "-m", "gradexpr.cli.main", "graph", source, "--show-saved"],
                         stdout=slave, stderr=subprocess.PIPE, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:                      # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert p.wait(timeout=60) == 0, p.stderr.read()
    raw = b"".join(chunks).decode()
    assert "\x1b[" in raw                    # styled for a terminal
    text = re.sub(r"\x1b\[[0-9;]*m", "", raw).replace("\r\n", "\n")
    shown, pairs = parse_tree("\n".join(line.rstrip() for line in text.splitlines() if line.strip()))
    assert shown == {n.id: (n.variable, short(n)) for n in nodes}
    assert pairs == edge_pairs(edges)
    assert "saved: other [3], self [3]" in text


# ---------------------------------------------------------------- -v / -c binding and target selection

def test_floating_values_bound_with_v_are_leaves_and_c_values_are_constants():
    r = graph("(x * k + b) ** n", "-v", "x=ones(2, 3)", "-v", "b=0.5", "-v", "n=2", "-c", "k=ones(3)", "--json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    leaves = {n["variable"]: n["shape"] for n in doc["nodes"] if n["kind"] == "leaf"}
    assert leaves == {"x": [2, 3], "b": []}           # n stays a Python int, k is a constant
    assert doc["nodes"][0]["name"] == "PowBackward0"
    r = graph("x.sum()", "-v", "x=[1., 2.]", "--json")
    assert [n["variable"] for n in json.loads(r.stdout)["nodes"]] == [None, "x"]


def test_of_names_the_target_and_stdin_and_files_work(tmp_path):
    prog = "x = tensor([1., 2.], requires_grad=True)\nprint('hello')\nloss = (x * x).sum()\nother = x.exp()\n"
    r = graph("-", "--of", "loss", input=prog)
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines()[0] == "loss: SumBackward0 [] float32 (n0)  ← target"
    assert "hello" in r.stderr and "hello" not in r.stdout      # program output never mixes into the graph
    f = tmp_path / "p.gx"
    f.write_text(prog)
    r2 = graph("-f", str(f), "--of", "loss")
    assert r2.exit_code == 0 and r2.stdout == r.stdout


def test_target_that_does_not_require_grad_gives_an_empty_graph_and_a_note():
    r = graph("ones(3) * 2", "--json")
    assert r.exit_code == 0
    assert json.loads(r.stdout) == {"version": 1, "target": None, "nodes": [], "edges": []}
    assert "does not require grad" in r.stderr


@pytest.mark.parametrize("args, code, message", [
    (["x * 2", "-v", "x=ones("], 2, "-v x:1:5: SyntaxError"),
    (["x * 2", "-v", "x=nope(3)"], 2, "-v x:1:1: NameError: name 'nope' is not defined"),
    (["x * 2", "-v", "x"], 2, "expected NAME=VALUE"),
    (["x * 2 +", "-v", "x=1."], 2, "<expr>:1:"),
    (["x.backward()", "-v", "x=ones(3)"], 1, "RuntimeError: grad can be implicitly created only for scalar outputs"),
    (["(x * 2).sum()", "-v", "x=ones(3)", "--of", "y"], 2, "--of y: the program binds no name 'y'"),
    (["y = x * 2", "-v", "x=ones(3)"], 2, "nothing to evaluate"),
    (["1 + 2"], 2, "the target is not a tensor"),
    ([], 2, "give an expression, -f FILE, or -"),
])
def test_errors_are_located_with_the_right_exit_code_and_no_traceback(args, code, message):
    r = graph(*args)
    assert r.exit_code == code
    assert message in r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_tree_stops_at_max_nodes_with_a_note():
    # each step multiplies by a leaf of its own, so no run repeats and nothing is folded
    chain = ("x = ones(2, requires_grad=True)\nws = [ones(2, requires_grad=True) for i in range(25)]\ny = x\n"
             "for w in ws:\n    y = y * w\ny\n")
    r = graph(chain, "--max-nodes", "10")
    lines = r.stdout.splitlines()
    assert r.exit_code == 0 and len(lines) == 11
    assert lines[-1].startswith("… 41 more nodes not shown")
    assert len(graph(chain, "--max-nodes", "0").stdout.splitlines()) == 51


# ---------------------------------------------------------------- Graphviz present or absent

def test_svg_without_graphviz_says_how_to_install_it_and_dot_still_works(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))          # no dot on PATH
    for fmt in ("svg", "png"):
        r = graph("(x * 2).sum()", "-v", "x=ones(2)", "--format", fmt, "-o", str(tmp_path / "g"))
        assert r.exit_code == 2
        assert "needs Graphviz's dot program" in r.stderr
        assert "apt-get install graphviz" in r.stderr and "brew install graphviz" in r.stderr
        assert "Traceback" not in r.stderr and not (tmp_path / "g").exists()
    r = graph("(x * 2).sum()", "-v", "x=ones(2)", "--format", "dot")
    assert r.exit_code == 0 and r.stdout.startswith("digraph gradexpr {")


@needs_dot
def test_png_is_written_to_the_output_file_as_a_subprocess(tmp_path):
    out = tmp_path / "g.png"
    p = subprocess.run([sys.executable, "-m", "gradexpr.cli.main", "graph", "((x * w + b).tanh() ** 2).mean()",
                        "-v", "x=ones(3)", "-v", "w=ones(3)", "-v", "b=0.5", "--format", "png", "-o", str(out)],
                       capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout == b"" and out.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
