"""``Dataset``, ``IterableDataset``, ``TensorDataset``, ``StackDataset``, ``ConcatDataset``,
``ChainDataset``, ``Subset`` and ``random_split`` as PyTorch's ``torch/utils/data/dataset.py``
(``random_split`` draws PyTorch's permutation from the generator)."""
from __future__ import annotations

import bisect
import itertools
import math

from .. import errors
from .. import functions as T
from .. import warn as _warn

_MOD = "torch.utils.data.dataset"


class Dataset:
    _gx_exposed = True
    __module__ = _MOD

    def __getitem__(self, index):
        raise errors.NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])

    def __class_getitem__(cls, item):
        return cls          # Dataset[T] in a class statement: PyTorch's classes are Generic


class IterableDataset(Dataset):
    """A stream of samples: subclasses define ``__iter__`` (DataLoader then draws no indices)."""
    __module__ = _MOD

    def __iter__(self):
        raise errors.NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


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


class StackDataset(Dataset):
    """Samples of several datasets side by side: a tuple (positional datasets) or a dict (keywords)."""
    __module__ = _MOD

    def __init__(self, *args, **kwargs):
        if args:
            if kwargs:
                raise errors.ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) "
                                        "like input/output, but both types are given.")
            parts = args
        elif kwargs:
            parts = list(kwargs.values())
        else:
            raise errors.ValueError("At least one dataset should be passed")
        self._length = len(parts[0])
        if any(self._length != len(dataset) for dataset in parts):
            raise errors.ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: dataset[index] for k, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices):
        named = isinstance(self.datasets, dict)
        parts = self.datasets.items() if named else enumerate(self.datasets)
        samples = [{} if named else [] for _ in indices]
        for key, dataset in parts:
            items = _items(dataset, indices)
            for sample, item in zip(samples, items):
                if named:
                    sample[key] = item
                else:
                    sample.append(item)
        return samples if named else [tuple(sample) for sample in samples]

    def __len__(self):
        return self._length


def _items(dataset, indices):
    """``dataset.__getitems__(indices)`` where it has one (its length checked), else item by item."""
    many = getattr(dataset, "__getitems__", None)
    if not callable(many):
        return [dataset[i] for i in indices]
    items = many(indices)
    if len(items) != len(indices):
        raise errors.ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, got {len(items)}")
    return items


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


class ChainDataset(IterableDataset):
    """IterableDatasets one after the other."""
    __module__ = _MOD

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise errors.AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise errors.AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    __module__ = _MOD

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        many = getattr(self.dataset, "__getitems__", None)
        if callable(many):
            return many([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

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
                _warn.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.")
    if sum(lengths) != len(dataset):
        raise errors.ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = T.randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, indices[offset - length:offset])
            for offset, length in zip(itertools.accumulate(lengths), lengths)]
