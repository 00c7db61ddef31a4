"""The entry record of the op table and the table itself.

gradexpr's counterpart of PyTorch's ``native_functions.yaml`` and
``tools/autograd/derivatives.yaml`` together: one entry per op (per overload that
records its own node), added by one ``op(...)`` call in the family file it belongs
to (``pointwise``, ``reductions``, ``linalg*``, ``shape``, ``indexing``, ``nn*``), or
one ``alias(...)`` line in ``aliases.py``. ``surface.py`` binds the public names
from the entries; nothing else registers an op. (A new, renamed or moved entry also needs
``python tools/gen_op_catalogue.py``, which records which family holds which name so that a
program imports only the families it uses; ``tests/test_op_catalogue.py`` says when.)

The entry format (keywords of ``op``)::

    op("logaddexp", "LogaddexpBackward0",              # table key, PyTorch's node name ("" = no node)
       forward,                                        # NumPy: f(*input arrays, **params) -> array
       ("self", "other"),                              # tensor inputs, in schema order ("*tensors": a list)
       self=lambda grad, self, other: ...,             # one backward formula per differentiable input,
       other=lambda grad, self, other: ...,            #   written with Tensor ops (differentiable again);
                                                       #   NOT_DIFFERENTIABLE / NotDifferentiable(why):
                                                       #   PyTorch has no derivative (asking fails)
       schema="logaddexp(Tensor self, Tensor other) -> Tensor",   # the native_functions.yaml line;
                                                       #   overloads of one name: a tuple of lines;
                                                       #   "-> (Tensor values, Tensor indices)": the call
                                                       #   returns torch.return_types.<name> (indices: an
                                                       #   extra of the forward); a linalg variant's
                                                       #   linalg_X line is bound as torch.linalg.X
       variants="function method",                     # any of: function (torch.X), method (Tensor.X),
                                                       #   inplace (Tensor.X_), F (torch.nn.functional.X),
                                                       #   linalg (torch.linalg.X), special (torch.special.X)
       dtype="promote",                                # dtype rule: "promote" | "float" | "first" | "compare"
                                                       #   | "keep" | rule(tensors, params) -> (compute, out)
       domain="real",                                  # where tests sample inputs (gradexpr.testing.DOMAINS)
       samples=((2, 3), (3,)),                         # input shapes for the op-table tests; several
                                                       #   samples: a list of such tuples
       pointwise=True,                                 # elementwise: batching maps it over a leading dim
       prepare=None,                                   # values by schema name -> (inputs, params) of
                                                       #   apply, for a call that must check or wrap
                                                       #   its parameters first (a reduction's dims);
                                                       #   given inplace=True for Tensor.X_ if it takes it
       forward_ad="element_wise",                      # the tangent (derivatives.yaml's result: line), see
                                                       #   forward_ad.py: "element_wise" | "linear" |
                                                       #   "transpose" | lambda self_t, ...: ... | None
                                                       #   | "not_implemented" (in derivatives.yaml, no
                                                       #   result: line; named by its schema line)
       tangent_formula=lambda self_t, other_p, ...: …, # that line as written, where forward_ad skips
                                                       #   undefined tangents: run when the tangent's
                                                       #   graph is recorded (forward-over-reverse)
       view=False, twice=True, broadcast=None, doc="",
       outputs=None)                                   # several outputs, one node: see op.share_node

A formula's parameter names say what it reads: ``grad``, an input's name (the saved
input), ``result``, ``<input>_shape``, a schema parameter, or an extra the forward
returned; ``apply`` (``op.py``) saves exactly those. Entries with a ``schema`` and
``variants`` are bound by ``surface.py`` through one argument parser
(``signatures.py``) that words PyTorch's ``TypeError``s; the schema's ``Tensor``
parameters named in ``inputs`` are the inputs, the others are passed as params.
Ops without variants are reached through a composite (``composites/``,
``nn_functional.py``) that chooses the entry, as ATen's composites do.
"""
from __future__ import annotations

from .. import errors
from ..grad_mode import IN_FORMULA
from ..made_on_use import MadeOnUse


