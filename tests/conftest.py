"""Suite-wide settings, applied before any test imports NumPy.

The suite checks behaviour, not speed: BLAS threads are pinned to one so that a NumPy-heavy program
(tests/tolerance/two_layer_net_numpy.gx) is not slowed tenfold past its time
limit by OpenBLAS threads spinning for cores that other processes hold (1.3 s alone with one
thread, over 30 s at a load of 10 on two cores with the default threads). The recordings do not
depend on it: the suite's matrix products are split among threads by rows and columns, not sums.
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# MKL picks its code path by processor, and its paths round some results differently (float32 exp, log,
# atan: 1 to 5 % of inputs; an SVD's smallest values). The recordings were made by PyTorch on machines
# where MKL took its SSE4.2 path (new ones are made with MKL_ENABLE_INSTRUCTIONS=SSE4_2 and
# ATEN_CPU_CAPABILITY=avx2 set for torch-oracle): the suite asks MKL for that path, so that it passes
# on any x86-64 machine.
os.environ.setdefault("MKL_ENABLE_INSTRUCTIONS", "SSE4_2")
# oneDNN (PyTorch's float32 GELU) picks its code by processor as well: its AVX-512 GELU differs from its
# AVX2 one in most results. Recordings of it are made with ONEDNN_MAX_CPU_ISA=AVX2 set for torch-oracle
# too, and the suite asks gradexpr for the same path (gradexpr/onednn_gelu.py reads the variable).
os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")
# PyTorch splits some kernels' work between its threads, and where it splits decides which elements a
# vector loop and which a scalar loop computes (softmax down a dim that is not the last; sums past
# 32,768 elements): the recordings were made with PyTorch on two threads (two cores), so the suite
# computes as PyTorch does on two, whatever the machine running it has.
os.environ.setdefault("OMP_NUM_THREADS", "2")
