"""A non-editable install (``pip install .``, a wheel) carries every package of the tree."""
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = (ROOT / "pyproject.toml").read_text()


def _list(key):
    """The list assigned to ``key`` in pyproject.toml (Python >= 3.10 has no tomllib)."""
    return ast.literal_eval(re.search(rf"^{key} = (\[.*?\])", PYPROJECT, re.M | re.S).group(1))


def test_every_package_folder_is_listed_in_pyproject():
    section = PYPROJECT.split("[tool.setuptools.package-dir]")[1].split("[")[0]
    folders = {k: ROOT / v for k, v in re.findall(r'^"([\w.]+)" = "(\w+)"', section, re.M)}
    assert set(folders) == {"gradexpr", "gradexpr.cli", "gradexpr.grammar"}
    found = set()
    for top, folder in folders.items():
        for init in folder.rglob("__init__.py"):
            relative = init.parent.relative_to(folder).parts
            found.add(".".join((top,) + relative))
    assert sorted(_list("packages")) == sorted(found)


def test_lark_is_not_a_runtime_dependency_and_nothing_installed_imports_it():
    assert not any(d.startswith("lark") for d in _list("dependencies"))
    for folder in ("gradexpr", "cli", "grammar"):
        for source in (ROOT / folder).rglob("*.py"):
            text = source.read_text(encoding="utf-8")
            assert "import lark" not in text and "from lark" not in text, source
