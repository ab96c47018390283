"""The Multi-head and masks page: trained views equal the model's own forward pass, random views
equal torch's own multi-head attention, masks hide exactly, and the sqrt(d) curves are the
core's numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from explorer.figures.numbers import percent
from explorer.frame.params import ViewParams
from explorer.frame.widgets import md_escape
from explorer.stories.multihead.masks import mask_note
from explorer.stories.multihead.views import SHOWN
from explorer.weights.example import content_vector
from explorer.weights.reading import sequence
from relpos_core.basics import create_look_ahead_mask, create_padding_mask
from relpos_core.multihead import MultiHeadAttention
from relpos_lab.family import load_with_vocabulary
from tests.app.conftest import assert_clean, chart_keys, open_page
from tests.app.panels import panel_count, panel_traces, panel_z

CHARTS = {
    "multihead_qkv", "multihead_split", "multihead_weights", "multihead_output",
    "multihead_masks", "multihead_mask_weights",
}  # fmt: skip
CLOSE = {"rtol": 1e-4, "atol": 1e-5}
CHART_MAX, PAGE_MAX = 400_000, 1_500_000  # bytes of plotly JSON a chart, the page may send


def badges(at) -> list[str]:
    return [m.value for m in at.markdown if "max |difference|" in m.value]


@pytest.mark.parametrize(
    "query",
    [
        {"weights": "random"},
        {"weights": "trained"},
        {"weights": "trained", "n": "1024", "layer": "2"},
        {"n": "1024"},
        {"n": "4096", "d_model": "128", "heads": "8", "mask": "causal-padding", "pad": "4090"},
        {"n": "1", "d_model": "8", "heads": "8"},
        {"n": "5", "mask": "padding", "pad": "5"},
        {"text": "the <b>cat</b> sat & <script>x</script>", "d_model": "8", "heads": "4"},
        {"weights": "trained", "text": "<i>é</i>\n\tx"},
    ],
    ids=lambda q: "&".join(f"{k}={v[:12]}" for k, v in q.items()),
)
def test_page_renders_clean_small_and_checked(query: dict[str, str]) -> None:
    at = open_page("multihead", **query)
    assert_clean(at)
    # the one warning such a page may show: the characters a trained model cannot read
    unread = [w.value for w in at.warning if w.value.startswith("The model cannot read")]
    assert [w.value for w in at.warning] == unread
    if query.get("weights") == "trained" and "é" in query.get("text", ""):
        assert len(unread) == 1 and "é" in unread[0]
    assert CHARTS <= chart_keys(at)
    sent = {chart.proto.id: len(chart.proto.spec) for chart in at.get("plotly_chart")}
    assert max(sent.values()) < CHART_MAX and sum(sent.values()) < PAGE_MAX, sent
    for trace in panel_traces(at, "multihead_weights"):  # exact heatmaps, never an image
        assert trace["type"] == "heatmap"
        assert max(int(s) for s in str(trace["z"]["shape"]).split(",")) <= SHOWN
    assert panel_count(at, "multihead_weights") == (4 if "trained" in query.values() else
                                                    int(query.get("heads", 2)))  # fmt: skip
    found = badges(at)
    assert len(found) == (2 if query.get("weights") == "trained" else 1) + 2, found
    assert all("green" in badge for badge in found), found


def model_attention(name: str, text: str) -> list[dict[str, torch.Tensor]]:
    """Run the shipped model on ``text`` as it runs (``model(ids)``), recording per layer what
    its attention module returned and the per-head output its attention computed inside."""
    model, vocabulary = load_with_vocabulary(name)
    seen: list[dict[str, torch.Tensor]] = [{} for _ in model.blocks]
    for layer, block in enumerate(model.blocks):
        attention = block.attention

        def attend(q, k, v, _attend=attention.attend, _layer=layer):
            seen[_layer].update(q=q, k=k, z=_attend(q, k, v))
            return seen[_layer]["z"]

        attention.attend = attend
        attention.register_forward_hook(
            lambda module, inputs, out, _layer=layer: seen[_layer].update(out=out)
        )
    with torch.no_grad():
        model(vocabulary.encode(text)[None])
    return seen


def test_trained_view_is_the_models_own_forward_pass() -> None:
    at = open_page("multihead", weights="trained", n="40", layer="1")
    assert_clean(at)
    params = ViewParams(n=40, d_model=128, heads=4, mask="causal", weights="trained", layer=1)
    text = sequence(params)
    assert len(text) == 40
    layer = model_attention("nope", text)[1]  # the whole 40 characters, the page reads 32
    np.testing.assert_allclose(
        panel_z(at, "multihead_output", 1), layer["out"][0, :SHOWN].numpy(), **CLOSE
    )
    q, k = layer["q"][0, :, :SHOWN], layer["k"][0, :, :SHOWN]  # (h, 32, 32)
    logits = q @ k.transpose(-2, -1) / math.sqrt(32)
    expected = torch.softmax(logits.masked_fill(create_look_ahead_mask(SHOWN) == 1, -math.inf), -1)
    below = np.tril(np.ones((SHOWN, SHOWN), dtype=bool))
    for head in range(4):
        weights = panel_z(at, "multihead_weights", head)
        assert np.isnan(weights[~below]).all()  # the look-ahead cells are blank
        np.testing.assert_allclose(weights[below], expected[head].numpy()[below], **CLOSE)
        np.testing.assert_allclose(  # head m's output: channels 32m..32m+31 of the concatenation
            panel_z(at, "multihead_output", 0)[:, 32 * head : 32 * (head + 1)],
            layer["z"][0, head, :SHOWN].numpy(),
            **CLOSE,
        )
    assert any("layer 1 of the model without position" in c.value for c in at.caption)
    assert any("own attention layer 1" in badge and "green" in badge for badge in badges(at))


def torch_reference(
    n: int, d_model: int, heads: int, seed: int, hidden: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """(output (n, d), weights (h, n, n)) of torch.nn.MultiheadAttention holding the weights of
    the page's seeded module, on the page's token vectors ("#i" without typed text)."""
    mine = MultiHeadAttention(d_model, heads, seed=seed)
    theirs = torch.nn.MultiheadAttention(d_model, heads, batch_first=True)
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([mine.w_q.weight, mine.w_k.weight, mine.w_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([mine.w_q.bias, mine.w_k.bias, mine.w_v.bias]))
        theirs.out_proj.weight.copy_(mine.w_o.weight)
        theirs.out_proj.bias.copy_(mine.w_o.bias)
        x = torch.stack([content_vector(f"#{i}", d_model, seed) for i in range(n)])[None]
        out, weights = theirs(x, x, x, attn_mask=hidden, average_attn_weights=False)
    return out[0], weights[0]


def test_random_view_with_both_masks_equals_torch_multihead_attention() -> None:
    at = open_page("multihead", n="6", d_model="16", heads="2", seed="3", mask="causal-padding")
    assert_clean(at)
    hidden = (create_look_ahead_mask(6) + create_padding_mask([[1, 1, 1, 1, 0, 0]])[0, 0]) > 0
    out, weights = torch_reference(6, 16, 2, 3, hidden)
    np.testing.assert_allclose(panel_z(at, "multihead_output", 1), out.numpy(), **CLOSE)
    for head in range(2):
        drawn = panel_z(at, "multihead_weights", head)
        assert np.isnan(drawn[hidden.numpy()]).all()
        visible = ~hidden.numpy()
        np.testing.assert_allclose(drawn[visible], weights[head].numpy()[visible], **CLOSE)


def test_random_view_past_the_drawn_keys_attends_to_every_key() -> None:
    at = open_page("multihead", n="100", d_model="32", heads="4", seed="1")
    assert_clean(at)
    out, weights = torch_reference(100, 32, 4, 1, None)
    np.testing.assert_allclose(panel_z(at, "multihead_output", 1), out[:SHOWN].numpy(), **CLOSE)
    np.testing.assert_allclose(
        panel_z(at, "multihead_weights", 3), weights[3, :SHOWN, :SHOWN].numpy(), **CLOSE
    )
    drawn = weights[:, :SHOWN, :SHOWN].sum(-1)
    note = next(info.value for info in at.info if "keys drawn hold" in info.value)
    low, high = percent(float(drawn.min())), percent(float(drawn.max()))
    assert md_escape(f"between {low} and {high} of a row's weight") in note


@pytest.mark.parametrize("kind", ["padding", "look-ahead", "both"])
@pytest.mark.parametrize("tokens", ["1 21 777 0 0", "0 5 0 7", "0 0 0", "42"])
def test_masked_weights_are_exactly_zero_where_hidden(kind: str, tokens: str) -> None:
    at = open_page("multihead", multihead_tokens=tokens, multihead_mask=kind)
    assert_clean(at)
    assert not at.warning
    ids = [[int(t) for t in tokens.split()]]
    n = len(ids[0])
    padding = create_padding_mask(ids)[0, 0].expand(n, n)
    look_ahead = create_look_ahead_mask(n)
    expected = {"padding": padding, "look-ahead": look_ahead}.get(
        kind, torch.maximum(padding, look_ahead)
    )
    np.testing.assert_array_equal(panel_z(at, "multihead_masks", 0), padding.numpy())
    np.testing.assert_array_equal(panel_z(at, "multihead_masks", 1), look_ahead.numpy())
    np.testing.assert_array_equal(panel_z(at, "multihead_masks", 2), expected.numpy())
    hidden = expected.numpy() == 1
    logits = panel_z(at, "multihead_mask_weights", 0)
    masked = panel_z(at, "multihead_mask_weights", 1)
    weights = panel_z(at, "multihead_mask_weights", 2)
    assert np.isnan(masked[hidden]).all()
    np.testing.assert_array_equal(masked[~hidden], logits[~hidden])
    assert (weights[hidden] == 0).all()  # exactly, not small
    sees = (~hidden).any(axis=1)
    np.testing.assert_allclose(weights[sees].sum(axis=1), 1.0, atol=1e-6)
    assert (weights[~sees] == 0).all()  # a row with no key to see has no weight at all
    for row in np.flatnonzero(sees):  # renormalised over the visible keys of the same logits
        e = np.exp(logits[row][~hidden[row]] - logits[row][~hidden[row]].max())
        np.testing.assert_allclose(weights[row][~hidden[row]], e / e.sum(), rtol=1e-5)
    note = md_escape(mask_note(expected.numpy(), weights, kind))  # says which mask it reads
    assert note in [info.value for info in at.info]


@pytest.mark.parametrize(
    "bad",
    ["1 two", "<b>7</b>", " ".join(["1"] * 17), "", "-1 2", "1.5", "12345678"],
    ids=["word", "html", "too many", "empty", "negative", "decimal", "too large"],
)
def test_a_bad_token_ids_value_warns_naming_the_control(bad: str) -> None:
    at = open_page("multihead", multihead_tokens=bad)
    assert_clean(at)
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("token ids \\(0 \\= padding\\)\\: must be 1 to 16 whole")
    if "<" in bad:
        assert "\\<b\\>7\\<\\/b\\>" in warnings[0]  # shown escaped, never as HTML
    assert panel_z(at, "multihead_mask_weights", 2).shape == (5, 5)  # the default example


@pytest.mark.parametrize("query", [{}, {"heads": "2"}, {"weights": "trained"}])
def test_the_masks_demo_and_the_notes_use_the_pages_symbols(query: dict[str, str]) -> None:
    """The masks demo computes with the page's head width d, and the note names the output's
    bias as the formula does (b^O)."""
    import re

    at = open_page("multihead", **query)
    assert_clean(at)
    texts = [e.value.replace("\\", "") for e in (*at.markdown, *at.caption, *at.info)]
    page_d = next(int(m.group(1)) for t in texts if (m := re.search(r"d = d_model / h = (\d+)", t)))
    demo = next(t for t in texts if "Seeded random q, k" in t)
    assert re.search(rf"Seeded random q, k \(d = {page_d}\b", demo), (page_d, demo)
    logits = panel_z(at, "multihead_mask_weights", 1)
    assert logits.shape[0] == logits.shape[1]
    assert not [t for t in texts if re.search(r"\bb_o\b", t)]
