"""torch.nn, torch.optim and torch.utils.data load only in programs that use them (start-up stays lean)."""
import subprocess
import sys

_LIST = """
import io, sys
from gradexpr.cli.main import main
out, sys.stdout = sys.stdout, io.StringIO()
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stdout = out
print(sorted(m for m in sys.modules if m.split('.')[:2] in (['gradexpr', 'nn'], ['gradexpr', 'optim'],
                                                            ['gradexpr', 'data'])))
"""


def _loaded(*args):
    p = subprocess.run([sys.executable, "-c", _LIST, *args], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip().splitlines()[-1]


def test_eval_loads_none_of_the_library_packages():
    assert _loaded("eval", "(x * 2).sum()", "-v", "x=ones(2)", "--json") == "[]"


def test_a_program_using_nn_loads_nn_only(tmp_path):
    prog = tmp_path / "p.gx"
    prog.write_text("import torch.nn as nn\nprint(nn.ReLU())\n")
    loaded = _loaded("run", str(prog))
    assert "'gradexpr.nn'" in loaded and "gradexpr.optim" not in loaded and "gradexpr.data" not in loaded
