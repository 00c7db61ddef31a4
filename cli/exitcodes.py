"""Exit statuses of every gradexpr command (plain ints: an IntEnum cost 0.3 ms of every start-up)."""


class Exit:
    OK = 0
    RUNTIME = 1        # a runtime error, a failed assert, a failed check
    USAGE = 2          # a usage or syntax error
    INTERRUPTED = 130  # Ctrl-C
