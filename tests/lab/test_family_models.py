"""The family of trained character models: the pinned corpus, training that lowers the loss,
checkpoints that round-trip, the shipped results reproduced by evaluation, and every model's
attention equal to its scheme's plain definition."""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from relpos_core.schemes import t5_bucket, xl_sinusoid
from relpos_lab.family import FAMILY_DIR, load, load_with_vocabulary, results
from relpos_lab.family.__main__ import main
from relpos_lab.family.corpus import (
    CORPUS_CHARS,
    CORPUS_SHA256,
    UNKNOWN,
    corpus_text,
    corpus_vocabulary,
    held_out_text,
    train_ids,
    train_text,
)
from relpos_lab.family.model import ModelConfig, build_model, positions
from relpos_lab.family.registry import clip_distance, model_config, model_names, specs
from relpos_lab.family.tables import BEGIN, END, check_readme, readme_tables
from relpos_lab.family.train import (
    EVAL_CHARS,
    TrainSettings,
    bits_per_character,
    eval_span,
    load_checkpoint,
    save_checkpoint,
    train_model,
)

ROOT = Path(__file__).resolve().parents[2]
F64 = torch.float64
SHIPPED = tuple(name for name in model_names() if (FAMILY_DIR / f"{name}.pt").exists())


@pytest.fixture(scope="module", autouse=True)
def two_threads():
    threads = torch.get_num_threads()
    torch.set_num_threads(TrainSettings().threads)
    yield
    torch.set_num_threads(threads)


# ---- the corpus ------------------------------------------------------------------------------


def test_corpus_is_the_pinned_text():
    text = corpus_text()
    assert len(text) == CORPUS_CHARS
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == CORPUS_SHA256
    assert "Augmented assignment statements" in text  # a topic of the language reference


def test_split_is_whole_lines_and_covers_the_text():
    assert train_text() + held_out_text() == corpus_text()
    assert train_text().endswith("\n")
    assert 0.89 < len(train_text()) / CORPUS_CHARS < 0.91
    assert held_out_text() not in train_text()


def test_vocabulary_round_trips_and_maps_unknown_characters():
    vocabulary = corpus_vocabulary()
    assert vocabulary.chars == "".join(sorted(set(train_text())))
    sample = train_text()[:500]
    assert vocabulary.decode(vocabulary.encode(sample)) == sample
    ids = vocabulary.encode("a<b>\u4e2d")  # HTML and a character the corpus never uses
    assert ids[-1] == UNKNOWN and (ids[:-1] > 0).all()
    assert vocabulary.encode("").shape == (0,)


# ---- models and training ---------------------------------------------------------------------

TINY = {"d_model": 16, "heads": 2, "layers": 1, "ffn": 32}


def tiny(name: str) -> ModelConfig:
    return ModelConfig(vocab=corpus_vocabulary().size, context=16, **{**specs()[name], **TINY})


@pytest.mark.parametrize(
    "name", ["nope", "sinusoidal", "shaw", "music", "xl", "t5", "alibi", "rope"]
)
def test_a_few_steps_lower_the_loss(name):
    model = build_model(tiny(name), seed=0)
    settings = TrainSettings(steps=40, batch=8, context=16, warmup=5, lr=1e-2)
    losses = train_model(model, train_ids(), settings)
    first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
    assert last < first - 0.5, (first, last)


def test_same_seed_same_weights_outside_position():
    """Two models of the family start identical wherever position does not enter."""
    shaw = dict(build_model(model_config("shaw", 104, 64)).named_parameters())
    rope = dict(build_model(model_config("rope", 104, 64)).named_parameters())
    shared = [name for name in rope if name in shaw]
    assert len(shared) == len(rope) > 10
    for name in shared:
        torch.testing.assert_close(shaw[name], rope[name], rtol=0, atol=0, msg=name)


def test_ablations_fix_their_table_at_zero():
    for name, frozen in (("shaw-keys-only", "table_v"), ("shaw-values-only", "table_k")):
        model = build_model(model_config(name, 104, 64))
        for block in model.blocks:
            table = getattr(block.attention.scheme, frozen)
            assert not table.requires_grad and not table.any()


def test_checkpoint_round_trips_float16(tmp_path):
    model = build_model(tiny("t5"), seed=3)
    path = tmp_path / "m.pt"
    save_checkpoint(model, corpus_vocabulary(), path, name="t5")
    loaded, vocabulary, metadata = load_checkpoint(path)
    assert vocabulary == corpus_vocabulary() and metadata == {"name": "t5"}
    assert loaded.config == model.config and not loaded.training
    for (name, want), got in zip(
        model.state_dict().items(), loaded.state_dict().values(), strict=True
    ):
        torch.testing.assert_close(got, want.half().float(), rtol=0, atol=0, msg=name)


