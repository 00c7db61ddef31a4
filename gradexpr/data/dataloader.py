"""``DataLoader`` (single process) and ``default_collate``, as PyTorch's: each epoch's iterator draws a
base seed from the loader's generator before the sampler runs, so seeded shuffles, and the random
numbers drawn after them, are PyTorch's."""
from __future__ import annotations

import collections

import numpy as np

from .. import dtypes, errors
from .. import functions as T
from ..tensor import Tensor
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


class DataLoader:
    _gx_exposed = True
    __module__ = "torch.utils.data.dataloader"

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise errors.ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                                    "multiprocessing.")
        if timeout < 0:
            raise errors.ValueError("timeout option should be non-negative")
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.generator = generator
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

    @property
    def _index_sampler(self):
        return self.batch_sampler if self.batch_sampler is not None else self.sampler

    def __iter__(self):
        return _SingleProcessDataLoaderIter(self)

    def __len__(self):
        return len(self._index_sampler)


class _SingleProcessDataLoaderIter:
    _gx_exposed = True
    __module__ = "torch.utils.data.dataloader"

    def __init__(self, loader):
        self._dataset = loader.dataset
        self._auto_collation = loader.batch_sampler is not None
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(loader._index_sampler)
        self._base_seed = draw_seed(loader.generator)
        self._num_yielded = 0
        self._length = len(loader)

    def __iter__(self):
        return self

    def __next__(self):
        index = next(self._sampler_iter)
        if self._auto_collation:
            data = [self._dataset[i] for i in index]
        else:
            data = self._dataset[index]
        self._num_yielded += 1
        return self._collate_fn(data)

    def __len__(self):
        return self._length
