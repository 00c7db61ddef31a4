"""The bound surface against PyTorch's: every public name of ``torch``, ``torch.Tensor``,
``torch.nn.functional`` and ``torch.linalg`` (recorded from PyTorch 2.13 in
``tests/data/pytorch_surface.tsv`` by ``make_pytorch_surface.py``) is either bound in gradexpr or
listed in ``tests/data/surface_unsupported.txt`` under a reason; gradexpr binds no public name
PyTorch lacks, and binds none twice.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from gradexpr import api, ops, surface
from gradexpr.tensor import Tensor

DATA = Path(__file__).parent / "data"
G = api.build()
SPACES = {"torch": G["torch"], "torch.Tensor": Tensor, "torch.nn.functional": G["F"],
          "torch.linalg": G["torch"].linalg}


def _recorded() -> dict:
    rows = {}
    for line in (DATA / "pytorch_surface.tsv").read_text().splitlines():
        if not line.startswith("#"):
            name, kind, signature = line.split("\t")
            rows[name] = (kind, signature)
    return rows


def _unsupported() -> dict:
    reasons, reason = {}, None
    for line in (DATA / "surface_unsupported.txt").read_text().splitlines():
        if line.startswith("## "):
            reason = line[3:].strip()
        elif line and not line.startswith("#"):
            assert reason, f"{line}: listed before any reason"
            assert line not in reasons, f"{line} is listed twice"
            reasons[line] = reason
    return reasons


RECORDED = _recorded()
UNSUPPORTED = _unsupported()


def _bound() -> set:
    # the names bound on first use (the late ops of torch.nn: torch.selu, Tensor.hardshrink …), bound now
    from gradexpr.nn import functional_activations as late
    late.bind_tensor_methods()
    for name in late.TORCH_NAMES:
        getattr(G["torch"], name)
    return {f"{prefix}.{n}" for prefix, space in SPACES.items() for n in dir(space) if not n.startswith("_")}


BOUND = _bound()


def test_every_pytorch_name_is_bound_or_listed_unsupported_with_a_reason():
    neither = sorted(n for n in RECORDED if n not in BOUND and n not in UNSUPPORTED)
    assert not neither, f"neither bound nor listed unsupported: {neither}"


def test_a_name_listed_unsupported_is_not_bound_and_is_pytorchs():
    assert not sorted(set(UNSUPPORTED) & BOUND), "bound now: take these out of surface_unsupported.txt"
    assert not sorted(set(UNSUPPORTED) - set(RECORDED)), "not PyTorch 2.13 names"


def test_gradexpr_binds_no_public_name_pytorch_lacks():
    assert not sorted(BOUND - set(RECORDED))


# PyTorch docstrings that name a parameter the method does not take (``x.atanh_(other=…)`` is a TypeError)
_DOCSTRING_ERRATA = {"torch.Tensor.atanh_": "atanh_() -> Tensor", "torch.Tensor.arctanh_": "arctanh_() -> Tensor",
                     # (its parameter is ``source``: ``x.masked_scatter(m, tensor=s)`` is a TypeError)
                     "torch.Tensor.masked_scatter": "masked_scatter(mask, source) -> Tensor",
                     # (its first parameter is ``input``: ``solve_triangular(A=a, ...)`` is a TypeError)
                     "torch.linalg.solve_triangular": "linalg.solve_triangular(input, B, *, upper, left=True, "
                                                      "unitriangular=False, out=None) -> Tensor"}


def _params(signature: str) -> set:
    signature = signature.split(" -> ")[0]         # (a return of several tensors is parenthesised too)
    inner = signature[signature.index("(") + 1:signature.rindex(")")]
    return {re.split(r"[=:]", p)[0].strip().lstrip("*") for p in inner.split(",")} - {"", "*"}


@pytest.mark.parametrize("name", sorted(
    f"{prefix}.{n}" for ns, prefix in (("function", "torch"), ("method", "torch.Tensor"), ("inplace", "torch.Tensor"),
                                       ("F", "torch.nn.functional"), ("linalg", "torch.linalg"))
    for n in surface.bound()[ns] if RECORDED[f"{prefix}.{n}"][1]))   # (a few, e.g. Tensor.less, have none)
def test_a_table_bound_name_has_pytorchs_parameters(name):
    """The parameters PyTorch's docstring names are parameters of one of the entry's schema lines."""
    kind, signature = RECORDED[name]
    signature = _DOCSTRING_ERRATA.get(name, signature)
    short = name.rsplit(".", 1)[1]
    method = name.startswith("torch.Tensor.")
    public = short[:-1] if short.endswith("_") else short
    if name.startswith("torch.linalg.") and "linalg_" + public in surface.PUBLIC:
        public = "linalg_" + public             # (torch.linalg.X's schema lines are native_functions.yaml's linalg_X)
    ours = {p.name if method or p.name != "self" else "input"
            for sig in surface.overloads(public).signatures
            for p in sig.params}
    assert _params(signature) <= ours, f"{name}: PyTorch's {signature!r}, ours {sorted(ours)}"


def test_a_name_bound_by_the_table_and_by_hand_is_refused():
    name = next(iter(surface.bound()["function"]))
    with pytest.raises(ValueError, match="bound twice"):
        surface.namespace("function", {name: print})


def test_the_hand_written_name_lists_have_no_duplicates():
    names = api._TORCH_FUNCTIONS
    assert len(names) == len(set(names)), sorted(n for n in set(names) if names.count(n) > 1)


def test_every_alias_target_is_bound_somewhere():
    for alias, target in ops.ALIASES.items():
        assert any(target in dir(space) for space in SPACES.values()), f"{alias}: {target} is not bound"


_VARIANT_NAME = {"function": ("torch", ""), "method": ("torch.Tensor", ""), "inplace": ("torch.Tensor", "_"),
                 "F": ("torch.nn.functional", ""), "linalg": ("torch.linalg", ""), "special": ("torch.special", "")}
# (torch.special is not in the recorded surface: its names are checked through the entries' variants only)
_VARIANT_SPACES = {**SPACES, "torch.special": G["torch"].special}


def _variant_calls(entry, public):
    """(label, callable) for each variant the entry declares, looked up where a program finds it."""
    for variant in sorted(entry.variants):
        space, suffix = _VARIANT_NAME[variant]
        name = (surface.linalg_name(public) if variant == "linalg" else public) + suffix
        assert name in dir(_VARIANT_SPACES[space]), f"{entry.name}: {space}.{name} is declared but not bound"
        if space == "torch.Tensor":
            yield f"{space}.{name}", (lambda x, *xs, n=name: getattr(x * 1 if n.endswith("_") else x, n)(*xs))
        else:
            yield f"{space}.{name}", getattr(_VARIANT_SPACES[space], name)


@pytest.mark.parametrize("name", sorted(n for n, e in ops.TABLE.items() if e.variants))
def test_every_entry_is_reachable_under_each_declared_variant(name):
    """A forgotten registration cannot fail silently: each public name of an entry is bound in every
    namespace it declares, its overloads lead to this entry, and a call with only the entry's tensors
    (where its schema needs nothing else) records the entry's own node."""
    from gradexpr import testing
    entry = ops.TABLE[name]
    for public in sorted({line.partition("(")[0].split(".")[0] for line in entry.schema}):
        overloads = surface.overloads(public)
        assert any(sig.entry is entry for sig in overloads.signatures), f"{public} never reaches {name}"
        calls = list(_variant_calls(entry, public))
        if all(any(not p.has_default and p.name not in entry.inputs for p in sig.params)
               for sig in overloads.signatures if sig.entry is entry):
            continue        # its lines need a number besides the tensors (polygamma's n, copysign.Scalar's other,
            #                 solve_triangular's keyword upper)
        if any(i not in entry.formulas for i in entry.inputs):
            continue        # an input that is no edge (masked_scatter's mask): a sampled float cannot be one
        shapes = entry.samples[0] if entry.samples else ((2, 3),) * len(entry.inputs)
        args = [testing.sample(entry.domain or "real", s) for s in shapes]
        chosen, _ = overloads.parse(args, {})
        for label, call in calls:
            if chosen.entry is entry and entry.node and entry.differentiable:
                # (an in-place call runs the entry's in-place entry where it has one: acosh_'s AcoshBackward1)
                node = entry.inplace_entry.node if label.endswith("_") and entry.inplace_entry else entry.node
                got = call(*args).grad_fn
                assert got is not None and got.name() == node, f"{label} recorded {got}, not {node}"


@pytest.mark.parametrize("alias", sorted(ops.ALIASES))
def test_every_alias_is_bound_wherever_its_target_is(alias):
    target = ops.ALIASES[alias]
    spaces = [space for space in SPACES.values() if target in dir(space)]
    assert spaces and all(alias in dir(space) for space in spaces), f"{alias} is not bound beside {target}"
