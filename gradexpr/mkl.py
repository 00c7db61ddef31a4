"""Intel MKL's kernels, called as PyTorch's x86-64 CPU build calls them.

PyTorch 2.13's CPU wheel links MKL 2024.2 statically and sends ``torch.sin``, ``exp``, ``log``, ``tanh``
and the other functions of ATen's ``vml.h`` list to VML's high-accuracy functions (``vmsSin`` …, mode
``VML_HA | VML_FTZDAZ_OFF | VML_ERRMODE_IGNORE``), and its matrix products to MKL's BLAS (``sgemm_``,
``sgemv_``, ``sdot_``). Their results are neither libm's nor OpenBLAS's, and no formula reproduces them:
calling the same library with the same arguments does, bit for bit (measured on 10^6 inputs per function,
every size and layout, with MKL on as many threads as PyTorch's).

The library is the ``mkl`` wheel of that version (a dependency on x86-64 Linux). Where it is missing or of
another version, every function here returns None and the caller computes with NumPy, which agrees with
PyTorch to the digits a tensor prints, as PyTorch's own builds without MKL do. Loaded on first use, on
PyTorch's thread count (a product's sums depend on it; see ``_load``). ``GRADEXPR_MKL`` names the library
file to use, or ``0`` to use none. MKL picks its code path by processor, as the copy inside PyTorch does,
and ``MKL_ENABLE_INSTRUCTIONS`` pins one for both (the test suite pins SSE4_2, the path its recordings
were made on).
"""
from __future__ import annotations

import os
import sys

import numpy as np

WANTED_VERSION = "2024.2"           # the MKL that PyTorch 2.13's wheel links (torch.__config__.show())
_VML_MODE = 0x2 | 0x140000 | 0x100  # VML_HA | VML_FTZDAZ_OFF | VML_ERRMODE_IGNORE, as ATen's vml.h
_COL_MAJOR, _NO_TRANS, _TRANS = 102, 111, 112

# VML's name of each function PyTorch computes through it (vml.h's IMPLEMENT_VML_MKL list, and log10/log2,
# which measured identical too; VML's sqrt is not correctly rounded on every code path, and PyTorch's
# is VML's); log1p, expm1, sinh, … are SLEEF's in PyTorch and stay NumPy's here.
VML_FUNCTIONS = {"sin": "Sin", "cos": "Cos", "tan": "Tan", "asin": "Asin", "acos": "Acos", "atan": "Atan",
                 "exp": "Exp", "log": "Ln", "log10": "Log10", "log2": "Log2", "tanh": "Tanh",
                 "erf": "Erf", "erfc": "Erfc", "erfinv": "ErfInv", "sqrt": "Sqrt"}
_PREFIX = {np.dtype(np.float32): ("vms", "s"), np.dtype(np.float64): ("vmd", "d")}

_state = {}     # "lib": the loaded library or None; "fns": prepared ctypes functions by name


def _candidates():
    chosen = os.environ.get("GRADEXPR_MKL")
    if chosen:
        if chosen != "0":
            yield chosen
        return
    seen = set()
    for prefix in (sys.prefix, sys.base_prefix, os.path.expanduser("~/.local"), "/usr/local", "/usr"):
        path = os.path.join(prefix, "lib", "libmkl_rt.so.2")
        if path not in seen:
            seen.add(path)
            yield path


