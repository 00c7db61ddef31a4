"""``DataLoader`` and ``default_collate``, as PyTorch's: each epoch's iterator draws a base seed from
the loader's generator before the sampler runs, so seeded shuffles, and the random numbers drawn
after them, are PyTorch's. ``num_workers > 0`` runs the workers here (workers.py)."""
from __future__ import annotations

import collections
import math

import numpy as np

from .. import dtypes, errors
from .. import functions as T
from .. import warn as _warn
from ..tensor import Tensor
from .dataset import IterableDataset
from .fetch import InfiniteConstantSampler, fetcher
from .sampler import BatchSampler, RandomSampler, SequentialSampler, draw_seed


def default_collate(batch):
    """Stack tensors, make tensors of numbers, and recurse into mappings and sequences."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return T.stack(batch, 0)
    if isinstance(elem, np.ndarray):
        return T.stack([T.as_tensor(b) for b in batch], 0)
    if isinstance(elem, bool) or isinstance(elem, int):
        return T.tensor(batch)
    if isinstance(elem, float):
        return T.tensor(batch, dtype=dtypes.float64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise errors.RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        return [default_collate(list(s)) for s in transposed]
    raise errors.TypeError("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                           f"found {type(elem)}")


def default_convert(data):
    if isinstance(data, np.ndarray):
        return T.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return [default_convert(d) for d in data]
    return data


_LOCKED = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


class DataLoader:
    _gx_exposed = True
    __module__ = "torch.utils.data.dataloader"
    # what a program may assign (the first six raise PyTorch's ValueError once the loader exists)
    _gx_settable = frozenset(_LOCKED + ("num_workers", "collate_fn", "worker_init_fn", "pin_memory", "timeout",
                                        "generator", "prefetch_factor"))

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise errors.ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                                    "multiprocessing.")
        if timeout < 0:
            raise errors.ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise errors.ValueError("prefetch_factor option could only be specified in multiprocessing.let "
                                    "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise errors.ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise errors.ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.in_order = in_order
        self.generator = generator
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in {False, None}:
                raise errors.ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, "
                                        f"but got shuffle={shuffle}")
            if sampler is not None:
                raise errors.ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, "
                                        f"but got sampler={sampler}")
            if batch_sampler is not None:
                raise errors.ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler "
                                        f"option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise errors.ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise errors.ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, "
                                        "sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise errors.ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                                    "drop_last")
        if sampler is None:
            if self._iterable:
                sampler = InfiniteConstantSampler()
            else:
                sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator = None
        self._length_reported = None    # len(self) of an IterableDataset, once asked (for the warning)
        self.__dict__["_initialized"] = True
        _check_worker_number(num_workers)

    def __setattr__(self, name, value):
        if self.__dict__.get("_initialized") and name in _LOCKED:
            raise errors.ValueError(f"{name} attribute should not be set after {type(self).__name__} is initialized")
        object.__setattr__(self, name, value)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self.batch_sampler is not None else self.sampler

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        from .workers import MultiWorkerIter
        if not self.persistent_workers:
            _check_worker_number(self.num_workers)
            return MultiWorkerIter(self)
        if self._iterator is None:
            _check_worker_number(self.num_workers)
            self._iterator = MultiWorkerIter(self)
        else:
            self._iterator._reset(self)
        return self._iterator

    def __len__(self):
        if not self._iterable:
            return len(self._index_sampler)
        length = len(self.dataset)
        self.__dict__["_length_reported"] = length
        if self.batch_size is not None:
            length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
        return length


def _check_worker_number(num_workers):
    """PyTorch's warning when a loader would start more worker processes than the machine has CPUs."""
    if not num_workers:
        return
    import os
    try:
        cpus = len(os.sched_getaffinity(0))
        checked = True
    except AttributeError:
        cpus, checked = os.cpu_count(), False
    if cpus is not None and num_workers <= cpus:
        return
    suggestion = (f"Our suggested max number of worker in current system is {cpus}"
                  f"{'' if checked else ' (`cpuset` is not taken into account)'}, which is smaller than what this "
                  f"DataLoader is going to create." if cpus is not None else
                  "DataLoader is not able to compute a suggested max number of worker in current system.")
    _warn.warn(f"This DataLoader will create {num_workers} worker processes in total. {suggestion} Please be aware "
               "that excessive worker creation might get DataLoader running slow or even freeze, lower the worker "
               "number to avoid potential slowness/freeze if necessary.")


class _SingleProcessDataLoaderIter:
    _gx_exposed = True
    __module__ = "torch.utils.data.dataloader"

    def __init__(self, loader):
        self._loader = loader
        self._sampler_iter = iter(loader._index_sampler)
        self._base_seed = draw_seed(loader.generator)
        self._fetcher = fetcher(loader._iterable, loader.dataset, loader._auto_collation, loader.collate_fn,
                                loader.drop_last)
        self._num_yielded = 0

    def __iter__(self):
        return self

    def __next__(self):
        index = next(self._sampler_iter)
        data = self._fetcher.fetch(index)
        self._num_yielded += 1
        reported = self._loader._length_reported
        if self._loader._iterable and reported is not None and self._num_yielded > reported:
            _warn.warn(f"Length of IterableDataset {self._loader.dataset!r} was reported to be {reported}(when "
                       f"accessing len(dataloader)), but {self._num_yielded} samples have been fetched. ")
        return data

    def __len__(self):
        return len(self._loader)
