"""Exit statuses of every gradexpr command."""
from enum import IntEnum


class Exit(IntEnum):
    OK = 0
    RUNTIME = 1        # a runtime error, a failed assert, a failed check
    USAGE = 2          # a usage or syntax error
    INTERRUPTED = 130  # Ctrl-C
