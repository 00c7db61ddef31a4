"""The samplers behind ``DataLoader``: ``SequentialSampler``, ``RandomSampler`` (a fresh generator seeded
from PyTorch's, then ``randperm``, as ``torch/utils/data/sampler.py``), ``SubsetRandomSampler``,
``WeightedRandomSampler`` (``torch.multinomial``) and ``BatchSampler``."""
from __future__ import annotations

import itertools
import math

from .. import errors
from .. import functions as T

_MOD = "torch.utils.data.sampler"


def draw_seed(generator=None):
    """``torch.empty((), dtype=torch.int64).random_(generator=g).item()``: one 64-bit draw, modulo 2**63."""
    return int(T.randint(0, 2 ** 63, (), generator=generator).item())


class Sampler:
    _gx_exposed = True
    __module__ = _MOD

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise errors.NotImplementedError

    def __class_getitem__(cls, item):
        return cls          # Sampler[int] in a class statement: PyTorch's Sampler is Generic


class SequentialSampler(Sampler):
    __module__ = _MOD

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    __module__ = _MOD

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise errors.TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise errors.ValueError(f"num_samples should be a positive integer value, but got "
                                    f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        if self.generator is None:
            from .. import rng as _random
            generator = _random.Generator(draw_seed())
        else:
            generator = self.generator
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from T.randint(high=n, size=(32,), generator=generator).tolist()
            yield from T.randint(high=n, size=(self.num_samples % 32,), generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from T.randperm(n, generator=generator).tolist()
            yield from T.randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    __module__ = _MOD

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in T.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    __module__ = _MOD

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise errors.ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise errors.ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        from .. import dtypes
        weights_tensor = T.as_tensor(weights, dtype=dtypes.float64)
        if len(weights_tensor.shape) != 1:
            raise errors.ValueError(f"weights should be a 1d sequence but given weights have shape "
                                    f"{tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        yield from T.multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator).tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    __module__ = _MOD

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise errors.ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise errors.ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        if self.drop_last:
            for batch in zip(*[it] * self.batch_size):
                yield [*batch]
        else:
            batch = [*itertools.islice(it, self.batch_size)]
            while batch:
                yield batch
                batch = [*itertools.islice(it, self.batch_size)]

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


class DistributedSampler(Sampler):
    """``torch.utils.data.distributed.DistributedSampler``: this replica's share of the (shuffled, padded)
    indices. Without ``num_replicas``/``rank`` it asks ``torch.distributed`` for them, which fails as in
    PyTorch before ``init_process_group`` (gradexpr never starts one)."""
    __module__ = "torch.utils.data.distributed"

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        from .. import distributed as dist
        if num_replicas is None:
            num_replicas = dist.names()["get_world_size"]()
        if rank is None:
            rank = dist.names()["get_rank"]()
        if rank >= num_replicas or rank < 0:
            raise errors.ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        if self.shuffle:
            from .. import rng as _random
            g = _random.Generator(self.seed + self.epoch)
            indices = T.randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[:self.total_size]
        indices = indices[self.rank:self.total_size:self.num_replicas]
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        self.epoch = epoch
