"""An evaluation on a terminal: the plain sections with colour, fitted to ``console.width``.

Nothing here ever cuts a number. Tensor text is PyTorch's, printed with PyTorch's line width
set to the columns available (``gradexpr.printing`` wraps by it), and written with rich's
wrapping off, so neither a panel nor a table cell re-wraps it. Jacobian and Hessian tables
take as many whole columns as fit (the first and last ones, as PyTorch summarises) and say how
many they dropped; the table's width is measured by rich before it is printed.
"""
from __future__ import annotations

import numpy as np

from .render import MAX_ROWS, _matrices, _pointwise_sections, _shown, index_label, jvp_rows, shape_text, value_text

MIN_WIDTH = 20      # below this, tensors are laid out for 20 columns and the terminal wraps them


def tensor_text(value, width: int) -> str:
    """What ``print(value)`` shows with PyTorch's line width set to ``width``."""
    from gradexpr import printing
    with printing.printoptions(linewidth=max(MIN_WIDTH, width)):
        return value_text(value)


def show(ev, console=None):
    """Every section of ``render.plain``, for a terminal."""
    from rich.text import Text
    from gradexpr.tensor import Tensor
    from .terminal import console as terminal_console
    # Text, not markup strings: nothing here is markup or emoji codes (and rich's emoji table,
    # 4 ms to load, stays unloaded)
    console = console or terminal_console()
    width = console.width

    def heading(text, note=None):
        console.print(Text.assemble((text, "bold"), (f"  {note}" if note else "", "dim")))

    def block(text, indent=0, style=None):
        pad = " " * indent
        console.print(Text(pad + text.replace("\n", "\n" + pad), style=style), soft_wrap=True)

    if ev.output:
        heading("printed")
        block(ev.output.rstrip("\n"), style="dim")     # as the program printed it; the terminal wraps it
    if ev.error is not None and ev.value is None:       # the program failed: nothing more to show
        return
    heading("value" + (f" of {ev.target_name}" if ev.target_name else ""))
    block(tensor_text(ev.value, width), style="bold blue")
    if isinstance(ev.value, Tensor):
        nodes, edges = ev.graph
        if nodes:
            from . import tree
            from .render import MAX_TREE_NODES, TREE_MORE
            heading("grad_fn")
            console.print(tree.rich_text(nodes, edges, console.width, max_nodes=MAX_TREE_NODES, more_hint=TREE_MORE),
                          soft_wrap=True)
        else:
            console.print(Text("grad_fn: None", style="dim"))
    if ev.error is not None:                            # the differentiation failed: the value and graph stand
        return
    leaves = {leaf.name: leaf for leaf in ev.leaves}
    if ev.grads is not None:
        heading("gradients" if ev.grad_output is None else "vector–Jacobian products (--grad-output)")
        for name, g in ev.grads.items():
            leaf = leaves[name].tensor
            console.print(Text.assemble((name, "bold green"), f" {shape_text(leaf._data.shape)} {leaf._dtype.name}"))
            if g is None:
                block("None (the target does not depend on it)", 2, "dim")
            else:
                block(tensor_text(g, width - 2), 2)
    if ev.jvp is not None:
        heading("Jacobian–vector product", "--jvp, forward mode")
        for label, t in jvp_rows(ev):
            console.print(Text(label, style="bold green"))
            block(tensor_text(t, width - 2), 2)
    for title, caption, titles, body, note in _pointwise_sections(ev):
        heading(title)
        console.print(_columns_table(titles, body))
        console.print(Text(caption, style="dim"))
        if note:
            console.print(Text(note, style="dim"))
    for title, caption, matrix, out_shape, in_shape in _matrices(ev, unicode=True):
        table, note = matrix_table(console, matrix, out_shape, in_shape)
        heading(title)
        console.print(table)
        console.print(Text(caption, style="dim"))
        if note:
            console.print(Text(note, style="dim"))
    if ev.trace is not None:
        heading("backward pass", "in the order the engine ran it")
        for k, step in enumerate(ev.trace, 1):
            console.print(Text.assemble(f"{k}. ", (step.name, "bold cyan"), (f" ({step.node})", "dim")))
            console.print(Text("   gradient in:", style="dim"))
            block(tensor_text(step.grad_in, width - 5), 5)
            for dest, label, i, g in step.sent:
                where = f" ({dest})" if dest and dest != label else ""
                console.print(Text.assemble("   → input ", str(i), ", ", (label, "green"), (where, "dim")))
                block(tensor_text(g, width - 5), 5)
    if ev.check is not None:
        _show_check(console, ev.check)
    for n in ev.notes:
        console.print(Text(f"note: {n}", style="yellow"), soft_wrap=True)