def _load():
    """The library, or None (not there, not loadable, not the version PyTorch links)."""
    if "lib" in _state:
        return _state["lib"]
    _state["lib"], _state["fns"] = None, {}
    if sys.platform != "linux":
        return None
    import ctypes
    for path in _candidates():
        if not os.path.exists(path):
            continue
        try:
            lib = ctypes.CDLL(path)
            # PyTorch calls MKL on its own threads, and a product's sums depend on how many there are:
            # (1 x 2000) @ (2000 x 3) in float32 differs in the last bits between 1 and 2 threads. So
            # MKL's OpenMP layer, set before any other call, with PyTorch's thread count.
            lib.MKL_Set_Threading_Layer(0)          # MKL_THREADING_INTEL
            buffer = ctypes.create_string_buffer(256)
            lib.MKL_Get_Version_String(buffer, 256)
            if WANTED_VERSION not in buffer.value.decode("ascii", "replace") \
                    and not os.environ.get("GRADEXPR_MKL"):
                continue
            from .reduction_order import threads
            lib.MKL_Set_Num_Threads(threads())
            _no_spin(ctypes)
        except (OSError, AttributeError):
            continue
        _state["lib"] = lib
        _state["ctypes"] = ctypes
        break
    return _state["lib"]


def _no_spin(ctypes):
    """Intel OpenMP's threads sleep as soon as a call ends (``kmp_set_blocktime(0)``) instead of spinning
    for 200 ms: on a loaded machine a spinning thread holds a core the next small product waits for."""
    try:
        ctypes.CDLL("libiomp5.so").kmp_set_blocktime(0)
    except (OSError, AttributeError):
        pass


def available():
    return _load() is not None


def _function(name, argtypes):
    fn = _state["fns"].get(name)
    if fn is None:
        fn = getattr(_state["lib"], name)
        fn.argtypes = argtypes
        fn.restype = None
        _state["fns"][name] = fn
    return fn


def _address(array):
    """A pointer to an array's first element, the cheapest way ctypes offers: through the buffer of a
    writable C- or F-contiguous array (a transposed view's transpose is C-contiguous), else ``.ctypes``."""
    ctypes = _state["ctypes"]
    if array.flags.writeable:
        if array.flags.c_contiguous:
            return ctypes.byref(ctypes.c_char.from_buffer(array))
        if array.flags.f_contiguous:
            return ctypes.byref(ctypes.c_char.from_buffer(array.T))
    return array.ctypes.data


def _laid_out_as(a, out):
    """``a`` in ``out``'s memory order (a dense array of positive strides, as ``empty_like`` makes it):
    ``a`` itself where it already is, else a copy; VML then reads both element by element alike."""
    if a.strides == out.strides and a.flags.writeable and (a.flags.c_contiguous or a.flags.f_contiguous):
        return a
    copy = np.empty_like(out)
    np.copyto(copy, a)
    return copy


def elementwise(name, a):
    """PyTorch's ``torch.<name>(a)`` through VML, or None where MKL does not compute it."""
    prefix = _PREFIX.get(a.dtype)
    if prefix is None or _load() is None:
        return None
    ctypes = _state["ctypes"]
    fn = _function(prefix[0] + VML_FUNCTIONS[name],
                   [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64])
    out = np.empty_like(a)              # laid out as ``a`` (TensorIterator's output follows its input's
    if a.size:                          # strides), so a reduction after it adds in PyTorch's memory order
        source = _laid_out_as(a, out)   # (held here: a bare address does not keep a copy alive)
        fn(a.size, _address(source), _address(out), _VML_MODE)
    return out


def addmm(c, a, b, beta, alpha):
    """``beta * c + alpha * (a @ b)`` as ATen's addmm_impl_cpu_ computes it with MKL's gemm: the
    operands' layouts decide the call (transposes, leading dimensions, a transposed result), and ``c``
    (broadcastable to the result's shape, or None for mm) is added inside gemm. None without MKL."""
    prefix = _PREFIX.get(a.dtype)
    if prefix is None or a.dtype != b.dtype or _load() is None:
        return None
    m, k = a.shape
    n = b.shape[1]
    if m == 0 or n == 0 or k == 0:
        return None
    key = (a.dtype, a.shape, a.strides, b.shape, b.strides)
    plan = _GEMM_PLANS.get(key)
    if plan is None:
        plan = _gemm_plan(key, a, b, prefix[1])
    fn, scalar, swapped, copy_a, copy_b, head, lda, ldb, ldc = plan
    # The result is allocated row-major (m x n): ATen reads it as the column-major n x m transpose
    # unless it is a single column.
    result = np.empty((m, n), a.dtype)
    if c is not None and beta != 0:
        result[...] = c
    if copy_a:
        a = np.ascontiguousarray(a)
    if copy_b:
        b = np.ascontiguousarray(b)
    if swapped:
        a, b = b, a
    fn(*head, scalar(alpha), _pointer(a), lda, _pointer(b), ldb, scalar(beta if c is not None else 0.0),
       _pointer(result), ldc)
    return result


