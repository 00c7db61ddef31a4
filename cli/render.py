"""Showing an evaluation: rich (terminals), plain text (diffs, golden files) and JSON (tools).

The three formats show the same sections in the same order — printed output, value,
grad_fn graph, gradients, Jacobian, Hessian, trace, check, notes — from one
``Evaluation`` (``eval_cmd.py``). Tensors are written as PyTorch prints them
(``gradexpr.printing``), so big ones are summarised as PyTorch summarises them;
Jacobian and Hessian tables show at most ``MAX_ROWS`` × ``MAX_COLUMNS`` cells and say
so. The graph tree is ``tree.py``'s, the one ``gradexpr graph`` draws.

JSON follows ``docs/eval.schema.json`` (``SCHEMA``): numbers as JSON numbers (float32
values by their shortest round-trip decimal), non-finite values as the strings
``"nan"``, ``"inf"``, ``"-inf"``.
"""
from __future__ import annotations

import math

import numpy as np

SCHEMA = "gradexpr-eval/1"
MAX_ROWS = 12          # rows of a Jacobian/Hessian table (the first and last half when cut)
MAX_COLUMNS = 8
MAX_TREE_NODES = 200   # nodes of the graph tree; the JSON graph always has every node
TREE_MORE = "gradexpr graph or --json shows them all"


# ================================================================ small pieces
def shape_text(shape) -> str:
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def value_text(value) -> str:
    """What ``print(value)`` shows for the target (PyTorch's text for a tensor)."""
    return repr(value) if not isinstance(value, str) else value


def index_label(flat: int, shape) -> str:
    """The multi-index of a flattened position: ``3`` for 1-d, ``(0, 1)`` for n-d, ``·`` for 0-d."""
    if len(shape) == 0:
        return "·"
    idx = np.unravel_index(flat, tuple(shape))
    if len(shape) == 1:
        return str(int(idx[0]))
    return "(" + ", ".join(str(int(i)) for i in idx) + ")"


def _shown(n: int, limit: int):
    """Positions shown of ``n`` (None marks the cut), the first and last halves when over ``limit``."""
    if n <= limit:
        return list(range(n))
    half = limit // 2
    return list(range(half)) + [None] + list(range(n - (limit - half), n))


def matrix_cells(block, out_shape, in_shape, ellipsis="…"):
    """A Jacobian-like block as a capped table: (column labels, rows of (label, cells), note)."""
    from gradexpr import printing
    rows_n = int(np.prod(out_shape, dtype=np.int64)) if len(out_shape) else 1
    cols_n = int(np.prod(in_shape, dtype=np.int64)) if len(in_shape) else 1
    m = np.asarray(block._data).reshape(rows_n, cols_n)
    rows, cols = _shown(rows_n, MAX_ROWS), _shown(cols_n, MAX_COLUMNS)
    keep_r = [r for r in rows if r is not None]
    keep_c = [c for c in cols if c is not None]
    kind = "f" if m.dtype.kind == "f" else "b" if m.dtype.kind == "b" else "i"
    opts = printing.get_printoptions()
    fmt = printing._Formatter(kind, m[np.ix_(keep_r, keep_c)], opts["precision"], opts["sci_mode"]).element_fn()
    header = [index_label(c, in_shape) if c is not None else ellipsis for c in cols]
    body = []
    for r in rows:
        if r is None:
            body.append((ellipsis, [ellipsis] * len(cols)))
        else:
            body.append((index_label(r, out_shape), [fmt(m[r, c].item()).strip() if c is not None else ellipsis
                                                      for c in cols]))
    note = None
    if len(keep_r) < rows_n or len(keep_c) < cols_n:
        note = f"showing {len(keep_r)} of {rows_n} rows and {len(keep_c)} of {cols_n} columns; --json has them all"
    return header, body, note


# ================================================================ plain text
def _title_of(ev) -> str:
    return ev.target_name or "target"


