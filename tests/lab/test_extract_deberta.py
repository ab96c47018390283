"""The extractor on DeBERTa-v2 and v3 checkpoints as transformers' save_pretrained writes them:
each layer's position vectors P^K and P^Q, read at every distance by the scheme folder's reading,
give the c2p and p2c terms transformers' own DisentangledSelfAttention.disentangled_attention_bias
computes for the same q and k; every config field it reads is refused in words when wrong; the
family's trained DeBERTa reads the same way and equals its scheme's own position terms."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import torch

from relpos_core.schemes.deberta.by_distance import disentangled_terms
from relpos_lab.extract import FileProblem, from_path, from_upload, to_bytes
from relpos_lab.extract.__main__ import main

transformers = pytest.importorskip("transformers")
with warnings.catch_warnings():  # transformers scripts two helpers with torch.jit.script
    warnings.filterwarnings("ignore", "`torch.jit.script` is deprecated", DeprecationWarning)
    from transformers.models.deberta_v2 import modeling_deberta_v2

F64 = torch.float64
N = 40  # beyond every span below: the log buckets and the table's clamped ends show
# P^K and P^Q are stored as float32 (2^-24 relative each) and summed over d = 8 products
STORED = {"rtol": 2e-6, "atol": 2e-6}


@pytest.fixture
def float64_scale(monkeypatch):
    """transformers takes sqrt(f d) in float32 (``scaled_size_sqrt``) whatever the dtype: the
    same root in float64 here, so the comparison measures the stored vectors alone."""

    def scaled_size_sqrt(layer: torch.Tensor, scale_factor: int) -> torch.Tensor:
        return torch.sqrt(torch.tensor(layer.size(-1), dtype=F64) * scale_factor)

    monkeypatch.setattr(modeling_deberta_v2, "scaled_size_sqrt", scaled_size_sqrt)


def tiny_deberta(folder: Path, **options) -> torch.nn.Module:
    """A 2-layer DebertaV2Model saved as model.safetensors + config.json; its layer norm's
    weights drawn too (they start at 1 and 0, where a wrong norm would go unseen)."""
    settings = {"hidden_size": 32, "num_attention_heads": 4, "num_hidden_layers": 2,
                "intermediate_size": 64, "vocab_size": 50, "relative_attention": True,
                "position_buckets": 8, "max_relative_positions": 16,
                "pos_att_type": ["p2c", "c2p"], "norm_rel_ebd": "layer_norm",
                "max_position_embeddings": 64, **options}  # fmt: skip
    torch.manual_seed(0)
    model = transformers.DebertaV2Model(transformers.DebertaV2Config(**settings)).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "LayerNorm" in name:
                p.copy_(torch.randn_like(p))
    model.save_pretrained(folder)
    return model


def page_terms(layer, q: torch.Tensor, k: torch.Tensor) -> dict[str, torch.Tensor]:
    """The terms from what is drawn: each distance's row of P^K and P^Q (h, 2n - 1, d)."""
    rows = layer.rows(q.shape[1])
    by_r = {part: torch.from_numpy(v[:, rows.numpy()]) for part, v in layer.vectors().items()}
    return disentangled_terms(q, k, by_r.get("key"), by_r.get("query"), layer.divisor_terms)


def reference_terms(model, layer: int, q, k, terms: set[str]) -> dict[str, torch.Tensor]:
    """transformers' c2p and p2c for one layer, each alone (the other switched off)."""
    attention = model.double().encoder.layer[layer].attention.self
    rel = model.encoder.get_rel_embedding()
    factor = 1 + len(terms)
    out = {}
    with torch.no_grad():
        for term in terms:
            attention.pos_att_type = [term]
            out[term] = attention.disentangled_attention_bias(q, k, None, rel, factor)
    return out