def gemm(trans_a: bool, trans_b: bool, m: int, n: int, k: int, a, lda: int, b, ldb: int, beta: float, c) -> bool:
    """ATen's ``cpublas::gemm`` with MKL, as its native kernels (convolutions) call it: column-major,
    alpha 1, ``c``'s memory (a C-contiguous array, ld m) set to ``beta * c + op(a) @ op(b)``, the
    leading dimensions of degenerate shapes normalised as ATen does. False without MKL."""
    prefix = _PREFIX.get(c.dtype)
    if prefix is None or _load() is None or 0 in (m, n, k):
        return False
    ctypes = _state["ctypes"]
    scalar = ctypes.c_float if c.dtype == np.float32 else ctypes.c_double
    ldc = m
    if trans_a:
        lda = k if m == 1 else lda
    elif k == 1:
        lda = m
    if trans_b:
        ldb = n if k == 1 else ldb
    elif n == 1:
        ldb = k
    fn = _function("cblas_" + prefix[1] + "gemm",
                   [ctypes.c_int] * 6 + [scalar, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
                                         scalar, ctypes.c_void_p, ctypes.c_int])
    fn(_COL_MAJOR, _TRANS if trans_a else _NO_TRANS, _TRANS if trans_b else _NO_TRANS, m, n, k, 1.0,
       _address(a), lda, _address(b), ldb, beta, _address(c), ldc)
    return True


def _pointer(array):
    """``_address`` as an argument of a function called without argument types (an int would pass as
    a C int)."""
    address = _address(array)
    return address if type(address) is not int else _state["ctypes"].c_void_p(address)


_GEMM_PLANS: dict = {}     # (dtype, shapes, strides) -> gemm's function and arguments: a training loop
                           # multiplies the same layouts at every step


def _gemm_plan(key, a, b, letter):
    """How addmm calls gemm for operands of ``a``'s and ``b``'s dtype, shapes and strides: (function, its
    scalar type, operands swapped?, copy a?, copy b?, (layout, trans_a, trans_b, m, n, k), lda, ldb, ldc)."""
    ctypes = _state["ctypes"]
    scalar = ctypes.c_float if a.dtype == np.float32 else ctypes.c_double
    # called with its arguments made here, as ctypes values, once: no argument types to convert by
    fn = _state["lib"]["cblas_" + letter + "gemm"]
    fn.restype = None
    m, k = a.shape
    n = b.shape[1]
    transposed_c = not (n == 1)
    first, second = (b, a) if transposed_c else (a, b)
    if transposed_c:
        m, n = n, m
    first_used, transpose_a, lda = _operand(first, m, k, transposed_c)
    second_used, transpose_b, ldb = _operand(second, k, n, transposed_c)
    copy_first, copy_second = first_used is not first, second_used is not second
    ldc = m         # the result's column stride (or, for one column, normalize_last_dims's m)
    # cpublas's normalize_last_dims: the leading dimensions of degenerate shapes
    if transpose_a:
        if m == 1:
            lda = k
    elif k == 1:
        lda = m
    if transpose_b:
        if k == 1:
            ldb = n
    elif n == 1:
        ldb = k
    copy_a, copy_b = (copy_second, copy_first) if transposed_c else (copy_first, copy_second)
    head = tuple(ctypes.c_int(v) for v in (_COL_MAJOR, _TRANS if transpose_a else _NO_TRANS,
                                            _TRANS if transpose_b else _NO_TRANS, m, n, k))
    plan = (fn, scalar, transposed_c, copy_a, copy_b, head, ctypes.c_int(lda), ctypes.c_int(ldb), ctypes.c_int(ldc))
    if len(_GEMM_PLANS) > 256:
        _GEMM_PLANS.clear()
    _GEMM_PLANS[key] = plan
    return plan


