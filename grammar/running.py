"""Run one program: parse, interpret, map the outcome to an exit status.

It lives on the grammar side (not in ``cli/``) because running a program text is the
language's job, and both the CLI and the evaluation API (``gradexpr.session``) need it:
imports go ``cli -> grammar -> gradexpr``, and ``gradexpr.session`` reaches it only
inside the function that runs a program. The statuses are the process's exit statuses
(``cli/exitcodes.Exit`` names them): 0 ok, 1 a runtime error, 2 a syntax error.
"""
from __future__ import annotations

import sys

from gradexpr import errors, limits as _limits

OK, RUNTIME, USAGE = 0, 1, 2     # as cli/exitcodes.Exit


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
    from .parser import parse as _parse
    return _parse(source, filename)


def execute(source: str, filename: str, *, out=None, limits: _limits.Limits | None = None,
            extra_globals: dict | None = None, debug: bool = False) -> Outcome:
    """Parse and run ``source``; errors are returned in the outcome, never raised (unless ``debug``)."""
    return _parsed_and_run(source, filename, limits or _limits.current(), debug,
                           lambda: new_interpreter(filename, out, limits, extra_globals))


def new_interpreter(filename: str, out=None, limits: _limits.Limits | None = None, extra_globals: dict | None = None):
    """An interpreter over the prelude's globals (and ``extra_globals``), writing to ``out``."""
    from .interpreter import Interpreter
    from .prelude import make_globals
    g = make_globals()
    if extra_globals:
        g.update(extra_globals)
    return Interpreter(g, filename=filename, out=out if out is not None else sys.stdout,
                       limits=limits or _limits.current())


def run_in(interp, source: str, debug: bool = False) -> Outcome:
    """Parse ``source`` and run it in ``interp``, whose globals persist (the REPL's session)."""
    return _parsed_and_run(source, interp.filename, interp.limits, debug, lambda: interp, session=interp)


def _parsed_and_run(source, filename, limits, debug, interpreter, session=None) -> Outcome:
    token = _limits.activate(limits)
    try:
        try:
            module = parse(source, filename)
        except errors.SyntaxError as e:
            return Outcome(USAGE, e)
        except errors.LimitError as e:       # nesting or literal size beyond the limits: stopped, exit 1
            return Outcome(RUNTIME, e)
        interp = interpreter()
        alarm = _WallClock(interp.limits.max_seconds)
        try:
            from .modules.run_context import running
            with alarm, running(filename, source, session=session):  # warnings, settings given back
                interp.run(module)
        except KeyboardInterrupt:
            raise
        except errors.SyntaxError as e:
            return Outcome(USAGE, e, interp, module)
        except Exception as e:  # a runtime error of the program
            if debug:
                raise
            if isinstance(e, RecursionError) and not isinstance(e, errors.GxError):
                e = errors.RecursionError("maximum recursion depth exceeded")
            return Outcome(RUNTIME, e, interp, module)
        return Outcome(OK, None, interp, module)
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
