"""``nn.Embedding`` and ``nn.LayerNorm``: PyTorch's constructors (normal initial rows, a zeroed padding
row; unit weight and zero bias) over ``F.embedding`` and ``F.layer_norm``."""
from __future__ import annotations

from .. import errors
from .. import functions as T
from ..graph import no_grad
from . import functional as NF2
from . import init
from .linear import _factory
from .module import Module
from .parameter import Parameter


class Embedding(Module):
    __module__ = "torch.nn.modules.sparse"

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        factory = _factory(device, dtype)
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if padding_idx > 0 and padding_idx >= num_embeddings or padding_idx < 0 and padding_idx < -num_embeddings:
                raise errors.AssertionError("Padding_idx must be within num_embeddings")
            if padding_idx < 0:
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        if max_norm is not None:
            raise errors.NotImplementedError("Embedding(max_norm=...) is not supported in gradexpr")
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if _weight is None:
            self.weight = Parameter(T.empty((num_embeddings, embedding_dim), **factory), requires_grad=not _freeze)
            init.normal_(self.weight)
            if self.padding_idx is not None:
                with no_grad():
                    self.weight[self.padding_idx].fill_(0)
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise errors.AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        self.sparse = sparse

    def forward(self, input):
        return NF2.embedding(input, self.weight, self.padding_idx, scale_grad_by_freq=self.scale_grad_by_freq)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s


class LayerNorm(Module):
    __module__ = "torch.nn.modules.normalization"

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        factory = _factory(device, dtype)
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(T.empty(self.normalized_shape, **factory))
            if bias:
                self.bias = Parameter(T.empty(self.normalized_shape, **factory))
            else:
                self.register_parameter("bias", None)
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return NF2.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")
