"""``gradexpr graph``: the autograd graph of an expression as a tree, DOT, SVG/PNG, JSON or Mermaid.

Every format reads the one description ``gradexpr.graphview.describe`` gives, so
they all show the same nodes (ids ``n0``… with ``n0`` the target) and the same
edges, drawn from an input to the node consuming it, as torchviz draws them.
"""
from __future__ import annotations

import sys

import click

from .options import ExpressionCommand, format_options, limit_options, limits_from

FORMATS = ("tree", "dot", "svg", "png", "json", "mermaid")
RENDERED = ("svg", "png")           # formats that need Graphviz's ``dot`` program
JSON_VERSION = 1
INSTALL_GRAPHVIZ = ("install Graphviz (Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz; "
                    "https://graphviz.org/download/), or use --format dot or --format mermaid")


def _fail(message: str, hint: str | None = None, code: int = 2):
    """Stop with ``gradexpr graph: message`` (and a hint) on stderr: no usage banner, no traceback."""
    sys.stderr.write(f"gradexpr graph: {message}\n" + (f"hint: {hint}\n" if hint else ""))
    sys.exit(code)


# ---------------------------------------------------------------- program and target
def _run(source, filename, variables, constants, of, limits, debug):
    """Bind -v/-c and run the program as ``gradexpr eval`` does; returns (target, names)."""
    from gradexpr.tensor import Tensor

    from gradexpr.session import Bindings, ProgramError, RequestError, run_program

    from .diagnostics import render, request_error_text

    try:
        bindings = Bindings.parse(variables, constants, limits)
        run = run_program(source, filename, bindings, of=of, limits=limits, debug=debug)
    except RequestError as e:
        raise click.UsageError(request_error_text(e)) from None
    except ProgramError as e:
        sys.stderr.write(e.output)
        from .terminal import write_error
        write_error(render(e.error, source, filename))
        sys.exit(int(e.code))
    sys.stderr.write(run.output)          # the program's prints: stdout carries only the graph
    if run.target is None:
        _fail("nothing to draw: the target is None",
              "end the program with the expression to draw, or name a variable with --of NAME")
    if not isinstance(run.target, Tensor):
        _fail(f"nothing to draw: the target is not a tensor (its type is {type(run.target).__name__})")
    return run.target, run.names


# ---------------------------------------------------------------- shared pieces of the renderings

def _shape(shape) -> str:
    """``[2, 2]``, as eval's tree and the JSON write it (``[]`` for a scalar)."""
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _short_name(node) -> str:
    return node.name.rsplit("::", 1)[-1]      # torch::autograd::AccumulateGrad -> AccumulateGrad


def _inputs(nodes, edges) -> dict:
    """``node id -> [input node ids]`` in input order (describe lists edges that way)."""
    inputs = {n.id: [] for n in nodes}
    for e in edges:
        inputs[e.target].append(e.source)
    return inputs


def _label_lines(node, show_saved: bool) -> list:
    """The text of a DOT or Mermaid box: name (a leaf's variable), shape, dtype unless float32."""
    title = node.variable if node.kind == "leaf" and node.variable else _short_name(node)
    if node.kind == "op" and node.variable:
        title = f"{node.variable} = {title}"
    shape = _shape(node.shape) + ("" if node.dtype == "float32" else f" {node.dtype}")
    lines = [title, shape]
    if show_saved:
        lines += [f"{name}: {_shape(s)}" for name, s in node.saved]
    return lines


# ---------------------------------------------------------------- tree (plain and rich): tree.py's

TREE_MORE = "--max-nodes 0 shows all; --format json or dot show the whole graph"


# ---------------------------------------------------------------- DOT, Mermaid, JSON

def _dot_quote(lines) -> str:
    """A DOT string of several lines (``\\n`` between them), quotes and backslashes escaped."""
    return '"' + "\\n".join(line.replace("\\", "\\\\").replace('"', '\\"') for line in lines) + '"'


