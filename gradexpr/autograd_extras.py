"""The names of ``torch.autograd`` that programs reach for its extension points (custom Functions,
hooks, saved tensors, anomaly mode) and for ``gradcheck``, assembled on first use so a run that never touches them
does not import them (api.py's ``torch.autograd`` namespace asks here for a name it lacks)."""
from __future__ import annotations


def autograd_name(name: str, namespace):
    """The value of ``torch.autograd.<name>`` or None. ``namespace(name, names)`` makes a module-like object."""
    maker = _MAKERS.get(name)
    return None if maker is None else maker(namespace)


def _function(namespace):
    from . import autograd_function as af
    return namespace("torch.autograd.function", {
        "Function": af.Function, "FunctionCtx": af.FunctionCtx, "BackwardCFunction": af.BackwardCFunction,
        "once_differentiable": af.once_differentiable, "InplaceFunction": af.Function})


def _graph(namespace):
    from . import graph, hooks, saved_hooks
    return namespace("torch.autograd.graph", {
        "Node": graph.Node, "RemovableHandle": hooks.RemovableHandle,
        "register_multi_grad_hook": hooks.register_multi_grad_hook,
        "saved_tensors_hooks": saved_hooks.saved_tensors_hooks, "save_on_cpu": saved_hooks.save_on_cpu,
        "disable_saved_tensors_hooks": saved_hooks.disable_saved_tensors_hooks,
        "allow_mutation_on_saved_tensors": saved_hooks.allow_mutation_on_saved_tensors,
        "increment_version": saved_hooks.increment_version,
        "region_activation_memory_budget": saved_hooks.region_activation_memory_budget})


def _anomaly_mode(namespace):
    from . import anomaly
    return namespace("torch.autograd.anomaly_mode", {"detect_anomaly": anomaly.detect_anomaly,
                                                      "set_detect_anomaly": anomaly.set_detect_anomaly})


def _member(module_maker, member):
    return lambda namespace: getattr(module_maker(namespace), member)


def _grad_mode(namespace):
    from . import graph
    return namespace("torch.autograd.grad_mode", {
        "no_grad": graph.no_grad, "enable_grad": graph.enable_grad, "set_grad_enabled": graph.set_grad_enabled,
        "inference_mode": graph.inference_mode, "enforce_grad_layout_policy": _layout_policy(namespace)})


def _layout_policy(namespace):
    from .grad_layout import enforce_grad_layout_policy
    return enforce_grad_layout_policy


def _testing(name):
    def make(namespace):
        from . import testing      # gradcheck, gradgradcheck
        return getattr(testing, name)
    return make


_MAKERS = {
    "gradcheck": _testing("gradcheck"),
    "gradgradcheck": _testing("gradgradcheck"),
    "grad_mode": _grad_mode,
    "inference_mode": _member(_grad_mode, "inference_mode"),
    "no_grad": _member(_grad_mode, "no_grad"),
    "enable_grad": _member(_grad_mode, "enable_grad"),
    "set_grad_enabled": _member(_grad_mode, "set_grad_enabled"),
    "enforce_grad_layout_policy": _member(_grad_mode, "enforce_grad_layout_policy"),
    "function": _function,
    "Function": _member(_function, "Function"),
    "graph": _graph,
    "anomaly_mode": _anomaly_mode,
    "detect_anomaly": _member(_anomaly_mode, "detect_anomaly"),
    "set_detect_anomaly": _member(_anomaly_mode, "set_detect_anomaly"),
}
