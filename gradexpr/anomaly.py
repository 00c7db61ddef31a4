"""Anomaly mode: ``torch.autograd.detect_anomaly()`` and ``set_detect_anomaly(mode)``.

The state lives in ``graph._anomaly`` (read by the engine); these are the program-facing
context managers, with PyTorch's warning when a ``detect_anomaly`` block is entered.
"""
from __future__ import annotations

from .graph import _anomaly
from .warn import warn

_ENABLED_WARNING = ("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                    "enabled for debugging.")


class detect_anomaly:
    """A block in which backward checks every node's gradients for NaN (``check_nan``)."""

    _gx_exposed = True

    def __init__(self, check_nan: bool = True):
        self.check_nan = bool(check_nan)
        self._prev = None
        warn(_ENABLED_WARNING, UserWarning)

    def __enter__(self):
        self._prev = _anomaly.get()
        _anomaly.set((True, self.check_nan))
        return None

    def __exit__(self, *exc):
        _anomaly.set(self._prev)
        return False


class set_detect_anomaly:
    """Turns anomaly mode on or off at once; as a ``with`` block, restores the previous state on exit."""

    _gx_exposed = True

    def __init__(self, mode: bool, check_nan: bool = True):
        self._prev = _anomaly.get()
        _anomaly.set((bool(mode), bool(check_nan)))

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _anomaly.set(self._prev)
        return False


for _cls in (detect_anomaly, set_detect_anomaly):
    _cls.__module__ = "torch.autograd.anomaly_mode"