class NotDifferentiable:
    """Marker for an input whose derivative PyTorch does not implement: asking for it raises ``why``
    as a RuntimeError, or as a NotImplementedError for derivatives.yaml's ``not_implemented("op")``
    (``not_implemented=True``)."""

    def __init__(self, why: str = "", not_implemented: bool = False):
        self.why = why
        self.not_implemented = not_implemented


NOT_DIFFERENTIABLE = NotDifferentiable()

VARIANTS = frozenset(("function", "method", "inplace", "F", "linalg", "special"))

# The families imported when a program first uses one of their entries (``_catalogue.py`` says which
# family holds which name), in the table's order; ``ops/__init__`` imports the others at once, and the
# late families come with torch.nn (below).
LAZY_FAMILIES = ("backward_ops", "special", "reductions", "sorting", "linalg", "linalg_triangular",
                 "linalg_lu_decomposition", "linalg_orthogonal", "linalg_vectors", "shape", "indexing", "nn",
                 "nn_layers")
# the table's order: its entries family by family, in this order
FAMILY_ORDER = ("common", "backward_ops", "pointwise", "special", "reductions", "sorting", "linalg",
                "linalg_triangular", "linalg_lu_decomposition", "linalg_orthogonal", "linalg_vectors", "shape",
                "indexing", "nn", "nn_layers", "aliases")


class _Table(MadeOnUse):
    """Table key -> ``Op``, complete to every reader although its families load on first use.

    A lookup of an entry whose family is not imported yet imports it (``__missing__``); reading
    the whole table (iterating, ``len``, ``in``, ``get``) imports every family first, in the
    table's order, so listings and tests see what a full import would give.
    """

    def __missing__(self, key):
        _load_family_of(key)
        if not dict.__contains__(self, key):
            load_all()          # (a catalogue older than the families: slower, never wrong)
        entry = dict.get(self, key)
        if entry is None:
            raise KeyError(key)
        return entry

    def __iter__(self):
        load_all()
        return dict.__iter__(self)

    def __len__(self):
        load_all()
        return dict.__len__(self)

    def keys(self):
        load_all()
        return dict.keys(self)

    def values(self):
        load_all()
        return dict.values(self)

    def items(self):
        load_all()
        return dict.items(self)


TABLE: dict = _Table()
ALIASES: dict = {}          # public alias name -> the public name it stands for (aliases.py)


def _import_family(family):
    import importlib
    return importlib.import_module(f"{__package__}.{family}")


def _load_family_of(key):
    from ._catalogue import ENTRY_FAMILY
    family = ENTRY_FAMILY.get(key)
    if family is not None:
        _import_family(family)


_all_loaded = []


def load_all():
    """Import every family of the table (not the late ones of torch.nn), keeping the table's order."""
    if _all_loaded:
        return
    _all_loaded.append(True)
    for family in LAZY_FAMILIES:
        _import_family(family)
    from ._catalogue import ORDER
    rank = {key: i for i, key in enumerate(ORDER)}
    entries = sorted(dict.items(TABLE), key=lambda kv: rank.get(kv[0], len(rank)))
    if [k for k, _ in entries] != list(dict.keys(TABLE)):   # families loaded out of order: the table's order back
        dict.clear(TABLE)
        dict.update(TABLE, entries)


def op(name, node, forward, inputs=("self",), **kw):
    """Add one entry to the table (and return it for the functions that dispatch to it)."""
    grads = {k: kw.pop(k) for k in list(kw) if k in inputs or "*" + k in inputs}
    entry = Op(name, node, forward, inputs, grads, **kw)
    if dict.__contains__(TABLE, name):
        raise ValueError(f"op {name!r} is already in the table")
    TABLE[name] = entry
    return entry


# families ``ops/__init__`` does not import (start-up stays lean): ``torch.nn`` loads them on first use,
# ``gradexpr ops`` and the op-table tests through ``load_late_families``
LATE_FAMILIES = ("nn_activations", "nn_losses", "nn_norms", "nn_pooling", "nn_resample", "nn_recurrent")


def load_late_families():
    import importlib
    for family in LATE_FAMILIES:
        importlib.import_module(f"{__package__}.{family}")


