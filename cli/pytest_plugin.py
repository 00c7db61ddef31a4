"""pytest plugin: ``*.gx`` programs become test items, judged as ``gradexpr check`` judges them.

A program is collected when it has ``X.gx.out`` or ``X.gx.err`` beside it or contains an
``assert``. A failure shows what ``gradexpr check`` shows: the stdout diff, the expected
error, or a failed assert's ``FILE:LINE:COL: AssertionError`` line with its caret.

Registered through the ``pytest11`` entry point ``gradexpr``; ``pytest -p no:gradexpr``
switches it off.
"""
from __future__ import annotations

import pytest


def pytest_collect_file(file_path, parent):
    if file_path.suffix != ".gx":
        return None
    from .check_cmd import is_test_program
    if is_test_program(file_path):
        return GxFile.from_parent(parent, path=file_path)
    return None


class GxFile(pytest.File):
    """One program file: it holds a single test, the program itself."""

    def collect(self):
        yield GxProgram.from_parent(self, name=self.path.stem)


class ProgramFailed(Exception):
    """Raised by a failing program; carries the check result for ``repr_failure``."""

    def __init__(self, result):
        super().__init__(result.explanation())
        self.result = result


class GxProgram(pytest.Item):
    def runtest(self):
        from .check_cmd import display_name, judge, run_program
        name = display_name(self.path)
        result = judge(self.path, run_program(self.path, name=name), name)
        if not result.passed:
            raise ProgramFailed(result)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ProgramFailed):
            return excinfo.value.result.explanation()
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"gradexpr program {self.path.name}"
