"""PyTorch's ready queue of the backward pass: a ``std::priority_queue`` of nodes by sequence number,
with libstdc++'s heap algorithms, so that ties (every leaf's AccumulateGrad has the same number) resolve
in the order PyTorch's engine runs them (and so gradients are summed in PyTorch's order)."""
from __future__ import annotations

LEAF_SEQ = 2 ** 64 - 1     # an AccumulateGrad's sequence number in PyTorch


def ready_push(heap, node):
    """``std::priority_queue::push`` of PyTorch's ready queue (libstdc++'s ``push_heap``), ordered by
    sequence number: its ties (the leaves' nodes, all UINT64_MAX) resolve as they do in PyTorch."""
    heap.append(node)
    _sift_up(heap, len(heap) - 1, node)


def _sift_up(heap, hole, node):
    """libstdc++'s ``__push_heap``: move ``node`` up from ``hole`` past parents of smaller sequence number."""
    seq = node._seq
    while hole:
        parent = (hole - 1) >> 1
        above = heap[parent]
        if not above._seq < seq:
            break
        heap[hole] = above
        hole = parent
    heap[hole] = node


def ready_pop(heap):
    """``std::priority_queue::pop`` after ``top``: libstdc++'s ``pop_heap`` (``__adjust_heap`` sifts
    the hole down to a leaf, then the last element back up)."""
    top = heap[0]
    last = heap.pop()
    n = len(heap)
    if n:
        hole = child = 0
        while child < (n - 1) >> 1:
            child = 2 * (child + 1)
            if heap[child]._seq < heap[child - 1]._seq:
                child -= 1
            heap[hole] = heap[child]
            hole = child
        if not n & 1 and child == (n - 2) >> 1:
            child = 2 * (child + 1)
            heap[hole] = heap[child - 1]
            hole = child - 1
        _sift_up(heap, hole, last)
    return top
