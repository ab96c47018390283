"""The checker's deberta kind: each right implementation is equal, each wrong one differs with its
bug named (by the library and by the command), each bug is told apart from the definition and
the others, and the definition is transformers' DeBERTa-v2 disentangled_attention_bias on the
same inputs, and a cell worked by hand."""

from __future__ import annotations

import dataclasses
import itertools
import math
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from relpos_core.check import CANNOT, DIFFERS, EQUAL, KINDS, check_implementation
from relpos_core.check.verdict import check
from relpos_core.schemes.deberta import log_bucket as library_bucket
from relpos_core.schemes.deberta import relative_rows
from relpos_core.schemes.deberta.reference import (
    DEBERTA,
    PAGE_BUCKETS,
    PAGE_MAX,
    cases,
    log_bucket,
    page_rows_words,
    rows,
    terms,
)
from tests.check.examples import deberta as examples

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "tests" / "check" / "examples" / "deberta.py"
RIGHT = ["right_transformers", "right_numpy_loops"]
BUGS = {
    "wrong_j_minus_i": "the relative position's sign is flipped (Shaw's j - i read instead of "
    "i - j)",
    "wrong_p2c_flipped": "the position-to-content row alone is flipped (p2c reads bucket(j - i) "
    "+ span)",
    "wrong_scale_sqrt_d": "divided by √d instead of √(3d)",
    "wrong_scale_sqrt_2d": "divided by √(2d) instead of √(3d)",
    "wrong_log_from_length": "the log buckets are built from the sequence length instead of "
    "max_position (log((n - 1)/mid))",
    "wrong_no_clamp": "the rows are not clamped to the table's ends (a row past either end wraps "
    "around)",
}


def library_terms(q, k, pos_key, pos_query, buckets, max_position):
    """The scheme's own rows c(i, j) (relpos_core's relative_rows), gathered."""
    n, d = q.shape[2], q.shape[3]
    c = relative_rows(n, n, 0, buckets, max_position)  # (i, j)
    c2p = torch.einsum("bhid,hijd->bhij", q, pos_key[:, c])
    p2c = torch.einsum("bhjd,hijd->bhij", k, pos_query[:, c])
    return (c2p + p2c) / math.sqrt(3 * d)


# ---- verdicts ----------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [*(getattr(examples, n) for n in RIGHT), library_terms])
def test_right_implementations_are_equal(fn) -> None:
    verdict = check_implementation("deberta", fn)
    assert verdict.status == EQUAL and verdict.text == "equal" and verdict.exit_code == 0


@pytest.mark.parametrize(("name", "bug"), BUGS.items())
def test_each_wrong_implementation_is_named(name: str, bug: str) -> None:
    verdict = check_implementation("deberta", getattr(examples, name))
    assert verdict.status == DIFFERS and verdict.exit_code == 1, verdict.text
    assert verdict.bug == bug, verdict.text
    assert verdict.text.endswith(f"it matches a known bug: {bug}")
    assert verdict.differing is not None and verdict.differing.any()


def test_every_known_bug_has_an_example() -> None:
    assert set(BUGS.values()) == set(DEBERTA.bugs)