def render_dot(nodes, edges, show_saved=False) -> str:
    """Graphviz DOT in torchviz's colours: ops grey, leaves light blue, the target green with a dark border."""
    out = ["digraph gradexpr {",
           '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11, '
           'fillcolor=lightgrey, color="#555555", margin="0.12,0.04"]',
           '  edge [color="#555555", arrowsize=0.7]']
    for n in nodes:
        attrs = ["label=" + _dot_quote(_label_lines(n, show_saved))]
        if n.kind == "leaf":
            attrs.append("fillcolor=lightblue")
        if n.is_target:
            if n.kind != "leaf":
                attrs.append("fillcolor=darkolivegreen1")
            attrs.append('color=darkgreen, penwidth=2.5')
        out.append(f"  {n.id} [{', '.join(attrs)}]")
    out += [f"  {e.source} -> {e.target}" for e in edges]
    out.append("}")
    return "\n".join(out) + "\n"


def _mermaid_quote(text: str) -> str:
    return text.replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")


def render_mermaid(nodes, edges, show_saved=False) -> str:
    """A Mermaid flowchart (renders on GitHub without Graphviz), same colours as the DOT."""
    out = ["flowchart TB"]
    for n in nodes:
        label = "<br/>".join(_mermaid_quote(line) for line in _label_lines(n, show_saved))
        cls = "target" if n.is_target else n.kind
        out.append(f'  {n.id}["{label}"]:::{cls}')
    out += [f"  {e.source} --> {e.target}" for e in edges]
    out += ["  classDef op fill:#d3d3d3,stroke:#555555,color:#000000",
            "  classDef leaf fill:#add8e6,stroke:#555555,color:#000000",
            "  classDef target fill:#caff70,stroke:#006400,stroke-width:3px,color:#000000"]
    return "\n".join(out) + "\n"


def render_json(nodes, edges) -> str:
    """Nodes and edges with their stable ids; edges go from ``source`` (an input) to ``target``.

    One node or edge per line, each encoded by json's C encoder (``indent=`` would use the
    pure-Python one, minutes for a 10^6-node graph)."""
    import json
    node_lines = [json.dumps({"id": n.id, "name": n.name, "kind": n.kind, "shape": list(n.shape),
                              "dtype": n.dtype, "variable": n.variable, "is_target": n.is_target,
                              "saved": [{"name": k, "shape": list(s)} for k, s in n.saved]}) for n in nodes]
    edge_lines = [json.dumps({"source": e.source, "target": e.target, "input": e.input}) for e in edges]
    target = json.dumps(nodes[0].id if nodes else None)
    return (f'{{"version": {JSON_VERSION}, "target": {target},\n "nodes": {_json_lines(node_lines)},\n'
            f' "edges": {_json_lines(edge_lines)}\n}}\n')


def _json_lines(items) -> str:
    return "[\n  " + ",\n  ".join(items) + "\n ]" if items else "[]"


def render_with_graphviz(dot_source: str, fmt: str) -> bytes:
    """SVG or PNG bytes from Graphviz's ``dot`` (checked for on PATH before the program runs)."""
    import subprocess
    sharper = ["-Gdpi=144"] if fmt == "png" else []      # 1.5x Graphviz's 96 dpi: crisp on HiDPI screens
    p = subprocess.run(["dot", f"-T{fmt}", *sharper], input=dot_source.encode(), capture_output=True)
    if p.returncode != 0:
        _fail(f"Graphviz's dot failed: {p.stderr.decode(errors='replace').strip()}", code=1)
    return p.stdout


# ---------------------------------------------------------------- the command

SUFFIXES = {".svg": "svg", ".png": "png", ".dot": "dot", ".gv": "dot", ".json": "json", ".mmd": "mermaid",
            ".mermaid": "mermaid", ".txt": "tree"}


def format_of(output) -> str | None:
    """The format an output file's suffix names (``-o g.svg`` is SVG), or None."""
    if output is None:
        return None
    import os
    return SUFFIXES.get(os.path.splitext(output)[1].lower())


