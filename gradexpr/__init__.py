"""gradexpr: PyTorch's autograd semantics on NumPy, for expressions typed in a shell."""

__version__ = "0.1.0"
