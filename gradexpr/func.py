"""``torch.func``: the composable transforms ``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``,
``jacfwd``, ``hessian``, ``linearize``, ``functional_call``.

Reverse-mode transforms run the engine's backward pass with ``create_graph=True`` on fresh
differentiable copies of the arguments they differentiate, so a transform applied to a transformed
function differentiates the inner one's graph (``grad(grad(f))``, ``jacrev(jacrev(f))``); the
outermost transform returns plain tensors, as functorch does. Forward-mode transforms (``jvp``,
``jacfwd``, ``linearize``) open a dual level (``forward_ad``); as tangents are computed with tensor
ops, ``jacfwd(jacrev(f))`` (``hessian``) is forward-over-reverse.
"""
from __future__ import annotations

import contextlib
import sys

import numpy as np

from . import errors, forward_ad as fw
from .autograd import grad as autograd_grad
from .batching import LEVELS, BatchedTensor, _front, _state as _vmap_state, batched, inner_leaves
from .func_levels import Scope          # (which loads batching: imported here too, once, not per call)
from .graph import (SAVED_HOOKS_DISABLED, _RELEASED, AccumulateGrad, Node, SavedTensor, SavedTensors,
                    enable_grad)
from .tensor import Tensor

_depth = [0]          # transforms currently running (0: results are returned with the program's level only)
_scope = [None]       # the outermost transform's Scope (func_levels): what its results keep of the graph
_NO_SAVED_HOOKS = ("torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor hooks. Please open an "
                   "issue with your use case.")


@contextlib.contextmanager
def _saved_tensors_hooks_refused():
    """functorch's ``doesnt_support_saved_tensors_hooks``: a reverse-mode transform fails while
    saved-tensor hooks are active, and registering them in its function fails (the message of
    ``disable_saved_tensors_hooks``)."""
    hooks = sys.modules.get(__package__ + ".saved_hooks")      # (not loaded: no hooks were ever active)
    if hooks is not None and hooks._stack:
        raise errors.RuntimeError(_NO_SAVED_HOOKS)
    SAVED_HOOKS_DISABLED.append(_NO_SAVED_HOOKS)
    try:
        yield
    finally:
        SAVED_HOOKS_DISABLED.pop()


@contextlib.contextmanager
def _level(scope=None):
    """A transform running; the outermost opens the scope its results are finished in (``vjp``'s
    function re-enters its transform's)."""
    if not _depth[0]:
        _scope[0] = scope if scope is not None else Scope()
    _depth[0] += 1
    try:
        yield _scope[0]
    finally:
        _depth[0] -= 1


# ---------------------------------------------------------------- pytrees (tuples, lists, dicts of tensors)
def _flatten(tree):
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for x in tree:
            lv, sp = _flatten(x)
            leaves += lv
            specs.append(sp)
        rebuilt = getattr(tree, "_rebuilt", None)       # torch.return_types keep their name
        return leaves, (rebuilt or type(tree), specs)
    if isinstance(tree, dict):
        leaves, specs = [], []
        for k, x in tree.items():
            lv, sp = _flatten(x)
            leaves += lv
            specs.append((k, sp))
        return leaves, (dict, specs)
    return [tree], None


def _tree_spec(tree, indent=0) -> str:
    """PyTorch's pytree ``TreeSpec`` repr of ``tree``'s structure (``*`` a leaf), as its errors print it."""
    if isinstance(tree, dict):
        kind, context, children = "dict", repr(list(tree.keys())), list(tree.values())
    elif isinstance(tree, (tuple, list)):
        kind, context, children = type(tree).__name__, "None", list(tree)
    else:
        return "*"
    inner = ",".join([_tree_spec(c, indent + 2) if k == 0 else "\n" + " " * (indent + 2) + _tree_spec(c, indent + 2)
                      for k, c in enumerate(children)])
    return f"TreeSpec({kind}, {context}, [{inner}])"


def _unflatten(leaves, spec):
    return _build(iter(leaves), spec)


