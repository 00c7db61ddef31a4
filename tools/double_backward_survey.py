"""Survey: the nodes and values of the 2nd and 3rd derivative of every op-table entry, against PyTorch.

For every differentiable entry, each sample call of the op-table tests (``tests/test_ops_table.py``
``CASES``, ``tests/late_op_cases.py`` and the entries' own ``samples``) becomes a .gx program that
computes ``y = call(*xs)``, ``g = grad(weighted sum of y, xs, create_graph=True)`` and
``h = grad(weighted sum of g, xs, create_graph=True)``, printing each gradient's ``grad_fn`` with its
``next_functions`` two levels down and its values. The programs are recorded with real PyTorch (the
oracle) and run with gradexpr; every entry whose output differs is listed.

    python tools/double_backward_survey.py OUT_DIR [--torch-python /tmp/torchref/bin/python]
                                                   [--oracle /work/shared/tools/torch-oracle] [-k NAME]

The calls are taken as source text from the test files (their ``ast``), so the programs run the
same code under both; calls that reach gradexpr's internals (``D.``, ``T.``, ``np.``) cannot run
under PyTorch and are skipped (and counted).
"""
from __future__ import annotations

import argparse
import json
import textwrap
import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
INTERNAL = re.compile(r"\b(D|T|np|surface|testing|_weight_norm_of|apply)\.|\b_weight_norm_of\b|\bapply\(")

PROBE = '''
torch.set_printoptions(precision=6)


def _names(fn, depth):
    """The node's name and, ``depth`` levels down, its next functions' names."""
    if fn is None:
        return "None"
    if depth == 0:
        return fn.name()
    return fn.name() + "(" + ", ".join(_names(n, depth - 1) for n, _ in fn.next_functions) + ")"


def _weighted(ts):
    """A weighted sum of the tensors and their squares (weights 1/n .. 1: no gradient is a plain sum's;
    the squares make the gradient reaching each op depend on the inputs, so that the backward of a
    linear op records its own node)."""
    total = 0
    for t in ts:
        w = (torch.arange(1, t.numel() + 1, dtype=t.dtype) / t.numel()).reshape(t.shape)
        total = total + (t * w + t * t * w / 2).sum()
    return total


def _floating(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if o.grad_fn is not None]


def survey(label, fn, xs):
    try:
        outs = _floating(fn(*xs))
        print(label, "y", [_names(o.grad_fn, 0) for o in outs])
        level = outs
        for order in ("g", "h", "t"):
            grads = torch.autograd.grad(_weighted(level), xs, create_graph=True, allow_unused=True)
            print(label, order, [None if g is None else _names(g.grad_fn, 2) for g in grads])
            print(label, order, "values", [None if g is None else g.detach() for g in grads])
            level = [g for g in grads if g is not None and g.requires_grad]
            if not level:
                break
    except Exception as e:
        # (the class's name from its repr: gradexpr's language has no dunder attributes)
        print(label, "error", str(type(e)).split("'")[1].split(".")[-1])
'''


def _segment(text, node):
    return ast.get_source_segment(text, node)


def _case_calls(path):
    """{entry: [(call source, shapes, domain)]} of every ``case(...)`` list of a dict literal in
    ``path`` (a later dict's entry replaces an earlier one, as ``CASES.update`` does)."""
    text = path.read_text(encoding="utf-8")
    found = {}
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values):
            if not (isinstance(key, ast.Constant) and isinstance(value, ast.List)):
                continue
            calls = []
            for item in value.elts:
                if isinstance(item, ast.Call) and getattr(item.func, "id", None) == "case":
                    keywords = {k.arg: ast.literal_eval(k.value) for k in item.keywords if k.arg == "domain"}
                    calls.append((_segment(text, item.args[0]), [ast.literal_eval(a) for a in item.args[1:]],
                                  keywords.get("domain")))
            if calls:
                found[key.value] = calls
    return found


def _helpers():
    """The constants and helper functions the calls use, as source text runnable under both."""
    parts = []
    text = (TESTS / "test_ops_table.py").read_text(encoding="utf-8")
    for node in ast.parse(text).body:
        src = _segment(text, node)
        if isinstance(node, ast.FunctionDef) and node.name.startswith("_") and not INTERNAL.search(src):
            parts.append(src)
        elif isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) and t.id.isupper() for t in node.targets) \
                and "tensor(" in src:
            parts.append(src)
    late = (TESTS / "late_op_cases.py").read_text(encoding="utf-8")
    function = next(n for n in ast.parse(late).body if isinstance(n, ast.FunctionDef))
    for node in function.body:
        if not isinstance(node, (ast.Return, ast.ImportFrom)):
            parts.append(textwrap.dedent(_segment(late, node)))
    return "tensor = torch.tensor\n\n" + "\n\n".join(parts) + "\n"