def _matrices(ev, unicode: bool):
    """(title, caption, block, row shape, column shape) of every Jacobian and Hessian block."""
    leaves = {leaf.name: leaf for leaf in ev.leaves}
    d, d2 = ("∂", "∂²") if unicode else ("d", "d2")
    target = _title_of(ev)

    def caption(row_name, row_shape, col_name, col_shape):
        return (f"rows: {row_name} {shape_text(row_shape)} ({_count(row_shape)}), "
                f"columns: {col_name} {shape_text(col_shape)} ({_count(col_shape)})")

    if ev.jacobian is not None:
        out_shape = tuple(ev.value._data.shape)
        for name, block in ev.jacobian.items():
            if ev.pointwise and name in ev.pointwise:      # shown as a column: pointwise_table
                continue
            in_shape = tuple(leaves[name].tensor._data.shape)
            yield (f"Jacobian {d}{target}/{d}{name}", caption(target, out_shape, name, in_shape) + _by_mode(ev),
                   block, out_shape, in_shape)
    if ev.hessian is not None:
        for a, row in ev.hessian.items():
            for b, block in row.items():
                sa, sb = tuple(leaves[a].tensor._data.shape), tuple(leaves[b].tensor._data.shape)
                yield (f"Hessian {d2}{target}/{d}{a}{d}{b}", caption(a, sa, b, sb), block, sa, sb)


def _by_mode(ev) -> str:
    return "; forward mode: a column per leaf element" if ev.mode == "forward" else ""


def jvp_rows(ev):
    """(label, tensor) of --jvp's section: each leaf's tangent, then the target's."""
    rows = [(f"{name} tangent", t) for name, t in ev.tangents.items()]
    return rows + [(f"{_title_of(ev)} tangent (J·v)", ev.jvp)]


def pointwise_table(ev, name, pw, ellipsis="…"):
    """``x | f(x) | f'(x) [| f''(x)]`` per element: (column titles, rows of (label, cells), note)."""
    from gradexpr import printing
    f = ev.target_name or "f"
    columns = [pw.leaf, ev.value, pw.first] + ([pw.second] if pw.second is not None else [])
    titles = [name, f"{f}({name})", f"{f}'({name})", f"{f}''({name})"][:len(columns)]
    shape = tuple(pw.leaf._data.shape)
    n = _count(shape)
    rows = _shown(n, MAX_ROWS)
    keep = [r for r in rows if r is not None]
    opts = printing.get_printoptions()
    texts = []
    for t in columns:
        flat = np.asarray(t._data).reshape(-1)
        kind = "f" if flat.dtype.kind == "f" else "b" if flat.dtype.kind == "b" else "i"
        fmt = printing._Formatter(kind, flat[keep], opts["precision"], opts["sci_mode"]).element_fn()
        texts.append({r: fmt(flat[r].item()).strip() for r in keep})
    body = [(ellipsis, [ellipsis] * len(columns)) if r is None else (index_label(r, shape), [c[r] for c in texts])
            for r in rows]
    note = f"showing {len(keep)} of {n} elements; --json has them all" if len(keep) < n else None
    return titles, body, note


def _pointwise_sections(ev):
    """(title, caption, titles, rows, note) of each leaf the target is elementwise in."""
    for name, pw in (ev.pointwise or {}).items():
        caption = f"the target is elementwise in {name}: its Jacobian is diagonal, shown as a column"
        yield (f"pointwise in {name}", caption, *pointwise_table(ev, name, pw, ellipsis="..."))


def _plain_columns(titles, body):
    labels = [label for label, _ in body]
    lw = max([len(label) for label in labels] + [1])
    widths = [max([len(h)] + [len(cells[i]) for _, cells in body]) for i, h in enumerate(titles)]
    lines = [" " * lw + "  " + "  ".join(h.rjust(w) for h, w in zip(titles, widths))]
    for label, cells in body:
        lines.append(label.rjust(lw) + "  " + "  ".join(c.rjust(w) for c, w in zip(cells, widths)))
    return lines