def _build(it, spec):
    """The tree of ``spec`` over the leaves ``it`` yields. (A module-level function, not a recursive
    closure: that closure is a reference cycle, which kept every call's leaves, the transforms' results,
    alive until the next garbage collection.)"""
    if spec is None:
        return next(it)
    kind, parts = spec
    if kind is dict:
        return {k: _build(it, s) for k, s in parts}
    values = [_build(it, s) for s in parts]
    return kind(*values) if hasattr(kind, "_fields") else kind(values)    # (a namedtuple's fields)


def _differentiable(x):
    """A fresh differentiable stand-in for ``x`` (keeping its tangent and, when it has one, its history)."""
    if not isinstance(x, Tensor):
        raise errors.RuntimeError(f"Expected tensors as the differentiated arguments, got {type(x).__name__}")
    t = _stand_in(x)
    _scope[0].add_stand_in(t)
    return t


def _stand_in(x):
    if x._requires_grad:
        from . import ops
        from .op import apply
        return apply(ops.alias, (x,))
    if type(x) is BatchedTensor:           # under vmap: a logical leaf over the same batch
        t = batched(x._phys, x._bdim, x._level)
        t._requires_grad = True
    else:
        t = Tensor._make(x._data, x._dtype, requires_grad=True)
    if fw.ACTIVE:
        fw.copy_tangent(x, t)
    return t


def _inside_vmap(leaves):
    """batching.inner_leaves(leaves) when a vmap is running (its batch rules then skip recording
    the physical ops of these leaves), else nothing to do."""
    if not LEVELS:
        return contextlib.nullcontext()
    return inner_leaves(leaves)


