"""Running a program is the language's job (``gradexpr.grammar.running``); the commands import it from here."""
from gradexpr.grammar.running import Outcome, execute, parse  # noqa: F401
