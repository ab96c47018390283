"""The Position schemes page through app.py: what it draws equals the core's terms and weights,
for every scheme, a typed sentence, a causal mask, a long sequence and broken URL values."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from explorer.frame.params import ViewParams
from explorer.weights.example import derived_seed, example_inputs
from relpos_core.schemes import make_scheme
from relpos_core.schemes.catalogue import scheme_entry, scheme_label, scheme_names
from tests.app.conftest import assert_clean, chart_keys, chart_spec, open_page
from tests.app.panels import array_of, panel_positions, panel_z
from tests.schemes.expected import expected

CLOSE = {"rtol": 1e-4, "atol": 1e-4}
SENTENCE = "the quick brown fox jumps over the lazy dog again"


def markdown_table(at, first_column: str) -> dict[str, list]:
    """The page's markdown table whose first column is ``first_column``: column -> cells
    (escapes and bold removed); "bold" lists the rows drawn in bold."""
    for element in at.markdown:
        lines = element.value.splitlines()
        if lines and lines[0].startswith(f"| {first_column} |"):
            break
    else:
        raise AssertionError(f"no markdown table starting with {first_column!r}")

    def cells(line: str) -> list[str]:
        return [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]

    names = [re.sub(r"\\(.)", r"\1", c) for c in cells(lines[0])]
    rows = [cells(line) for line in lines[2:]]
    table = {
        name: [re.sub(r"\\(.)", r"\1", row[c]).strip("*") for row in rows]
        for c, name in enumerate(names)
    }
    table["bold"] = [r for r, row in enumerate(rows) if row[0].startswith("**")]
    return table


def defaults(params: ViewParams, name: str) -> dict[str, object]:
    """The scheme's settings as the page opens: each at its default, the sidebar's where the
    view supplies it (Shaw's clip distance is k)."""
    entry = scheme_entry(name)
    return {s.keyword: getattr(params, s.view) if s.view else s.default for s in entry.settings}


def core(params: ViewParams, name: str, **options):
    scheme = make_scheme(
        name, params.heads, params.head_dim, derived_seed(params.seed, "scheme:" + name),
        **{**defaults(params, name), **options},
    )  # fmt: skip
    inputs = example_inputs(params)
    if name == "shaw":  # Shaw's tables: the view's own, as every page draws them
        with torch.no_grad():
            scheme.table_k.copy_(inputs.table_k)
            scheme.table_v.copy_(inputs.table_v)
    return scheme, inputs


def position_term(params: ViewParams, name: str, **options) -> np.ndarray:
    scheme, inputs = core(params, name, **options)
    with torch.no_grad():
        return scheme.position_term(inputs.q, inputs.k, causal=params.causal)[0].numpy()


@pytest.mark.parametrize("name", scheme_names())
def test_every_scheme_draws_its_position_term(name: str) -> None:
    at = open_page("family", scheme=name)
    assert_clean(at)
    assert not at.warning, [w.value for w in at.warning]
    params = ViewParams()
    term = position_term(params, name)
    for h in range(params.heads):
        np.testing.assert_allclose(panel_z(at, "family_heads", h), term[h], **CLOSE)
    np.testing.assert_allclose(panel_z(at, "family_head"), term[0], **CLOSE)
    assert ("family_terms" in chart_keys(at)) == bool(scheme_entry(name).term_titles)
    table = markdown_table(at, "scheme")
    assert table["scheme"][:2] == ["Shaw", "Music Transformer"]
    by_scheme = dict(zip(table["scheme"], table["with content"], strict=True))
    assert set(table["position only"]) == {"yes"}  # every position-only part is Toeplitz
    invariant = {scheme_label(s): expected(s).SHIFT_INVARIANT_WITH_CONTENT for s in scheme_names()}
    assert by_scheme == {label: "yes" if yes else "no" for label, yes in invariant.items()}
    picked = scheme_names().index(name)
    assert table["bold"] == [picked]  # the picked scheme's row is in bold


def test_xl_four_terms_sum_to_the_logit() -> None:
    at = open_page("family", scheme="xl", family_head="1")
    assert_clean(at)
    params = ViewParams()
    scheme, inputs = core(params, "xl")
    with torch.no_grad():
        terms = scheme.terms(inputs.q, inputs.k)
    for t, term in enumerate(terms.values()):  # (a), (b), (c), (d) in paper order
        np.testing.assert_allclose(panel_z(at, "family_terms", t), term[0, 1], **CLOSE)
    total = sum(panel_z(at, "family_terms", t) for t in range(4))
    np.testing.assert_allclose(total, scheme.logits(inputs.q, inputs.k)[0, 1].detach(), **CLOSE)


def test_sentence_and_causal_mask() -> None:
    at = open_page("family", text=SENTENCE, mask="causal", scheme="rope")
    assert_clean(at)
    params = ViewParams(text=SENTENCE, mask="causal")
    term = position_term(params, "rope")
    z = panel_z(at, "family_heads", 1)
    upper = np.triu(np.ones((10, 10), bool), 1)
    assert np.isnan(z[upper]).all()  # masked cells blank
    np.testing.assert_allclose(z[~upper], term[1][~upper], **CLOSE)
    x_axis = chart_spec(at, "family_heads")["layout"]["xaxis"]
    assert list(x_axis["ticktext"]) == SENTENCE.split()
    # the profile: only j - i <= 0 exists under a causal mask
    profile = chart_spec(at, "family_profile")
    lines = [t for t in profile["data"] if t.get("legendgroup") and "band" not in t["name"]]
    assert len(lines) == len(scheme_names())
    for line in lines:
        x = array_of(line["x"])
        assert x.max() == 0 and x.min() == -9


def test_position_only_profile_of_alibi_is_its_linear_penalty() -> None:
    at = open_page("family", profile_part="position only", profile_norm="false")
    assert_clean(at)
    profile = chart_spec(at, "family_profile")
    (line,) = [t for t in profile["data"] if t.get("name") == "ALiBi"]
    x, y = array_of(line["x"]), array_of(line["y"])
    slopes = np.array([2.0**-4, 2.0**-8])  # 2 heads: m_h = 2^(-8h/2)
    np.testing.assert_allclose(y, -slopes.mean() * np.abs(x), rtol=1e-5, atol=1e-6)


def test_long_sequence_window_and_inset() -> None:
    at = open_page("family", n="1024", scheme="shaw", win="100", family_zoom="300")
    assert_clean(at)
    assert panel_positions(at, "family_heads", 0) == (512, 512)
    params = ViewParams(n=1024, win=100)
    term = position_term(params, "shaw")
    zoom = panel_z(at, "family_zoom_zoom")
    rows = slice(284, 316)  # 32 x 32 around query 300, inside the window 100..611
    np.testing.assert_allclose(zoom, term[0, rows, rows], **CLOSE)
    assert "the window of queries and keys 100-611" in " ".join(c.value for c in at.caption)


def test_bad_url_values_warn_and_the_page_works() -> None:
    at = open_page("family", scheme="nope", t5_buckets="abc", music_len="-3", rope_base="7")
    assert_clean(at)
    warnings = " ".join(w.value for w in at.warning).replace("\\", "")
    assert (
        f"URL parameter scheme: must be one of {', '.join(scheme_names())}, got 'nope'; using shaw"
    ) in warnings
    assert "t5_buckets: must be one of 8, 16, 32, 64, 128, got 'abc'; using 32" in warnings
    assert "music_len: must be an integer in [1, 4096], got '-3'; using 64" in warnings
    assert "rope_base: must be one of 100, 1000, 10000, 100000, 1000000, got '7'" in warnings
    assert {"family_heads", "family_profile"} <= chart_keys(at)


def test_t5_max_below_its_buckets_warns() -> None:
    at = open_page("family", scheme="t5", t5_buckets="64", t5_max="20")
    assert_clean(at)
    warnings = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "t5_max: must be an integer in [33, 8192], got '20'; using 128" in warnings


def test_settings_change_the_scheme_drawn() -> None:
    at = open_page("family", scheme="t5", t5_buckets="8", t5_max="16")
    assert_clean(at)
    term = position_term(ViewParams(), "t5", num_buckets=8, max_distance=16)
    np.testing.assert_allclose(panel_z(at, "family_heads", 0), term[0], **CLOSE)


def test_a_scheme_that_cannot_run_is_left_out_with_its_reason() -> None:
    # d_model 8 over 8 heads: head dim 1, odd, so RoPE's pairs do not exist
    at = open_page("family", d_model="8", heads="8", scheme="rope")
    assert_clean(at)
    warnings = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "RoPE (Su et al. 2021) cannot run on this view: head_dim (d) must be even" in warnings
    assert "family_heads" not in chart_keys(at)
    table = markdown_table(at, "scheme")
    assert table["scheme"] == [scheme_label(s) for s in scheme_names() if s != "rope"]
    assert table["bold"] == []  # the picked scheme is not in the table
    profile = chart_spec(at, "family_profile")
    names = {t.get("name") for t in profile["data"]}
    assert "RoPE" not in names and {"Shaw", "ALiBi"} <= names
    at = open_page("family", d_model="8", heads="8", scheme="t5")
    assert_clean(at)
    np.testing.assert_allclose(
        panel_z(at, "family_heads", 7),
        position_term(ViewParams(d_model=8, heads=8), "t5")[7],
        **CLOSE,
    )


def test_a_setting_whose_range_another_moved_past_its_default_opens_at_the_nearer_end() -> None:
    """DeBERTa's 256 buckets put max_relative_positions' low end at 130, above its default 128:
    the box opens at 130 and the scheme is drawn, no error box."""
    at = open_page("family", scheme="deberta", deberta_buckets="256")
    assert_clean(at)
    box = next(b for b in at.number_input if b.key == "deberta_max")
    assert box.value == 130 and box.min == 130
    assert "family_heads" in chart_keys(at)
