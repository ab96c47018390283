"""relpos_core is the maths only: it imports the standard library, torch and numpy, nothing of
the app or the experiments, and ships no data files. One optional import: the Triton kernels'
module imports triton, and only runs once ``triton_attention`` has found it installed (the core
without triton: ``test_triton_kernel.py``)."""

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import setuptools

import relpos_core

PACKAGE = Path(relpos_core.__file__).resolve().parent
ALLOWED_THIRD_PARTY = {"torch", "numpy"}
OPTIONAL = {"triton_kernels.py": {"triton"}}  # module name -> what it alone may import


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
        outside = imported_top_level_names(path) - allowed - OPTIONAL.get(path.name, set())
        assert not outside, f"{path.name} imports {sorted(outside)}"


def test_core_ships_python_files_only():
    others = [
        p.relative_to(PACKAGE)
        for p in PACKAGE.rglob("*")
        if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts
    ]
    assert others == []
    folders = {p.parent for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}
    assert all((folder / "__init__.py").is_file() for folder in folders)  # each a package
    packages = {".".join(f.relative_to(PACKAGE.parent).parts) for f in folders}
    find = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"
    ]["find"]
    shipped = set(setuptools.find_packages(str(PACKAGE.parent), include=find["include"]))
    assert shipped == packages  # every folder of the core (each scheme's too) is in the wheel
    assert {"relpos_core.check", "relpos_core.schemes", "relpos_core.schemes.shaw"} <= shipped


def test_every_public_name_is_what_it_names_after_every_module_is_imported():
    """A lazily loaded name is not shadowed by a submodule of the same name: importing
    ``relpos_core.schemes.X`` binds X on the package, and a function X would then read as the
    module (as ``rel_shift`` once did, when its module bore its name)."""
    code = (
        "import importlib, pkgutil, types, relpos_core, relpos_core.schemes, relpos_core.check\n"
        "for package in (relpos_core, relpos_core.schemes, relpos_core.check):\n"
        "    for info in pkgutil.iter_modules(package.__path__):\n"
        "        importlib.import_module(f'{package.__name__}.{info.name}')\n"
        "bad = [f'{p.__name__}.{n}' for p in (relpos_core, relpos_core.schemes)\n"
        "       for n in p.__all__ if isinstance(getattr(p, n), types.ModuleType)]\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
