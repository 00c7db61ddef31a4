"""The terminal view fits its width and never cuts a number (rendered at 60, 80, 100 and 120 columns)."""
import io
import re

import numpy as np
import pytest

from gradexpr import session
from gradexpr.cli.rich_view import show

WIDTHS = (60, 80, 100, 120)
NUMBER = re.compile(r"-?(?:\d+\.\d*|\d+)(?:e[+-]\d+)?")


def render(source, width, request=None, **variables):
    from rich.console import Console
    bindings = session.Bindings.parse(variables=[f"{k}={v}" for k, v in variables.items()])
    ev = session.evaluate(source, "<expr>", bindings, request or session.Request())
    out = io.StringIO()
    show(ev, Console(file=out, width=width, color_system=None, highlight=False, emoji=False))
    return ev, out.getvalue()


def table_cells(text):
    """{(row label, column label): cell} of the first box table in ``text``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("┏"))
    header = [c.strip() for c in lines[start + 1].strip("┃").split("┃")]
    cells = {}
    for line in lines[start + 3:]:
        if line.startswith("└"):
            break
        row = [c.strip() for c in line.strip("│").split("│")]
        for col, cell in zip(header[1:], row[1:]):
            cells[(row[0], col)] = cell
    return header[1:], cells


def assert_roundings(tokens, values):
    """Each printed number is its value rounded as printed: ``0.7775`` to 4 decimals, ``7.7749e-01`` to 4
    decimals of the mantissa (PyTorch picks the notation for the whole tensor)."""
    values = np.asarray(values, np.float64).reshape(-1)
    assert len(tokens) == len(values)
    for token, value in zip(tokens, values):
        mantissa = token.split("e")[0]
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        expected = float(f"{value:.{decimals}e}") if "e" in token else round(float(value), decimals)
        assert float(token) == pytest.approx(expected, rel=1e-12, abs=1e-300), (token, value)


def assert_no_cut_numbers(text, width):
    for line in text.splitlines():
        assert len(line) <= width, (width, line)
        assert not re.search(r"[\d.e+-]…|…[\d.]", line), line


@pytest.mark.parametrize("width", WIDTHS)
def test_jacobian_columns_are_whole_and_every_number_is_the_values_rounding(width):
    ev, text = render("tanh(W @ x)", width, session.Request(wrt=("x",)), W="randn(100, 100)", x="ones(100)")
    assert_no_cut_numbers(text, width)
    jac = ev.jacobian["x"]._data
    header, cells = table_cells(text)
    shown = [h for h in header if h != "…"]
    assert 1 < len(shown) < 100
    assert f"showing 12 of 100 rows and {len(shown)} of 100 columns ({100 - len(shown)} dropped to fit " \
           f"{width} columns)" in " ".join(text.split())
    assert shown[0] == "0" and shown[-1] == "99"       # the first and last columns, as PyTorch summarises
    for (row, col), cell in cells.items():
        if row == "…" or col == "…":
            assert cell == "…"
            continue
        value = jac[int(row), int(col)]
        assert NUMBER.fullmatch(cell), cell
        assert_roundings([cell], [value])


@pytest.mark.parametrize("width", WIDTHS)
def test_tensor_text_is_laid_out_for_the_width_and_never_rewrapped(width):
    ev, text = render("randn(3, 10) * x", width, session.Request(wrt=("x",)), x="1.")
    assert_no_cut_numbers(text, width)
    value_block = text.split("grad_fn\n")[0]
    assert_roundings(NUMBER.findall(value_block.split("tensor(", 1)[1].split("grad_fn=")[0]), ev.value._data)
    from gradexpr import printing
    with printing.printoptions(linewidth=width):
        assert repr(ev.value) in text                   # exactly PyTorch's text at that line width


@pytest.mark.parametrize("width", WIDTHS)
def test_a_gradient_is_not_wrapped_inside_a_cell(width):
    ev, text = render("(w * w).sum()", width, w="randn(4, 8)")
    assert_no_cut_numbers(text, width)
    assert_roundings(NUMBER.findall(text.split("gradients\n")[1].split("tensor(", 1)[1]), ev.grads["w"]._data)


@pytest.mark.parametrize("width", WIDTHS)
def test_hessian_and_trace_fit(width):
    _, text = render("(x.tanh() ** 2).sum()", width, session.Request(hessian=True, trace=True), x="linspace(-1, 1, 30)")
    assert_no_cut_numbers(text, width)
    assert "Hessian" in text and "backward pass" in text


@pytest.mark.parametrize("width", WIDTHS)
def test_a_long_loop_tree_is_folded_and_fits(width):
    ev, text = render("y = x\nfor i in range(60):\n    y = (y * w).sin()\ny.sum()", width, x="ones(3)", w="0.5")
    assert_no_cut_numbers(text, width)
    tree = text.split("grad_fn", 1)[1].split("gradients", 1)[0]
    assert "× 58" in tree and len(tree.splitlines()) <= 14
    ids = re.findall(r"\(n(\d+)\)|\(n(\d+)–|–n(\d+)\)", tree)
    assert ids and all(0 <= int("".join(i)) < len(ev.graph[0]) for i in ids)   # ids read whole, never cut
