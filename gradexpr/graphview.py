"""A plain description of the autograd graph behind a tensor, for display and export.

``describe(target, names)`` walks from ``target.grad_fn`` to the leaves and returns
nodes and edges with stable ids (``n0`` is the target's node, then breadth-first
in ``next_functions`` order). ``names`` maps ``id(tensor)`` to the variable name a
leaf was bound to, so leaves can be labelled ``x`` instead of ``AccumulateGrad``.
The CLI's tree, DOT, Mermaid and JSON renderings all read this one structure.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from .graph import AccumulateGrad, SavedTensor, SavedTensors, _RELEASED


@dataclass
class GraphNode:
    id: str
    name: str                     # PyTorch's node name, e.g. "MulBackward0" / "torch::autograd::AccumulateGrad"
    kind: str                     # "op" or "leaf"
    shape: tuple                  # shape of the tensor this node produced (for a leaf: the leaf's shape)
    dtype: str
    variable: str | None = None   # the bound name of a leaf (or of the target)
    saved: list = field(default_factory=list)   # [(name, shape)] of tensors saved for backward
    is_target: bool = False


@dataclass
class GraphEdge:
    source: str   # the node producing the input (closer to the leaves)
    target: str   # the node consuming it (closer to the output)
    input: int    # position among the consumer's inputs


def describe(target, names: dict | None = None):
    """(nodes, edges) of the graph of ``target``; empty when it has no history."""
    names = names or {}
    root = target._grad_fn
    if root is None:
        if target._requires_grad:
            root = target._accumulator()
        else:
            return [], []
    ids: dict = {}
    nodes: list[GraphNode] = []
    edges: list[GraphEdge] = []
    out_meta = {root: (tuple(target._data.shape), target._dtype.name)}
    queue = deque([root])
    ids[root] = "n0"
    order = [root]
    while queue:
        node = queue.popleft()
        for i, nxt in enumerate(node._next):
            if nxt is None:
                continue
            if nxt not in ids:
                ids[nxt] = f"n{len(ids)}"
                order.append(nxt)
                queue.append(nxt)
                shape, dtype = node._meta[i]
                out_meta[nxt] = (tuple(shape), dtype.name)
            edges.append(GraphEdge(ids[nxt], ids[node], i))
    for node in order:
        shape, dtype = out_meta[node]
        if type(node) is AccumulateGrad:
            var = node.variable
            nodes.append(GraphNode(ids[node], node.name(), "leaf", tuple(var._data.shape), var._dtype.name,
                                   names.get(id(var))))
        else:
            nodes.append(GraphNode(ids[node], node.name(), "op", shape, dtype, saved=_saved(node)))
    nodes[0].is_target = True
    if nodes[0].variable is None:
        nodes[0].variable = names.get(id(target))
    return nodes, edges


def _saved(node):
    saved = node._saved
    if not saved or saved is _RELEASED:
        return []
    out = []
    for k, v in saved.items():
        if type(v) is SavedTensor:
            out.append((k, tuple(v.tensor._data.shape)))
        elif type(v) is SavedTensors:
            out.extend((f"{k}[{i}]", tuple(s.tensor._data.shape)) for i, s in enumerate(v))
    return out
