"""How a DataLoader iterator turns an index (or a batch of indices) into data, for map-style and
iterable datasets alike, in the main process or in a worker (PyTorch's ``_utils/fetch.py``)."""
from __future__ import annotations

from .sampler import Sampler


class InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: ``None`` forever (the dataset decides when it ends)."""
    __module__ = "torch.utils.data.dataloader"

    def __iter__(self):
        while True:
            yield None


def fetcher(iterable: bool, dataset, auto_collation: bool, collate_fn, drop_last: bool):
    return (IterableFetcher if iterable else MapFetcher)(dataset, auto_collation, collate_fn, drop_last)


class MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn

    def fetch(self, index):
        if self.auto_collation:
            many = getattr(self.dataset, "__getitems__", None)
            data = many(index) if many else [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class IterableFetcher:
    """Draws from ``iter(dataset)``: a batch takes as many samples as the batch of indices has
    entries; a short last batch is dropped with ``drop_last``; StopIteration once it ran dry."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)