def _plain_matrix(title, caption, block, out_shape, in_shape) -> str:
    header, body, note = matrix_cells(block, out_shape, in_shape, ellipsis="...")
    lines = [f"{title} ({caption})"] + _plain_columns(header, body)
    if note:
        lines.append(f"({note})")
    return "\n".join(lines)


def _count(shape) -> int:
    return int(np.prod(shape, dtype=np.int64)) if len(shape) else 1


def plain(ev) -> str:
    """Every section as stable plain text (no colour, no terminal width)."""
    from gradexpr.tensor import Tensor
    parts = []
    if ev.output:
        parts.append("printed:\n" + ev.output.rstrip("\n"))
    if ev.error is not None and ev.value is None:       # the program failed: nothing more to show
        return "\n\n".join(parts) + "\n" if parts else ""
    parts.append("value:\n" + value_text(ev.value))
    if isinstance(ev.value, Tensor):
        nodes, edges = ev.graph
        from . import tree
        parts.append("grad_fn:\n" + (tree.plain(nodes, edges, max_nodes=MAX_TREE_NODES, more_hint=TREE_MORE)
                                      .rstrip("\n") if nodes else "None"))
    if ev.error is not None:                            # the differentiation failed: the value and graph stand
        return "\n\n".join(parts) + "\n"
    leaves = {leaf.name: leaf for leaf in ev.leaves}
    if ev.grads is not None:
        head = "gradients:" if ev.grad_output is None else "vector-Jacobian products (--grad-output):"
        lines = [head]
        for name, g in ev.grads.items():
            leaf = leaves[name].tensor
            lines.append(f"{name} {shape_text(leaf._data.shape)} {leaf._dtype.name}")
            lines.append("  " + ("None (the target does not depend on it)" if g is None
                                 else value_text(g).replace("\n", "\n  ")))
        parts.append("\n".join(lines))
    if ev.jvp is not None:
        parts.append("\n".join(["Jacobian-vector product (--jvp, forward mode):"] + [
            f"{label}\n  " + value_text(t).replace("\n", "\n  ") for label, t in jvp_rows(ev)]).replace("·", "."))
    for title, caption, titles, body, note in _pointwise_sections(ev):
        parts.append("\n".join([f"{title} ({caption}):"] + _plain_columns(titles, body) + ([f"({note})"] if note else [])))
    parts.extend(_plain_matrix(*m) for m in _matrices(ev, unicode=False))
    if ev.trace is not None:
        lines = ["trace (the backward pass in the order the engine ran it):"]
        for k, step in enumerate(ev.trace, 1):
            lines.append(f"{k}. {step.name} ({step.node})")
            lines.append("   gradient in: " + value_text(step.grad_in).replace("\n", "\n" + " " * 16))
            for dest, label, i, g in step.sent:
                head = f"   -> input {i}, {label}" + (f" ({dest})" if dest and not dest == label else "") + ": "
                lines.append(head + value_text(g).replace("\n", "\n" + " " * len(head)))
        parts.append("\n".join(lines))
    if ev.check is not None:
        c = ev.check
        lines = [f"check (float64 central differences, eps={c.eps:g}, atol={c.atol:g}, rtol={c.rtol:g}):"]
        for r in c.leaves:
            if r.skipped:
                lines.append(f"{r.leaf}: not checked, {r.skipped}")
            else:
                lines.append(f"{r.leaf}: {'ok' if r.ok else 'FAILED'}  max abs error {r.max_abs:.3g}  "
                             f"max rel error {r.max_rel:.3g}  ({r.checked} of {r.total} elements)")
                if r.precision:
                    lines.append(f"  {low_precision_note(r)}")
        parts.append("\n".join(lines))
    if ev.notes:
        parts.append("\n".join(f"note: {n}" for n in ev.notes))
    return "\n\n".join(parts) + "\n"


# ================================================================ JSON
_encoder = None


