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

__all__ = ["unstable_order", "GRAIN_SIZE"]

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


def _less(dtype, descending):
    if dtype.kind == "f":
        if descending:
            return lambda x, y: (x != x and y == y) or x > y
        return lambda x, y: (x == x and y != y) or x < y
    return (lambda x, y: x > y) if descending else (lambda x, y: x < y)


def _std_sort(keys, less):
    """The permutation libstdc++'s std::sort leaves the pairs (keys[i], i) in, comparing keys with ``less``."""
    n = len(keys)
    v = list(range(n))          # v[i] = original index now at position i
    k = list(keys)

    def comp(i, j):             # comp on positions
        return less(k[i], k[j])

    def swap(i, j):
        k[i], k[j] = k[j], k[i]
        v[i], v[j] = v[j], v[i]

    def move_median_to_first(result, a, b, c):
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

    def unguarded_partition(first, last, pivot):
        while True:
            while comp(first, pivot):
                first += 1
            last -= 1
            while comp(pivot, last):
                last -= 1
            if not first < last:
                return first
            swap(first, last)
            first += 1

    def adjust_heap(first, hole, length, value):
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

    def heap_sort(first, last):
        length = last - first
        if length >= 2:
            parent = (length - 2) // 2
            while True:
                adjust_heap(first, parent, length, (k[first + parent], v[first + parent]))
                if parent == 0:
                    break
                parent -= 1
        while last - first > 1:
            last -= 1
            value = (k[last], v[last])
            k[last], v[last] = k[first], v[first]
            adjust_heap(first, 0, last - first, value)

    def introsort_loop(first, last, depth):
        while last - first > _THRESHOLD:
            if depth == 0:
                heap_sort(first, last)
                return
            depth -= 1
            mid = first + (last - first) // 2
            move_median_to_first(first, first + 1, mid, last - 1)
            cut = unguarded_partition(first + 1, last, first)
            introsort_loop(cut, last, depth)
            last = cut

    def linear_insert(i):
        vk, vv = k[i], v[i]
        j = i - 1
        while less(vk, k[j]):
            k[j + 1], v[j + 1] = k[j], v[j]
            j -= 1
        k[j + 1], v[j + 1] = vk, vv

    def insertion_sort(first, last):
        if first == last:
            return
        for i in range(first + 1, last):
            if comp(i, first):
                vk, vv = k[i], v[i]
                k[first + 1:i + 1], v[first + 1:i + 1] = k[first:i], v[first:i]
                k[first], v[first] = vk, vv
            else:
                linear_insert(i)

    if n > 1:
        introsort_loop(0, n, 2 * int(math.floor(math.log2(n))))
        if n > _THRESHOLD:
            insertion_sort(0, _THRESHOLD)
            for i in range(_THRESHOLD, n):
                linear_insert(i)
        else:
            insertion_sort(0, n)
    return v