def _argnums_tuple(argnums, nargs, name):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise errors.RuntimeError(f"{name}: argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int):
            raise errors.RuntimeError(f"{name}: argnums must be int or Tuple[int, ...], got: {type(a).__name__}")
        if not -nargs <= a < nargs:
            raise errors.RuntimeError(f"Got argnums={a}, but only {nargs} positional inputs")
    return tuple(a % nargs for a in nums)


def _finish(t):
    """What a transform returns: at the outermost level, the value with the program's level of its
    graph only (detached when the function closed over nothing that requires grad)."""
    if _depth[0] or not isinstance(t, Tensor):
        return t
    return _scope[0].outer_result(t) if _scope[0] is not None else t.detach()


def _finish_tree(tree):
    leaves, spec = _flatten(tree)
    return _unflatten([_finish(x) for x in leaves], spec)


def _finish_aux(aux):
    """``has_aux``'s second output, unwrapped as functorch unwraps it: a tree of tensors only."""
    leaves, spec = _flatten(aux)
    for x in leaves:
        if not isinstance(x, Tensor):
            raise errors.RuntimeError(f"Expected tensors, got unsupported type <class '{type(x).__name__}'>")
    return _unflatten([_finish(x) for x in leaves], spec)


def _grads(out, inputs, cotangent=None):
    gs = _engine_grad(out, inputs, cotangent)
    return [g if g is not None else Tensor._make(np.zeros(x._data.shape, x._dtype.np), x._dtype)
            for g, x in zip(gs, inputs)]


def _engine_grad(outs, inputs, cotangents=None):
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    cots = cotangents if isinstance(cotangents, (list, tuple)) or cotangents is None else [cotangents]
    pairs = [(o, c) for o, c in zip(outs, cots or [None] * len(outs)) if o._requires_grad]
    if not pairs:
        return [None] * len(inputs)
    roots = [o for o, _ in pairs]
    return autograd_grad(roots, inputs, None if cots is None else [c for _, c in pairs],
                         retain_graph=True, create_graph=_backward_is_differentiated(roots), allow_unused=True)


def _backward_is_differentiated(roots):
    """Whether the backward pass must be recorded (``create_graph``): under an enclosing transform
    (``grad(grad(f))``) or a dual level (forward-over-reverse), and whenever program code runs in it
    (hooks, custom Functions, saved-tensor hooks), which sees the recording as functorch makes it.
    And when the graph reaches the program's level (the function closed over a tensor that requires
    grad): the outermost transform's results keep that level's part of the recording (func_levels).
    Otherwise it detaches its results, so a recording would only be discarded."""
    if _depth[0] > 1 or fw.ACTIVE:
        return True
    saved_hooks = __package__ + ".saved_hooks" in sys.modules     # (only it gives saved tensors hooks)
    scope = _scope[0]
    stack = [o._grad_fn for o in roots]
    seen = set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if node is not None and scope.is_outer(node):
            return True
        kind = type(node)
        if kind is AccumulateGrad and not node._retains:
            continue
        if kind is not Node or node._retains:           # (a leaf root's node is None: not a formula)
            return True
        saved = node._saved
        if saved_hooks and saved is not _RELEASED:
            for v in saved.values():
                kind = type(v)
                if (kind is SavedTensor and getattr(v, "hooks", None) is not None
                        or kind is SavedTensors and any(getattr(x, "hooks", None) is not None for x in v)):
                    return True
        stack.extend(n for n in node._next if n is not None)
    return False


# ---------------------------------------------------------------- grad, grad_and_value, vjp
def grad_and_value(func, argnums=0, has_aux=False):
    def wrapper(*args, **kwargs):
        with _saved_tensors_hooks_refused():
            return _grad_and_value(func, argnums, has_aux, args, kwargs)
    return wrapper


def _grad_and_value(func, argnums, has_aux, args, kwargs):
    nums = _argnums_tuple(argnums, len(args), "grad_and_value")
    args = list(args)
    with _level():
        with enable_grad():
            flats = []
            for a in nums:
                leaves, spec = _flatten(args[a])
                leaves = [_differentiable(x) for x in leaves]
                flats.append((leaves, spec))
                args[a] = _unflatten(leaves, spec)
            all_leaves = [x for leaves, _ in flats for x in leaves]
            with _inside_vmap(all_leaves):
                out = func(*args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise errors.RuntimeError("grad_and_value(f)(*args): output of function f should be a "
                                              "tuple: (output, aux) if has_aux is True")
                out, aux = out
            if not isinstance(out, Tensor):
                raise errors.RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a Tensor, "
                                          f"got {type(out).__name__}")
            if out._data.ndim != 0:
                raise errors.RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar "
                                          f"Tensor, got tensor with {out._data.ndim} dims. Maybe you wanted "
                                          "to use the vjp or jacrev APIs instead?")
            gs = _grads(out, all_leaves)
    results, k = [], 0
    for leaves, spec in flats:
        results.append(_unflatten([_finish(g) for g in gs[k:k + len(leaves)]], spec))
        k += len(leaves)
    g = results[0] if isinstance(argnums, int) else tuple(results)
    value = _finish(out)
    return (g, (value, _finish_aux(aux))) if has_aux else (g, value)


def grad(func, argnums=0, has_aux=False):
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def vjp(func, *primals, has_aux=False):
    with _level() as scope:
        with _saved_tensors_hooks_refused(), enable_grad():     # (not in vjp_fn, as in functorch)
            leaves, spec = _flatten(primals)
            leaves = [_differentiable(x) for x in leaves]
            out = func(*_unflatten(leaves, spec))
            aux = None
            if has_aux:
                out, aux = out
    out_leaves, out_spec = _flatten(out)

    def vjp_fn(*cotangents):
        cots, _ = _flatten(cotangents[0] if len(cotangents) == 1 and out_spec is None else cotangents)
        if len(cots) != len(out_leaves):
            raise errors.RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure "
                                      "of outputs to the function")
        with _level(scope):
            gs = _grads(out_leaves, leaves, cots)
        return tuple(_unflatten([_finish(g) for g in gs], spec))

    result = (_finish_tree(out), vjp_fn)
    return result + (_finish_aux(aux),) if has_aux else result


