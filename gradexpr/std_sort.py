"""The order PyTorch's CPU ``sort`` leaves equal values in when it is not asked to be stable.

ATen's sort kernel (aten/src/ATen/native/cpu/SortingKernel.cpp) sorts each row of (value, index)
pairs with ``std::stable_sort`` when ``stable=True`` and ``std::sort`` otherwise, comparing values only
(NaN above every number: ``(!isnan(a) && isnan(b)) || a < b``, and the mirror for descending).
``std::sort`` is libstdc++'s introsort (median-of-three quicksort down to runs of 16, heapsort past
2·log2(n) levels, a final insertion sort), which moves equal values about: ``torch.tensor([0, 1] * 9).sort()``
gives indices 2, 16, 4, 6, … for the zeros. This module replays it on the row's keys (checked against
PyTorch 2.13 on random rows with ties). A row without ties sorts the same either way, so only rows
with ties are replayed. A 1-d integer tensor of at least GRAIN_SIZE elements sorted ascending takes
ATen's radix sort instead, which is stable.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["unstable_order", "topk_order", "GRAIN_SIZE"]

GRAIN_SIZE = 32768          # at::internal::GRAIN_SIZE
_THRESHOLD = 16             # libstdc++'s _S_threshold


def unstable_order(a: np.ndarray, dim: int, descending: bool, stable_order: np.ndarray) -> np.ndarray:
    """``stable_order`` (a stable argsort of ``a`` along ``dim``) with every row that holds ties
    replaced by the order std::sort gives it."""
    if a.ndim == 0 or a.shape[dim] <= _THRESHOLD:
        return stable_order               # (insertion sort only: stable)
    if a.ndim == 1 and not descending and a.dtype.kind in "iu" and a.size >= GRAIN_SIZE:
        return stable_order               # (ATen's radix sort)
    order = np.moveaxis(stable_order, dim, -1)
    keys = np.moveaxis(a, dim, -1)
    ranked = np.take_along_axis(keys, order, axis=-1)
    if ranked.dtype.kind == "f":
        tied = (ranked[..., 1:] == ranked[..., :-1]) | (np.isnan(ranked[..., 1:]) & np.isnan(ranked[..., :-1]))
    else:
        tied = ranked[..., 1:] == ranked[..., :-1]
    rows = np.argwhere(tied.any(axis=-1)) if tied.ndim > 1 else (np.zeros((1, 0), int) if tied.any() else [])
    if len(rows) == 0:
        return stable_order
    order = order.copy()
    less = _less(keys.dtype, descending)
    for row in rows:
        at = tuple(row)
        order[at] = _std_sort(keys[at].tolist(), less)
    return np.moveaxis(order, -1, dim)


def topk_order(a: np.ndarray, k: int, dim: int, largest: bool, sorted: bool, stable_order: np.ndarray) -> np.ndarray:
    """The indices ``topk`` gives along ``dim``, from ``stable_order`` (a stable argsort, descending when
    ``largest``): ATen's topk_impl_loop (aten/src/ATen/native/TopKImpl.h) moves each row's (value, index)
    pairs with ``std::partial_sort`` when ``64·k <= n``, else ``std::nth_element`` at ``k - 1`` and (when
    ``sorted``) ``std::sort`` of the ``k - 1`` before it. Equal values among the first ``k + 1`` come out
    in those algorithms' order (``L1Unstructured`` prunes by it), and an unsorted result in theirs: only
    such rows are replayed."""
    order = np.moveaxis(stable_order, dim, -1)
    taken = order[..., :k]
    if a.ndim == 0 or k == 0:
        return np.moveaxis(taken, -1, dim)
    keys = np.moveaxis(a, dim, -1)
    n = keys.shape[-1]
    if sorted:
        ranked = np.take_along_axis(keys, order[..., :k + 1], axis=-1)
        tied = ranked[..., 1:] == ranked[..., :-1]
        if ranked.dtype.kind == "f":
            tied |= np.isnan(ranked[..., 1:]) & np.isnan(ranked[..., :-1])
        rows = np.argwhere(tied.any(axis=-1).reshape(keys.shape[:-1]))
    else:
        rows = np.argwhere(np.ones(keys.shape[:-1], bool))
    if len(rows) == 0:
        return np.moveaxis(taken, -1, dim)
    taken = taken.copy()
    less = _less(keys.dtype, largest)
    for row in rows:
        at = tuple(row)
        pairs = _Pairs(keys[at].tolist(), less)
        if k * 64 <= n:
            pairs.partial_sort(0, k, n)
        else:
            pairs.nth_element(0, k - 1, n)
            if sorted:
                pairs.sort(0, k - 1)
        taken[at] = pairs.v[:k]
    return np.moveaxis(taken, -1, dim)


def _less(dtype, descending):
    if dtype.kind == "f":
        if descending:
            return lambda x, y: (x != x and y == y) or x > y
        return lambda x, y: (x == x and y != y) or x < y
    return (lambda x, y: x > y) if descending else (lambda x, y: x < y)


def _std_sort(keys, less):
    """The permutation libstdc++'s std::sort leaves the pairs (keys[i], i) in, comparing keys with ``less``."""
    pairs = _Pairs(keys, less)
    pairs.sort(0, len(keys))
    return pairs.v


