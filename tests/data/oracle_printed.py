"""Run generated .gx programs with the PyTorch oracle and read what they printed: each line
``KEY VALUE``, VALUE a Python literal (stdlib only; shared by the make_eval_*_cases.py scripts)."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ORACLE = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "tools", "torch-oracle"))


def printed(python: str, programs: dict) -> dict:
    """program id -> {KEY: value} of the lines it printed; exits on a program's error."""
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in programs.items():
            with open(os.path.join(tmp, name + ".gx"), "w") as f:
                f.write(text)
        shown = subprocess.run([python, ORACLE, "--print", "--fast", tmp], capture_output=True, text=True,
                               check=True).stdout
    results, current = {}, None
    for line in shown.splitlines():
        if line.startswith("==> "):
            current = results.setdefault(os.path.basename(line[4:])[:-3], {})
        elif line.startswith("[error]"):
            sys.exit(f"{current}: {line}")
        else:
            key, _, rest = line.partition(" ")
            current[key] = ast.literal_eval(rest)
    return results
