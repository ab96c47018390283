"""Each page's "what to notice" line is computed from the figure it sits under."""

from __future__ import annotations

from explorer.figures.notes import band_note, clip_note, focus_note
from relpos_lab.family import results
from relpos_lab.family.registry import SCHEME_MODELS
from relpos_lab.family.tables import describe
from tests.app.conftest import assert_clean, open_page
from tests.app.panels import panel_z


def infos(at) -> list[str]:
    return [info.value for info in at.info]


def test_the_attention_note_reads_the_weights_drawn() -> None:
    at = open_page("attention", n="9", heads="4", mask="causal")
    at.button_group(key="attention_head").set_value(2).run()
    assert_clean(at)
    weights = panel_z(at, "attention_weights", 0)  # the head's weights as drawn, masked = NaN
    assert focus_note(weights, 2) in infos(at)


def test_the_lookup_note_follows_n_and_k() -> None:
    at = open_page("lookup", n="8", k="20")
    assert_clean(at)
    assert clip_note(8, 20) in infos(at)
    assert "rows 0-12 and 28-40 are never read" in clip_note(8, 20)
    at.slider(key="k").set_value(0).run()
    assert clip_note(8, 0) in infos(at)


def test_the_logits_note_follows_k() -> None:
    at = open_page("logits", n="8", k="3")
    assert_clean(at)
    assert band_note(8, 3) in infos(at)


def test_the_family_length_note_reads_the_measured_curves() -> None:
    at = open_page("family")
    assert_clean(at)
    models = results()["models"]
    change = {m: abs(models[m]["bpc"]["1024"] - models[m]["bpc"]["64"]) for m in SCHEME_MODELS}
    flat, worst = min(change, key=change.get), max(change, key=change.get)
    note = next(text for text in infos(at) if text.startswith("From 64 to 1024"))
    assert f"{describe(flat)} changes least" in note and f"{describe(worst)} most" in note


def test_the_compare_note_reads_both_schemes_weights() -> None:
    at = open_page("compare", n="7", heads="2", compare_a="shaw", compare_b="alibi")
    assert_clean(at)
    a, b = panel_z(at, "compare_weights", 0), panel_z(at, "compare_weights", 1)
    note = next(text for text in infos(at) if text.startswith("A, Shaw: "))
    assert focus_note(a, 0) in note and focus_note(b, 0) in note


def test_the_skew_note_reads_the_trained_models_relative_logits() -> None:
    import numpy as np

    from relpos_lab.family import load
    from tests.app.test_trained_views import model_forward

    text = "print(len(words))"
    at = open_page("skew", weights="trained", k="4", layer="1", text=text)
    assert_clean(at)
    q = model_forward("shaw-k4", text)[1]["q"][0, 0].numpy()  # layer 1, head 0: (n, d)
    table = load("shaw-k4").blocks[1].attention.scheme.table_k.detach().numpy()
    n = len(text)
    by_distance = {  # q_i · w^K_clip(j - i, 4) over the causal pairs, per distance
        r: np.mean([q[i] @ table[max(-4, min(4, r)) + 4] for i in range(n) if 0 <= i + r <= i])
        for r in range(-(n - 1), 1)
    }
    high = max(by_distance, key=by_distance.get)
    note = next(text for text in infos(at) if "relative logit is largest" in text)
    assert f"largest at j - i = {high} " in note.replace("\\", "")
