"""``Dataset``, ``TensorDataset``, ``Subset``, ``ConcatDataset`` and ``random_split`` as PyTorch's
``torch/utils/data/dataset.py`` (``random_split`` draws PyTorch's permutation from the generator)."""
from __future__ import annotations

import bisect
import itertools
import math
import warnings

from .. import errors
from .. import functions as T

_MOD = "torch.utils.data.dataset"


class Dataset:
    _gx_exposed = True
    __module__ = _MOD

    def __getitem__(self, index):
        raise errors.NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    __module__ = _MOD

    def __init__(self, *tensors):
        if not all(tensors[0].size(0) == t.size(0) for t in tensors):
            raise errors.AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class ConcatDataset(Dataset):
    __module__ = _MOD

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise errors.AssertionError("datasets should not be an empty iterable")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise errors.ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        sample = idx if which == 0 else idx - self.cumulative_sizes[which - 1]
        return self.datasets[which][sample]


class Subset(Dataset):
    __module__ = _MOD

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise errors.ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(math.floor(len(dataset) * frac))
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                              UserWarning, stacklevel=2)
    if sum(lengths) != len(dataset):
        raise errors.ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = T.randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, indices[offset - length:offset])
            for offset, length in zip(itertools.accumulate(lengths), lengths)]
