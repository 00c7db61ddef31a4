"""What one program run owns and gives back when it ends, whatever it did.

A program may change process-wide settings through the modules it imports: the default device
(``torch.set_default_device``) and dtype (``torch.set_default_dtype``), NumPy's print options
(``np.set_printoptions``). Another program
run in the same process (``gradexpr check``, the test plugin, ``eval --batch``) must not see
them. Its warnings (filters, what was shown) are its own too (``program_warnings``)."""
from __future__ import annotations

import contextlib

__all__ = ["running", "settings_of"]


@contextlib.contextmanager
def running(filename: str, source: str, stream=None, session=None):
    """Run a program (or one chunk of a REPL ``session``: an object whose ``settings`` carry the
    program's settings from one chunk to the next) and give the process its settings back."""
    import numpy as np

    from .program_warnings import handling_for
    printoptions = np.get_printoptions()
    _apply(getattr(session, "settings", None))
    try:
        with handling_for(filename, source, stream):
            yield
    finally:
        if session is not None:
            session.settings = _current()
        else:
            _close_saved_tensor_hooks()
        _apply(None)
        np.set_printoptions(**printoptions)


def _close_saved_tensor_hooks():
    """Saved-tensor hook blocks a program left open (inside a generator it never finished) end with it."""
    import sys
    hooks = sys.modules.get("gradexpr.saved_hooks")
    if hooks is not None:
        hooks.forget_all()


@contextlib.contextmanager
def settings_of(session):
    """The settings a REPL session's program made, in force while the REPL shows its values."""
    _apply(getattr(session, "settings", None))
    try:
        yield
    finally:
        _apply(None)


def _device_module():
    """gradexpr.device if anything imported it (until then the default device is the CPU, as set)."""
    import sys
    return sys.modules.get("gradexpr.device")


def _current() -> dict:
    from gradexpr import dtypes
    device = _device_module()
    return {"device": device.default_device_setting() if device else None, "dtype": dtypes.default_float}


def _apply(settings) -> None:
    """Put ``settings`` in force (None: the process's own)."""
    from gradexpr import dtypes
    device = _device_module()
    if settings is None or settings["device"] is None:
        if device is not None:
            device.reset_default_device()
    else:
        device.set_default_device(settings["device"])
    if settings is None:
        dtypes.default_float = dtypes.float32
    else:
        dtypes.default_float = settings["dtype"]