# ---------------------------------------------------------------- forward mode
def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    if not isinstance(primals, (tuple, list)):
        raise errors.RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be "
                                  "valid to call f(*primals).")
    p_leaves, spec = _flatten(tuple(primals))
    t_leaves, _ = _flatten(tuple(tangents))
    if len(p_leaves) != len(t_leaves):
        raise errors.RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same "
                                  "python structure.")
    with fw.func_level() as level:
        duals = [fw.dual_at(p, t, level) for p, t in zip(p_leaves, t_leaves)]
        with _level():
            out = func(*_unflatten(duals, spec))
        aux = None
        if has_aux:
            out, aux = out
        o_leaves, o_spec = _flatten(out)
        pairs = [fw.unpacked_at(o, level) for o in o_leaves]
        prim = [_finish(p) for p, _ in pairs]
        tans = [_finish(t) if t is not None else Tensor._make(np.zeros(p._data.shape, p._dtype.np), p._dtype)
                for p, t in pairs]
    result = (_unflatten(prim, o_spec), _unflatten(tans, o_spec))
    return result + (_finish_aux(aux),) if has_aux else result


def linearize(func, *primals):
    """(f(primals), jvp_fn): jvp_fn(*tangents) is the Jacobian–vector product at ``primals``."""
    out = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]
    return _finish_tree(out), jvp_fn


# ---------------------------------------------------------------- Jacobians
def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    def wrapper(*args):
        with _saved_tensors_hooks_refused():            # (functorch: its vjp, not the rows' vjp_fn)
            nums = _argnums_tuple(argnums, len(args), "jacrev")
        args = list(args)
        with _level():
            with enable_grad():
                ins, arg_specs = [], []       # (an argument may be a tree: a dict of parameters)
                with _saved_tensors_hooks_refused():
                    for a in nums:
                        leaves, spec = _flatten(args[a])
                        leaves = [_differentiable(x) for x in leaves]
                        args[a] = _unflatten(leaves, spec)
                        ins.extend(leaves)
                        arg_specs.append((len(leaves), spec))
                    out = func(*args)
                aux = None
                if has_aux:
                    out, aux = out
                o_leaves, o_spec = _flatten(out)
                per_out = [[] for _ in o_leaves]
                sizes = [o._data.size for o in o_leaves]
                recorded = _backward_is_differentiated(o_leaves)
                for x, rows in zip(ins, _stacked_rows(o_leaves, ins, recorded)):
                    # functorch's step 2: each input's rows split by output, each piece viewed as its block
                    # (one output's rows need no split but in a graph the program sees)
                    pieces = rows.split(sizes, 0) if len(sizes) > 1 or recorded else (rows,)
                    for k, (o, piece) in enumerate(zip(o_leaves, pieces)):
                        per_out[k].append(piece.view(o._data.shape + x._data.shape))
                for k, blocks in enumerate(per_out):
                    per_arg = []
                    for count, spec in arg_specs:      # each argument's blocks as its own tree
                        per_arg.append(_unflatten(blocks[:count], spec))
                        blocks = blocks[count:]
                    per_out[k] = per_arg[0] if isinstance(argnums, int) else tuple(per_arg)
        jac = _finish_tree(_unflatten(per_out, o_spec))
        return (jac, _finish_aux(aux)) if has_aux else jac
    return wrapper


def _stacked_rows(outs, ins, recorded):
    """The rows of d outs / d ins[k] for each k, the outputs flattened and concatenated (functorch's basis):
    shaped ``(rows,) + ins[k].shape``. The engine's batched cotangents, or, inside a dual level
    (forward-over-reverse), one backward pass per row so each row carries its tangent. ``recorded``: the
    program sees the rows' graph (functorch's structure matters)."""
    from .functional import stacked_vjps
    from .functions import stack
    m = sum(o._data.size for o in outs)
    if not fw.ACTIVE and not LEVELS:
        # one row is a plain backward pass, but batched as functorch's where the program sees its graph
        rows = stacked_vjps(outs, ins, create_graph=True, batch_one=recorded)
    elif not fw.ACTIVE and m > 1:
        # inside vmap: the rows' backward passes as one, vmapped over the basis of cotangents (functorch's
        # jacrev is vmap(vjp_fn)(basis) everywhere)
        basis = Tensor._make(np.eye(m, dtype=outs[0]._dtype.np), outs[0]._dtype)
        rows = vmap(lambda row: tuple(_grads(outs, ins, _cotangents(row, outs))))(basis)
    else:
        each = [_grads(outs, ins, _basis_cotangents(m, j, outs)) for j in range(m)]
        rows = [stack([r[k] for r in each]) if each else None for k in range(len(ins))]
    return [r if r is not None else Tensor._make(np.zeros((m,) + x._data.shape, x._dtype.np), x._dtype)
            for r, x in zip(rows, ins)]