def test_bits_per_character_is_the_mean_cross_entropy_in_bits():
    model = build_model(tiny("alibi"), seed=1)
    span = eval_span(64)
    with torch.no_grad():
        logits = model(span[:-1].view(4, 16))  # (4,16,vocab): windows of 16
    log_p = torch.log_softmax(logits.double(), -1)
    targets = span[1:].view(4, 16)
    want = -log_p.gather(-1, targets[..., None]).mean() / math.log(2)
    assert bits_per_character(model, span, 16) == pytest.approx(float(want), rel=1e-9)
    with pytest.raises(ValueError, match="length must divide"):
        bits_per_character(model, span, 48)


# ---- each model's attention is its scheme's definition ---------------------------------------


def clip_row(r: int, k: int) -> int:
    return max(-k, min(k, r)) + k


def definition_logits(attention, q, k, position: str) -> tuple[torch.Tensor, object]:
    """e_ij by the paper's formula, cell by cell where it is short, (b,h,n,n), and a^V."""
    b, h, n, d = q.shape
    scale = 1 / math.sqrt(d)
    content = (q @ k.transpose(-2, -1)) * scale
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    r = j - i
    scheme = attention.scheme
    value_vector = None
    if position in ("nope", "sinusoidal"):
        return content, None
    if position == "shaw":
        kk = scheme.max_relative_position
        w_k, w_v = scheme.table_k.double(), scheme.table_v.double()
        a_k = torch.stack(
            [torch.stack([w_k[clip_row(jj - ii, kk)] for jj in range(n)]) for ii in range(n)]
        )
        rel = torch.einsum("bhid,ijd->bhij", q, a_k) * scale  # q_i · a^K_ij
        value_vector = lambda i_, j_: w_v[clip_row(j_ - i_, kk)]  # noqa: E731
        return content + rel, value_vector
    if position == "music":
        length = scheme.max_relative_position  # causal: distances -(L-1)..0 have a row
        table = scheme.embed_k.double()  # (h, 2L-1, d), row c is r = c - (L-1)
        e = torch.zeros(h, n, n, d, dtype=F64)
        for ii in range(n):
            for jj in range(ii + 1):
                if jj - ii > -length:
                    e[:, ii, jj] = table[:, jj - ii + length - 1]
        return content + torch.einsum("bhid,hijd->bhij", q, e) * scale, None
    if position == "xl":  # (a) + (b) + (c) + (d), R indexed by i - j
        w_r = scheme.w_r.double()
        keys = (xl_sinusoid(torch.arange(-n + 1, n), scheme.d_model).double() @ w_r).view(
            2 * n - 1, h, d
        )
        rel = keys[(i - j) + n - 1]  # (n, n, h, d): W_R R_(i-j)
        u, v = scheme.u.double(), scheme.v.double()
        b_term = torch.einsum("bhid,ijhd->bhij", q, rel)
        c_term = torch.einsum("hd,bhjd->bhj", u, k)[:, :, None, :]
        d_term = torch.einsum("hd,ijhd->hij", v, rel)[None]
        return content + (b_term + c_term + d_term) * scale, None
    if position == "t5":
        bucket = t5_bucket(
            r, bidirectional=False, num_buckets=scheme.num_buckets, max_distance=scheme.max_distance
        )
        return content + scheme.bias.double()[bucket].permute(2, 0, 1)[None], None
    if position == "alibi":  # slopes 2^(-8 h / H), h = 1..H
        slopes = torch.tensor([2.0 ** (-8 * (m + 1) / h) for m in range(h)], dtype=F64)
        return content - slopes[:, None, None] * r.abs(), None
    if position == "rope":  # q_i rotated by i, k_j by j: R_i q · R_j k
        pair = torch.arange(0, d, 2, dtype=F64)
        angle = torch.arange(n, dtype=F64)[:, None] * 10000.0 ** (-pair / d)  # (n, d/2)
        cos, sin = angle.cos(), angle.sin()

        def turn(x):
            out = torch.empty_like(x)
            out[..., 0::2] = x[..., 0::2] * cos - x[..., 1::2] * sin
            out[..., 1::2] = x[..., 0::2] * sin + x[..., 1::2] * cos
            return out

        return (turn(q) @ turn(k).transpose(-2, -1)) * scale, None
    if position == "deberta":  # (q_i · k_j + q_i · P^K[c] + k_j · P^Q[c]) / sqrt(3d)
        buckets, top = scheme.position_buckets, scheme.max_relative_positions
        table = scheme.rel_embeddings.double()

        def projected(proj):  # (2 span, h, d): each row of P through W_r, per head
            return (table @ proj.weight.double().T + proj.bias.double()).view(-1, h, d)

        pos_key, pos_query = projected(scheme.pos_key_proj), projected(scheme.pos_query_proj)
        row = torch.tensor([[deberta_row(ii - jj, buckets, top) for jj in range(n)]
                            for ii in range(n)])  # fmt: skip
        c2p = torch.einsum("bhid,ijhd->bhij", q, pos_key[row])
        p2c = torch.einsum("bhjd,ijhd->bhij", k, pos_query[row])
        return (q @ k.transpose(-2, -1) + c2p + p2c) / math.sqrt(3 * d), None
    raise AssertionError(position)