CASES = {  # DeBERTa-v2 (own projections, buckets), v3 (shared projections), plain clipping
    "v2": {},
    "v3": {"share_att_key": True, "position_buckets": 16, "max_relative_positions": -1},
    "no buckets": {"position_buckets": -1, "max_relative_positions": 12, "norm_rel_ebd": "none"},
    "c2p only": {"pos_att_type": "c2p"},
    "p2c only": {"pos_att_type": ["p2c"], "share_att_key": True},
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.usefixtures("float64_scale")
def test_the_terms_from_the_extracted_vectors_are_transformers_own(tmp_path, case) -> None:
    model = tiny_deberta(tmp_path / "model", **CASES[case])
    assert main([str(tmp_path / "model"), "--out", str(tmp_path / "out.safetensors")]) == 0
    found = from_path(tmp_path / "out.safetensors")  # the extracted file, read back
    assert [layer.layer for layer in found.projected] == [0, 1]
    terms = set(model.config.pos_att_type)
    generator = torch.Generator().manual_seed(3)
    for layer in found.projected:
        q, k = (torch.randn(4, N, 8, dtype=F64, generator=generator) for _ in "qk")
        ours = page_terms(layer, q, k)
        expected = reference_terms(model, layer.layer, q, k, terms)
        assert set(ours) == terms
        for term in terms:
            torch.testing.assert_close(ours[term], expected[term], **STORED)


def test_a_v3_checkpoint_reads_its_max_position_embeddings_and_says_how(tmp_path) -> None:
    tiny_deberta(tmp_path, **CASES["v3"])
    layer = from_path(tmp_path).projected[0]
    assert dict(layer.settings) == {"position_buckets": 16, "max_relative_positions": 64}
    assert "key_proj and query_proj (share_att_key)" in layer.summary()


def write_config(folder: Path, **changes) -> None:
    config = json.loads((folder / "config.json").read_text())
    config.update(changes)
    (folder / "config.json").write_text(json.dumps(config))


HOSTILE = [  # (field, value, words the refusal holds)
    ("position_buckets", "256", "position_buckets is the text '256'; expected a whole number"),
    ("position_buckets", True, "position_buckets is true; expected a whole number"),
    ("position_buckets", 7, "position_buckets must be 0 or an even number >= 4, got 7"),
    ("position_buckets", 64, "max_relative_positions must exceed position_buckets / 2 + 1"),
    ("max_relative_positions", 1.5, "max_relative_positions is 1.5; expected a whole number"),
    ("max_relative_positions", [16], "max_relative_positions is a list of 1 item"),
    ("max_position_embeddings", "x", "max_position_embeddings is the text 'x'"),
    ("pos_att_type", 5, "pos_att_type is 5; expected a list of words"),
    ("pos_att_type", ["c2p", 1], "pos_att_type is a list of 2 items; expected a list of words"),
    ("share_att_key", "yes", "share_att_key is the text 'yes'; expected true or false"),
    ("relative_attention", 1, "relative_attention is 1; expected true or false"),
    ("num_attention_heads", 0, "num_attention_heads is 0; expected a whole number in [1,"),
    ("num_attention_heads", 3, "a multiple of 3"),
    ("hidden_size", 48, "a relative table is (2 span, 48)"),
    ("norm_rel_ebd", ["layer_norm"], "norm_rel_ebd is a list of 1 item; expected a text"),
    ("layer_norm_eps", -1, "layer_norm_eps is -1; expected a number in (0, 1]"),
]


@pytest.mark.parametrize(("key", "value", "words"), HOSTILE)
def test_a_wrong_config_field_is_refused_in_words(tmp_path, key, value, words) -> None:
    tiny_deberta(tmp_path)
    write_config(tmp_path, **{key: value, **({"max_relative_positions": -1} if key ==
                 "max_position_embeddings" else {})})  # fmt: skip
    with pytest.raises(FileProblem) as refused:
        from_path(tmp_path)
    assert words in str(refused.value)


def test_without_a_config_or_relative_attention_it_says_why(tmp_path) -> None:
    tiny_deberta(tmp_path)
    data = (tmp_path / "model.safetensors").read_bytes()
    with pytest.raises(FileProblem, match="no config came with it: upload its config.json"):
        from_upload([("model.safetensors", data)])
    write_config(tmp_path, relative_attention=False)
    found = from_path(tmp_path)
    assert found.empty and any("adds no relative terms" in note for note in found.notes)


def test_a_tampered_extracted_file_is_refused_in_words(tmp_path) -> None:
    tiny_deberta(tmp_path)
    found = from_path(tmp_path)
    from safetensors.numpy import load, save

    data = to_bytes(found)
    tensors = load(data)
    header = json.loads(data[8 : 8 + int.from_bytes(data[:8], "little")])["__metadata__"]
    entries = json.loads(header["projected"])
    for change, words in (
        ({"scheme": "shaw"}, "names a scheme no folder reads"),
        ({"settings": {"position_buckets": "8", "max_relative_positions": 16}},
         "projected[].settings.position_buckets is the text '8'"),
        ({"settings": {"position_buckets": 4, "max_relative_positions": 16}},
         "the relative table has 16 rows; position_buckets = 4 reads 2 span = 8 rows"),
        ({"divisor_terms": 2}, "1 + the 2 position term(s) held"),
    ):  # fmt: skip
        bad = [{**entries[0], **change}]
        with pytest.raises(FileProblem) as refused:
            from_upload(
                [("x.safetensors", save(tensors, {**header, "projected": json.dumps(bad)}))]
            )
        assert words in str(refused.value)


def test_the_familys_deberta_reads_as_its_scheme_computes() -> None:
    from relpos_lab.family import checkpoint_path, load

    path = checkpoint_path("deberta")
    if not path.exists():
        pytest.skip("the family's DeBERTa is not trained yet")
    found = from_path(path)
    model = load("deberta")
    assert [layer.layer for layer in found.projected] == list(range(len(model.blocks)))
    generator = torch.Generator().manual_seed(4)
    for layer, block in zip(found.projected, model.blocks, strict=True):
        scheme = block.attention.scheme.double()
        q, k = (torch.randn(1, scheme.heads, N, scheme.head_dim, dtype=F64,
                            generator=generator) for _ in "qk")  # fmt: skip
        with torch.no_grad():
            expected = scheme.position_terms(q, k, causal=False, query_offset=0)
        ours = page_terms(layer, q[0], k[0])
        for term in ("c2p", "p2c"):
            torch.testing.assert_close(ours[term], expected[term][0], **STORED)
