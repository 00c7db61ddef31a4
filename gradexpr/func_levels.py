"""What ``torch.func``'s outermost transform returns of the graph it ran: the program's own level.

functorch keeps one autograd graph per level. A function that closes over a tensor requiring grad
(``w`` in ``grad(lambda x: (x.sin() * w).sum())(x)``) records its ops at the program's level too, so
the gradient it returns still has a ``grad_fn`` reaching ``w`` (``MulBackward0``) and can be
differentiated again, while everything that depended only on the transform's own inputs is gone.

gradexpr records one graph: the transforms run on stand-ins for the differentiated arguments
(fresh leaves, or an alias of an argument that requires grad) and record their backward passes
(``create_graph``) when the outer level needs them. The outer level's graph is then the part of
that graph which reaches a node recorded before the transform began or a leaf of the program: an op
is recorded at a level exactly when one of its inputs requires grad there. ``outer_result`` gives a
returned tensor a copy of that part, with the edges to the stand-ins' history cut and the alias of
an outer argument stepped over, leaving the transform's graph untouched (``vjp``'s function still
runs backward through it after the outputs are returned).
"""
from __future__ import annotations

import weakref

from .batching import BatchedTensor, batched
from .graph import AccumulateGrad, OutputEdge, _sequence


class Scope:
    """The bookkeeping of one outermost transform: ``first`` is the sequence number of its first
    node (older nodes belong to the program's level); ``own`` the leaves it made as stand-ins and
    ``aliases`` the alias nodes standing in for arguments that require grad."""

    __slots__ = ("first", "own", "aliases")

    def __init__(self):
        self.first = next(_sequence)
        # held weakly: the scope outlives its transform (until the next one), its graph need not; a dead
        # stand-in's reference is dead, so a new tensor given its id is not taken for it. (Plain dicts
        # of weak references: a WeakValueDictionary and a WeakSet per transform call cost more than the
        # rest of the scope's work in vmap(grad(f)).)
        self.own = {}                   # id -> weak reference to the stand-in leaf
        self.aliases = None             # a WeakSet of the alias nodes, once there is one

    def add_stand_in(self, t):
        fn = t._grad_fn
        if fn is None:
            self.own[id(t)] = weakref.ref(t)
        else:
            if self.aliases is None:
                self.aliases = weakref.WeakSet()
            self.aliases.add(fn)

    def is_outer(self, node) -> bool:
        """Whether ``node`` belongs to the program's level by itself (not through its inputs)."""
        if type(node) is AccumulateGrad:
            ref = self.own.get(id(node.variable))
            return ref is None or ref() is not node.variable
        return node._seq < self.first

    def outer_result(self, t):
        """``t`` as the outermost transform returns it: detached when its graph does not reach the
        program's level, else a tensor with the same data whose ``grad_fn`` is a copy of that level's
        part of the graph."""
        if type(t) is BatchedTensor:        # under vmap: the program's level is the physical graph
            return batched(self.outer_result(t._phys), t._bdim, t._level)
        fn = t._grad_fn
        if fn is None or not t._requires_grad:
            return t.detach()
        kept = self._outer_part(fn)
        if not kept[fn]:
            return t.detach()
        copies = {}
        out = t.detach()
        out._requires_grad = True
        out._grad_fn = self._copy(fn, kept, copies)
        return out

    def _outer_part(self, root) -> dict:
        """node -> whether it reaches the program's level, for the nodes below ``root`` (post-order,
        without recursion: graphs of long loops are deep)."""
        kept = {}
        stack = [root]
        while stack:
            node = stack[-1]
            if node in kept:
                stack.pop()
                continue
            if self.is_outer(node):
                kept[node] = True
                stack.pop()
                continue
            pending = [n for n in node._next if n is not None and n not in kept]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            kept[node] = any(n is not None and kept[n] for n in node._next)
        return kept

    def _copy(self, root, kept, copies):
        """A copy of the kept nodes below ``root``: edges to dropped nodes become None, edges to an
        alias stand-in go to what it aliases; the program's own nodes are shared, not copied."""
        order = []
        stack = [root]
        while stack:
            node = self._through_aliases(stack.pop())
            if node in copies or self.is_outer(node):
                continue
            copies[node] = _shallow_copy(node)
            order.append(node)
            stack.extend(n for n in node._next if n is not None and kept[n])
        for node in order:
            copy = copies[node]
            copy._next = [self._edge_target(n, kept, copies) for n in node._next]
            if type(node) is OutputEdge:
                copy._fn = copy._next[0]
        root = self._through_aliases(root)
        return copies.get(root, root)

    def _through_aliases(self, node):
        """What an alias stand-in for an argument that requires grad aliases (functorch's wrapper of an
        argument is the argument itself at the program's level)."""
        while self.aliases is not None and node in self.aliases:
            node = node._next[0]
        return node

    def _edge_target(self, node, kept, copies):
        if node is None or not kept[node]:
            return None
        node = self._through_aliases(node)
        return copies.get(node, node)


_SLOTS: dict = {}


def _slot_descriptors(kind):
    """The slot descriptors of a node class and its bases (copied one by one: nodes have no __dict__)."""
    found = _SLOTS.get(kind)
    if found is None:
        found = _SLOTS[kind] = tuple(
            c.__dict__[name] for c in kind.__mro__
            for name in ((lambda s: (s,) if isinstance(s, str) else s)(c.__dict__.get("__slots__", ())))
            if name != "__weakref__" and name != "__dict__")
    return found


def _shallow_copy(node):
    kind = type(node)
    copy = object.__new__(kind)
    for slot in _slot_descriptors(kind):
        try:
            value = slot.__get__(node, kind)
        except AttributeError:          # (a slot never set)
            continue
        slot.__set__(copy, value)
    if kind.__dictoffset__:
        copy.__dict__.update(node.__dict__)
    return copy
