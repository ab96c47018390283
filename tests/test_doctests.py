"""Every docstring example in relpos_core runs and prints what it shows."""

import doctest
import importlib
import pkgutil

import pytest

import relpos_core
from relpos_core.schemes.folders import folders

MODULES = sorted(
    info.name for info in pkgutil.walk_packages(relpos_core.__path__, prefix="relpos_core.")
)
# The modules whose worked examples define the public behaviour; each must keep at least one.
MUST_HAVE_EXAMPLES = {
    "relpos_core.basics",
    "relpos_core.by_distance",
    "relpos_core.multihead",
    "relpos_core.validation",
    "relpos_core.encodings",
    "relpos_core.logits",
    "relpos_core.lookup",
    "relpos_core.masks",
    "relpos_core.memory",
    "relpos_core.skew",
    "relpos_core.values",
    "relpos_core.attention",
    "relpos_core.methods.choice",
    "relpos_core.clip",
    "relpos_core.ints",
    "relpos_core.methods.banded",
    "relpos_core.precision",
    "relpos_core.methods.regions",
    "relpos_core.schemes.alibi.maths",
    "relpos_core.schemes.alibi.by_distance",
    "relpos_core.schemes.profile",
    "relpos_core.schemes.xl.shift",
    "relpos_core.schemes.rope.maths",
    "relpos_core.schemes.rope.by_distance",
    "relpos_core.schemes.shaw.by_distance",
    "relpos_core.schemes.t5.maths",
    "relpos_core.schemes.t5.by_distance",
    "relpos_core.schemes.xl.maths",
    "relpos_core.mask_mods",
    "relpos_core.block_masks",
    "relpos_core.mods",
    "relpos_core.schemes.score_mods",
}
# Every module of the package outside the scheme folders: a module added or removed shows up here
# first. A scheme folder (relpos_core/schemes/<name>/) is checked by its parts instead.
EXPECTED_MODULES = {
    "relpos_core.admission",
    "relpos_core.by_distance",
    "relpos_core.basics",
    "relpos_core.multihead",
    "relpos_core.attention",
    "relpos_core.methods.banded",
    "relpos_core.methods.banded_attention",
    "relpos_core.methods.base",
    "relpos_core.methods.choice",
    "relpos_core.methods.definition",
    "relpos_core.methods.exact",
    "relpos_core.methods.kernels",
    "relpos_core.validation",
    "relpos_core.check",
    "relpos_core.check.kind",
    "relpos_core.check.verdict",
    "relpos_core.clip",
    "relpos_core.ints",
    "relpos_core.encodings",
    "relpos_core.methods.flex",
    "relpos_core.layer",
    "relpos_core.logits",
    "relpos_core.lookup",
    "relpos_core.guard",
    "relpos_core.masks",
    "relpos_core.mask_mods",
    "relpos_core.block_masks",
    "relpos_core.memory",
    "relpos_core.methods",
    "relpos_core.mods",
    "relpos_core.precision",
    "relpos_core.methods.regions",
    "relpos_core.skew",
    "relpos_core.trace",
    "relpos_core.methods.triton_attention",
    "relpos_core.methods.triton_kernels",
    "relpos_core.values",
    "relpos_core.schemes",
    "relpos_core.schemes.base",
    "relpos_core.schemes.build",
    "relpos_core.schemes.catalogue",
    "relpos_core.schemes.folders",
    "relpos_core.schemes.profile",
    "relpos_core.schemes.score_mods",
}

# Modules that import an optional package, and that package.
OPTIONAL = {"relpos_core.methods.triton_kernels": "triton"}


def count_examples(module) -> int:
    finder = doctest.DocTestFinder()
    return sum(len(test.examples) for test in finder.find(module))


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests_pass(name):
    if name in OPTIONAL:
        pytest.importorskip(OPTIONAL[name], reason=f"{name} needs {OPTIONAL[name]}, optional")
    module = importlib.import_module(name)
    examples = count_examples(module)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0
    assert result.attempted == examples
    if name in MUST_HAVE_EXAMPLES:
        assert result.attempted > 0, f"{name} lost its docstring examples"


def in_scheme_folder(name: str) -> bool:
    """Whether module ``name`` is a scheme folder or one of its modules."""
    return any(name == f or name.startswith(f + ".") for f in folders())


def test_core_modules_are_all_found():
    assert MUST_HAVE_EXAMPLES <= set(MODULES)
    assert {m for m in MODULES if not in_scheme_folder(m)} == EXPECTED_MODULES
    assert len(folders()) >= 6  # the six papers' schemes, each a folder
    for folder in folders():  # every scheme has its maths and its catalogue entry
        assert {f"{folder}.maths", f"{folder}.entry"} <= set(MODULES), folder
