"""Imports of SPEC 1's modules and what stays refused (SPEC 3), through ``gradexpr run``.

What the modules compute is held against CPython/NumPy/PyTorch output recorded by the oracle
(``tests/programs/modules``); here: the refusals as located errors, the limits inside module
functions, warnings on stderr (never stdout), and that nothing of a module is loaded before a
program imports it."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from test_bad_input import assert_fails, gx

NO_ACCESS = "gradexpr allows no file, process or network access"


@pytest.mark.parametrize("module", ["os", "sys", "subprocess", "socket", "pathlib", "shutil", "pickle", "io",
                                    "builtins", "importlib", "ctypes", "inspect", "gc"])
def test_modules_outside_the_list_are_located_import_errors(module):
    assert_fails(gx(f"x = 1\nimport {module}\n"), 1, "ImportError", 2, 8,
                 f"import of '{module}' is not allowed: {NO_ACCESS}")
    if module != "builtins":     # 'from builtins import' names the prelude's builtins (a syntax check)
        assert_fails(gx(f"from {module} import x\n"), 1, "ImportError", 1, 1, f"import of '{module}' is not allowed")
    assert_fails(gx(f"import math, {module}.x as y\n"), 1, "ImportError", 1, 14, "is not allowed")


def test_unknown_modules_and_names():
    assert_fails(gx("import nosuch\n"), 1, "ModuleNotFoundError", 1, 8, "No module named 'nosuch'")
    assert_fails(gx("import math.nosuch\n"), 1, "ModuleNotFoundError", 1, 8,
                 "No module named 'math.nosuch'; 'math' is not a package")
    assert_fails(gx("import numpy.nosuch\n"), 1, "ModuleNotFoundError", 1, 8, "No module named 'numpy.nosuch'")
    assert_fails(gx("from math import nosuch\n"), 1, "ImportError", 1, 18, "cannot import name 'nosuch' from 'math'")
    assert_fails(gx("import math\nmath.nosuch\n"), 1, "AttributeError", 2, 1, "module 'math' has no attribute 'nosuch'")


def test_a_program_catches_an_import_error_by_type():
    r = gx("try:\n    import os\nexcept ImportError as e:\n    print('refused')\n")
    assert r.exit_code == 0 and r.stdout == "refused\n"


@pytest.mark.parametrize("src, kind, message", [
    ("import warnings\nwarnings.sys\n", "AttributeError", "access to 'warnings.sys' is not allowed"),
    ("import typing\ntyping.sys\n", "AttributeError", "access to 'typing.sys' is not allowed"),
    ("import random\nrandom._os\n", "AttributeError", "access to '_os' is not allowed"),
    ("import random\nrandom.SystemRandom\n", "AttributeError", "access to 'random.SystemRandom' is not allowed"),
    ("import dataclasses\ndataclasses.sys\n", "AttributeError", "access to 'dataclasses.sys' is not allowed"),
    ("import functools\nfunctools.RLock\n", "AttributeError", "access to 'functools.RLock' is not allowed"),
    ("import math\nmath.__loader__\n", "AttributeError", "access to '__loader__' is not allowed"),
    ("import time\ntime.sleep(10**6)\n", "LimitError", "the running time (seconds)"),
    ("import numpy as np\nnp.ctypeslib\n", "AttributeError", "'numpy.ctypeslib' is not available in gradexpr"),
    ("import numpy as np\nnp.load('x.npy')\n", "AttributeError", f"'numpy.load' is not available in gradexpr: it "
                                                                  f"reads or writes files, and {NO_ACCESS}"),
    ("import numpy as np\nnp.save('x', np.ones(2))\n", "AttributeError", "'numpy.save' is not available"),
    ("from numpy import fromfile\n", "ImportError", "cannot import name 'fromfile' from 'numpy'"),
    ("import numpy as np\nnp.memmap\n", "AttributeError", "'numpy.memmap' is not available"),
    ("import numpy as np\nnp.loadtxt\n", "AttributeError", "'numpy.loadtxt' is not available"),
    ("import numpy as np\nnp.savetxt\n", "AttributeError", "'numpy.savetxt' is not available"),
    ("import numpy as np\nnp.genfromtxt\n", "AttributeError", "'numpy.genfromtxt' is not available"),
    ("import numpy as np\nnp.lib\n", "AttributeError", "'numpy.lib' is not available"),
    ("import numpy as np\nnp.ones(2).tofile('f')\n", "AttributeError", "access to 'ndarray.tofile' is not allowed"),
    ("import numpy as np\nnp.ones(2).dump('f')\n", "AttributeError", "access to 'ndarray.dump' is not allowed"),
    ("import numpy as np\nnp.ones(2).ctypes\n", "AttributeError", "access to 'ndarray.ctypes' is not allowed"),
    ("import numpy as np\nnp.ones(2).data\n", "AttributeError", "access to 'ndarray.data' is not allowed"),
    ("import numpy as np\nnp.array([1], dtype='O')\n", "TypeError", "object arrays are not available"),
    ("import numpy as np\nnp.random.mtrand\n", "AttributeError", "access to 'numpy.random.mtrand' is not allowed"),
    ("import numpy\nsetattr(numpy, 'pi', 3)\n", None, None),
])
def test_what_a_module_carries_besides_its_api_stays_out_of_reach(src, kind, message):
    r = gx(src)
    assert r.exit_code == 1, (r.stdout, r.stderr)
    if kind is not None:
        assert_fails(r, 1, kind, 2 if src.count("\n") > 1 else 1, 1 if kind != "ImportError" else 19, message)


def test_modules_are_read_only():
    assert_fails(gx("import math\nmath.pi = 3\n"), 1, "AttributeError", 2, 1)
    assert gx("import math\nprint(math.pi)\n").stdout == "3.141592653589793\n"


@pytest.mark.parametrize("src, what", [
    ("import itertools\nx = list(itertools.count())\n", "the number of loop iterations"),
    ("import itertools\nx = sum(itertools.repeat(1))\n", "the number of loop iterations"),
    ("import itertools\nx = list(itertools.product(range(10**9)))\n", "a list of 1,000,000,000 items"),
    ("import collections\nx = collections.deque(range(10**9))\n", "a list of 1,000,000,000 items"),
    ("import collections\nx = collections.Counter(range(10**9))\n", "a list of 1,000,000,000 items"),
    ("import functools\nx = functools.reduce(max, range(10**9))\n", "the number of loop iterations"),
    ("import math\nx = math.factorial(10**6)\n", "an integer of about 5,565,708 digits"),
    ("import math\nx = math.comb(10**7, 5 * 10**6)\n", "digits exceeds"),
    ("import math\nx = math.prod(range(1, 10**9))\n", "the number of loop iterations"),
    ("import random\nx = random.choices([1], k=10**9)\n", "a list of 1,000,000,000 items"),
    ("import random\nx = random.getrandbits(10**8)\n", "digits exceeds"),
    ("import numpy as np\nx = np.ones(10**9)\n", "a tensor of 1,000,000,000 elements"),
    ("import numpy as np\nx = np.zeros((10**5, 10**5))\n", "a tensor of 10,000,000,000 elements"),
    ("import numpy as np\nx = np.arange(10**10)\n", "a tensor of 10,000,000,000 elements"),
    ("import numpy as np\nx = np.random.randn(10**5, 10**5)\n", "a tensor of 10,000,000,000 elements"),
    ("import numpy as np\nx = np.random.default_rng(0).normal(size=10**10)\n", "a tensor of 10,000,000,000"),
    ("import numpy as np\nx = np.repeat(np.ones(10), 10**9)\n", "a tensor of 10,000,000,000 elements"),
])
def test_module_functions_stay_within_the_limits(src, what):
    r = gx(src)
    col = 10 if "product" in src else 5      # the innermost call that would have run past the limit
    assert_fails(r, 1, "LimitError", 2, col)
    assert what in r.stderr


# ------------------------------------------------------------------ warnings

def _run(tmp_path, source):
    prog = tmp_path / "prog.gx"
    prog.write_text(textwrap.dedent(source))
    return subprocess.run([str(Path(sys.executable).parent / "gradexpr"), "run", str(prog)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path), prog


NON_LEAF = ("UserWarning: The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
            "attribute won't be populated during autograd.backward().")


def test_pytorch_warnings_go_to_stderr_once_per_place_never_to_stdout(tmp_path):
    p, prog = _run(tmp_path, """\
        x = torch.ones(2, requires_grad=True)
        y = x * 2
        for i in range(3):
            print(y.grad)
        print(y.grad)
        y.retain_grad()
        print(y.grad, x.grad)
        """)
    assert p.returncode == 0 and p.stdout == "None\nNone\nNone\nNone\nNone None\n"
    lines = p.stderr.splitlines()
    assert lines[0].startswith(f"{prog}:4: {NON_LEAF}") and lines[1] == "  print(y.grad)"
    assert lines[2].startswith(f"{prog}:5: {NON_LEAF}") and lines[3] == "  print(y.grad)"
    assert len(lines) == 4 and "(Triggered internally at " in lines[0]


def test_program_warnings_and_filters(tmp_path):
    p, prog = _run(tmp_path, """\
        import warnings
        warnings.warn("first")
        for i in range(2):
            warnings.warn("in a loop")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warnings.warn("recorded")
            warnings.warn("recorded")
        print(len(caught), caught[0].message, caught[0].category, caught[0].lineno)
        warnings.warn("after")
        warnings.filterwarnings("ignore", message="sil")
        warnings.warn("silenced")
        warnings.warn("shown")
        warnings.filterwarnings("ignore")
        x = torch.ones(1, requires_grad=True) * 2
        print(x.grad)
        warnings.warn("hidden")
        """)
    assert p.returncode == 0 and p.stdout == "2 recorded <class 'UserWarning'> 7\nNone\n"
    assert p.stderr.splitlines() == [
        f"{prog}:2: UserWarning: first", '  warnings.warn("first")',
        f"{prog}:4: UserWarning: in a loop", '      warnings.warn("in a loop")'.strip().join(["  ", ""]),
        f"{prog}:10: UserWarning: after", '  warnings.warn("after")',
        f"{prog}:13: UserWarning: shown", '  warnings.warn("shown")']


def test_warnings_filters_belong_to_one_program(tmp_path):
    from gradexpr.cli.runner import execute
    import io
    import contextlib
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        execute("import warnings\nwarnings.simplefilter('ignore')\nwarnings.warn('a')\n", "one.gx", out=io.StringIO())
        execute("import warnings\nwarnings.warn('b')\n", "two.gx", out=io.StringIO())
    assert err.getvalue() == "two.gx:2: UserWarning: b\n  warnings.warn('b')\n"


def test_a_warning_as_error_is_a_located_error():
    assert_fails(gx("import warnings\nwarnings.simplefilter('error')\nwarnings.warn('boom')\n"), 1, "UserWarning", 3, 1,
                 "boom")


# ------------------------------------------------------------------ start-up

def test_no_module_namespace_is_built_before_a_program_imports_it():
    code = ("import sys\nfrom gradexpr.cli.runner import execute\nimport io\n"
            "execute('x = 1\\n', 'p.gx', out=io.StringIO())\n"
            "print(sorted(m for m in sys.modules if 'grammar.modules.' in m))\n"
            "execute('import math\\n', 'p.gx', out=io.StringIO())\n"
            "print(sorted(m for m in sys.modules if 'grammar.modules.' in m))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    before, after = p.stdout.splitlines()
    assert "stdlib" not in before and "numpy_module" not in before and "pyrandom" not in before
    assert "gradexpr.grammar.modules.stdlib" in after and "numpy_module" not in after


def test_settings_a_program_changes_are_given_back_when_it_ends():
    import io
    from gradexpr.cli.runner import execute
    out = io.StringIO()
    first = execute("import numpy as np\nnp.set_printoptions(precision=2)\nprint(np.array([1.23456]))\n"
                    "torch.set_default_device('cuda')\nx = torch.ones(2)\n", "one.gx", out=out)
    assert first.code == 1 and str(first.error) == "Torch not compiled with CUDA enabled"
    second = execute("import numpy as np\nprint(np.array([1.23456]), torch.ones(1), torch.get_default_device())\n",
                     "two.gx", out=out)
    assert second.code == 0 and out.getvalue() == "[1.23]\n[1.23456] tensor([1.]) cpu\n"
