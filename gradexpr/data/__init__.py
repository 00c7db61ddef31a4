"""``torch.utils.data``: datasets, samplers, ``DataLoader`` (its workers run in this process) and
``random_split``.
Imported when a program first reads one of its names (see api.py)."""
from __future__ import annotations

from .dataloader import DataLoader, default_collate, default_convert
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
                      random_split)
from .sampler import (BatchSampler, DistributedSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)
from .workers import WorkerInfo, get_worker_info

NAMES = ("Dataset IterableDataset TensorDataset StackDataset ConcatDataset ChainDataset Subset random_split "
         "DataLoader default_collate default_convert Sampler SequentialSampler RandomSampler SubsetRandomSampler "
         "WeightedRandomSampler BatchSampler DistributedSampler get_worker_info WorkerInfo").split()

# torch.utils.data's submodules as names (``from torch.utils.data import dataset``): each the names it defines
_SUBMODULES = {
    "dataset": "Dataset IterableDataset TensorDataset StackDataset ConcatDataset ChainDataset Subset random_split",
    "sampler": "Sampler SequentialSampler RandomSampler SubsetRandomSampler WeightedRandomSampler BatchSampler",
    "distributed": "DistributedSampler",
    "dataloader": "DataLoader default_collate default_convert get_worker_info",
}


def names():
    from ..api import Namespace
    g = globals()
    return {**{n: g[n] for n in NAMES},
            **{m: Namespace(f"torch.utils.data.{m}", {n: g[n] for n in ns.split()}) for m, ns in _SUBMODULES.items()}}