def _basis_cotangents(m, j, outs):
    """Row ``j`` of the joint basis as each output's cotangent (a one in one output, zeros in the others)."""
    row = np.zeros(m, outs[0]._dtype.np)
    row[j] = 1
    return [Tensor._make(part, o._dtype) for part, o in zip(_cotangents(row, outs), outs)]


def _cotangents(row, outs):
    """Each output's part of one row of the joint basis (an array, or a batched tensor under vmap), shaped as
    the output."""
    if len(outs) == 1:
        return [row.reshape(outs[0]._data.shape)]
    parts, first = [], 0
    for o in outs:
        n = o._data.size
        parts.append(row[first:first + n].reshape(o._data.shape))
        first += n
    return parts


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """Forward-mode Jacobian: ``jvp`` under ``vmap`` over the basis tangents (one pass, batched
    tangents), as functorch composes it."""
    def wrapper(*args):
        nums = _argnums_tuple(argnums, len(args), "jacfwd")
        diff = [args[a] for a in nums]
        sizes = [int(x._data.size) for x in diff]
        total = sum(sizes)
        aux = None
        if total:
            eye = np.eye(total, dtype=diff[0]._dtype.np)
            bases, off = [], 0
            for x, n in zip(diff, sizes):
                bases.append(Tensor._make(np.ascontiguousarray(eye[:, off:off + n]).reshape((total,) + x._data.shape),
                                          x._dtype))
                off += n

            def column(*basis):            # the primal output is not returned: under randomness="different"
                tangents = [_zeros_like(a) for a in args]      # it differs from one column to the next
                for a, b in zip(nums, basis):
                    tangents[a] = b
                res = jvp(func, tuple(args), tuple(tangents), has_aux=has_aux)
                return (res[1], res[2]) if has_aux else res[1]

            with _level():
                res = vmap(column, randomness=randomness)(*bases)
            cols = res[0] if has_aux else res
            if has_aux:                     # as functorch: the first column's aux
                a_leaves, a_spec = _flatten(res[1])
                aux = _unflatten([v[0] if isinstance(v, Tensor) else v for v in a_leaves], a_spec)
            c_leaves, o_spec = _flatten(cols)
            shapes = [(c._data.shape[1:], c._dtype) for c in c_leaves]
        else:
            out = func(*args)
            if has_aux:
                out, aux = out
            o_leaves, o_spec = _flatten(out)
            c_leaves = [None] * len(o_leaves)
            shapes = [(o._data.shape, o._dtype) for o in o_leaves]
        per_out = []
        for (o_shape, o_dtype), c in zip(shapes, c_leaves):
            # functorch's steps (which a captured tensor's graph shows): the columns moved last, split
            # by argument, each unflattened to the argument's shape
            parts = c.movedim(0, -1).split(sizes, -1) if c is not None else None
            blocks = []
            for x, n, part in zip(diff, sizes, parts or sizes):
                if c is None or not n:
                    block = Tensor._make(np.zeros(o_shape + x._data.shape, o_dtype.np), o_dtype)
                elif x._data.ndim:
                    block = part.unflatten(-1, x._data.shape)
                else:
                    block = part.squeeze(-1)
                blocks.append(_finish(block))
            per_out.append(blocks[0] if isinstance(argnums, int) else tuple(blocks))
        jac = _unflatten(per_out, o_spec)
        return (jac, _finish_aux(aux)) if has_aux else jac
    return wrapper


def _zeros_like(x):
    if isinstance(x, Tensor):
        return Tensor._make(np.zeros(x._data.shape, x._dtype.np), x._dtype)
    return x