def low_precision_note(r) -> str:
    """What a leaf checked below float64 (``gradient_check``) was checked with: it is a weaker check."""
    return (f"the program computes in {r.precision}, so {r.leaf} was checked in {r.precision}: "
            f"step {r.eps:.2g} * max(1, |{r.leaf}|), tolerance widened by up to {r.allowance:.2g} "
            f"for {r.precision} rounding")


def dumps(obj) -> str:
    """The JSON text of ``obj`` (one encoder for the process; NaN is refused, as the schema wants).

    The objects are trees built by ``to_json`` and friends, so the encoder skips the check
    for reference cycles (a third of its time on an ``eval --batch`` line)."""
    global _encoder
    if _encoder is None:
        import json
        _encoder = json.JSONEncoder(allow_nan=False, check_circular=False)
    return _encoder.encode(obj)


def json_values(data):
    """Nested lists (or a number) of ``data``: float32 by shortest decimal, non-finite as strings."""
    a = np.asarray(data)
    if a.dtype.kind == "f":
        if a.dtype == np.float64:
            flat = a.reshape(-1).tolist()
        elif a.size <= 256:     # a handful of values: NumPy's own shortest repr, element by element
            flat = [float(str(x)) for x in a.reshape(-1)]
        else:
            flat = _shortest_decimals(a).reshape(-1).tolist()
        isfinite = math.isfinite
        if not all(map(isfinite, flat)):
            flat = [v if isfinite(v) else ("nan" if v != v else "inf" if v > 0 else "-inf") for v in flat]
    else:
        flat = a.reshape(-1).tolist()
    return _nest(flat, a.shape)


def _shortest_decimals(a):
    """float64 values whose shortest repr is the fewest significant digits that read back as ``a``.

    A float32 0.1 is written ``0.1`` rather than ``0.10000000149011612``; vectorised (the
    per-element ``str`` route costs seconds on a large Jacobian; ``json_values`` takes it for
    a few hundred values or fewer).
    """
    v = a.astype(np.float64)
    out = v.copy()
    done = ~np.isfinite(v) | (v == 0)
    with np.errstate(all="ignore"):
        exponent = np.floor(np.log10(np.abs(np.where(done, 1.0, v))))
        for digits in range(1, 10):
            k = digits - 1 - exponent
            up, down = 10.0 ** np.maximum(k, 0), 10.0 ** np.maximum(-k, 0)
            candidate = np.round(v * up / down) * down / up
            hit = ~done & (candidate.astype(a.dtype) == a)
            out[hit] = candidate[hit]
            done |= hit
            if done.all():
                break
    return out