def _show_check(console, c):
    from rich.table import Table
    from rich.text import Text
    table = Table()
    for col in ("leaf", "elements", "max abs error", "max rel error", "result"):
        table.add_column(col, justify="right" if "error" in col or col == "elements" else "left",
                         no_wrap=col != "result")
    for r in c.leaves:
        if r.skipped:
            table.add_row(r.leaf, "—", "—", "—", Text(f"not checked: {r.skipped}", style="yellow"))
        else:
            table.add_row(r.leaf, f"{r.checked} of {r.total}", f"{r.max_abs:.3g}", f"{r.max_rel:.3g}",
                          Text("ok", style="bold green") if r.ok else Text("FAILED", style="bold red"))
    console.print(Text("gradient check", style="bold"))
    console.print(table)
    console.print(Text(f"float64 central differences, eps={c.eps:g}; "
                       f"ok when |error| <= {c.atol:g} + {c.rtol:g} * |numeric|", style="dim"))
    from .render import low_precision_note
    for r in c.leaves:
        if r.precision and not r.skipped:
            console.print(Text(low_precision_note(r), style="yellow"), soft_wrap=True)


def _columns_table(titles, body):
    from rich.table import Table
    from rich.text import Text
    table = Table()
    table.add_column("", style="dim", justify="right", no_wrap=True)
    for i, t in enumerate(titles):
        table.add_column(Text(t), justify="right", no_wrap=True, style="green" if i == 0 else None)
    for label, cells in body:
        table.add_row(label.replace("...", "…"), *(c.replace("...", "…") for c in cells))
    return table


# ================================================================ Jacobian and Hessian tables
def _cells(matrix, rows, columns):
    """The shown cells, formatted together as PyTorch formats one tensor (one width, one notation)."""
    from gradexpr import printing
    m = matrix[np.ix_(rows, columns)]
    kind = "f" if m.dtype.kind == "f" else "b" if m.dtype.kind == "b" else "i"
    opts = printing.get_printoptions()
    fmt = printing._Formatter(kind, m, opts["precision"], opts["sci_mode"]).element_fn()
    return [[fmt(v).strip() for v in row] for row in m.tolist()]


def _build(rows, left, right, cols_n, matrix, out_shape, in_shape):
    from rich.table import Table
    from rich.text import Text
    columns = list(range(left)) + list(range(cols_n - right, cols_n))
    keep = [r for r in rows if r is not None]
    cells = _cells(matrix, keep, columns) if keep and columns else [[] for _ in keep]
    table = Table(show_edge=True)
    table.add_column("", style="dim", justify="right", no_wrap=True)
    headers = [index_label(c, in_shape) for c in columns]
    if left + right < cols_n:
        headers.insert(left, "…")
    for h in headers:
        table.add_column(Text(h), justify="right", no_wrap=True, header_style="dim")
    line = iter(cells)
    for r in rows:
        if r is None:
            table.add_row("…", *(["…"] * len(headers)))
            continue
        row = next(line)
        if left + right < cols_n:
            row = row[:left] + ["…"] + row[left:]
        table.add_row(index_label(r, out_shape), *row)
    return table


def matrix_table(console, block, out_shape, in_shape):
    """A table of whole columns that fits ``console.width``, and a note of what it leaves out."""
    from rich.measure import Measurement
    rows_n = int(np.prod(out_shape, dtype=np.int64)) if len(out_shape) else 1
    cols_n = int(np.prod(in_shape, dtype=np.int64)) if len(in_shape) else 1
    matrix = np.asarray(block._data).reshape(rows_n, cols_n)
    rows = _shown(rows_n, MAX_ROWS)
    # the most columns that fit: at least one, tried from the widest guess down
    k = min(cols_n, max(1, console.width // 3))
    unbounded = console.options.update_width(1 << 20)      # rich clamps a measurement to the width it is given
    while True:
        left, right = (k + 1) // 2, k // 2
        table = _build(rows, left, right, cols_n, matrix, out_shape, in_shape)
        if k <= 1 or Measurement.get(console, unbounded, table).maximum <= console.width:
            break
        k -= 1
    kept_rows = sum(r is not None for r in rows)
    note = None
    if kept_rows < rows_n or k < cols_n:
        dropped = f" ({cols_n - k} dropped to fit {console.width} columns)" if k < cols_n else ""
        note = (f"showing {kept_rows} of {rows_n} rows and {k} of {cols_n} columns{dropped}; "
                "--json has them all")
    return table, note
