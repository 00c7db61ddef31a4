"""``gradexpr repl``: an interactive session, as Python's REPL is for Python.

Each input (a line, or a block ended by an empty line) runs in one interpreter whose
globals persist, under the same limits and the same whitelist as ``gradexpr run``; when its
last statement is an expression whose value is not None, the value is echoed with the
program's ``repr`` (``>>> x.grad`` shows ``tensor([2., 2.])``). Commands starting with ``:``
show the eval views of the last value (``:graph``, ``:grad``, ``:jacobian``).

On a terminal: prompts, history (``~/.gradexpr_history``) and tab completion through the
standard library's ``readline`` (no new dependency: line editing and completion of names and
attributes is all the REPL needs); Ctrl-C cancels the line or the running input, Ctrl-D
leaves. Without a terminal it reads stdin with no prompts, so it can be scripted and tested;
its exit status is 1 when an input failed.
"""
from __future__ import annotations

import os
import sys

import click

from .exitcodes import Exit
from .options import limit_options, limits_from

FILENAME = "<stdin>"
PS1, PS2 = ">>> ", "... "
HELP = """\
Statements and expressions of gradexpr's language (PyTorch's, after the prelude); an
expression's value is shown. A block (for, def, if, class …) ends with an empty line.
  :graph     the grad_fn graph of the last value
  :grad      the gradients of the last value (a scalar) with respect to its leaves
  :jacobian  its Jacobian with respect to its leaves
  :help      this help        :quit (or Ctrl-D)  leave
"""
# a parse error with one of these messages means "the input goes on" (the next line may finish it)
_UNFINISHED = ("unclosed", "unterminated triple-quoted", "expected an indented block")


class Repl:
    """The session: an interpreter that persists, the last value, and how to show things."""

    def __init__(self, limits, out=None, err=None, rich=False):
        from gradexpr.grammar.running import new_interpreter
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.rich = rich
        self.interp = new_interpreter(FILENAME, self.out, limits)
        self.last = None
        self.failed = False

    # ------------------------------------------------------------------ input
    @staticmethod
    def needs_more(lines) -> bool:
        """Whether the lines so far are the start of a longer input (Python's REPL rule: an
        unfinished statement, or a block, which an empty line ends)."""
        from gradexpr import errors
        from gradexpr.grammar.running import parse
        source = "\n".join(lines) + "\n"
        try:
            parse(source, FILENAME)
        except errors.SyntaxError as e:
            return any(e.message.startswith(m) for m in _UNFINISHED) or lines[-1].rstrip().endswith("\\")
        except Exception:
            return False
        is_block = any(line.rstrip().endswith(":") for line in lines)
        return is_block and bool(lines[-1].strip())

    def run(self, source: str):
        """Run one input; echo its value; errors go to stderr as ``gradexpr run`` writes them."""
        if source.strip().startswith(":"):
            return self.command(source.strip())
        if not source.strip():
            return
        from gradexpr.grammar.running import run_in
        from .diagnostics import render
        outcome = run_in(self.interp, source)
        self.out.flush()
        if outcome.error is not None:
            self.failed = True
            self.error(render(outcome.error, source, FILENAME))
            return
        body = outcome.module.body if outcome.module is not None else []
        last = getattr(body[-1], "value", None) if body else None
        if last is None:
            return
        if self.interp.last_node is last:
            value = self.interp.last_value
        elif type(last).__name__ == "Constant" and type(last.value) is str:
            value = last.value          # a bare string: the interpreter skips it, Python's REPL shows it
        else:
            return
        if value is not None:
            self.last = value
            self.out.write(self.show_value(value) + "\n")
            self.out.flush()

    def show_value(self, value) -> str:
        """The program's own ``repr`` of the value (a program class's ``__repr__`` included)."""
        from gradexpr.grammar.builtins import CALL_GUARDS
        from gradexpr.grammar.modules.run_context import settings_of
        show = self.interp.globals.get("repr", repr)
        show = CALL_GUARDS.get(show, show) if show is repr else show   # (as a program's repr(): torch.dot a built-in)
        try:
            with settings_of(self.interp):       # (torch.set_default_dtype shows in the repr)
                return self.interp.call(show, value)
        except Exception as e:
            from gradexpr.errors import describe
            return f"<unprintable value: {describe(e)}>"

    def error(self, text: str):
        from .terminal import paint_error, colour
        self.err.write(paint_error(text) if colour(self.err) else text)

    # ------------------------------------------------------------------ :commands
    def command(self, text: str):
        name = text.split()[0]
        if name in (":q", ":quit", ":exit"):
            raise EOFError
        if name in (":h", ":help"):
            self.out.write(HELP)
            return
        if name not in (":graph", ":grad", ":jacobian"):
            from .suggest import did_you_mean
            hint = did_you_mean(name, [":graph", ":grad", ":jacobian", ":help", ":quit"])
            self.err.write(f"unknown command {name}{'; ' + hint if hint else ''} (:help lists them)\n")
            self.failed = True
            return
        from gradexpr import session
        from gradexpr.tensor import Tensor
        if not isinstance(self.last, Tensor):
            self.err.write(f"{name}: the last value is not a tensor\n")
            self.failed = True
            return
        request = session.Request(jacobian=name == ":jacobian")
        run = session.run_of(self.last, self.interp.globals)
        ev = session.Evaluation("", FILENAME)
        from gradexpr.grammar.modules.run_context import settings_of
        try:
            with settings_of(self.interp):
                session.analyse(ev, run, session.Bindings(), request, limits=self.interp.limits)
        except session.RequestError as e:
            self.err.write(f"{name}: {e}\n")
            self.failed = True
            return
        if name == ":grad" and ev.grads is None and ev.jacobian is not None and not ev.pointwise:
            ev.notes.append("the value is not a scalar: this is its Jacobian (:jacobian)")
        if name == ":graph":
            ev.grads = ev.jacobian = None
        with settings_of(self.interp):
            self.render(ev)

    def render(self, ev):
        if self.rich:
            from .rich_view import show
            from .terminal import console
            show(ev, console(self.out))
        else:
            from .render import plain
            self.out.write(plain(ev))
        if ev.error is not None:
            from .diagnostics import render
            self.error(render(ev.error, ev.source, ev.filename))