def _operand(x, rows, cols, transposed_c):
    """(array to pass, transposed?, leading dimension) for an operand read as ``rows x cols``
    column-major, ``x`` being the operand as the caller holds it (its transpose when the result is)."""
    item = x.itemsize
    s0, s1 = x.strides[0] // item, x.strides[1] // item
    if transposed_c:
        s0, s1 = s1, s0
    if s0 == 1 and s1 >= max(1, rows):
        transposed = False
    elif s1 == 1 and s0 >= max(1, cols):
        transposed = True
    else:
        x = np.ascontiguousarray(x)
        s0, s1 = x.strides[0] // item, x.strides[1] // item
        if transposed_c:
            s0, s1 = s1, s0
        transposed = not transposed_c
    return x, transposed, (s0 if transposed else s1)


_BRANCH_AVX2 = 10          # mkl_cbwr_get_auto_branch()'s MKL_CBWR_AVX2; above it the AVX-512 branches


def outer_products(a, b):
    """``a[i] @ b[i]`` for a batch of columns ``a`` (n, rows, 1) and rows ``b`` (n, 1, cols): one call of
    MKL's batched gemm, each element a single product ``alpha * a * b`` with alpha 1 (a zero product may
    carry either sign: the caller decides). None without MKL, or on a code path below AVX2, where MKL's
    kernel is slower than NumPy's einsum."""
    prefix = _PREFIX.get(a.dtype)
    if prefix is None or a.dtype != b.dtype or _load() is None:
        return None
    lib = _state["lib"]
    if _state.get("branch") is None:
        _state["branch"] = lib.mkl_cbwr_get_auto_branch()
    n, rows, cols = a.shape[0], a.shape[1], b.shape[2]
    if _state["branch"] < _BRANCH_AVX2 or not (n and rows and cols) or n * rows * cols >= 2 ** 31:
        return None
    ctypes = _state["ctypes"]
    scalar = ctypes.c_float if a.dtype == np.float32 else ctypes.c_double
    fn = _function("cblas_" + prefix[1] + "gemm_batch_strided",
                   [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, scalar,
                    ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                    scalar, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int])
    columns = np.ascontiguousarray(a[:, :, 0])
    rows_of_b = np.ascontiguousarray(b[:, 0, :])
    result = np.empty((n, rows, cols), a.dtype)
    # column-major, as ATen calls gemm: each result's transpose (cols x rows) = b's row (cols x 1) times
    # a's column (1 x rows)
    fn(_COL_MAJOR, _NO_TRANS, _NO_TRANS, cols, rows, 1, 1.0, _address(rows_of_b), cols, cols,
       _address(columns), 1, rows, 0.0, _address(result), cols, rows * cols, n)
    return result


