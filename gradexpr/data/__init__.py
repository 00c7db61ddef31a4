"""``torch.utils.data``: datasets, samplers, ``DataLoader`` (single process) and ``random_split``.
Imported when a program first reads one of its names (see api.py)."""
from __future__ import annotations

from .dataloader import DataLoader, default_collate, default_convert
from .dataset import ConcatDataset, Dataset, Subset, TensorDataset, random_split
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

NAMES = ("Dataset TensorDataset ConcatDataset Subset random_split DataLoader default_collate default_convert "
         "Sampler SequentialSampler RandomSampler BatchSampler").split()


def names():
    g = globals()
    return {n: g[n] for n in NAMES}
