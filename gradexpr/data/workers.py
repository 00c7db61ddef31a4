"""``DataLoader(num_workers=N)``: the N worker processes of PyTorch, run here in this process.

gradexpr starts no process (SPEC 3), yet a program with ``num_workers=2`` must get PyTorch's
batches in PyTorch's order. What a worker is to a program, each worker here is too: a copy of
the dataset (PyTorch pickles it into the process), torch's random generator seeded with
``base_seed + id``, ``worker_init_fn(id)`` run first, ``get_worker_info()`` answering inside it
and ``None`` outside. Batches are handed out and collected as ``_MultiProcessingDataLoaderIter``
does: tasks go round-robin to the live workers, ``prefetch_factor`` per worker ahead; results
are yielded in task order; a worker whose IterableDataset ran dry answers its next task with
"stopped", leaves the rotation, and the tasks already queued for it are skipped. A worker does
its work when the main loop waits for that task's result (as if every worker were equally fast).
(Python's ``random`` and NumPy's generator are not reseeded per worker, as PyTorch does.)
"""
from __future__ import annotations

import contextlib
import copy
import itertools

from .. import rng as _rng
from .fetch import fetcher
from .sampler import draw_seed

_MOD = "torch.utils.data._utils.worker"
_current = [None]           # the WorkerInfo of the worker whose code runs now, else None


class WorkerInfo:
    _gx_exposed = True
    __module__ = _MOD

    def __init__(self, id, num_workers, seed, dataset):
        self.id = id
        self.num_workers = num_workers
        self.seed = seed
        self.dataset = dataset
        self.rng = None
        self.worker_method = "multiprocessing"

    def __repr__(self):
        return (f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, "
                f"dataset={self.dataset!r}, rng={self.rng!r}, worker_method={self.worker_method!r})")


def get_worker_info():
    """The running worker's WorkerInfo; ``None`` in the main process."""
    return _current[0]


class _Stopped:
    """A worker's answer once its IterableDataset has no more samples."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class _Worker:
    def __init__(self, loader, worker_id: int, base_seed: int):
        self.dataset = copy.deepcopy(loader.dataset)
        self.info = WorkerInfo(worker_id, loader.num_workers, base_seed + worker_id, self.dataset)
        self.state = base_seed + worker_id      # torch.manual_seed(seed) in the new process
        self.iterable = loader._iterable
        self.ended = False
        self.failure = None
        self.fetcher = None
        with self.running():
            try:
                if loader.worker_init_fn is not None:
                    loader.worker_init_fn(worker_id)
                self.restart(loader)
            except Exception as e:      # raised where PyTorch reraises it: at this worker's first task
                self.failure = e

    def restart(self, loader):
        """A new epoch of a persistent worker (and the first of any): a fresh fetcher on its dataset."""
        self.ended = False
        self.fetcher = fetcher(self.iterable, self.dataset, loader._auto_collation, loader.collate_fn,
                               loader.drop_last)

    @contextlib.contextmanager
    def running(self):
        """This worker's random state and WorkerInfo in force; the main process's given back."""
        main, outer = _rng.snapshot_rng_state(), _current[0]
        _rng.restore_rng_state(self.state)
        _current[0] = self.info
        try:
            yield
        finally:
            self.state = _rng.snapshot_rng_state()
            _rng.restore_rng_state(main)
            _current[0] = outer

    def fetch(self, index):
        with self.running():
            if self.failure is not None:
                failure, self.failure = self.failure, None
                raise failure
            try:
                return self.fetcher.fetch(index)
            except StopIteration:
                if not self.iterable:
                    raise
                self.ended = True
                return _Stopped(self.info.id)


class _Task:
    __slots__ = ("worker", "index", "answered", "data")

    def __init__(self, worker, index):
        self.worker, self.index, self.answered, self.data = worker, index, False, None


class MultiWorkerIter:
    """``iter(DataLoader(..., num_workers=N))``."""
    _gx_exposed = True
    __module__ = "torch.utils.data.dataloader"
    __qualname__ = "_MultiProcessingDataLoaderIter"

    def __init__(self, loader):
        self._sampler_iter = iter(loader._index_sampler)
        base_seed = draw_seed(loader.generator)
        self._num_workers = n = loader.num_workers
        self._workers = [_Worker(loader, i, base_seed) for i in range(n)]
        self._start(loader)

    def _start(self, loader):
        self._loader = loader
        self._active = [True] * self._num_workers
        self._cycle = itertools.cycle(range(self._num_workers))
        self._tasks = {}                # task number -> _Task, until it is yielded or skipped
        self._send_idx = self._rcvd_idx = 0
        for _ in range(loader.prefetch_factor * self._num_workers):
            self._try_put_index()

    def _reset(self, loader):
        """The next epoch with the same workers (``persistent_workers=True``)."""
        self._sampler_iter = iter(loader._index_sampler)
        for worker in self._workers:
            with worker.running():
                worker.restart(loader)
        self._start(loader)

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader)

    def _try_put_index(self):
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker = next(self._cycle)
            if self._active[worker]:
                break
        else:
            return                      # (the index is dropped, as PyTorch drops it)
        self._tasks[self._send_idx] = _Task(worker, index)
        self._send_idx += 1

    def _get_data(self):
        """The next answer a worker sends: to the earliest task of a worker still at work (a
        worker that stopped never answers the tasks queued after its "stopped")."""
        for idx in sorted(self._tasks):
            task = self._tasks[idx]
            if not task.answered and not self._workers[task.worker].ended:
                return idx, self._workers[task.worker].fetch(task.index)
        raise AssertionError("Invalid iterator state: no outstanding tasks when fetching next data")

    def __next__(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                task = self._tasks.get(self._rcvd_idx)
                if task is not None:
                    if task.answered or self._active[task.worker]:
                        break
                    del self._tasks[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                raise StopIteration
            task = self._tasks[self._rcvd_idx]
            if task.answered:
                del self._tasks[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process(task.data)
            idx, data = self._get_data()
            if isinstance(data, _Stopped):
                self._active[data.worker_id] = False
                del self._tasks[idx]
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                self._tasks[idx].answered, self._tasks[idx].data = True, data
                continue
            del self._tasks[idx]
            self._rcvd_idx += 1
            return self._process(data)

    def _process(self, data):
        self._try_put_index()
        return data