def batch_rules(kind, *names):
    """Declare how vmap batches the entries ``names`` (batching.RULES: "dims", "reduce", "shape", ...;
    or ("reduce_all", the entry over dims)); elementwise entries need no declaration."""
    for name in names:
        TABLE[name].batch = kind


def alias(name, target):
    """``name`` is another public name of ``target`` (``absolute`` of ``abs``, ``moveaxis`` of
    ``movedim``, ``absolute_`` of ``abs_``), bound wherever ``target`` is."""
    if name in ALIASES:
        raise ValueError(f"alias {name!r} is already declared")
    ALIASES[name] = target


class Op:
    __slots__ = ("name", "node", "forward", "inputs", "formulas", "dtype", "cast", "view", "domain",
                 "differentiable", "variadic", "_args", "_optional", "_save_cache", "doc", "twice", "broadcast",
                 "_calls", "_plans", "_any_optional", "edges", "schema", "variants", "samples", "pointwise", "batch",
                 "prepare", "tangent", "tangent_formula", "zero_tensor", "tangent_copied", "outputs", "_joint", "_params_read", "_order", "inplace_entry",
                 "absent_edges")

    def __init__(self, name, node, forward, inputs=("self",), grads=None, *, dtype="promote", cast=None,
                 view=False, domain=None, differentiable=True, doc="", twice=True, broadcast=None,
                 schema=(), variants="", samples=(), pointwise=False, batch=None, prepare=None,
                 forward_ad=None, tangent_formula=None, zero_tensor=None, tangent_copied=None, outputs=None):
        self.name = name
        self.node = node
        self.forward = forward
        self.variadic = len(inputs) == 1 and inputs[0].startswith("*")
        self.inputs = tuple(i.lstrip("*") for i in inputs)
        self.formulas = dict(grads or {})
        # which inputs are edges of the node (PyTorch's next_functions): those the op differentiates or
        # declares not implemented; indices, masks and targets are not (all inputs of a variadic op are)
        self.edges = None if self.variadic else tuple(i in self.formulas for i in self.inputs)
        self.dtype = dtype
        self.cast = cast
        self.view = view
        self.domain = domain
        self.differentiable = differentiable and bool(self.formulas)
        self.doc = doc
        self.twice = twice
        # elementwise ops broadcast their inputs (checked with PyTorch's message before computing)
        self.broadcast = (dtype in ("promote", "float", "compare") and len(inputs) > 1) if broadcast is None \
            else broadcast  # False where a second derivative is not meaningful to test (kinks, piecewise)
        self._save_cache = {}
        self._plans = {}
        self.schema = (schema,) if isinstance(schema, str) else tuple(schema)
        self.variants = frozenset(variants.split())
        if not self.variants <= VARIANTS:
            raise ValueError(f"op {name!r}: unknown variants {sorted(self.variants - VARIANTS)}")
        if self.variants and not self.schema:
            raise ValueError(f"op {name!r}: variants need a schema")
        # test samples: input shapes, one tuple per sample (a single tuple of shapes is one sample)
        self.samples = [samples] if samples and isinstance(samples[0], tuple) and (
            not samples[0] or isinstance(samples[0][0], int)) else list(samples)
        self.pointwise = pointwise
        self.prepare = prepare    # values -> (inputs, params) when the bound call checks its parameters
        self.batch = batch        # vmap's batch rule (batching.py; None: elementwise entries map, others loop)
        # how forward-mode AD computes the output's tangent (forward_ad.py): "element_wise", "linear",
        # "transpose" or a formula reading ``<input>_t``; None: PyTorch has no forward derivative
        self.tangent = forward_ad
        # derivatives.yaml's ``result:`` formula as PyTorch writes it (``self_p``, ``other_t`` …, undefined
        # tangents read as zeros), for an entry whose ``forward_ad`` skips undefined tangents to be cheap:
        # forward_ad.py runs it instead when the tangent's graph is recorded, so that graph is PyTorch's
        self.tangent_formula = tangent_formula
        # the op's ATen ZeroTensor kernel ("mul" — a ZeroTensor in, one out —, "div", "add", "sub"): what
        # it makes of a ZeroTensor among its inputs (zero_tensor.py; the other ops read one as plain zeros)
        self.zero_tensor = zero_tensor
        # params -> whether ATen's output has other metadata than its tangent (a reduced loss left in the
        # storage of the elementwise loss), so that ``_set_fw_grad`` copies the tangent (CopyBackwards)
        self.tangent_copied = tangent_copied
        # an op with several outputs sharing one node (op.share_node): the outputs' names, which its
        # formulas may read ("" for one they never read), or "*" for a number known per call; its
        # formulas then read ``grad`` as the tuple of the outputs' gradients (None where none came)
        self.outputs = outputs
        # the entry the in-place variant (``t.op_()``) runs, where derivatives.yaml gives ``op_`` an
        # entry of its own (acosh_: AcoshBackward1, not implemented); None: this entry itself
        self.inplace_entry = None
        # edges PyTorch's node lists after the inputs' for optional tensors the entry never takes
        # (convolution without a bias: ConvolutionBackward0's third edge is None)
        self.absent_edges = 0

    _PREPARED = frozenset(("_args", "_optional", "_any_optional", "_calls", "_joint", "_params_read", "_order"))

    def __getattr__(self, name):
        """The formulas' argument lists and callers, worked out the first time one is read.

        A run uses a handful of the table's entries; preparing all of them when the table is
        built cost a millisecond of every start-up. (``__getattr__`` runs only while a slot
        is still unset, so reading them later costs nothing extra.)
        """
        if name not in Op._PREPARED:
            raise AttributeError(name)
        formulas = {k: f for k, f in self.formulas.items() if callable(f)}
        self._args = {k: f.__code__.co_varnames[:f.__code__.co_argcount] for k, f in formulas.items()}
        # names a formula can do without (it has a default for them)
        self._optional = {k: set(f.__code__.co_varnames[f.__code__.co_argcount - len(f.__defaults__ or ()):
                                                        f.__code__.co_argcount])
                          for k, f in formulas.items()}
        self._any_optional = frozenset().union(*self._optional.values())
        # every name any formula reads: a call's parameters among them are kept by the node whichever
        # inputs need a gradient (PyTorch's node keeps its scalars so: AddBackward0's alpha)
        self._params_read = frozenset().union(*self._args.values())
        # per input: a call of its formula reading its arguments from the backward context
        self._calls = {k: _caller(f, self._optional[k]) for k, f in formulas.items()}
        # one formula given for several inputs returns all their gradients in one call (a fused ATen
        # backward, one node for them under create_graph), told which are wanted by ``output_mask``
        # (ATen's name): input -> (that call, its index in the result, the inputs sharing it)
        self._joint = {}
        for k, f in formulas.items():
            sharing = [i for i in self.inputs if formulas.get(i) is f]
            if len(sharing) > 1:
                whole = self._calls[k] if sharing[0] == k else self._joint[sharing[0]][0]
                members = tuple(self.inputs.index(i) for i in sharing)
                self._joint[k] = (whole, sharing.index(k), members)
                self._calls[k] = lambda ctx, whole=whole, at=sharing.index(k): whole(ctx)[at]
        self._order = _formula_order(self.inputs, formulas)
        return getattr(self, name)

    def __repr__(self):
        return f"<op {self.name} -> {self.node}>"

    def save_names(self, needs):
        """The context names read by the formulas of the inputs in ``needs`` (a tuple of bools)."""
        names = self._save_cache.get(needs)
        if names is None:
            s = []
            for name, need in zip(self.inputs if not self.variadic else self.inputs * len(needs), needs):
                if need:
                    for a in self._args.get(name, ()):
                        if a != "grad" and a not in s:
                            s.append(a)
            if any(needs) and "result" in self._params_read and "result" not in s:
                s.append("result")      # an output any formula reads is kept whatever needs a gradient (as ATen's)
            names = self._save_cache[needs] = tuple(s)
        return names

    def save_plan(self, needs):
        """``save_names(needs)`` with how ``apply`` gets each: (name, _RESULT | _INPUTS | input index | _LATE |
        _SHAPE_OF / _DTYPE_OF / _COLUMN_MAJOR_OF, the input's index for those three)."""
        plan = self._plans.get(needs)
        if plan is None:
            plan = []
            for name in self.save_names(needs):
                if name == "result":
                    plan.append((name, _RESULT, None))
                elif self.variadic and name == self.inputs[0]:
                    plan.append((name, _INPUTS, None))
                elif name in self.inputs:
                    plan.append((name, self.inputs.index(name), None))
                else:
                    plan.append(self._late(name))   # a parameter, an extra, a shape or dtype: see _record
            plan = self._plans[needs] = tuple(plan)
        return plan

    def _late(self, name):
        """The plan entry of a name that is not an input or the result: what ``_record`` saves for it
        when the call has no parameter or extra of that name, worked out once from its suffix."""
        for suffix, how in (("_shape", _SHAPE_OF), ("_dtype", _DTYPE_OF), ("_column_major", _COLUMN_MAJOR_OF)):
            key = name[:-len(suffix)]
            if name.endswith(suffix) and key in self.inputs and not (how == _SHAPE_OF and self.variadic
                                                                      and key == self.inputs[0]):
                return name, how, self.inputs.index(key)
        return name, _LATE, None

    def optional(self, name):
        return name in self._any_optional

    def backward(self, ctx, needed):
        """Gradients for each input, None where not needed (the formulas run as C++ code: IN_FORMULA)."""
        IN_FORMULA.append(True)
        try:
            if self.variadic:
                name = self.inputs[0]
                f = self.formulas[name]
                grads = f(**{a: ctx[a] for a in self._args[name] if a in ctx})
                return [g if n else None for g, n in zip(grads, needed)]
            out = [None] * len(self.inputs)
            fused = {}
            for at in self._order:
                name, need = self.inputs[at], needed[at]
                if not need:
                    continue
                call = self._calls.get(name)
                if call is None:
                    f = self.formulas.get(name, NOT_DIFFERENTIABLE)
                    kind = errors.NotImplementedError if getattr(f, "not_implemented", False) else errors.RuntimeError
                    raise kind(f"the derivative for '{self.name}' is not implemented."
                               if not getattr(f, "why", "") else f.why)
                joint = self._joint.get(name)
                if joint is None:
                    out[at] = call(ctx)
                    continue
                whole, index, members = joint
                if whole not in fused:
                    ctx["output_mask"] = tuple(bool(needed[i]) for i in members)
                    fused[whole] = whole(ctx)
                out[at] = fused[whole][index]
            return out
        finally:
            IN_FORMULA.pop()


