"""The torch functions written by hand, one concern per file.

What the op table (``gradexpr/ops``) cannot generate: functions that choose among entries by
their arguments where PyTorch's overloads need more than a schema (``max(input, dim)`` against
``max(input, other)``), composites written with torch calls as PyTorch writes them
(``matmul``'s dispatch, ``isclose``), factories (``creation``, ``random_functions``), the
indexing engine (``indexing``), conversions and the hand-written in-place methods. ``methods``
puts them on ``Tensor`` beside the table-bound ones (``surface.py``); ``gradexpr/functions.py``
collects them as the ``torch`` functions library code calls.

Layers (each imports only those above it): arguments; creation, random_functions, shape; linalg;
reductions; arithmetic; conversion, inplace; indexing; methods.
"""