# ================================================================ terminal and stdin loops
def interactive(repl: Repl):
    """Prompts, history, completion; Ctrl-C cancels, Ctrl-D leaves."""
    from gradexpr import __version__
    readline = _setup_readline(repl)
    repl.out.write(f"gradexpr {__version__} — PyTorch's language on gradexpr's engine. :help for help, "
                   "Ctrl-D to leave.\n")
    try:
        while True:
            lines = []
            try:
                lines.append(_read_line(PS1))
                while repl.needs_more(lines):
                    lines.append(_read_line(PS2))
                repl.run("\n".join(lines) + "\n")
            except KeyboardInterrupt:
                repl.out.write("\nKeyboardInterrupt\n")
            except EOFError:
                repl.out.write("\n")
                return
    finally:
        if readline is not None:
            try:
                readline.write_history_file(_history_path())
            except OSError:
                pass


def _read_line(prompt: str) -> str:
    """``input(prompt)``, with Ctrl-C acted on at once.

    CPython's readline waits for a key in select() and looks at signals only when select() is
    interrupted: a Ctrl-C that arrives while readline is still drawing the last key (a fast typist,
    a paste) is left pending until the next key. A SIGALRM every 0.1 s while the line is read
    interrupts that wait, and the pending Ctrl-C raises KeyboardInterrupt then. (The program's own
    wall-clock limit uses SIGALRM while it runs, so the tick is stopped before the line runs.)"""
    import signal
    import threading
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, None):
        return input(prompt)
    signal.signal(signal.SIGALRM, lambda signum, frame: None)
    signal.setitimer(signal.ITIMER_REAL, 0.1, 0.1)
    try:
        return input(prompt)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)


def from_stdin(repl: Repl, stream):
    """The same session over lines read from ``stream``, without prompts."""
    lines = []
    try:
        for raw in stream:
            lines.append(raw.rstrip("\n"))
            if repl.needs_more(lines):
                continue
            repl.run("\n".join(lines) + "\n")
            lines = []
        if lines:
            repl.run("\n".join(lines) + "\n")
    except EOFError:       # :quit
        pass


def _history_path() -> str:
    return os.environ.get("GRADEXPR_HISTORY") or os.path.join(os.path.expanduser("~"), ".gradexpr_history")


def _setup_readline(repl: Repl):
    try:
        import readline
    except ImportError:      # not on every platform: the REPL works without line editing
        return None
    try:
        readline.read_history_file(_history_path())
    except OSError:
        pass
    readline.set_history_length(1000)
    readline.set_completer(Completer(repl).complete)
    readline.set_completer_delims(" \t\n`~!@#$%^&*()-=+[{]}\\|;:'\",<>/?")
    if "libedit" in (readline.__doc__ or ""):
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")
    return readline


class Completer:
    """Names of the session's globals, and public attributes after a dot (``x.gr`` → ``x.grad``)."""

    def __init__(self, repl: Repl):
        self.repl = repl
        self.matches = []

    def candidates(self, text: str) -> list:
        scope = self.repl.interp.globals
        if "." in text:
            head, _, tail = text.rpartition(".")
            obj = scope.get(head.split(".")[0], None)
            for part in head.split(".")[1:]:
                if part.startswith("_") or obj is None:
                    return []
                obj = getattr(obj, part, None)
            if obj is None:
                return []
            names = [n for n in dir(obj) if not n.startswith("_")]
            return [f"{head}.{n}" for n in sorted(names) if n.startswith(tail)]
        names = scope.all_names() if hasattr(scope, "all_names") else set(scope)   # (the prelude's, made or not)
        words = names | {":graph", ":grad", ":jacobian", ":help", ":quit"}
        return sorted(n for n in words if n.startswith(text) and not n.startswith("_"))

    def complete(self, text, state):
        if state == 0:
            try:
                self.matches = self.candidates(text)
            except Exception:       # completion never breaks the line being typed
                self.matches = []
        return self.matches[state] if state < len(self.matches) else None


@click.command("repl")
@limit_options
def repl(**kwargs):
    """An interactive session: statements run, expressions show their value (:help for commands).

    \b
    Without a terminal it reads stdin, one input per line (a block ends with an empty line):
      printf 'x = ones(2, requires_grad=True)\\n(x * x).sum().backward()\\nx.grad\\n' | gradexpr repl
    """
    limits = limits_from(kwargs)
    tty = sys.stdin.isatty() and sys.stdout.isatty()
    session = Repl(limits, rich=tty)
    if tty:
        interactive(session)
    else:
        from_stdin(session, sys.stdin)
    sys.exit(int(Exit.RUNTIME if session.failed and not tty else Exit.OK))
