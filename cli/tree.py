"""The one ``grad_fn`` tree of ``gradexpr eval``, ``gradexpr graph`` and the REPL's ``:graph``.

It reads ``graphview.describe``'s nodes and edges, so its node ids (``n0`` the target, then
breadth first) are those of ``--trace``, ``--format json`` and the DOT/Mermaid drawings, and
every line says the same things: ``[variable: ]Name [shape] dtype (nK)``.

Two rules keep the drawing as narrow as the graph is simple:

* a node with one input has it on the next line at its own column (a chain of ``exp``,
  ``sum``, ``tanh`` is a column, not a staircase); a node with several inputs branches
  (``├──``/``└──``), one input per branch;
* a run of nodes that repeats along a chain (a loop's body: ``SinBackward0 ← MulBackward0``
  sixty times, each ``Mul`` also taking the same leaf ``w``) keeps its first
  repetition and folds the others into one line, ``… × 58 (SinBackward0 ← MulBackward0)``.

A node reached again (a shared subexpression) is a line ``(shown above)`` without its inputs.
Lines are lists of ``(text, style)`` pieces: ``plain`` joins the text, ``rich_text`` keeps
the styles, so pipes and terminals show the same tree.
"""
from __future__ import annotations

PERIODS = 8              # the longest repeating run looked for (nodes per repetition)
MIN_REPEATS = 3          # a run is folded from this many repetitions (the first one kept)
_CONTINUE = {"├── ": "│   ", "└── ": "    ", "": ""}


def _short(name: str) -> str:
    return name.rsplit("::", 1)[-1]            # torch::autograd::AccumulateGrad -> AccumulateGrad


def _shape(shape) -> str:
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


class _Graph:
    """Inputs in order and consumer counts, by node id."""

    def __init__(self, nodes, edges):
        self.by_id = {n.id: n for n in nodes}
        self.inputs = {n.id: [] for n in nodes}
        self.consumers = dict.fromkeys(self.by_id, 0)
        for e in edges:
            self.inputs[e.target].append((e.input, e.source))
            self.consumers[e.source] += 1
        for v in self.inputs.values():
            v.sort()


class Fold:
    """Repetitions of a run along a chain shown as one line; ``next`` continues below it."""

    __slots__ = ("nodes", "period", "count", "sides", "next")

    def __init__(self, nodes, period, count, sides, next_id):
        self.nodes = nodes            # the folded node ids, in order
        self.period = period          # the names of one repetition, output side first
        self.count = count
        self.sides = sides            # the other inputs every repetition takes (ids)
        self.next = next_id


def _chain(g: _Graph, start: str, seen: set) -> list:
    """The nodes from ``start`` down its chain: while a node's inputs are all leaves (or shown
    already) but one op node used by nothing else, that one is the next."""
    chain, cur, on_chain = [start], start, {start}
    while True:
        deep = [i for _, i in g.inputs[cur] if g.by_id[i].kind == "op" and i not in seen]
        if len(deep) != 1 or g.consumers[deep[0]] != 1 or deep[0] in on_chain:
            return chain
        cur = deep[0]
        chain.append(cur)
        on_chain.add(cur)


def _signature(g: _Graph, node_id: str, next_id) -> tuple:
    n = g.by_id[node_id]
    inputs = tuple((k, "next" if i == next_id else i) for k, i in g.inputs[node_id])
    return n.name, tuple(n.shape), n.dtype, inputs


def _folds(g: _Graph, chain: list) -> dict:
    """``first folded id -> Fold`` for each run repeated ``MIN_REPEATS`` times or more along ``chain``."""
    sig = [_signature(g, c, chain[k + 1] if k + 1 < len(chain) else None) for k, c in enumerate(chain)]
    folds, i, n = {}, 0, len(chain)
    while i < n:
        best = None
        for p in range(1, PERIODS + 1):
            if i + p * MIN_REPEATS > n:
                break
            r = 1
            while i + (r + 1) * p <= n and sig[i + r * p:i + (r + 1) * p] == sig[i:i + p]:
                r += 1
            if r >= MIN_REPEATS and (best is None or r * p > best[0] * best[1]):
                best = (r, p)
        if best is None:
            i += 1
            continue
        r, p = best
        folded = chain[i + p:i + r * p]
        sides = []
        for k in range(p):
            for _, s in g.inputs[chain[i + k]]:
                if s != chain[i + k + 1] and s not in sides:
                    sides.append(s)
        period = [_short(g.by_id[c].name) for c in chain[i:i + p]]
        folds[folded[0]] = Fold(folded, period, r - 1, sides, chain[i + r * p] if i + r * p < len(chain) else None)
        i += r * p
    return folds