@pytest.mark.parametrize("name", [*RIGHT, *BUGS])
def test_the_command_gives_each_example_its_verdict(name: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "relpos_lab.check", "deberta", f"{EXAMPLES}:{name}"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    if name in RIGHT:
        assert (out.returncode, out.stdout) == (0, "deberta: equal\n"), out.stderr
    else:
        assert out.returncode == 1, out.stdout + out.stderr
        assert out.stdout.startswith("deberta: differs at ")
        assert out.stdout.rstrip().endswith(f"it matches a known bug: {BUGS[name]}")


def outputs(case) -> dict[str, np.ndarray]:
    x = DEBERTA.inputs(case)
    found = {"the definition": DEBERTA.references(case, x)["the definition"]}
    return found | {bug: np.asarray(wrong(case, x)) for bug, wrong in DEBERTA.bugs.items()}


def test_each_bug_is_told_apart_from_the_definition_and_every_other_bug() -> None:
    every = [outputs(case) for case in cases()]
    for a, b in itertools.combinations(every[0], 2):
        assert any(not np.allclose(found[a], found[b]) for found in every), (a, b)


def test_a_wrong_definition_would_fail_the_right_example() -> None:
    for bug, wrong in DEBERTA.bugs.items():
        mistaken = dataclasses.replace(DEBERTA, references=lambda c, x, w=wrong: {"wrong": w(c, x)})
        assert check(mistaken, examples.right_transformers).status == DIFFERS, bug


def test_the_cases_reach_past_the_span_with_buckets_on_and_off() -> None:
    """The clamp matters (a row past the table without it) with and without buckets; several
    heads and d > 1 throughout but the first."""
    reach = {"with buckets": False, "without": False}
    for case in cases()[1:]:
        n, buckets, top = int(case["n"]), int(case["buckets"]), int(case["max_position"])
        span = buckets or top
        wraps = rows(n, buckets, top, clamped=False)
        past = not np.array_equal(wraps, rows(n, buckets, top))
        reach["with buckets" if buckets else "without"] |= past
        assert int(case["heads"]) > 1 and int(case["d"]) > 1 and n != top and span > 0
    assert all(reach.values()), reach


def test_broken_functions_get_words_not_tracebacks() -> None:
    raised = check_implementation("deberta", lambda q, k, pk, pq, b, m: pk[:, q.shape[2] * 9])
    assert raised.status == CANNOT and raised.exit_code == 2
    assert raised.text.startswith(
        "cannot be called at n = 1, heads = 1, d = 2, buckets = 0, max_position = 2: it raised "
        "IndexError"
    )
    shape = check_implementation("deberta", lambda q, *args: q)
    assert shape.text.endswith("it returned shape (2, 1, 1, 2), the definition's is (2, 1, 1, 1)")


def test_an_output_computed_in_float32_is_compared_within_float32_rounding() -> None:
    def in_float32(fn):
        return lambda q, k, pk, pq, b, m: fn(q.float(), k.float(), pk.float(), pq.float(), b, m)

    assert check_implementation("deberta", in_float32(examples.right_transformers)).ok
    wrong = check_implementation("deberta", in_float32(examples.wrong_no_clamp))
    assert wrong.bug == BUGS["wrong_no_clamp"]


# ---- the definition --------------------------------------------------------------------------


def test_one_cell_worked_by_hand() -> None:
    """No buckets, max_position 1: span 1, rows c(i, j) = clamp(i - j + 1, 0, 1), so (0, 0) and
    (1, 0) read row 1 ((1, 0) clamped from 2) and (0, 1) row 0. d = 3, q_i = k_j = (1, 1, 1)·
    (i + 1); pos_key rows (1, 0, 0) and (0, 2, 0), pos_query rows (0, 0, 3) and (5, 0, 0):
    cell (1, 0) = (q_1·P^K_1 + k_0·P^Q_1) / 3 = (2·2 + 1·5) / 3 = 3, cell (0, 1) = (q_0·P^K_0 +
    k_1·P^Q_0) / 3 = (1 + 2·3) / 3 = 7/3."""
    q = torch.tensor([1.0, 2.0], dtype=torch.float64)[None, None, :, None].expand(1, 1, 2, 3)
    x = {
        "q": q, "k": q.clone(),
        "pos_key": torch.tensor([[[1.0, 0, 0], [0, 2.0, 0]]], dtype=torch.float64),
        "pos_query": torch.tensor([[[0, 0, 3.0], [5.0, 0, 0]]], dtype=torch.float64),
    }  # fmt: skip
    out = terms({"buckets": 0, "max_position": 1}, x)[0, 0]
    assert out[1, 0] == pytest.approx(3.0) and out[0, 1] == pytest.approx(7 / 3)
    assert out[0, 0] == pytest.approx((2 + 5) / 3) and out[1, 1] == pytest.approx((4 + 10) / 3)


@pytest.fixture(scope="module")
def deberta_v2():
    """transformers' DeBERTa-v2 module, imported without the DeprecationWarning its
    ``torch.jit.script`` decorators raise at import."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"`torch\.jit\.script` is deprecated")
        pytest.importorskip("transformers")
        from transformers import DebertaV2Config
        from transformers.models.deberta_v2 import modeling_deberta_v2
    return modeling_deberta_v2, DebertaV2Config


def transformers_terms(deberta_v2, case, x, monkeypatch) -> tuple[np.ndarray, np.ndarray]:
    """(transformers', the definition's): disentangled_attention_bias of a tiny float64 layer
    (pos_key_proj, pos_query_proj and the relative embeddings random), and the definition on
    the same q and k with pos_key and pos_query the layer's own projections of those
    embeddings, split per head by its own transpose_for_scores."""
    module, config_class = deberta_v2
    heads, d = int(case["heads"]), int(case["d"])
    buckets, top = int(case["buckets"]), int(case["max_position"])
    config = config_class(
        hidden_size=heads * d, num_attention_heads=heads, relative_attention=True,
        position_buckets=buckets, max_relative_positions=top, pos_att_type=["c2p", "p2c"],
        max_position_embeddings=512,
    )  # fmt: skip
    layer = module.DisentangledSelfAttention(config).double().eval()
    gen = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for proj in (layer.pos_key_proj, layer.pos_query_proj):
            proj.weight.copy_(torch.randn(proj.weight.shape, generator=gen, dtype=torch.float64))
            proj.bias.copy_(torch.randn(proj.bias.shape, generator=gen, dtype=torch.float64))
    span = buckets or top
    embeddings = torch.randn(2 * span, heads * d, generator=gen, dtype=torch.float64)
    # transformers divides by sqrt(3 d) taken in float32: here in float64, as the definition
    monkeypatch.setattr(
        module,
        "scaled_size_sqrt",
        lambda t, factor: torch.tensor(math.sqrt(t.size(-1) * factor), dtype=torch.float64),
    )
    b = x["q"].shape[0]

    def per_head(t):  # (b, h, n, d) -> (b·h, n, d), transpose_for_scores' layout
        return t.reshape(b * heads, *t.shape[2:])

    with torch.no_grad():
        pos_key, pos_query = (
            layer.transpose_for_scores(proj(embeddings[None]), heads)
            for proj in (layer.pos_key_proj, layer.pos_query_proj)
        )  # (h, 2 span, d) each
        got = layer.disentangled_attention_bias(
            per_head(x["q"]), per_head(x["k"]), None, embeddings, 3
        )
    mine = terms(case, {"q": x["q"], "k": x["k"], "pos_key": pos_key, "pos_query": pos_query})
    return got.reshape(mine.shape).numpy(), mine


@pytest.mark.parametrize("case", cases(), ids=lambda c: f"n{c['n']}-b{c['buckets']}")
def test_the_definition_is_transformers_disentangled_attention_bias(
    case, deberta_v2, monkeypatch
) -> None:
    x = DEBERTA.inputs(case)
    got, mine = transformers_terms(deberta_v2, case, x, monkeypatch)
    np.testing.assert_allclose(mine, got, rtol=1e-12, atol=1e-12)


def test_the_rows_are_transformers_at_every_case_and_every_page_setting(deberta_v2) -> None:
    """c(i, j) against build_relative_position (its float32 log buckets) and the clamp, at the
    cases and at the page's settings up to its 64 positions, and the float64 bucket against
    make_log_bucket_position over every distance up to 4 x max_position: the float32
    logarithm never lands on the other side of a ceil there."""
    module, _ = deberta_v2
    settings = [(int(c["n"]), int(c["buckets"]), int(c["max_position"])) for c in cases()]
    settings += [(64, buckets, PAGE_MAX) for buckets in PAGE_BUCKETS]
    for n, buckets, top in settings:
        ids = torch.zeros(n, 1)
        rel = module.build_relative_position(ids, ids, bucket_size=buckets, max_position=top)
        span = buckets or top
        want = torch.clamp(rel[0] + span, 0, 2 * span - 1).numpy()
        assert np.array_equal(rows(n, buckets, top), want), (n, buckets, top)
        if buckets:
            r = torch.arange(-4 * top, 4 * top + 1)
            want = module.make_log_bucket_position(r, buckets, top).long().numpy()
            assert np.array_equal(log_bucket(r.numpy(), buckets, top), want), (buckets, top)


def test_the_kind_is_found_in_its_folder_and_listed_after_the_earlier_kinds() -> None:
    earlier = ("shaw", "skew", "rel-shift", "alibi", "t5-bucket", "rope")
    assert KINDS["deberta"] is DEBERTA
    assert all(KINDS[name].order < DEBERTA.order for name in earlier)


# ---- the Check page ----------------------------------------------------------------------------


def page_outputs(n: int, buckets: int | None = None) -> tuple[dict, dict]:
    from explorer.frame.params import ViewParams
    from explorer.stories.check.inputs import page_inputs

    inputs = page_inputs("deberta", ViewParams(n=n, weights="random"), buckets)
    return inputs.case_dict, inputs.tensors()


@pytest.mark.parametrize(("n", "buckets"), [(8, None), (40, None), (40, 0), (64, 16)])
def test_the_page_draws_the_definition_on_its_inputs(n: int, buckets: int | None) -> None:
    from tests.app.conftest import assert_clean, open_page
    from tests.app.panels import panel_z

    query = {} if buckets is None else {"check_deberta_buckets": str(buckets)}
    at = open_page("check", check_kind="deberta", n=str(n), check_head="1", **query)
    assert_clean(at)
    case, x = page_outputs(n, buckets)
    span = case["buckets"] or PAGE_MAX
    assert case["buckets"] == (8 if buckets is None else buckets) and case["n"] == n
    captions = " ".join(c.value for c in at.caption).replace("\\", "")
    assert f"pos_key (2, {2 * span}, 8) float64" in captions
    assert f"buckets={case['buckets']}, max_position={PAGE_MAX})" in captions
    np.testing.assert_allclose(panel_z(at, "check_reference"), terms(case, x)[0, 1], rtol=1e-6)


@pytest.mark.parametrize("name", [*RIGHT, *BUGS])
def test_an_uploaded_output_gets_the_verdict_the_library_gives_the_function(name: str) -> None:
    """At n = 40 (past max_position 16, with 8 buckets) every known bug shows on the page's one
    case, and the page names the bug the library names from its own cases."""
    import io

    from tests.app.conftest import assert_clean, chart_keys, open_page

    function = getattr(examples, name)
    case, x = page_outputs(40)
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(function(*DEBERTA.arguments(case, x))))
    at = open_page("check", check_kind="deberta", n="40")
    at.file_uploader(key="check_upload_deberta").upload("out.npy", buffer.getvalue()).run()
    assert_clean(at)
    library = check_implementation("deberta", function)
    shown = [e.value for e in (*at.success, *at.warning) if "Verdict:" in e.value]
    assert len(shown) == 1 and f"**Verdict:** {library.status}" in shown[0]
    if library.bug:
        assert f"it matches a known bug: {library.bug}" in shown[0].replace("\\", "")
    assert "check_comparison" in chart_keys(at)


@pytest.mark.parametrize("buckets", PAGE_BUCKETS)
def test_the_pages_words_on_its_rows_are_true_at_every_n(buckets: int) -> None:
    """The unclamped row bucket(i - j) + span (the scheme's own log_bucket) against the words:
    the first i - j past each end of the table, or none, and log buckets once |i - j| > mid."""
    span, mid = buckets or PAGE_MAX, buckets // 2
    for n in range(1, 65):
        r = torch.arange(-(n - 1), n)
        raw = (library_bucket(r, buckets, PAGE_MAX) if buckets else r) + span
        words = page_rows_words(n, buckets)
        high, low = r[raw > 2 * span - 1], r[raw < 0]
        if len(high):
            assert f"the rows of i - j ≥ {int(high.min())}" in words, (n, words)
        if len(low):
            assert f"i - j ≤ {int(low.max())} fall outside" in words, (n, words)
        assert ("≥" in words, "≤" in words) == (bool(len(high)), bool(len(low))), (n, words)
        assert ("no distance here lies past" in words) == (not len(high) and not len(low))
        assert ("log-spaced" in words) == bool(buckets and n - 1 > mid), (n, words)
