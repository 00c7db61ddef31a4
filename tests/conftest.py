"""Suite-wide settings, applied before any test imports NumPy.

The suite checks behaviour, not speed: BLAS threads are pinned to one so that a NumPy-heavy program
(tests/programs/real/examples_tensor/two_layer_net_numpy.gx) is not slowed tenfold past its time
limit by OpenBLAS threads spinning for cores that other processes hold (1.3 s alone with one
thread, over 30 s at a load of 10 on two cores with the default threads). The recordings do not
depend on it: the suite's matrix products are split among threads by rows and columns, not sums.
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# Not OMP_NUM_THREADS: gradexpr reads it as PyTorch does, to split reductions among PyTorch's threads.