def deberta_row(back: int, buckets: int, top: int) -> int:
    """DeBERTa-v2's row for i - j = ``back``: its log bucket (transformers' float32 logarithm)
    plus the span, clamped to the table."""
    span = buckets or top
    mid = buckets // 2
    if buckets and abs(back) > mid:
        scaled = np.log(np.float32(abs(back) / mid)) / np.log(np.float32((top - 1) / mid))
        back = int(math.copysign(mid + math.ceil(np.float32(scaled * np.float32(mid - 1))), back))
    return min(max(back + span, 0), 2 * span - 1)


def assert_attention_is_definition(model, ids):
    model = model.double()
    x = model.embed(ids)
    for block in model.blocks:
        attention = block.attention
        q, k, v = attention.split(block.norm_attention(x))
        logits, value_vector = definition_logits(attention, q, k, model.config.position)
        n = ids.shape[1]
        causal = torch.ones(n, n, dtype=torch.bool).tril()
        weights = torch.softmax(logits.masked_fill(~causal, -math.inf), -1)
        want = weights @ v
        if value_vector is not None:
            for ii in range(n):
                want[:, :, ii] += sum(
                    weights[:, :, ii, jj, None] * value_vector(ii, jj) for jj in range(n)
                )
        torch.testing.assert_close(attention.attend(q, k, v), want, rtol=1e-10, atol=1e-10)
        x = block(x)


@pytest.mark.parametrize("name", model_names())
def test_fresh_model_attention_is_its_definition(name):
    config = ModelConfig(
        **{**model_config(name, corpus_vocabulary().size, 64).to_dict(), "layers": 2}
    )
    ids = corpus_vocabulary().encode("def f(x):\n    return x * 2  # a")[None]
    assert_attention_is_definition(build_model(config, seed=5), ids)


@pytest.mark.parametrize(
    "name", ["nope", "sinusoidal", "shaw", "music", "xl", "t5", "alibi", "rope"]
)
def test_extend_gives_the_rows_forward_gives_the_whole_sequence(name):
    """Reading a text in pieces, each against the kept keys and values of the ones before
    (a prompt, then one character at a time), gives the logits of reading it whole."""
    model = build_model(ModelConfig(**{**tiny(name).to_dict(), "layers": 2}), seed=3).eval()
    ids = corpus_vocabulary().encode("def f(x):\n    return x * 2  # and a longer tail")[None]
    with torch.no_grad():
        whole = model(ids)
    logits, cache = model.extend(ids[:, :20])
    rows = [logits]
    for position in range(20, ids.shape[1]):
        logits, cache = model.extend(ids[:, position : position + 1], cache)
        rows.append(logits)
    torch.testing.assert_close(torch.cat(rows, dim=1), whole, rtol=1e-5, atol=1e-5)
    assert [k.shape[2] for k, _ in cache] == [ids.shape[1]] * 2


@pytest.mark.parametrize("layers", [None, 1, 2, 3])
def test_attention_inputs_are_what_each_layer_saw(layers):
    """attention_inputs gives, for the first ``layers`` layers, the q, k, v each block's
    attention is handed on the way through the whole model (norm, then split)."""
    model = load("shaw-k2")
    ids = corpus_vocabulary().encode(held_out_text()[:50])[None]
    want, x = [], model.embed(ids)
    with torch.no_grad():
        for block in model.blocks:
            want.append(block.attention.split(block.norm_attention(x)))
            x = block(x)
        got = model.attention_inputs(ids, layers)
    assert len(got) == (len(model.blocks) if layers is None else layers)
    for seen, expected in zip(got, want, strict=False):
        for a, b in zip(seen, expected, strict=True):
            torch.testing.assert_close(a, b, rtol=0, atol=0)


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_model_attention_is_its_definition(name):
    ids = corpus_vocabulary().encode(held_out_text()[:40])[None]
    assert_attention_is_definition(load(name), ids)


