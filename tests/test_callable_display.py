"""PyTorch's text for its functions and Tensor methods (gradexpr/callable_display.py, from the
recording in gradexpr/torch_callables.py): every one gradexpr binds prints as PyTorch prints it."""
import re

from gradexpr.api import build
from gradexpr.callable_display import display
from gradexpr.tensor import Tensor
from gradexpr.torch_callables import NAMESPACES, TEMPLATES, TENSOR

_ADDRESS = re.compile(r"0x[0-9a-f]+")


def _shown(value):
    text = display(value)
    return None if text is None else _ADDRESS.sub("0x", text)


def test_every_bound_function_prints_as_pytorch_prints_it():
    P = build()
    torch = P["torch"]
    spaces = {"torch": torch, "torch.nn.functional": P["F"], "torch.linalg": torch.linalg,
              "torch.special": torch.special}
    for ns in spaces.values():      # every name made first (torch.nn's too), whatever ran before
        dir(ns)
    dir(torch.nn)
    checked, wrong = 0, []
    for space, ns in spaces.items():
        recorded = NAMESPACES[space]
        for name in dir(ns):
            if name not in recorded or not callable(getattr(ns, name)) or isinstance(getattr(ns, name), type):
                continue
            checked += 1
            want = TEMPLATES[recorded[name]].format(n=name, a="0x")
            if _shown(getattr(ns, name)) != want:
                wrong.append((space, name, _shown(getattr(ns, name)), want))
    assert checked > 300 and wrong == []


def test_every_bound_tensor_method_prints_as_pytorch_prints_it():
    x = build()["torch"].tensor([1., 2.])
    checked, wrong = 0, []
    for name in dir(Tensor):
        if name.startswith("__") or name not in TENSOR or not callable(getattr(x, name, None)):
            continue
        checked += 1
        want = TEMPLATES[TENSOR[name][1]].format(n=name, a="0x", s=repr(x), t="Tensor")
        if _shown(getattr(x, name)) != want:
            wrong.append((name, _shown(getattr(x, name)), want))
    assert checked > 300 and wrong == []


def test_other_callables_keep_python_text():
    def f():
        pass
    assert display(f) is None and display(print) is None and display(Tensor._make) is None
    assert display(build()["torch"].ones(2)._accumulator) is None      # not one of PyTorch's


def test_aliases_are_functions_of_their_own_that_compute_the_same():
    torch = build()["torch"]
    x = torch.arange(6.).reshape(2, 3)
    assert torch.swapaxes is not torch.transpose and torch.special.erf is not torch.erf
    assert torch.swapaxes(x, 0, 1).tolist() == torch.transpose(x, 0, 1).tolist()
    assert x.clip(1, 4).tolist() == x.clamp(1, 4).tolist()
    assert torch.special.erf(x).tolist() == torch.erf(x).tolist()