def hessian(func, argnums=0):
    return jacfwd(jacrev(func, argnums), argnums)


# ---------------------------------------------------------------- modules
def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True,
                    strict=False):
    """Call ``module`` with its parameters and buffers replaced by the given tensors (restored after)."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, (tuple, list)):
        merged = {}
        for d in dicts:
            merged.update(d)
        dicts = merged
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    saved = []
    try:
        for name, value in dicts.items():
            owner, attr = _owner(module, name)
            saved.append((owner, attr, _raw_get(owner, attr)))
            _raw_set(owner, attr, value)
        return module(*args, **(kwargs or {}))
    finally:
        for owner, attr, old in reversed(saved):
            _raw_set(owner, attr, old)


def _owner(module, dotted):
    parts = dotted.split(".")
    obj = module
    for p in parts[:-1]:
        obj = getattr(obj, p)
    return obj, parts[-1]


def _raw_get(owner, attr):
    for store in ("_parameters", "_buffers"):
        d = getattr(owner, store, None)
        if isinstance(d, dict) and attr in d:
            return (store, d[attr])
    return (None, getattr(owner, attr))


def _raw_set(owner, attr, value):
    """Put ``value`` where the module keeps ``attr`` (its parameter or buffer dict), bypassing the
    registration rules of ``__setattr__`` (a functional call swaps tensors, it does not register them)."""
    if isinstance(value, tuple) and len(value) == 2 and (value[0] in ("_parameters", "_buffers") or value[0] is None):
        store, v = value
        if store is None:
            object.__setattr__(owner, attr, v)
        else:
            getattr(owner, store)[attr] = v
        return
    for store in ("_parameters", "_buffers"):
        d = getattr(owner, store, None)
        if isinstance(d, dict) and attr in d:
            d[attr] = value
            return
    object.__setattr__(owner, attr, value)


# ---------------------------------------------------------------- vmap
def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Run ``func`` once on its inputs with a batch dimension (batching.py's batched tensors)."""
    if randomness not in ("error", "different", "same"):
        raise errors.RuntimeError("Only allowed values for randomness are 'error', 'different', or 'same'. "
                                  f"Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise errors.ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    def wrapped(*args, **kwargs):
        size, flat_dims, flat_args, spec = _batched_inputs(func, in_dims, args)
        if chunk_size is None or chunk_size >= size:
            return _vmap_once(func, flat_dims, flat_args, spec, size, out_dims, randomness, kwargs)
        from .functions import cat
        chunks = []
        for start in range(0, size, chunk_size):
            n = min(chunk_size, size - start)
            part = [a if d is None else a.narrow(d, start, n) for a, d in zip(flat_args, flat_dims)]
            chunks.append(_vmap_once(func, flat_dims, part, spec, n, out_dims, randomness, kwargs))
        leaves0, out_spec = _flatten(chunks[0])
        dims = _out_dims_list(func, out_dims, chunks[0], out_spec)
        joined = [cat([_flatten(c)[0][i] for c in chunks], d) if d is not None else leaves0[i]
                  for i, d in enumerate(dims)]
        return _unflatten(joined, out_spec)
    return wrapped


def _name(func):
    return getattr(func, "__name__", repr(func))


def _tuple_repr(value):
    return repr(value)


def _batched_inputs(func, in_dims, args):
    """PyTorch's checks of vmap's inputs; (batch size, in_dim per flat argument, flat arguments, spec)."""
    if not isinstance(in_dims, (int, tuple)):
        raise errors.ValueError(f"{_where(func, in_dims)}: expected `in_dims` to be int or a (potentially nested) "
                                f"tuple matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise errors.ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or "
                                "you are trying to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, spec = _flatten(tuple(args))
    flat_dims = _broadcast_dims(in_dims, tuple(args))
    if flat_dims is None:
        raise errors.ValueError(f"{_where(func, in_dims)}: in_dims is not compatible with the structure of `inputs`. "
                                f"in_dims has structure {_tree_spec(in_dims)} but inputs has structure "
                                f"{_tree_spec(tuple(args))}.")
    for i, (a, d) in enumerate(zip(flat_args, flat_dims)):
        if d is None:
            continue
        if not isinstance(d, int):
            raise errors.ValueError(f"{_where(func, in_dims)}: Got in_dim={d} for an input but in_dim must be either "
                                    "an integer dimension or None.")
        if not isinstance(a, Tensor):
            raise errors.ValueError(f"{_where(func, in_dims)}: Got in_dim={d} for an input but the input is of type "
                                    f"{type(a)}. We cannot vmap over non-Tensor arguments, please use None as the "
                                    "respective in_dim")
        n = a._data.ndim
        if not -n <= d < n:
            raise errors.ValueError(f"{_where(func, in_dims)}: Got in_dim={d} for some input, but that input is a "
                                    f"Tensor of dimensionality {n} so expected in_dim to satisfy -{n} <= in_dim < {n}.")
        if d < 0:
            flat_dims[i] = d % n
    sizes = [a._data.shape[d] for a, d in zip(flat_args, flat_dims) if d is not None]
    if not sizes:
        raise errors.ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise errors.ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                                f"{sizes} for the mapped dimension")
    return sizes[0], flat_dims, flat_args, spec


def _where(func, in_dims):
    """The head of vmap's input errors (made only for an error: it shows ``in_dims``'s repr)."""
    return f"vmap({_name(func)}, in_dims={_tuple_repr(in_dims)}, ...)(<inputs>)"


def _broadcast_dims(dims, tree):
    """``dims`` (an int/None for a whole subtree, or a tuple/list/dict matching it) per flat leaf, or None."""
    if dims is None or isinstance(dims, int):
        return [dims] * len(_flatten(tree)[0])
    if isinstance(tree, (tuple, list)) and isinstance(dims, (tuple, list)) and len(dims) == len(tree) and \
            isinstance(tree, list) == isinstance(dims, list):       # (pytree: a list never matches a tuple)
        out = []
        for d, t in zip(dims, tree):
            sub = _broadcast_dims(d, t)
            if sub is None:
                return None
            out += sub
        return out
    if isinstance(tree, dict) and isinstance(dims, dict) and set(dims) == set(tree):
        out = []
        for k, t in tree.items():
            sub = _broadcast_dims(dims[k], t)
            if sub is None:
                return None
            out += sub
        return out
    return None


def _vmap_once(func, flat_dims, flat_args, spec, size, out_dims, randomness, kwargs):
    level = _vmap_state["next"] = _vmap_state["next"] + 1
    LEVELS.append((level, size, randomness))
    try:
        inputs = [a if d is None else batched(a, d, level) for a, d in zip(flat_args, flat_dims)]
        out = func(*_unflatten(inputs, spec), **kwargs)
        leaves, out_spec = _flatten(out)
        dims = _out_dims_list(func, out_dims, out, out_spec)
        return _unflatten([_unbatched(func, o, d, level, size) for o, d in zip(leaves, dims)], out_spec)
    finally:
        LEVELS.pop()
        if not LEVELS:
            _vmap_state["next"] = 0


def _out_dims_list(func, out_dims, out, out_spec):
    if not (out_dims is None or isinstance(out_dims, int) or isinstance(out_dims, (tuple, list, dict))):
        raise errors.ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a "
                                "python collection of ints representing where in the outputs the vmapped dimension "
                                "should appear.")
    if isinstance(out, Tensor):
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return list(out_dims)
        if isinstance(out_dims, (int, type(None))):
            return [out_dims]
        dims = None
    else:
        dims = _broadcast_dims(out_dims, out)
    if dims is None:
        raise errors.ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
                                f"with the structure of `outputs`. out_dims has structure {_tree_spec(out_dims)} but "
                                f"outputs has structure {_tree_spec(out)}.")
    return dims


