"""relpos_core is the maths only: it imports the standard library, torch and numpy, nothing of
the app or the experiments, and ships no data files."""

import ast
import sys
import tomllib
from pathlib import Path

import relpos_core

PACKAGE = Path(relpos_core.__file__).resolve().parent
ALLOWED_THIRD_PARTY = {"torch", "numpy"}


def imported_top_level_names(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_core_imports_only_stdlib_torch_numpy_and_itself():
    allowed = set(sys.stdlib_module_names) | ALLOWED_THIRD_PARTY | {"relpos_core", "__future__"}
    for path in sorted(PACKAGE.rglob("*.py")):
        outside = imported_top_level_names(path) - allowed
        assert not outside, f"{path.name} imports {sorted(outside)}"


def test_core_ships_python_files_only():
    others = [
        p.relative_to(PACKAGE)
        for p in PACKAGE.rglob("*")
        if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts
    ]
    assert others == []
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    listed = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"
    ]
    assert {f"relpos_core.{name}" for name in folders} | {"relpos_core"} == set(listed)
    assert folders == {"check", "schemes"}  # each subpackage is listed, or the wheel lacks it
