"""Forward mode for ``session.evaluate``: Jacobian columns and Jacobian–vector products.

Reverse mode differentiates the graph the first run recorded. Forward mode cannot: tangents are
computed while ops run, so the program runs again with its ``-v`` leaves replaced by dual tensors
(``bindings.for_run(substitutes)``, from the random state the first run started with, as ``--check``
does). A Jacobian takes one such run: ``torch.func.jacfwd`` pushes every basis tangent at once as
one batched tangent (``vmap(jvp)``, randomness "same" so a random program draws what it drew the
first time). ``--jvp NAME=VALUE`` pushes the given tangents (zero for the leaves it does not name).

``auto`` chooses as PyTorch's ``jacobian`` documentation advises: forward mode when the leaves have
fewer elements than the target (fewer columns than rows), reverse mode otherwise. Forward mode can
only seed leaves the command line bound; a program's own leaves keep ``auto`` in reverse mode.
"""
from __future__ import annotations

MODES = ("reverse", "forward", "auto")


def choose_mode(requested: str, target, leaves) -> str:
    """The mode a Jacobian (and a scalar target's gradient) is computed in."""
    if requested != "auto":
        return requested
    if not all(leaf.bound for leaf in leaves):
        return "reverse"
    inputs = sum(int(leaf.tensor._data.size) for leaf in leaves)
    return "forward" if inputs < target._data.size else "reverse"


class Rerun:
    """The program as a function of its ``-v`` leaves: ``f(*values)`` is the target of a fresh run."""

    def __init__(self, source, filename, bindings, request, limits, rng_state):
        self.source, self.filename, self.bindings = source, filename, bindings
        self.request, self.limits, self.rng_state = request, limits, rng_state

    def begin(self, ev, target) -> str:
        """The mode of ``ev``'s Jacobian; ``ev.jvp`` computed when ``--jvp`` asks for it."""
        from .session import RequestError
        mode = choose_mode(self.request.mode, target, ev.leaves)
        if mode == "forward" and self.request.trace:
            raise RequestError("--trace follows the backward pass: it needs --mode reverse")
        if self.request.jvp:
            ev.tangents = parse_tangents(self.request.jvp, self.bindings, ev.leaves, self.limits)
            ev.jvp = jvp(self, target, ev.leaves, ev.tangents)
        return mode

    def jacobian_blocks(self, target, leaves):
        return jacobian_blocks(self, target, leaves)

    def function(self, names):
        from .session import ProgramError, restore_rng_state, run_program

        def target_of(*values):
            restore_rng_state(self.rng_state)
            try:
                again = run_program(self.source, self.filename, self.bindings, of=self.request.of,
                                    limits=self.limits, substitutes=dict(zip(names, values)))
            except ProgramError as e:
                raise e.error from None
            return again.target
        return target_of

    def _around(self, work):
        """Run ``work`` and leave the random state as the first run left it."""
        from .session import restore_rng_state, snapshot_rng_state
        after = snapshot_rng_state()
        try:
            return work()
        finally:
            restore_rng_state(after)


def _refuse_program_leaves(leaves, option):
    from .session import RequestError
    for leaf in leaves:
        if not leaf.bound:
            raise RequestError(f"{option}: {leaf.name} was created by the program; forward mode re-runs the program "
                               "with dual tensors for the -v variables only",
                               hint=f"bind it with -v, leave it out with --wrt, or use --mode reverse")


def jacobian_blocks(rerun: Rerun, target, leaves):
    """d target / d leaf for each leaf, shaped ``target.shape + leaf.shape``, by ``jacfwd``."""
    from . import func
    from .session import fresh_copy
    _refuse_program_leaves(leaves, "--mode forward")
    names = [leaf.name for leaf in leaves]
    values = [fresh_copy(leaf.tensor, True) for leaf in leaves]
    jac = rerun._around(lambda: func.jacfwd(rerun.function(names), argnums=tuple(range(len(names))),
                                            randomness="same")(*values))
    return [_like_target(block, target) for block in jac]


def parse_tangents(texts, bindings, leaves, limits) -> dict:
    """``--jvp NAME=VALUE`` options: leaf name -> tangent (the leaf's shape and dtype)."""
    from . import functions
    from .session import RequestError, _closest, evaluate_value, split_assignment
    from .tensor import Size, Tensor
    by_name = {leaf.name: leaf for leaf in leaves}
    tangents = {}
    for text in texts:
        name, source = split_assignment(text, "--jvp")
        if name not in by_name:
            have = ", ".join(by_name) or "none"
            raise RequestError(f"--jvp {name}: not a leaf of the target (leaves: {have})",
                               hint=_closest(name, by_name))
        if name in tangents:
            raise RequestError(f"--jvp {name}: {name} is given two tangents")
        leaf = by_name[name].tensor
        v = evaluate_value(source, f"--jvp {name}", bindings.for_run(), limits)
        if not isinstance(v, Tensor):
            v = functions.tensor(v)
        if v._data.shape != leaf._data.shape:
            if v._data.size == 1:
                v = v.reshape(()).expand(*leaf._data.shape)
            else:
                raise RequestError(f"--jvp {name}: Mismatch in shape: the tangent has a shape of {Size(v._data.shape)} "
                                   f"and {name} has a shape of {Size(leaf._data.shape)}.")
        tangents[name] = v.detach().to(leaf._dtype).contiguous()
    return tangents


def jvp(rerun: Rerun, target, leaves, tangents: dict):
    """The target's tangent when each leaf moves along ``tangents[name]`` (zero where not given)."""
    import numpy as np
    from . import func
    from .session import fresh_copy
    from .tensor import Tensor
    _refuse_program_leaves([leaf for leaf in leaves if leaf.name in tangents], "--jvp")
    bound = [leaf for leaf in leaves if leaf.bound]
    names = [leaf.name for leaf in bound]
    primals = tuple(fresh_copy(leaf.tensor, True) for leaf in bound)
    seeds = tuple(tangents.get(leaf.name) if leaf.name in tangents else
                  Tensor._make(np.zeros(leaf.tensor._data.shape, leaf.tensor._dtype.np), leaf.tensor._dtype)
                  for leaf in bound)
    _, tangent = rerun._around(lambda: func.jvp(rerun.function(names), primals, seeds))
    return _like_target(tangent, target)


def _like_target(t, target):
    """A computed block in the target's dtype (a program may compute in float64 from float32 leaves)."""
    return t if t._dtype is target._dtype else t.to(target._dtype)