class _Pairs:
    """The pairs (keys[i], i) as libstdc++'s algorithms move them about (``k``: the keys, ``v``: the original
    indices, position by position), comparing keys only with ``less``."""

    def __init__(self, keys, less):
        self.k = list(keys)
        self.v = list(range(len(self.k)))
        self.less = less

    def comp(self, i, j):       # comp on positions
        return self.less(self.k[i], self.k[j])

    def swap(self, i, j):
        k, v = self.k, self.v
        k[i], k[j] = k[j], k[i]
        v[i], v[j] = v[j], v[i]

    def move_median_to_first(self, result, a, b, c):
        comp, swap = self.comp, self.swap
        if comp(a, b):
            if comp(b, c):
                swap(result, b)
            elif comp(a, c):
                swap(result, c)
            else:
                swap(result, a)
        elif comp(a, c):
            swap(result, a)
        elif comp(b, c):
            swap(result, c)
        else:
            swap(result, b)

    def unguarded_partition(self, first, last, pivot):
        comp = self.comp
        while True:
            while comp(first, pivot):
                first += 1
            last -= 1
            while comp(pivot, last):
                last -= 1
            if not first < last:
                return first
            self.swap(first, last)
            first += 1

    def unguarded_partition_pivot(self, first, last):
        mid = first + (last - first) // 2
        self.move_median_to_first(first, first + 1, mid, last - 1)
        return self.unguarded_partition(first + 1, last, first)

    def adjust_heap(self, first, hole, length, value):
        k, v, less = self.k, self.v, self.less
        vk, vv = value
        top = hole
        second = hole
        while second < (length - 1) // 2:
            second = 2 * (second + 1)
            if less(k[first + second], k[first + second - 1]):
                second -= 1
            k[first + hole], v[first + hole] = k[first + second], v[first + second]
            hole = second
        if (length & 1) == 0 and second == (length - 2) // 2:
            second = 2 * (second + 1)
            k[first + hole], v[first + hole] = k[first + second - 1], v[first + second - 1]
            hole = second - 1
        parent = (hole - 1) // 2
        while hole > top and less(k[first + parent], vk):
            k[first + hole], v[first + hole] = k[first + parent], v[first + parent]
            hole = parent
            parent = (hole - 1) // 2
        k[first + hole], v[first + hole] = vk, vv

    def make_heap(self, first, last):
        length = last - first
        if length < 2:
            return
        parent = (length - 2) // 2
        while True:
            self.adjust_heap(first, parent, length, (self.k[first + parent], self.v[first + parent]))
            if parent == 0:
                return
            parent -= 1

    def pop_heap(self, first, last, result):
        k, v = self.k, self.v
        value = (k[result], v[result])
        k[result], v[result] = k[first], v[first]
        self.adjust_heap(first, 0, last - first, value)

    def sort_heap(self, first, last):
        while last - first > 1:
            last -= 1
            self.pop_heap(first, last, last)

    def heap_select(self, first, middle, last):
        self.make_heap(first, middle)
        for i in range(middle, last):
            if self.comp(i, first):
                self.pop_heap(first, middle, i)

    def introsort_loop(self, first, last, depth):
        while last - first > _THRESHOLD:
            if depth == 0:
                self.partial_sort(first, last, last)
                return
            depth -= 1
            cut = self.unguarded_partition_pivot(first, last)
            self.introsort_loop(cut, last, depth)
            last = cut

    def linear_insert(self, i):
        k, v, less = self.k, self.v, self.less
        vk, vv = k[i], v[i]
        j = i - 1
        while less(vk, k[j]):
            k[j + 1], v[j + 1] = k[j], v[j]
            j -= 1
        k[j + 1], v[j + 1] = vk, vv

    def insertion_sort(self, first, last):
        if first == last:
            return
        k, v = self.k, self.v
        for i in range(first + 1, last):
            if self.comp(i, first):
                vk, vv = k[i], v[i]
                k[first + 1:i + 1], v[first + 1:i + 1] = k[first:i], v[first:i]
                k[first], v[first] = vk, vv
            else:
                self.linear_insert(i)

    def sort(self, first, last):
        """std::sort: introsort, then a final insertion sort (unguarded past the first run)."""
        n = last - first
        if n <= 1:
            return
        self.introsort_loop(first, last, 2 * _log2(n))
        if n > _THRESHOLD:
            self.insertion_sort(first, first + _THRESHOLD)
            for i in range(first + _THRESHOLD, last):
                self.linear_insert(i)
        else:
            self.insertion_sort(first, last)

    def partial_sort(self, first, middle, last):
        """std::partial_sort: a heap of the first ``middle - first``, then sorted."""
        self.heap_select(first, middle, last)
        self.sort_heap(first, middle)

    def nth_element(self, first, nth, last):
        """std::nth_element: introselect (quickselect down to 3 elements, heap select past 2·log2(n) levels)."""
        if first == last or nth == last:
            return
        depth = 2 * _log2(last - first)
        while last - first > 3:
            if depth == 0:
                self.heap_select(first, nth + 1, last)
                self.swap(first, nth)
                return
            depth -= 1
            cut = self.unguarded_partition_pivot(first, last)
            if cut <= nth:
                first = cut
            else:
                last = cut
        self.insertion_sort(first, last)


def _log2(n):
    return int(math.floor(math.log2(n)))
