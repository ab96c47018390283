"""The README's table of schemes is the generated one, and what it computes is right."""

from __future__ import annotations

from pathlib import Path

import pytest

from relpos_core.schemes.catalogue import scheme_entries, scheme_entry
from relpos_lab import schemes_table
from tests.schemes.expected import expected

README = Path(__file__).resolve().parents[2] / "docs" / "library.md"


@pytest.fixture(scope="module")
def generated() -> str:
    return schemes_table.block()


def rows(table: str) -> dict[str, list[str]]:
    """Scheme name -> its cells, matched by the title each row starts with."""
    out = {}
    for line in table.splitlines():
        for entry in scheme_entries():
            if line.startswith(f"| **{entry.title}**"):
                out[entry.name] = [c.strip() for c in line.strip("|").split(" | ")]
    return out


def test_the_readme_holds_the_generated_table(generated: str) -> None:
    assert schemes_table.readme_block(README.read_text(encoding="utf-8")) == generated


def test_one_row_per_scheme_in_registry_order(generated: str) -> None:
    titles = [line.split("**")[1] for line in generated.splitlines() if line.startswith("| **")]
    assert titles == [entry.title for entry in scheme_entries()]


def test_shift_invariance_is_yes_exactly_for_biases_and_every_position_only_part(
    generated: str,
) -> None:
    for name, cells in rows(generated).items():
        term, only = cells[3].split("; ")
        invariant = expected(name).SHIFT_INVARIANT_WITH_CONTENT
        assert term.startswith("position term: yes" if invariant
                               else "position term: no ("), (name, term)  # fmt: skip
        assert only.startswith("position-only part: yes"), (name, only)


def test_parameter_counts_follow_the_papers_shapes(generated: str) -> None:
    h, d = 8, 64  # the table's view; each scheme at its catalogue defaults
    for name, cells in rows(generated).items():
        settings = {s.keyword: s.default for s in scheme_entry(name).settings}
        count = expected(name).learned_parameters(h, d, settings)
        assert cells[1].endswith(f"<br>{count:,} learned"), (name, cells[1])


def test_check_fails_on_a_drifted_readme_and_passes_on_the_real_one(tmp_path) -> None:
    assert schemes_table.main(["--check", str(README)]) == 0
    drifted = tmp_path / "README.md"
    drifted.write_text(README.read_text(encoding="utf-8").replace("2,176 learned", "2,000 learned"))
    assert schemes_table.main(["--check", str(drifted)]) == 1
    assert schemes_table.main(["--write", str(drifted)]) == 0
    assert schemes_table.main(["--check", str(drifted)]) == 0
    unmarked = tmp_path / "plain.md"
    unmarked.write_text("# no table\n")
    assert schemes_table.main(["--check", str(unmarked)]) == 1