def lines(nodes, edges, show_saved: bool = False, max_nodes: int = 0, more_hint: str = ""):
    """The tree's lines, each ``(guides, [(text, style), …])``; at most ``max_nodes`` node lines (0: all;
    a fold is one line)."""
    if not nodes:
        return []
    g = _Graph(nodes, edges)
    out, seen, chained, folds = [], set(), set(), {}
    shown = folded = 0
    stack = [(nodes[0].id, "", "")]         # (node id or Fold, prefix, branch)
    while stack:
        item, prefix, branch = stack.pop()
        lead = prefix + branch
        below = prefix + _CONTINUE[branch]
        if isinstance(item, Fold):
            out.append(_fold_line(lead, g, item))
            shown += 1                      # one line
            folded += len(item.nodes)
            if item.next is not None:
                stack.append((item.next, below, ""))
            continue
        node = g.by_id[item]
        if item in seen:
            out.append(_node_line(lead, node, again=True))
            continue
        if max_nodes and shown >= max_nodes:
            break
        seen.add(item)
        shown += 1
        out.append(_node_line(lead, node, show_saved=show_saved))
        if node.kind == "op" and item not in chained:
            chain = _chain(g, item, seen)
            chained.update(chain)
            folds.update(_folds(g, chain))
        inputs = [i for _, i in g.inputs[item]]
        inputs = [folds.pop(i, i) for i in inputs]
        if len(inputs) == 1:
            stack.append((inputs[0], below, ""))
        else:
            for k in range(len(inputs) - 1, -1, -1):
                stack.append((inputs[k], below, "└── " if k == len(inputs) - 1 else "├── "))
    hidden = len(nodes) - len(seen) - folded
    if hidden > 0:
        out.append(("", [(f"… {hidden} more nodes not shown" + (f" ({more_hint})" if more_hint else ""), "dim")]))
    return out


def _node_line(lead: str, node, again: bool = False, show_saved: bool = False) -> tuple:
    parts = []
    if node.variable:
        parts += [(node.variable, "bold green" if node.kind == "leaf" else "bold"), (": ", "")]
    name = _short(node.name)
    if again:
        return lead, parts + [(name, "dim"), (" (shown above) ", "dim"), (f"({node.id})", "dim")]
    parts += [(name, "bold cyan" if node.kind == "op" else "cyan"),
              (f" {_shape(node.shape)} {node.dtype} ", ""), (f"({node.id})", "dim")]
    if node.is_target:
        parts.append(("  ← target", "yellow"))
    if show_saved and node.saved:
        parts.append(("  saved: " + ", ".join(f"{k} {_shape(s)}" for k, s in node.saved), "dim"))
    return lead, parts


def _fold_line(lead: str, g: _Graph, fold: Fold) -> tuple:
    first, last = g.by_id[fold.nodes[0]], g.by_id[fold.nodes[-1]]
    run = " ← ".join(fold.period)
    same = {(tuple(g.by_id[i].shape), g.by_id[i].dtype) for i in fold.nodes}
    meta = f" {_shape(first.shape)} {first.dtype}" if len(same) == 1 else ""
    parts = [(f"… × {fold.count} ", "bold magenta"), (f"({run})" if len(fold.period) > 1 else run, "magenta"),
              (f"{meta} ", ""), (f"({first.id}–{last.id})", "dim")]
    if fold.sides:
        parts.append(("  with " + ", ".join(f"{g.by_id[s].variable or _short(g.by_id[s].name)} ({s})"
                                             for s in fold.sides), "dim"))
    return lead, parts


def plain(nodes, edges, **kwargs) -> str:
    """The tree as text (no colour), one line per node, ending in a newline; '' for no graph."""
    return "".join(lead + "".join(t for t, _ in parts) + "\n" for lead, parts in lines(nodes, edges, **kwargs))


def rich_text(nodes, edges, width: int | None = None, **kwargs):
    """The tree as one rich ``Text``. A line longer than ``width`` wraps at its spaces, its
    continuation under its own guides, so no name or number is cut and the guides stay whole."""
    from rich.text import Text
    text = Text()
    for k, (lead, parts) in enumerate(lines(nodes, edges, **kwargs)):
        label = Text()
        for t, style in parts:
            label.append(t, style=style or None)
        pieces = [label]
        if width and len(lead) + label.cell_len > width and width - len(lead) > 20:
            pieces = _wrap(label, width - len(lead) - 2)
        below = lead[:-4] + _CONTINUE[lead[-4:]] + "  " if lead[-4:] in ("├── ", "└── ") else lead + "  "
        for j, piece in enumerate(pieces):
            if k or j:
                text.append("\n")
            text.append(lead if j == 0 else below, style="dim")
            text.append_text(piece)
    return text


def _wrap(label, width: int) -> list:
    """``label`` cut at spaces into lines of at most ``width`` cells (a longer word stays whole)."""
    out, start, last_space, length = [], 0, None, len(label.plain)
    plain = label.plain
    i = 0
    while i < length:
        if plain[i] == " ":
            last_space = i
        if i - start >= width and last_space is not None and last_space > start:
            out.append(label[start:last_space])
            start = last_space + 1
            last_space = None
        i += 1
    out.append(label[start:])
    return out