def _unbatched(func, o, out_dim, level, size):
    """An output with its batch dimension at ``out_dim`` (an unbatched output is expanded to the batch)."""
    if out_dim is None:
        if isinstance(o, BatchedTensor) and o._level == level:
            name = _name(func)
            raise errors.ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
        return o
    if not isinstance(o, Tensor):
        name = _name(func)
        raise errors.ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(o)}. Did you "
                                "mean to set out_dims= to None for output?")
    if isinstance(o, BatchedTensor) and o._level == level:
        phys = _front(o._phys, o._bdim)
    else:
        phys = o.unsqueeze(0).expand((size,) + tuple(o.shape))
    n = phys.dim()
    d = out_dim % n if -n <= out_dim < n else out_dim
    return phys.movedim(0, d) if d else phys


def rearrange(tensor, pattern, **axes_lengths):
    """``torch.func.rearrange`` (einops.py)."""
    from .einops import rearrange as _rearrange
    return _rearrange(tensor, pattern, **axes_lengths)


NAMES = {"grad": grad, "grad_and_value": grad_and_value, "vjp": vjp, "jvp": jvp, "jacrev": jacrev,
         "jacfwd": jacfwd, "hessian": hessian, "linearize": linearize, "functional_call": functional_call, "vmap": vmap,
         "rearrange": rearrange}