def _nest(flat, shape):
    if len(shape) == 0:
        return flat[0]
    if len(shape) == 1:
        return list(flat)
    step = len(flat) // shape[0] if shape[0] else 0
    return [_nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def _python_json(value):
    """A non-tensor target as JSON (numbers, strings, lists); anything else as its text."""
    from gradexpr.tensor import Tensor
    if isinstance(value, Tensor):
        return json_values(value._data)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else ("nan" if value != value else "inf" if value > 0 else "-inf")
    if isinstance(value, (list, tuple)):
        return [_python_json(v) for v in value]
    return repr(value)


def _tensor_json(t):
    return {"shape": list(t._data.shape), "dtype": t._dtype.name, "value": json_values(t._data)}


def error_json(ev) -> dict:
    from gradexpr import errors
    e = ev.error
    kind = e.kind if isinstance(e, errors.GxError) else "UsageError" if ev.error_code == 2 else type(e).__name__
    message = e.message if isinstance(e, errors.GxError) else str(e)
    return {"type": kind, "message": message,
            "file": getattr(e, "filename", None) or ev.filename, "line": getattr(e, "line", None),
            "column": getattr(e, "column", None), "hint": _hint(e), "exit_status": int(ev.error_code)}


def _hint(e):
    if isinstance(e, errors_module().GxError):
        from .diagnostics import better_hint
        return better_hint(e)
    return getattr(e, "hint", None)


def errors_module():
    from gradexpr import errors
    return errors


def to_json(ev) -> dict:
    """The evaluation as a ``gradexpr-eval/1`` object (docs/eval-json-schema.md)."""
    from gradexpr.tensor import Tensor
    value = ev.value
    is_tensor = isinstance(value, Tensor)
    nodes, edges = ev.graph
    leaves = {leaf.name: leaf for leaf in ev.leaves}
    out = {
        "schema": SCHEMA,
        "ok": ev.ok,
        "target": ev.target_name,
        "text": None if ev.error is not None and value is None else value_text(value),
        "value": None if ev.error is not None and value is None else _python_json(value),
        "shape": list(value._data.shape) if is_tensor else None,
        "dtype": value._dtype.name if is_tensor else None,
        "requires_grad": bool(is_tensor and value._requires_grad),
        "grad_fn": value._grad_fn.name() if is_tensor and value._grad_fn is not None else None,
        "graph": {
            "nodes": [{"id": n.id, "name": n.name, "kind": n.kind, "shape": list(n.shape), "dtype": n.dtype,
                       "variable": n.variable, "is_target": n.is_target,
                       "saved": [{"name": k, "shape": list(s)} for k, s in n.saved]} for n in nodes],
            "edges": [{"source": e.source, "target": e.target, "input": e.input} for e in edges],
        },
        "leaves": [{"name": leaf.name, "shape": list(leaf.tensor._data.shape), "dtype": leaf.tensor._dtype.name,
                    "bound": "variable" if leaf.bound else "program"} for leaf in ev.leaves],
        "grads": None if ev.grads is None else {
            name: {"shape": list(leaves[name].tensor._data.shape), "dtype": leaves[name].tensor._dtype.name,
                   "value": None if g is None else json_values(g._data)} for name, g in ev.grads.items()},
        "grad_output": None if ev.grad_output is None else _tensor_json(ev.grad_output),
        "mode": ev.mode,
        "jvp": None if ev.jvp is None else {
            "tangents": {name: _tensor_json(t) for name, t in ev.tangents.items()}, "value": _tensor_json(ev.jvp)},
        "jacobian": None if ev.jacobian is None else {
            name: {**_tensor_json(b), "rows": _count(value._data.shape),
                   "columns": _count(leaves[name].tensor._data.shape)} for name, b in ev.jacobian.items()},
        **({} if not ev.pointwise else {"pointwise": {
            name: {"x": _tensor_json(pw.leaf), "derivative": _tensor_json(pw.first),
                   "second_derivative": None if pw.second is None else _tensor_json(pw.second)}
            for name, pw in ev.pointwise.items()}}),
        "hessian": None if ev.hessian is None else {
            a: {b: _tensor_json(block) for b, block in row.items()} for a, row in ev.hessian.items()},
        "trace": None if ev.trace is None else [
            {"step": k, "node": s.node, "name": s.name, "grad_in": _tensor_json(s.grad_in),
             "sent": [{"to": dest, "label": label, "input": i, "grad": _tensor_json(g)}
                      for dest, label, i, g in s.sent]} for k, s in enumerate(ev.trace, 1)],
        "check": None if ev.check is None else {
            "ok": ev.check.ok, "eps": ev.check.eps, "atol": ev.check.atol, "rtol": ev.check.rtol,
            "leaves": {r.leaf: {"ok": r.ok, "max_abs_error": _finite_or_text(r.max_abs),
                                "max_rel_error": _finite_or_text(r.max_rel), "checked": r.checked,
                                "elements": r.total, "skipped": r.skipped, "precision": r.precision,
                                **({"eps": r.eps, "rounding_allowance": r.allowance} if r.precision else {})}
                       for r in ev.check.leaves}},
        "output": ev.output,
        "notes": list(ev.notes),
        "errors": [] if ev.error is None else [error_json(ev)],
    }
    return out


def _finite_or_text(v):
    if v is None or math.isfinite(v):
        return v
    return "nan" if v != v else "inf" if v > 0 else "-inf"
