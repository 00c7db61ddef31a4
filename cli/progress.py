"""Progress of long work: a transient rich bar on stderr, on a terminal only.

Pipes, files and ``--json`` get nothing (stdout and stderr stay what scripts read); rich is
imported only when a bar is drawn. ``delay`` keeps quick work silent: the bar appears once
the work has lasted that long.
"""
from __future__ import annotations

import sys
import time

from .terminal import is_terminal


class Progress:
    """``update(task, done, total, note)`` draws one bar per task; ``close()`` (or ``with``) erases them."""

    def __init__(self, enabled: bool | None = None, delay: float = 0.5, label: str = ""):
        self.enabled = is_terminal(sys.stderr) if enabled is None else enabled
        self.delay = delay
        self.label = label
        self.start = time.monotonic()
        self.bar = None
        self.tasks = {}

    def update(self, task: str, done: int, total: int, note: str = "") -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if time.monotonic() - self.start < self.delay:
                return
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, TimeElapsedColumn
            from .terminal import console
            self.bar = Bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                           TextColumn("[dim]{task.fields[note]}"), console=console(sys.stderr), transient=True)
            self.bar.start()
        if task not in self.tasks:
            self.tasks[task] = self.bar.add_task(task, total=total, note=note)
        self.bar.update(self.tasks[task], completed=done, total=total, note=note)

    def __call__(self, task: str, done: int, total: int) -> None:
        self.update(task, done, total)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
