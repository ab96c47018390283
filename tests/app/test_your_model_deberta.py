"""Your model with a DeBERTa-v2 checkpoint uploaded (as save_pretrained writes it): the row each
distance reads is transformers' own bucketing, and the c2p and p2c terms built from the position
vectors the page draws, for a given q and k, equal transformers' disentangled_attention_bias for
that layer and head; a config field of the wrong type gets a warning in words and the family's
models are drawn meanwhile."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import torch

from tests.app.conftest import assert_clean, chart_keys, chart_spec, open_page
from tests.app.panels import array_of, panel_z
from tests.lab.test_extract_deberta import reference_terms, tiny_deberta

transformers = pytest.importorskip("transformers")
with warnings.catch_warnings():  # transformers scripts two helpers with torch.jit.script
    warnings.filterwarnings("ignore", "`torch.jit.script` is deprecated", DeprecationWarning)
    from transformers.models.deberta_v2 import modeling_deberta_v2

N, LAYER, HEAD = 20, 1, 2
KEYS = {"your_model_projected_rows", "your_model_projected_vectors", "your_model_projected_norms"}
# the drawn vectors are float32 (2^-24 relative each), summed over d = 8 products
DRAWN = {"rtol": 2e-6, "atol": 2e-6}


def upload(at, files: list[tuple[str, bytes]]):
    at.segmented_control(key="your_model_from").set_value("your upload").run()
    at.file_uploader(key="your_model_upload").set_value(
        [(name, data, "application/octet-stream") for name, data in files]
    )
    return at.run()


def files_of(folder) -> list[tuple[str, bytes]]:
    return [(p.name, p.read_bytes()) for p in (folder / "model.safetensors",
                                               folder / "config.json")]  # fmt: skip


@pytest.mark.parametrize("options", [{}, {"share_att_key": True, "norm_rel_ebd": "none"}])
def test_the_terms_from_what_the_page_draws_are_transformers_own(tmp_path, monkeypatch,
                                                                  options) -> None:  # fmt: skip
    def scaled_size_sqrt(layer: torch.Tensor, scale_factor: int) -> torch.Tensor:
        return torch.sqrt(torch.tensor(layer.size(-1), dtype=torch.float64) * scale_factor)

    monkeypatch.setattr(modeling_deberta_v2, "scaled_size_sqrt", scaled_size_sqrt)
    model = tiny_deberta(tmp_path, **options)
    at = upload(open_page("your_model", n=str(N)), files_of(tmp_path))
    assert_clean(at)
    assert KEYS <= chart_keys(at)
    at.selectbox(key="your_model_projected_layer").set_value(f"DeBERTa, layer {LAYER}").run()
    at.segmented_control(key="your_model_projected_head").set_value(HEAD).run()
    assert_clean(at)
    # the steps: the row each r = j - i reads is transformers' clamp(bucket(i - j) + span)
    trace = chart_spec(at, "your_model_projected_rows")["data"][0]
    r, drawn_rows = array_of(trace["x"]).astype(int), array_of(trace["y"])
    assert r.tolist() == list(range(-(N - 1), N))
    relative = modeling_deberta_v2.build_relative_position(
        torch.zeros(1, N, 1), torch.zeros(1, N, 1), bucket_size=8, max_position=16
    )[0]  # (i, j) -> bucket(i - j)
    expected_rows = (relative[N - 1] + 8).clamp(0, 15)  # the last query: r = j - (N - 1)
    np.testing.assert_array_equal(drawn_rows[:N], expected_rows.numpy())
    # the heatmaps: channel x distance, P^K[c(r)] then P^Q[c(r)] of the head picked
    key_by_r, query_by_r = (torch.from_numpy(panel_z(at, "your_model_projected_vectors", p).T
                            .astype(np.float64))[None] for p in (0, 1))  # fmt: skip
    generator = torch.Generator().manual_seed(7)
    q, k = (torch.randn(4, N, 8, dtype=torch.float64, generator=generator) for _ in "qk")
    expected = reference_terms(model, LAYER, q, k, {"c2p", "p2c"})
    index = torch.arange(N)[None, :] - torch.arange(N)[:, None] + N - 1  # (i, j) -> r + n - 1
    scale = (3 * 8) ** -0.5
    c2p = torch.einsum("id,ijd->ij", q[HEAD], key_by_r[0][index]) * scale
    p2c = torch.einsum("jd,ijd->ij", k[HEAD], query_by_r[0][index]) * scale
    torch.testing.assert_close(c2p, expected["c2p"][HEAD], **DRAWN)
    torch.testing.assert_close(p2c, expected["p2c"][HEAD], **DRAWN)
    # the norms drawn are the heatmaps' columns' norms
    norms = chart_spec(at, "your_model_projected_norms")["data"]
    np.testing.assert_allclose(array_of(norms[0]["y"]), key_by_r[0].norm(dim=-1).numpy(),
                               rtol=1e-6)  # fmt: skip


@pytest.mark.parametrize(("field", "value", "words"), [
    ("position_buckets", "8", "position_buckets is the text '8'; expected a whole number"),
    ("pos_att_type", {"c2p": True}, "pos_att_type is an object of 1 field; expected a list"),
    ("share_att_key", 1, "share_att_key is 1; expected true or false"),
])  # fmt: skip
def test_a_wrong_config_field_is_said_in_words_and_the_family_drawn(tmp_path, field, value,
                                                                     words) -> None:  # fmt: skip
    tiny_deberta(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, field: value}))
    at = upload(open_page("your_model", n="12"), files_of(tmp_path))
    assert_clean(at)
    said = " ".join(w.value for w in at.warning).replace("\\", "")
    assert words in said and "Traceback" not in said
    assert "your_model_t5" in chart_keys(at) and not KEYS & chart_keys(at)