def addmv(y, a, x, beta, alpha):
    """``beta * y + alpha * (a @ x)`` as ATen's addmv_impl_cpu_ computes it with MKL's gemv: a
    column-major ``a`` as it is, otherwise its transpose ('t'), copied row-major when neither is a BLAS
    layout. ``y`` (already broadcast, or None for mv) is added inside gemv. None without MKL."""
    prefix = _PREFIX.get(a.dtype)
    if prefix is None or a.dtype != x.dtype or _load() is None or a.size == 0 or x.strides[0] <= 0:
        return None
    rows, cols = a.shape
    s0, s1 = (s // a.itemsize for s in a.strides)
    if s0 == 1 and (cols == 1 or s1 >= max(1, rows)):
        trans, m, n, lda = _NO_TRANS, rows, cols, s1
    elif s1 == 1 and (rows == 1 or s0 >= max(1, cols)):
        trans, m, n, lda = _TRANS, cols, rows, s0
    else:
        a = np.ascontiguousarray(a)
        trans, m, n, lda = _TRANS, cols, rows, a.strides[0] // a.itemsize
    if n == 1:
        lda = m
    ctypes = _state["ctypes"]
    scalar = ctypes.c_float if a.dtype == np.float32 else ctypes.c_double
    fn = _function("cblas_" + prefix[1] + "gemv",
                   [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, scalar, ctypes.c_void_p,
                    ctypes.c_int, ctypes.c_void_p, ctypes.c_int, scalar, ctypes.c_void_p,
                    ctypes.c_int])
    result = np.zeros(rows, a.dtype)
    if y is not None and beta != 0:
        result[...] = y
    fn(_COL_MAJOR, trans, m, n, alpha, _address(a), lda, _address(x), x.strides[0] // x.itemsize,
       beta if y is not None else 0.0, _address(result), 1)
    return result


def dot(x, y):
    """ATen's dot of two vectors: MKL's ?dot (a single element with unit strides). None without MKL."""
    prefix = _PREFIX.get(x.dtype)
    if prefix is None or x.dtype != y.dtype or _load() is None or x.size == 0:
        return None
    incx, incy = x.strides[0] // x.itemsize, y.strides[0] // y.itemsize
    if x.size == 1:
        incx = incy = 1
    if incx <= 0 or incy <= 0:
        return None
    ctypes = _state["ctypes"]
    name = "cblas_" + prefix[1] + "dot"
    fn = _state["fns"].get(name)
    if fn is None:
        fn = getattr(_state["lib"], name)
        fn.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
        fn.restype = ctypes.c_float if x.dtype == np.float32 else ctypes.c_double
        _state["fns"][name] = fn
    return np.asarray(fn(x.size, _address(x), incx, _address(y), incy), x.dtype)


def svd(a, compute_uv, full_matrices=False):
    """The singular values (and, with ``compute_uv``, U and Vh: reduced, or full with ``full_matrices``) of
    each matrix of ``a``, as ATen's linalg_svd computes them on CPU: LAPACK's gesdd on a column-major copy,
    ``jobz`` 'S' / 'A' or, when nothing will differentiate them, 'N' (they round the values differently).
    U and Vh are column-major, as LAPACK leaves them. None without MKL."""
    fn = None if a.size == 0 else _lapack("?gesdd", a.dtype, "char", "int", "int", "void_p", "int", "void_p",
                                           "void_p", "int", "void_p", "int")
    if fn is None:
        return None
    m, n = a.shape[-2:]
    k = min(m, n)
    ucols, vrows = (m, n) if full_matrices else (k, k)
    batch = a.reshape((-1, m, n))
    values = np.empty((batch.shape[0], k), a.dtype)
    us = np.empty((batch.shape[0], ucols, m), a.dtype) if compute_uv else None    # each U column-major
    vhs = np.empty((batch.shape[0], n, vrows), a.dtype) if compute_uv else None   # each Vh column-major
    jobz = (b"A" if full_matrices else b"S") if compute_uv else b"N"
    for i, matrix in enumerate(batch):
        column_major = np.array(matrix.T, order="C")          # A's columns, one after another
        s = np.empty(k, a.dtype)
        if compute_uv:
            info = fn(_COL_MAJOR, jobz, m, n, _address(column_major), max(1, m), _address(s), _address(us[i]),
                      max(1, m), _address(vhs[i]), max(1, vrows))
        else:
            info = fn(_COL_MAJOR, jobz, m, n, _address(column_major), max(1, m), _address(s), None, 1, None, 1)
        if info != 0:
            return None
        values[i] = s
    shape = a.shape[:-2]
    if not compute_uv:
        return values.reshape(shape + (k,)), None, None
    return (values.reshape(shape + (k,)), us.reshape(shape + (ucols, m)).swapaxes(-1, -2),
            vhs.reshape(shape + (n, vrows)).swapaxes(-1, -2))


def _count(stack):
    """The number of matrices in a stack (its batch may hold zero-sized matrices)."""
    return int(np.prod(stack.shape[:-2], dtype=np.int64))


def lu_factor(columns):
    """LAPACK's getrf on each matrix of ``columns``, a C-contiguous stack whose every matrix is read as
    the column-major matrix to factor (ATen's F-contiguous LU buffer; rows = its last dim): the factors
    in place, the 1-based int32 pivots (min(rows, cols) of them) and getrf's info per matrix. None
    without MKL."""
    fn = _lapack("?getrf", columns.dtype, "int", "int", "void_p", "int", "void_p")
    if fn is None:
        return None
    cols, rows = columns.shape[-2:]
    stack = columns.reshape((_count(columns), cols, rows))
    pivots = np.zeros((stack.shape[0], min(rows, cols)), np.int32)
    infos = np.zeros(stack.shape[0], np.int32)
    for i in range(stack.shape[0]):
        if rows and cols:
            infos[i] = fn(_COL_MAJOR, rows, cols, _address(stack[i]), max(1, rows), _address(pivots[i]))
    return pivots.reshape(columns.shape[:-2] + pivots.shape[-1:]), infos


def _each_square(columns, call, vector_dtype):
    """``call(matrix, vector, n)``, a LAPACK call returning its info, on each n x n matrix of the stack
    ``columns`` (their addresses) with an output vector of n per matrix: (the vectors, the infos)."""
    n = columns.shape[-1]
    stack = columns.reshape((_count(columns), n, n))
    vectors = np.zeros((stack.shape[0], n), vector_dtype)
    infos = np.zeros(stack.shape[0], np.int32)
    for i in range(stack.shape[0]):
        if n:
            infos[i] = call(_address(stack[i]), _address(vectors[i]), n)
    return vectors.reshape(columns.shape[:-1]), infos


def lu_solve(columns, pivots, rhs, transpose):
    """LAPACK's getrs with the factors ``lu_factor`` left in ``columns``: solves A X = B (A^T X = B with
    ``transpose``) for each column-major B of ``rhs`` (a C-contiguous stack read as ``lu_factor``'s),
    in place. None without MKL."""
    fn = _lapack("?getrs", columns.dtype, "char", "int", "int", "void_p", "int", "void_p", "void_p", "int")
    if fn is None:
        return None
    n = columns.shape[-1]
    stack = columns.reshape((_count(columns), n, n))
    pivs = pivots.reshape((stack.shape[0], n))
    right = rhs.reshape((stack.shape[0],) + rhs.shape[-2:])
    count = right.shape[1]                 # right-hand sides (rows of the C stack: columns of B)
    for i in range(stack.shape[0]):
        if n and count:
            fn(_COL_MAJOR, b"T" if transpose else b"N", n, count, _address(stack[i]), max(1, n),
               _address(pivs[i]), _address(right[i]), max(1, n))
    return rhs


def _lapack(name, dtype, *argtypes):
    """LAPACKE's ``name`` for ``dtype`` ('?' replaced by s or d), returning LAPACK's info; its arguments
    after the layout given as ctypes' type names. None without MKL."""
    prefix = _PREFIX.get(dtype)
    if prefix is None or _load() is None:
        return None
    ctypes = _state["ctypes"]
    fn = _function("LAPACKE_" + name.replace("?", prefix[1]),
                   [ctypes.c_int] + [getattr(ctypes, "c_" + kind) for kind in argtypes])
    fn.restype = ctypes.c_int
    return fn


def cholesky(columns, upper):
    """LAPACK's potrf on each matrix of ``columns`` (a C-contiguous stack read column-major, as
    ``lu_factor``'s), in place, the triangle ``upper`` or lower: potrf's info per matrix (k > 0: the
    leading minor of order k is not positive-definite). None without MKL."""
    return _triangle_in_place("?potrf", columns, upper)


def _triangle_in_place(name, columns, upper):
    """LAPACK's ``name`` (potrf, potri: a triangle of each matrix rewritten in place), its info per matrix."""
    fn = _lapack(name, columns.dtype, "char", "int", "void_p", "int")
    if fn is None:
        return None
    uplo = b"U" if upper else b"L"
    return _each_square(columns, lambda matrix, _, n: fn(_COL_MAJOR, uplo, n, matrix, max(1, n)), np.int32)[1]


def qr(columns, rows, complete):
    """LAPACK's geqrf then orgqr on each matrix of ``columns`` (C-contiguous, each read as a column-major
    ``rows`` x cols matrix), as ATen's linalg_qr: (the packed factors, the Householder scalars tau, Q's
    columns C-contiguous as ``columns`` is: rows x (rows if ``complete`` else min(rows, cols))). None
    without MKL."""
    geqrf = _lapack("?geqrf", columns.dtype, "int", "int", "void_p", "int", "void_p")
    orgqr = _lapack("?orgqr", columns.dtype, "int", "int", "int", "void_p", "int", "void_p")
    if geqrf is None or orgqr is None:
        return None
    cols = columns.shape[-2]
    k = min(rows, cols)
    q_cols = rows if complete else k
    stack = columns.reshape((_count(columns), cols, rows))
    taus = np.zeros((stack.shape[0], k), columns.dtype)
    qs = np.zeros((stack.shape[0], q_cols, rows), columns.dtype)
    for i in range(stack.shape[0]):
        if rows and cols:
            geqrf(_COL_MAJOR, rows, cols, _address(stack[i]), max(1, rows), _address(taus[i]))
        shared = min(q_cols, cols)
        qs[i, :shared] = stack[i, :shared]
        if rows and q_cols:
            orgqr(_COL_MAJOR, rows, q_cols, k, _address(qs[i]), max(1, rows), _address(taus[i]))
    return stack.reshape(columns.shape), taus, qs.reshape(columns.shape[:-2] + (q_cols, rows))


def eigh(columns, upper, vectors):
    """LAPACK's syevd on each symmetric matrix of ``columns`` (C-contiguous, read column-major), its
    triangle ``upper`` or lower, as ATen's linalg_eigh: (the eigenvalues in ascending order, syevd's
    info per matrix); with ``vectors`` the eigenvectors replace each matrix's columns. None without MKL."""
    fn = _lapack("?syevd", columns.dtype, "char", "char", "int", "void_p", "int", "void_p")
    if fn is None:
        return None
    jobz, uplo = (b"V" if vectors else b"N"), (b"U" if upper else b"L")
    return _each_square(columns, lambda matrix, values, n: fn(_COL_MAJOR, jobz, uplo, n, matrix, max(1, n), values),
                        columns.dtype)


def lstsq(columns, rhs, rows, rcond, driver):
    """LAPACK's least-squares driver ('gels', 'gelsy', 'gelsd' or 'gelss') on each matrix of ``columns``
    (C-contiguous, each read as a column-major ``rows`` x cols matrix) and right-hand sides ``rhs`` (each
    column-major, max(rows, cols) long: the solution comes back in its first cols), in place, as ATen's
    linalg_lstsq calls it: (the rank per matrix, the singular values for gelsd/gelss). None without MKL."""
    real = "float" if columns.dtype == np.float32 else "double"
    cols = columns.shape[-2]
    count = rhs.shape[-2]
    leading = max(1, rows, cols)
    if driver == "gels":
        fn = _lapack("?gels", columns.dtype, "char", "int", "int", "int", "void_p", "int", "void_p", "int")
    elif driver == "gelsy":
        fn = _lapack("?gelsy", columns.dtype, "int", "int", "int", "void_p", "int", "void_p", "int", "void_p", real,
                     "void_p")
    else:
        fn = _lapack("?" + driver, columns.dtype, "int", "int", "int", "void_p", "int", "void_p", "int", "void_p",
                     real, "void_p")
    if fn is None:
        return None
    stack = columns.reshape((_count(columns), cols, rows))
    right = rhs.reshape((stack.shape[0], count, rhs.shape[-1]))
    ranks = np.zeros(stack.shape[0], np.int64)
    values = np.zeros((stack.shape[0], min(rows, cols)), columns.dtype)
    rank = np.zeros(1, np.int32)
    # gelsy's column pivots: ATen leaves them uninitialised and carries them from matrix to matrix; stale
    # memory is not zero, so every column is a leading one and none is pivoted (measured: PyTorch's
    # results match these bits, not those of zeroed pivots)
    pivots = np.ones(max(1, cols), np.int32)
    for i in range(stack.shape[0]):
        if driver == "gels":
            fn(_COL_MAJOR, b"N", rows, cols, count, _address(stack[i]), max(1, rows), _address(right[i]), leading)
            continue
        if driver == "gelsy":
            fn(_COL_MAJOR, rows, cols, count, _address(stack[i]), max(1, rows), _address(right[i]), leading,
               _address(pivots), rcond, _address(rank))
        else:
            fn(_COL_MAJOR, rows, cols, count, _address(stack[i]), max(1, rows), _address(right[i]), leading,
               _address(values[i]), rcond, _address(rank))
        ranks[i] = rank[0]
    return ranks.reshape(columns.shape[:-2]), values.reshape(columns.shape[:-2] + values.shape[-1:])


def triangular_solve(a_columns, b_columns, left, upper, transpose, unit):
    """BLAS's trsm on each pair of matrices: ``a_columns`` and ``b_columns`` C-contiguous stacks read
    column-major (as ``lu_factor``'s), B overwritten by op(A)^-1 B (``left``) or B op(A)^-1, op(A)
    being A or (``transpose``) Aᵀ, A's triangle ``upper`` or lower, its diagonal ones if ``unit``.
    None without MKL."""
    prefix = _PREFIX.get(a_columns.dtype)
    if prefix is None or _load() is None:
        return None
    ctypes = _state["ctypes"]
    scalar = ctypes.c_float if a_columns.dtype == np.float32 else ctypes.c_double
    fn = _function("cblas_" + prefix[1] + "trsm",
                   [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                    scalar, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int])
    count = _count(b_columns)
    a_stack = a_columns.reshape((count,) + a_columns.shape[-2:])
    b_stack = b_columns.reshape((count,) + b_columns.shape[-2:])
    cols, rows = b_stack.shape[1:]
    k = a_stack.shape[-1]
    for i in range(count):
        if rows and cols:
            fn(_COL_MAJOR, 141 if left else 142, 121 if upper else 122, _TRANS if transpose else _NO_TRANS,
               132 if unit else 131, rows, cols, 1.0, _address(a_stack[i]), max(1, k), _address(b_stack[i]),
               max(1, rows))
    return b_columns


def cholesky_solve(factors, rhs, upper):
    """LAPACK's potrs with each Cholesky factor of ``factors`` (a C-contiguous stack read column-major, its
    triangle ``upper`` or lower) on the column-major right-hand sides of ``rhs`` (read as ``lu_solve``'s),
    in place. None without MKL."""
    fn = _lapack("?potrs", factors.dtype, "char", "int", "int", "void_p", "int", "void_p", "int")
    if fn is None:
        return None
    n = factors.shape[-1]
    stack = factors.reshape((_count(factors), n, n))
    right = rhs.reshape((stack.shape[0],) + rhs.shape[-2:])
    count = right.shape[1]
    for i in range(stack.shape[0]):
        if n and count:
            fn(_COL_MAJOR, b"U" if upper else b"L", n, count, _address(stack[i]), max(1, n), _address(right[i]),
               max(1, n))
    return rhs


def cholesky_inverse(factors, upper):
    """LAPACK's potri on each Cholesky factor of ``factors`` (read as ``cholesky``'s), in place: the
    triangle ``upper`` or lower of the inverse; potri's info per matrix. None without MKL."""
    return _triangle_in_place("?potri", factors, upper)
