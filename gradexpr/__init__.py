"""gradexpr: PyTorch's autograd semantics on NumPy, for expressions typed in a shell."""
import os as _os

__version__ = "0.1.0"

# NumPy's AVX-512 kernels for power, arctan2, log2, expm1, ... are Intel SVML's, whose last bits differ
# from the libm results (and NumPy's AVX2 kernels) that gradexpr's numerics were matched against PyTorch
# with; pin NumPy to its AVX2 kernels so that a result does not depend on the host's processor. NumPy
# reads this once, when it is first imported (gradexpr's commands import it after this line); the names
# are NumPy 2.4's groups and the older ones (each version ignores the other's, with a silent ImportWarning).
_os.environ.setdefault("NPY_DISABLE_CPU_FEATURES",
                       "X86_V4 AVX512_ICL AVX512_SPR AVX512_SKX AVX512_CLX AVX512_CNL")
