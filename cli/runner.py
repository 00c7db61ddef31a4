"""Run one program: parse, interpret, map the outcome to an exit code. Shared by run, check, eval."""
from __future__ import annotations

import sys

from gradexpr import errors, limits as _limits

from .exitcodes import Exit


class Outcome:
    __slots__ = ("code", "error", "interpreter", "module", "extra")

    def __init__(self, code: int, error: BaseException | None = None, interpreter=None, module=None,
                 extra: dict | None = None):
        self.code = code
        self.error = error
        self.interpreter = interpreter
        self.module = module
        self.extra = {} if extra is None else extra


def parse(source: str, filename: str):
    from gradexpr.grammar.parser import parse as _parse
    return _parse(source, filename)


def execute(source: str, filename: str, *, out=None, limits: _limits.Limits | None = None,
            extra_globals: dict | None = None, debug: bool = False) -> Outcome:
    """Parse and run ``source``; errors are returned in the outcome, never raised (unless ``debug``)."""
    token = _limits.activate(limits or _limits.current())
    try:
        try:
            module = parse(source, filename)
        except errors.SyntaxError as e:
            return Outcome(Exit.USAGE, e)
        except errors.LimitError as e:       # nesting or literal size beyond the limits: stopped, exit 1
            return Outcome(Exit.RUNTIME, e)
        from gradexpr.grammar.interpreter import Interpreter
        from gradexpr.grammar.prelude import make_globals
        g = make_globals()
        if extra_globals:
            g.update(extra_globals)
        interp = Interpreter(g, filename=filename, out=out if out is not None else sys.stdout,
                             limits=limits or _limits.current())
        alarm = _WallClock(interp.limits.max_seconds)
        try:
            from gradexpr.grammar.modules.run_context import running
            with alarm, running(filename, source):     # its warnings, settings given back at the end
                interp.run(module)
        except KeyboardInterrupt:
            raise
        except errors.SyntaxError as e:
            return Outcome(Exit.USAGE, e, interp, module)
        except Exception as e:  # a runtime error of the program
            if debug:
                raise
            if isinstance(e, RecursionError) and not isinstance(e, errors.GxError):
                e = errors.RecursionError("maximum recursion depth exceeded")
            return Outcome(Exit.RUNTIME, e, interp, module)
        return Outcome(Exit.OK, None, interp, module)
    finally:
        _limits.deactivate(token)


class _WallClock:
    """A backstop for the wall-time limit. The interpreter reads the clock between statements,
    loop iterations and calls; one long operation inside the engine (``tensor()`` of a huge
    nested list, printing ten million numbers) is interrupted by SIGALRM instead, raising the
    same LimitError where the program is. It fires a quarter of a second after the limit (the
    interpreter's own check, which knows the statement, comes first), then every quarter of a
    second in case engine code swallowed it. Only in the main thread, and only when nobody else
    uses SIGALRM."""

    GRACE = 0.25

    def __init__(self, seconds):
        self.seconds = seconds
        self.armed = False
        self.previous = None

    def __enter__(self):
        import threading
        signal = _signal_module()
        if (not self.seconds or not hasattr(signal, "setitimer")
                or threading.current_thread() is not threading.main_thread()
                or signal.getsignal(signal.SIGALRM) != signal.SIG_DFL):
            return self
        self.previous = signal.signal(signal.SIGALRM, self._expired)
        self.armed = True
        signal.setitimer(signal.ITIMER_REAL, self.seconds + self.GRACE, self.GRACE)
        return self

    def _expired(self, signum, frame):
        if self.armed:
            raise _limits.exceeded("the running time (seconds)", self.seconds, "max_seconds")

    def __exit__(self, *exc):
        if self.previous is not None:
            signal = _signal_module()
            self.armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
            self.previous = None
        return False


def _signal_module():
    """``signal``'s C core: the same functions, without the enums the ``signal`` module builds
    when it is imported (a millisecond and a half of a one-shot ``gradexpr eval``)."""
    try:
        import _signal
    except ImportError:      # not CPython
        import signal as _signal
    return _signal
