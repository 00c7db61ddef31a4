"""Did-you-mean: the closest of some known names to a mistyped one."""
from __future__ import annotations


def did_you_mean(word: str, choices, n: int = 1) -> str | None:
    """``did you mean ':graph'?`` for the closest choices (difflib's ratio, as Python's own hints), or None."""
    import difflib
    close = difflib.get_close_matches(word, list(choices), n=n, cutoff=0.6)
    if not close:
        return None
    return "did you mean " + " or ".join(repr(c) for c in close) + "?"