def test_every_position_has_a_definition():
    assert set(positions()) == {spec["position"] for spec in specs().values()}


# ---- what ships ------------------------------------------------------------------------------


def test_every_model_is_shipped_small_and_in_results():
    shipped = results()
    assert FAMILY_DIR == ROOT / "relpos_lab" / "family" / "checkpoints"
    assert SHIPPED == model_names()
    assert set(shipped["models"]) == set(model_names())
    total = 0
    for name in model_names():
        size = (FAMILY_DIR / f"{name}.pt").stat().st_size
        total += size
        # each under 1.25 MiB: DeBERTa's relative table and two projections per layer make it
        # the largest (546,536 parameters, 1.06 MiB in float16), the others 0.86-0.95 MB
        assert size <= 1.25 * 2**20, (name, size)
        record = shipped["models"][name]
        assert record["spec"] == specs()[name]
        model = load(name)
        assert record["parameters"] == sum(p.numel() for p in model.parameters() if p.requires_grad)
        if record["position"] == "shaw":
            k = model.blocks[0].attention.scheme.max_relative_position
            assert (
                k == clip_distance(name) == record["spec"]["scheme_params"]["max_relative_position"]
            )
    assert total <= 16 * 2**20
    corpus = shipped["corpus"]
    assert (corpus["characters"], corpus["sha256"]) == (CORPUS_CHARS, CORPUS_SHA256)
    assert corpus["vocabulary_size"] == corpus_vocabulary().size
    assert corpus["eval_characters"] == EVAL_CHARS


@pytest.mark.parametrize("name", SHIPPED)
def test_evaluation_reproduces_results(name):
    """Every length, afresh from the checkpoint, to the 3 significant figures results.json
    is read at (the README prints 3 decimals)."""
    model = load(name)
    span = eval_span()
    for length, want in results()["models"][name]["bpc"].items():
        got = bits_per_character(model, span, int(length))
        assert got == pytest.approx(want, abs=5e-4), (name, length)


def test_eval_command_prints_the_shipped_number(capsys):
    main(["eval", "nope", "--length", "256"])
    printed = capsys.readouterr().out
    match = re.fullmatch(r"bits per character: (\d+\.\d+)\n", printed)
    assert match, printed
    assert float(match.group(1)) == pytest.approx(
        results()["models"]["nope"]["bpc"]["256"], abs=5e-4
    )


def test_eval_command_refuses_a_length_that_does_not_divide_the_span(capsys):
    with pytest.raises(SystemExit):
        main(["eval", "alibi", "--length", "100"])
    assert "--length must be a positive divisor" in capsys.readouterr().err


def test_readme_tables_are_generated_from_results():
    readme = ROOT / "docs" / "experiments.md"
    assert check_readme(readme, results()) == []
    tables = readme_tables(results())
    for name in model_names():
        for value in results()["models"][name]["bpc"].values():
            assert f"{value:.3f}" in tables


def test_table_check_fails_on_drift(tmp_path):
    drifted = json.loads(json.dumps(results()))
    drifted["models"]["rope"]["bpc"]["64"] += 0.01
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{readme_tables(results())}\nmore\n")
    assert check_readme(readme, results()) == []
    assert check_readme(readme, drifted)
    readme.write_text("no tables")
    assert BEGIN in check_readme(readme, results())[0] and END in check_readme(readme, results())[0]


def test_bench_prints_one_row_per_model_against_shaw(capsys):
    main(["bench", "alibi", "shaw", "--steps", "1"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == ["alibi", "shaw"]
    assert rows[1].endswith("| 1.00 |")


@pytest.mark.parametrize("name", ["music", "xl", "t5", "alibi", "rope"])
def test_inference_in_blocks_of_rows_equals_the_whole_forward(name):
    """Without gradients a text longer than INFERENCE_ROWS attends in blocks of query rows
    (a quarter of the memory at n = 1024); with gradients the whole (h, n, n) is built. The
    two agree to float32 rounding on every next-character logit."""
    from relpos_lab.family.model import INFERENCE_ROWS

    model, _ = load_with_vocabulary(name)
    ids = torch.randint(0, model.config.vocab, (1, 2 * INFERENCE_ROWS + 37))
    with torch.no_grad():
        blocked = model(ids)
    whole = model(ids).detach()  # gradients on: the unblocked path
    torch.testing.assert_close(blocked, whole, rtol=1e-5, atol=5e-5)