def _formula_order(inputs, formulas):
    """The input positions in the order PyTorch's generated backward computes their gradients: its
    code generator (tools/autograd/load_derivatives.py) emits a node's formulas sorted by their
    derivatives.yaml keys (``other`` before ``self``; a joint formula under its key, its inputs
    joined by ", "). The order decides which nodes the first derivative creates first, and so the
    order in which a second backward pass reaches them and sums their gradients."""
    keys = {}
    for i, name in enumerate(inputs):
        f = formulas.get(name)
        sharing = [k for k in inputs if f is not None and formulas.get(k) is f] or [name]
        keys[i] = ", ".join(sharing)
    return tuple(sorted(range(len(inputs)), key=lambda i: (keys[i], i)))


# how a saved name is got (save_plan): an input's index (>= 0), or one of these
_RESULT, _INPUTS, _LATE, _SHAPE_OF, _DTYPE_OF, _COLUMN_MAJOR_OF = -1, -2, -3, -4, -5, -6


def _caller(f, optional):
    """``ctx -> f(...)`` with f's arguments taken from ctx by name (optional ones only if present)."""
    names = f.__code__.co_varnames[:f.__code__.co_argcount]
    if optional:
        required = tuple(n for n in names if n not in optional)
        return lambda ctx: f(*[ctx[a] for a in required], **{a: ctx[a] for a in optional if a in ctx})
    if len(names) == 1:
        a, = names
        return lambda ctx: f(ctx[a])
    if len(names) == 2:
        a, b = names
        return lambda ctx: f(ctx[a], ctx[b])
    return lambda ctx: f(*[ctx[a] for a in names])
