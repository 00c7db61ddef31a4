"""``torch.distributed`` as a program sees it in one process that never joined a process group:
gradexpr starts none (``init_process_group`` would open the network, which gradexpr never does), so
every call that needs the default group raises PyTorch's error for a group not initialized, as
``torch/distributed/distributed_c10d.py`` does before ``init_process_group``."""
from __future__ import annotations

from . import errors

__all__ = ["names"]

_NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."


def _default_group(*args, **kwargs):
    raise errors.ValueError(_NOT_INITIALIZED)


def init_process_group(*args, **kwargs):
    raise errors.RuntimeError("torch.distributed.init_process_group is not available in gradexpr: it allows no "
                              "file, process or network access")


def names() -> dict:
    """The names of ``torch.distributed`` (api.py makes the namespace)."""
    false = lambda: False  # noqa: E731
    needs_group = ("get_rank get_world_size new_group barrier all_reduce all_gather broadcast reduce scatter gather "
                   "destroy_process_group get_backend").split()
    names = {name: _named(name) for name in needs_group}
    names.update({"is_available": lambda: True, "is_initialized": false, "is_torchelastic_launched": false,
                  "init_process_group": init_process_group})
    return names


def _named(name):
    def call(*args, **kwargs):
        _default_group()
    call.__name__ = call.__qualname__ = name
    return call