# how each variant of an entry is called, as ``test_ops_table._sample_cases`` calls it
_VARIANT_CALLS = (("function", "torch.{}"), ("method", "lambda x, *xs: x.{}(*xs)"),
                  ("inplace", "lambda x, *xs: (x * 1).{}_(*xs)"), ("F", "F.{}"), ("linalg", "torch.linalg.{}"),
                  ("special", "torch.special.{}"))


def _sample_calls(entry):
    """The entry's own samples through its public names."""
    from gradexpr import surface
    calls = []
    for public in sorted({line.partition("(")[0].split(".")[0] for line in entry.schema}):
        for variant, call in _VARIANT_CALLS:
            if variant in entry.variants:
                calls.append(call.format(surface.linalg_name(public) if variant == "linalg" else public))
    return [(call, list(shapes), None) for shapes in entry.samples for call in calls]


def programs(only=()):
    """{entry: .gx source} and the number of calls skipped as internal."""
    from gradexpr import ops as D, testing
    D.load_all()
    D.load_late_families()
    calls = _case_calls(TESTS / "test_ops_table.py")
    calls.update(_case_calls(TESTS / "late_op_cases.py"))
    helpers = _helpers()
    out, skipped = {}, 0
    for name, entry in sorted(D.TABLE.items()):
        if not entry.differentiable or (only and name not in only):
            continue
        lines = []
        for k, (call, shapes, domain) in enumerate(calls.get(name, []) + _sample_calls(entry)):
            if INTERNAL.search(call):
                skipped += 1
                continue
            rng = np.random.default_rng(k)
            xs = [testing.sample(domain or entry.domain, s, rng)._data.tolist() for s in shapes]
            args = ", ".join(f"torch.tensor({x!r}, dtype=torch.float64, requires_grad=True)" for x in xs)
            lines.append(f"survey({name + '/' + str(k)!r}, {call}, [{args}])")
        if lines:
            out[name] = f"# survey of {name}: 2nd and 3rd derivatives' nodes and values\n" + PROBE + helpers + \
                "\n".join(lines) + "\n"
    return out, skipped


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--torch-python", default="/tmp/torchref/bin/python")
    parser.add_argument("--oracle", default="/work/shared/tools/torch-oracle")
    parser.add_argument("-k", action="append", default=[], help="only these entries (repeatable)")
    parser.add_argument("--no-record", action="store_true", help="keep the recorded .gx.out files")
    args = parser.parse_args(argv)
    sources, skipped = programs(set(args.k))
    args.out.mkdir(parents=True, exist_ok=True)
    for stale in args.out.glob("*.gx"):         # (a program of an earlier run would be checked too)
        stale.unlink()
    for name, src in sources.items():
        (args.out / f"{name}.gx").write_text(src, encoding="utf-8")
    env = dict(os.environ, MKL_ENABLE_INSTRUCTIONS="SSE4_2", ATEN_CPU_CAPABILITY="avx2")
    if not args.no_record:
        subprocess.run([args.torch_python, args.oracle, "--fast", str(args.out)], env=env,
                       stdout=subprocess.DEVNULL)
    gradexpr = [sys.executable, "-m", "gradexpr", "check", "--json", "-j", "2", str(args.out)]
    result = subprocess.run(gradexpr, env=env, capture_output=True, text=True)
    differing = {}
    for line in result.stdout.splitlines():
        if line.startswith("{"):
            report = json.loads(line)
            if report.get("result") != "pass":
                differing[Path(report["file"]).name.removesuffix(".gx")] = _kinds(report)
    print(f"{len(sources)} entries surveyed ({skipped} internal calls skipped); {len(differing)} differ:")
    for name, kinds in sorted(differing.items()):
        print(f"  {name}: {', '.join(kinds)}")


def _kinds(report):
    """What differs in a failed program: node names, values, errors (or the problems it reports)."""
    kinds = set()
    for line in (report.get("diff") or "").splitlines():
        if line[:1] not in "+-" or line[:3] in ("---", "+++"):
            continue
        if " error " in line:
            kinds.add("error")
        elif re.match(r"[-+]\S+ [ygth] \[", line):
            kinds.add("names")
        else:
            kinds.add("values")
    return sorted(kinds) or report.get("problems", ["?"])

if __name__ == "__main__":
    main()
