"""``gradexpr ops``: the op table — each entry's name, PyTorch node name and differentiable inputs
(with PATTERNs, also its signatures, variants and backward formulas; ``--json`` has them all).

The listing reads ``gradexpr.ops.TABLE`` itself, so it is always the table the
engine runs: what an entry records in the graph (``MulBackward0``), which of its inputs
receive a gradient, which PyTorch leaves without one (``NotImplemented``: asking fails),
the domain its gradient check samples, and whether it is checked to second order.
"""
from __future__ import annotations

import fnmatch
import json
import sys

import click

from .options import format_options, resolve_format

JSON_VERSION = 1


def _rows(patterns) -> list:
    from gradexpr import functions, ops  # noqa: F401  (functions binds the surface)
    from gradexpr.ops.listing import describe
    ops.load_late_families()                     # (the families torch.nn loads on first use)

    rows = [describe(name, entry) for name, entry in ops.TABLE.items()]
    if patterns:
        def matches(row):
            keys = (row["name"], row["node"] or "")
            return any(fnmatch.fnmatchcase(k.lower(), p.lower()) or p.lower() in k.lower()
                       for p in patterns for k in keys)
        rows = [r for r in rows if matches(r)]
    return rows


def _gradient_text(row) -> str:
    parts = list(row["differentiable"]) + [f"{i} (not implemented)" for i in row["not_implemented"]]
    return ", ".join(parts) if parts else "-"


def _plain(rows, out):
    header = ("NAME", "NODE", "DIFFERENTIABLE INPUTS", "DOMAIN", "2ND ORDER")
    table = [header] + [(r["name"], r["node"] or "-", _gradient_text(r), r["domain"] or "-",
                         "yes" if r["second_order"] else "no") for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    for row in table:
        out.write("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1] + "\n")


def _details(rows, out):
    """Below a filtered listing: each entry's signatures, variants and backward formulas."""
    for r in rows:
        out.write(f"\n{r['name']}  {r['node'] or '(no node)'}\n")
        for line in r["signatures"]:
            out.write(f"  {line}\n")
        if r["variants"]:
            out.write(f"  variants: {', '.join(r['variants'])}\n")
        width = max((len(i) for i in r["formulas"]), default=0)
        for name, source in r["formulas"].items():
            body = source.replace("\n", "\n" + " " * (width + 5))
            out.write(f"  {(name + ':').ljust(width + 1)}  {body}\n")


def _rich(rows, out):
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"gradexpr op table ({len(rows)} entries)", header_style="bold")
    for column in ("name", "node"):
        table.add_column(column, no_wrap=True)      # names are the point: never cut them
    for column in ("grad inputs", "domain", "2nd order"):
        table.add_column(column)
    for r in rows:
        node = r["node"] or "[dim]not recorded[/dim]"
        grads = ", ".join(r["differentiable"] + [f"[red]{i} (not implemented)[/red]" for i in r["not_implemented"]])
        table.add_row(r["name"], node, grads or "[dim]-[/dim]", r["domain"] or "", "yes" if r["second_order"] else "")
    Console(file=out).print(table)


@click.command("ops")
@click.argument("patterns", nargs=-1, metavar="[PATTERN]...")
@format_options
def ops(patterns, fmt):
    """List the operations: name, PyTorch node name, differentiable inputs.

    \b
    PATTERN filters by entry or node name: a substring or a glob (`gradexpr ops 'max*' Softmax`);
    the entries it selects are followed by their signatures, variants and backward formulas.
    Entries without a node (comparisons, argmax …) never record one: their results have no
    grad_fn. An input marked "not implemented" records PyTorch's NotImplemented node, and
    asking for its gradient fails, as in PyTorch.
    """
    rows = _rows(patterns)
    if patterns and not rows:
        from .suggest import did_you_mean
        every = _rows(())
        hints = [h for h in (did_you_mean(p, {r[k] for r in every for k in ("name", "node") if r[k]})
                             for p in patterns) if h]
        message = f"no entry matches {' '.join(patterns)}"
        if resolve_format(fmt) == "json":
            from .diagnostics import error_object
            json.dump({"error": error_object("NoMatch", message, " ".join(hints) or None, 1)}, sys.stdout)
            sys.stdout.write("\n")
        sys.stderr.write(f"gradexpr ops: {message}\n" + "".join(f"hint: {h}\n" for h in hints))
        sys.exit(1)
    fmt = resolve_format(fmt)
    if fmt == "json":
        json.dump({"version": JSON_VERSION, "ops": rows}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif fmt == "rich":
        _rich(rows, sys.stdout)
        if patterns:
            _details(rows, sys.stdout)
    else:
        _plain(rows, sys.stdout)
        if patterns:
            _details(rows, sys.stdout)
