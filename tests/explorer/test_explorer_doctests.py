"""Every docstring example in explorer runs and prints what it shows."""

import doctest
import importlib
import pkgutil

import pytest

import explorer

MODULES = sorted(info.name for info in pkgutil.walk_packages(explorer.__path__, prefix="explorer."))


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests_pass(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0


def test_the_worked_examples_are_found():
    finder = doctest.DocTestFinder()
    found = {
        name
        for name in MODULES
        if any(test.examples for test in finder.find(importlib.import_module(name)))
    }
    assert {
        "explorer.frame.params",
        "explorer.frame.budget",
        "explorer.figures.tables",
        "explorer.frame.navigation",
    } <= found
