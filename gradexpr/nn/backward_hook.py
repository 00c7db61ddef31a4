"""A module's full backward hooks, as ``torch/utils/hooks.py``'s ``BackwardHook`` builds them: the
module's tensor inputs and outputs pass through an identity ``BackwardHookFunction`` (node
``BackwardHookFunctionBackward``); a hook on the outputs' node keeps the gradients of the outputs
(after the backward pre-hooks), a hook on the inputs' node calls the user hooks with both."""
from __future__ import annotations

from .. import errors
from ..autograd_function import Function
from ..graph import is_grad_enabled
from ..tensor import Tensor


class BackwardHookFunction(Function):
    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *args):
        return args


BackwardHookFunction.__module__ = "torch.nn.modules._functions"


class BackwardHook:
    def __init__(self, module, user_hooks, user_pre_hooks):
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices, values):
        return tuple(values[idx] for idx in indices)

    def _set_user_hook(self, grad_fn):
        def hook(grad_input, _):
            if self.grad_outputs is None:
                return None
            res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise errors.RuntimeError("Backward hook returned an invalid number of grad_input, "
                                              f"got {len(out)}, but expected {len(res)}")
                res = out
            self.grad_outputs = None
            return self._unpack_none(self.input_tensors_index, res)
        grad_fn.register_hook(hook)

    def _apply_on_tensors(self, fn, args):
        tensors_idx, tensors, requires_grad = [], [], False
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensors_idx.append(i)
                tensors.append(arg)
                requires_grad |= arg.requires_grad
        if not (requires_grad and is_grad_enabled()):
            return args, None
        new_tensors = BackwardHookFunction.apply(*tensors)
        grad_fns = [t.grad_fn for t in new_tensors
                    if t.grad_fn is not None and t.grad_fn.name() == "BackwardHookFunctionBackward"]
        fn(grad_fns[0])
        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors):
            arg_list[idx] = val
        return tuple(arg_list) if type(args) is tuple else type(args)(*arg_list), tensors_idx

    def setup_input_hook(self, args):
        res, self.input_tensors_index = self._apply_on_tensors(self._set_user_hook, args)
        self.n_inputs = len(args)
        return res

    def _output_hook(self, grad_fn):
        def hook(_, grad_output):
            self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output, self.n_outputs)
            expected = len(self.grad_outputs)
            for pre_hook in self.user_pre_hooks:
                new = pre_hook(self.module, self.grad_outputs)
                if new is None:
                    continue
                if len(new) != expected:
                    raise errors.RuntimeError("Backward pre hook returned an invalid number of grad_output, "
                                              f"got {len(new)}, but expected {expected}")
                self.grad_outputs = new
            local = self.grad_outputs
            if self.input_tensors_index is None:
                from ..warn import warn
                warn("Full backward hook is firing when gradients are computed with respect to module outputs "
                     "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
                     "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.",
                     UserWarning)
                grad_inputs = self._pack_with_none([], [], self.n_inputs)
                for user_hook in self.user_hooks:
                    res = user_hook(self.module, grad_inputs, self.grad_outputs)
                    if res is not None and not (isinstance(res, tuple) and all(el is None for el in res)):
                        raise errors.RuntimeError("Backward hook for Modules where no input requires gradient "
                                                  "should always return None or None for all gradients.")
                self.grad_outputs = None
            if local is not None:
                return tuple(local[i] for i in self.output_tensors_index)
            return None
        grad_fn.register_hook(hook)

    def setup_output_hook(self, args):
        is_tuple = isinstance(args, tuple)
        if not is_tuple:
            args = (args,)
        res, self.output_tensors_index = self._apply_on_tensors(self._output_hook, args)
        self.n_outputs = len(args)
        return res if is_tuple else res[0]
