"""What one program run owns and gives back when it ends, whatever it did.

A program may change process-wide settings through the modules it imports: the default device
(``torch.set_default_device``), NumPy's print options (``np.set_printoptions``). Another program
run in the same process (``gradexpr check``, the test plugin, ``eval --batch``) must not see
them. Its warnings (filters, what was shown) are its own too (``program_warnings``)."""
from __future__ import annotations

import contextlib

__all__ = ["running"]


@contextlib.contextmanager
def running(filename: str, source: str, stream=None):
    import numpy as np

    from gradexpr import device

    from .program_warnings import handling_for
    printoptions = np.get_printoptions()
    try:
        with handling_for(filename, source, stream):
            yield
    finally:
        device.reset_default_device()
        np.set_printoptions(**printoptions)
