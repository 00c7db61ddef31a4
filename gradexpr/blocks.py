"""Chains of elementwise NumPy calls over big arrays, run block by block.

Over whole arrays, each call of a chain streams its operands and its result through memory; block
by block, a block's intermediates stay in the cache and only the chain's inputs and result cross
memory. Each element gets the same calls in the same order, so the same bits.
"""
from __future__ import annotations

# elements per block: a float64 block (1 MiB) stays in the L2 cache, and blocks are big enough
# that the few NumPy calls each costs little
BLOCK = 131072


def spans(n: int) -> list:
    """Slices of at most ``BLOCK`` elements covering ``range(n)``, in order."""
    return [slice(start, start + BLOCK) for start in range(0, n, BLOCK)]