def _read_program(expr, file):
    from .run_cmd import read_source
    if (expr is None) == (file is None):
        raise click.UsageError("give an expression, -f FILE, or - to read the program from stdin")
    if file is not None:
        return read_source(file)
    if expr == "-":
        return read_source("-")
    return expr, "<expr>"


@click.command("graph", cls=ExpressionCommand)
@click.argument("expr", required=False, metavar="EXPR | -")
@click.option("-f", "--file", "file", metavar="FILE", help="read the program from FILE (- for stdin)")
@click.option("-v", "--var", "variables", multiple=True, metavar="NAME=VALUE",
              help="bind a variable (VALUE is an expression); floating values are leaves that require grad")
@click.option("-c", "--const", "constants", multiple=True, metavar="NAME=VALUE",
              help="bind a constant: no gradient flows to it")
@click.option("--of", "of", metavar="NAME", help="draw the graph of variable NAME (default: the last expression)")
@lambda fn: format_options(fn, FORMATS, "default tree: rich on a terminal, plain text in a pipe")
@click.option("-o", "--output", type=click.Path(dir_okay=False), metavar="FILE",
              help="write to FILE instead of stdout; its suffix picks the format unless one is given "
                   "(.svg .png .dot .gv .json .mmd .txt)")
@click.option("--show-saved", is_flag=True, help="list the tensors each node saved for backward, with shapes")
@click.option("--max-nodes", type=click.IntRange(min=0), default=500, metavar="N",
              help="tree format: stop after N nodes (default 500; 0: no limit)")
@limit_options
@click.option("--debug", is_flag=True, help="show a Python traceback for errors (for gradexpr developers)")
def graph(expr, file, variables, constants, of, fmt, output, show_saved, max_nodes, debug, **kwargs):
    """Draw the autograd graph of EXPR (a program; its target is the last expression or --of NAME).

    \b
    gradexpr graph "((x * w + b).tanh() ** 2).mean()" -v x="ones(3)" -v w="ones(3)" -v b=0.5
    gradexpr graph -f prog.gx --of loss --format svg -o graph.svg
    """
    import shutil

    from gradexpr.graphview import describe

    fmt = fmt or format_of(output) or "tree"
    if fmt in RENDERED and shutil.which("dot") is None:
        _fail(f"--format {fmt} needs Graphviz's dot program, which is not installed", INSTALL_GRAPHVIZ)
    if fmt == "png" and output is None and sys.stdout.isatty():
        raise click.UsageError("PNG is binary: write it to a file with -o FILE (or pipe it)")
    limits = limits_from(kwargs)
    source, filename = _read_program(expr, file)
    target, names = _run(source, filename, variables, constants, of, limits, debug)
    nodes, edges = describe(target, names)
    if not nodes:
        sys.stderr.write("gradexpr graph: note: the target does not require grad, so it has no graph\n"
                         "hint: bind floating inputs with -v NAME=VALUE to make them leaves that require grad\n")

    from . import tree
    if fmt == "tree" and output is None and sys.stdout.isatty():
        if nodes:
            from .terminal import console
            terminal = console()
            terminal.print(tree.rich_text(nodes, edges, terminal.width, show_saved=show_saved, max_nodes=max_nodes,
                                          more_hint=TREE_MORE), soft_wrap=True)
        return
    if fmt == "tree":
        text = tree.plain(nodes, edges, show_saved=show_saved, max_nodes=max_nodes, more_hint=TREE_MORE)
    elif fmt == "json":
        text = render_json(nodes, edges)
    elif fmt == "mermaid":
        text = render_mermaid(nodes, edges, show_saved)
    else:
        text = render_dot(nodes, edges, show_saved)
    data = render_with_graphviz(text, fmt) if fmt in RENDERED else text.encode()
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    try:
        with open(output, "wb") as f:
            f.write(data)
    except OSError as e:
        _fail(f"cannot write {output}: {e.strerror}")
