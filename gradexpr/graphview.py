"""A plain description of the autograd graph behind a tensor, for display and export.

``describe(target, names)`` walks from ``target.grad_fn`` to the leaves and returns
nodes and edges with stable ids (``n0`` is the target's node, then breadth-first
in ``next_functions`` order). ``names`` maps ``id(tensor)`` to the variable name a
leaf was bound to, so leaves can be labelled ``x`` instead of ``AccumulateGrad``.
The CLI's tree, DOT, Mermaid and JSON renderings all read this one structure.
"""
from __future__ import annotations

from collections import deque

from .graph import AccumulateGrad, SavedTensor, SavedTensors, _RELEASED, shown_node


class GraphNode:
    """One node: an op's backward node or a leaf's AccumulateGrad.

    (Plain slotted classes rather than dataclasses: a dataclass costs about a millisecond
    to define, at every start of the command.)
    """

    __slots__ = ("id", "name", "kind", "shape", "dtype", "variable", "saved", "is_target")

    def __init__(self, id: str, name: str, kind: str, shape: tuple, dtype: str, variable: str | None = None,
                 saved: list | None = None, is_target: bool = False):
        self.id = id
        self.name = name              # PyTorch's node name, e.g. "MulBackward0" / "torch::autograd::AccumulateGrad"
        self.kind = kind              # "op" or "leaf"
        self.shape = shape            # shape of the tensor this node produced (for a leaf: the leaf's shape)
        self.dtype = dtype
        self.variable = variable      # the bound name of a leaf (or of the target)
        self.saved = [] if saved is None else saved   # [(name, shape)] of tensors saved for backward
        self.is_target = is_target

    def _fields(self):
        return tuple(getattr(self, k) for k in self.__slots__)

    def __eq__(self, other):
        return type(other) is GraphNode and self._fields() == other._fields()

    def __repr__(self):
        return "GraphNode(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__) + ")"


class GraphEdge:
    """An edge from the node producing an input to the node consuming it."""

    __slots__ = ("source", "target", "input")

    def __init__(self, source: str, target: str, input: int):
        self.source = source   # the node producing the input (closer to the leaves)
        self.target = target   # the node consuming it (closer to the output)
        self.input = input     # position among the consumer's inputs

    def __eq__(self, other):
        return type(other) is GraphEdge and (self.source, self.target, self.input) == \
            (other.source, other.target, other.input)

    def __repr__(self):
        return f"GraphEdge(source={self.source!r}, target={self.target!r}, input={self.input!r})"


def describe(target, names: dict | None = None):
    """(nodes, edges) of the graph of ``target``; empty when it has no history."""
    names = names or {}
    root = shown_node(target._grad_fn)
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
            nxt = shown_node(nxt)       # each output of a custom Function leads to its one node
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