# ---------------------------------------------------------------- torch.autograd.functional, forward mode
def check_strategy(strategy, create_graph=False):
    """PyTorch's checks of ``jacobian(..., strategy=)``; True when the forward-mode path is asked for."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise errors.AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                                    'function has more outputs than inputs, "forward-mode" tends to be more '
                                    'performant. Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode" and create_graph:
        raise errors.NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                         '`strategy="forward-mode"` are not supported together (yet). Please '
                                         'either set `create_graph=False` or `strategy="reverse-mode"`.')
    return strategy == "forward-mode"


def forward_mode_jacobian(func, inputs, strict=False, vectorize=False):
    """``torch.autograd.functional.jacobian(..., strategy="forward-mode")``: one column per element of the
    inputs, each the tangent of the outputs for a basis tangent (PyTorch's _jacfwd, its result structure:
    a list per output of a list per input)."""
    from .functional import KEEP_TANGENTS, _tuple_in, _tuple_out
    from .functions import stack
    if strict:
        raise errors.RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` '
                                  'are not supported together (yet). Please either set `strict=False` or '
                                  '`strategy="reverse-mode"`.')
    in_tuple, ins = _tuple_in(inputs)
    if not vectorize:
        raise errors.NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                         "only implemented for `vectorize=True`.")
    columns, outs, out_tuple = [], None, False      # columns[k][j]: output tangents for element j of input k
    for k, x in enumerate(ins):
        cols = []
        for j in range(x._data.size):
            basis = np.zeros(x._data.shape, x._dtype.np)
            basis.reshape(-1)[j] = 1
            with fw.dual_level():
                duals = [fw.make_dual(t, Tensor._make(basis, x._dtype) if i == k else _zeros_like(t))
                         for i, t in enumerate(ins)]
                KEEP_TANGENTS.append(True)
                try:
                    out_tuple, outs = _tuple_out(func(*duals))
                finally:
                    KEEP_TANGENTS.pop()
                pairs = [fw.unpack_dual(o) for o in outs]
                outs = [p for p, _ in pairs]
                cols.append([t if t is not None else _zeros_like(p) for p, t in pairs])
        columns.append(cols)
    if outs is None:
        out_tuple, outs = _tuple_out(func(*ins))
    result = []
    for i, o in enumerate(outs):
        row = []
        for k, x in enumerate(ins):
            if columns[k]:
                # (as _jacfwd: the columns stacked first, moved last, reshaped: ReshapeAliasBackward0 when recorded)
                cols = stack([c[i] for c in columns[k]], 0)
                row.append(cols.permute(*range(1, cols.dim()), 0).reshape(o._data.shape + x._data.shape))
            else:
                row.append(Tensor._make(np.zeros(o._data.shape + x._data.shape, o._dtype.np), o._dtype))
        result.append(row)
    if not in_tuple:
        result = tuple(r[0] for r in result)
    return result if out_tuple else result[0]
