"""The op families load on first use (start-up imports only those every program needs), guided by
gradexpr/ops/_catalogue.py; the table still reads as complete, in its order, to every reader."""
import subprocess
import sys

from tools import gen_op_catalogue


def _fresh(code):
    """What ``code`` prints in a new interpreter (the families' loading is per process)."""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def test_the_committed_catalogue_is_what_the_families_give_now():
    with open(gen_op_catalogue.CATALOGUE_PATH, encoding="utf-8") as f:
        committed = f.read()
    assert committed == gen_op_catalogue.fresh_text(), f"stale op catalogue: run {gen_op_catalogue.COMMAND}"


def test_importing_the_table_imports_only_the_families_every_program_uses():
    out = _fresh("import sys, gradexpr.functions, gradexpr.api; from gradexpr.ops import registry; "
                 "print(sorted(f for f in registry.LAZY_FAMILIES if 'gradexpr.ops.' + f in sys.modules))")
    assert out == "[]"


def test_an_entry_loads_its_family_and_the_table_keeps_its_order():
    out = _fresh("import sys; from gradexpr import ops; from gradexpr.ops import _catalogue as c; "
                 "e = ops.TABLE['sum_dim']; print(e.name, 'gradexpr.ops.reductions' in sys.modules, "
                 "'gradexpr.ops.nn_layers' in sys.modules); print(list(ops.TABLE) == list(c.ORDER))")
    assert out.splitlines() == ["sum_dim True False", "True"]


def test_a_package_attribute_loads_its_family():
    out = _fresh("import sys; from gradexpr import ops; print('gradexpr.ops.linalg' in sys.modules, ops.mm.node, "
                 "'gradexpr.ops.linalg' in sys.modules)")
    assert out == "False MmBackward0 True"


def test_a_stale_catalogue_is_slower_never_wrong():
    # an entry the catalogue does not know (added without regenerating) is still found: the
    # lookup imports every family
    out = _fresh("from gradexpr.ops import _catalogue as c; c.ENTRY_FAMILY.clear(); "
                 "from gradexpr import ops; print(ops.TABLE['cumsum'].node, 'cumsum' in ops.TABLE, "
                 "'no_such_op' in ops.TABLE)")
    assert out == "CumsumBackward0 True False"


def test_a_name_bound_from_a_lazy_family_works_in_a_program(tmp_path):
    prog = tmp_path / "p.gx"
    prog.write_text("x = torch.ones(2, 3, requires_grad=True)\ny = x.sum(1).prod()\ny.backward()\n"
                    "print(y, x.grad)\nprint(torch.linalg.det(torch.eye(2)), torch.mm(x, x.t()).shape)\n")
    p = subprocess.run([sys.executable, "-m", "gradexpr", "run", str(prog)], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout == ("tensor(9., grad_fn=<ProdBackward0>) tensor([[3., 3., 3.],\n        [3., 3., 3.]])\n"
                        "tensor(1.) torch.Size([2, 2])\n")
