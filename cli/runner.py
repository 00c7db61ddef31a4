"""Run one program: parse, interpret, map the outcome to an exit code. Shared by run, check, eval."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field

from gradexpr import errors, limits as _limits

from .exitcodes import Exit


@dataclass
class Outcome:
    code: int
    error: BaseException | None = None
    interpreter: object = None
    module: object = None
    extra: dict = field(default_factory=dict)


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
        try:
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
