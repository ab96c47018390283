"""The catalogue of schemes: torch-free, true of the classes it names, the only place that
decides something per scheme, and closed to a name it does not hold."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from relpos_core.check import KINDS
from relpos_core.methods import METHOD_NAMES
from relpos_core.schemes import make_scheme, scheme_class
from relpos_core.schemes.catalogue import (
    SchemeEntry,
    Setting,
    registered,
    scheme_entries,
    scheme_entry,
    scheme_names,
)

ROOT = Path(__file__).resolve().parents[2]
ENTRIES = scheme_entries()


def test_the_catalogue_loads_no_torch() -> None:
    code = (
        "import sys; from relpos_core.schemes.catalogue import scheme_entries; "
        "from relpos_core.schemes import scheme_names; "
        "assert scheme_names() and scheme_entries()[0].logit_formula; "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_an_unknown_scheme_is_an_error_that_names_the_known_ones() -> None:
    known = ", ".join(scheme_names())
    with pytest.raises(ValueError, match=f"scheme must be one of {known}; got 'no_such'"):
        scheme_entry("no_such")
    with pytest.raises(ValueError, match="scheme must be one of .*; got 'nope'"):
        make_scheme("nope", 1, 4)


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_each_entry_names_its_class_and_builds_at_its_defaults(entry: SchemeEntry) -> None:
    cls = scheme_class(entry.name)
    assert cls.name == entry.name
    defaults = {s.keyword: s.default for s in entry.settings}
    scheme = make_scheme(entry.name, 2, 8, **defaults)
    takes_generator = "generator" in inspect.signature(cls).parameters
    assert takes_generator == entry.learned  # make_scheme passes one exactly when it draws
    assert scheme.name == entry.name
    assert set(dict(entry.model_params)) <= set(defaults)
    for setting in entry.controls:
        assert setting.check(setting.default, defaults) == setting.default


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.model], ids=lambda e: e.name)
def test_the_controls_default_to_what_the_trained_model_was_built_with(entry) -> None:
    """With trained weights the pages show each scheme at its defaults: they must be its model's."""
    built = dict(entry.model_params)
    for setting in entry.settings:
        if setting.keyword in built:
            assert setting.default == built[setting.keyword], setting.keyword


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_terms_say_whether_the_position_term_reads_the_query(entry: SchemeEntry) -> None:
    scheme = make_scheme(entry.name, 2, 8)
    gen = torch.Generator().manual_seed(0)
    q, k = (torch.randn(1, 2, 6, 8, generator=gen) for _ in range(2))
    with torch.no_grad():
        once, twice = (scheme.position_term(x, k) for x in (q, 3 * q))
    assert (not torch.allclose(once, twice)) == entry.reads_content


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_value_term_is_declared_where_the_output_has_one(entry: SchemeEntry) -> None:
    options = {"values": True} if "values" in {s.keyword for s in entry.settings} else {}
    scheme = make_scheme(entry.name, 2, 8, **options)
    weights = torch.softmax(torch.randn(1, 2, 5, 5), -1)
    extra = scheme.relative_values(weights, False, 0)
    assert (extra is not None) == ("value" in entry.terms)


def test_registration_refuses_a_taken_name_or_url_key_and_undoes_itself() -> None:
    shaw = scheme_entry("shaw")
    with pytest.raises(ValueError, match="holds a scheme 'shaw' already"):
        with registered(shaw):
            pass
    clash = Setting("base", "base", 1, url_key="rope_base", choices=(1,))
    twin = SchemeEntry(**{**vars(scheme_entry("rope")), "name": "rope2", "settings": (clash,)})
    with pytest.raises(ValueError, match="every control needs a URL key of its own"):
        with registered(twin):
            pass
    alone = SchemeEntry(**{**vars(twin), "settings": ()})
    with registered(alone):
        assert scheme_names()[-1] == "rope2"
        with pytest.raises(ValueError, match="class for 'rope2' is not a PositionScheme named so"):
            make_scheme("rope2", 1, 4)  # Rotary says it is "rope": the entry names the wrong one
    assert "rope2" not in scheme_names()


# A scheme's (or a checker kind's) name compared, tested for membership, or used as a dict key:
# a decision about it.
DECIDES = re.compile(
    r"""[=!]=\s*["'](?P<a>[\w-]+)["']|["'](?P<b>[\w-]+)["']\s+(not\s+)?in\b|^\s*["'](?P<c>[\w-]+)["']\s*:"""
)


def in_a_scheme_folder(path: Path) -> bool:
    """Whether ``path`` lies in one scheme's own folder (relpos_core/schemes/<name>/)."""
    schemes = ROOT / "relpos_core" / "schemes"
    return path.parent.parent == schemes and (path.parent / "__init__.py").exists()


def test_no_file_outside_a_scheme_folder_decides_something_per_scheme() -> None:
    # a kind's name that also names a method of computing the logits (the skew) is read as the
    # method where it is compared: budgets and views choose among methods, not kinds
    names = set(scheme_names()) | (set(KINDS) - set(METHOD_NAMES))
    found = []
    for folder in ("explorer", "pages", "relpos_lab", "relpos_core", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if in_a_scheme_folder(path):
                continue
            where = str(path.relative_to(ROOT))
            for number, line in enumerate(path.read_text().splitlines(), 1):
                code = line.split("#", 1)[0]
                for match in DECIDES.finditer(code):
                    if (match["a"] or match["b"] or match["c"]) in names:
                        found.append(f"{where}:{number}: {line.strip()}")
    assert not found, (
        "decide it in the scheme's folder, relpos_core/schemes/<name>/:\n" + "\n".join(found)
    )


def test_the_guard_sees_a_decision_where_one_is_made(tmp_path: Path) -> None:
    """The rule above finds each form of decision (and nothing in a plain call)."""
    lines = ['if kind == "alibi":', 'x = "rope" in names', '    "t5-bucket": 1,', 'f("shaw")']
    found = [m for line in lines for m in DECIDES.finditer(line)]
    assert [m["a"] or m["b"] or m["c"] for m in found] == ["alibi", "rope", "t5-bucket"]
    assert in_a_scheme_folder(ROOT / "relpos_core" / "schemes" / "t5" / "maths.py")
    assert not in_a_scheme_folder(ROOT / "relpos_core" / "schemes" / "catalogue.py")
