"""Each scheme folder's FlexAttention ``score_mod`` against the scheme's own definition, on the
CPU, in float64, at several shapes: square self-attention, fewer queries than keys placed by a
query offset (a cache, a block of rows), more queries than keys, causal and two-sided, one and
several heads, a batch.

Forward: ``flex_attention(q, k, v, score_mod=mod.fn, scale=mod.scale)`` (eager: torch's
reference implementation), under the causal mask's BlockMask where causal, equals the scheme's
output; for a scheme with a value term, the scheme's output less that term
(``scheme.relative_values`` of its weights), which FlexAttention cannot add. The logits: the same
``mod.fn`` evaluated on the whole score grid (broadcast index tensors b (B,1,1,1), h (1,H,1,1),
q_idx (1,1,Q,1), kv_idx (1,1,1,K)) equal ``scheme.logits``.

Backward: torch 2.13's FlexAttention raises NotImplementedError for a backward on the CPU, so
the same ``mod.fn`` is evaluated densely on the grid under autograd (softmax over the allowed
keys, times v, plus the scheme's value term) and its gradients with respect to q, k, v and every
parameter of the scheme, reached through the tables the mod closes over, equal the scheme's.

A new scheme folder is covered with no edit here: the cases run over the walk of the folders
(``SMALL`` only shortens some tables so that clipping and bucketing are reached at these n).
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

from relpos_core import relative_attention
from relpos_core.mods import Mod
from relpos_core.schemes import make_scheme, scheme_entries, scheme_names
from relpos_core.schemes.base import PositionScheme
from relpos_core.schemes.score_mods import (
    has_score_mod,
    score_mod_module,
    score_mod_of,
    value_term_words,
)

F64 = torch.float64
# FlexAttention outside torch.compile says it runs its reference implementation: that is the
# point here (the compiled CPU kernel has no backward either)
pytestmark = pytest.mark.filterwarnings(
    "ignore:flex_attention called without torch.compile:UserWarning"
)

# Tables shorter than the sequences below, so each scheme's clipping or bucketing is reached:
# Shaw clips at 2, the Music Transformer's table ends at |r| = 2, T5's exact buckets stop at 2
# and its log buckets at 10, DeBERTa's log buckets start past 2 and stop at 8. Any other
# scheme runs at its defaults.
SMALL = {
    "shaw": {"max_relative_position": 2},
    "music": {"max_relative_position": 3},
    "t5": {"num_buckets": 8, "max_distance": 10},
    "deberta": {"position_buckets": 4, "max_relative_positions": 8},
}
# A setting that adds a term the defaults leave off: the Music Transformer's value term.
EXTRA = [("music", {"max_relative_position": 3, "values": True})]

WITH_MOD = [name for name in scheme_names() if has_score_mod(name)]
VARIANTS = [(name, SMALL.get(name, {})) for name in WITH_MOD] + [
    (name, settings) for name, settings in EXTRA if name in WITH_MOD
]
VARIANT_IDS = [name + ("+values" if s.get("values") else "") for name, s in VARIANTS]
WORDS_ONLY = [name for name in scheme_names() if score_mod_module(name) and not has_score_mod(name)]

# (b, h, n_q, n_k, d, query_offset, causal)
CASES = [
    (1, 2, 9, 9, 4, 0, False),  # square self-attention
    (1, 2, 9, 9, 4, 0, True),
    (2, 3, 5, 13, 4, 8, True),  # a cache: the queries at the last positions
    (2, 3, 5, 13, 4, 3, False),  # a block of rows inside a longer sequence
    (1, 1, 7, 4, 2, 1, False),  # more queries than keys, one head of width 2
]
CASE_IDS = [f"b{b}h{h}q{nq}k{nk}d{d}o{o}{'c' if c else ''}" for b, h, nq, nk, d, o, c in CASES]
CLOSE = {"rtol": 1e-10, "atol": 1e-12}


def build(name: str, settings: dict, heads: int, head_dim: int) -> PositionScheme:
    return make_scheme(name, heads, head_dim, seed=3, **settings).double()


def inputs(b, h, n_q, n_k, d, seed=0, grad=False) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    shapes = ((b, h, n_q, d), (b, h, n_k, d), (b, h, n_k, d))
    return tuple(torch.randn(s, generator=gen, dtype=F64).requires_grad_(grad) for s in shapes)


def allowed(n_q: int, n_k: int, offset: int, causal: bool) -> torch.Tensor:
    """bool (n_q, n_k): the query at position offset + i sees key j (j <= offset + i if causal)."""
    rows = torch.arange(n_q)[:, None] + offset
    keys = torch.arange(n_k)[None, :]
    return keys <= rows if causal else torch.ones(n_q, n_k, dtype=torch.bool)


def causal_block_mask(n_q: int, n_k: int, offset: int):
    def mask_mod(b, h, q_idx, kv_idx):
        return kv_idx <= q_idx + offset

    return create_block_mask(mask_mod, None, None, n_q, n_k, device="cpu")


def grid_logits(fn, scale: float | None, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """A score_mod evaluated on every (b, h, i, j) at once: (b, h, n_q, n_k)."""
    b, h, n_q, d = q.shape
    n_k = k.shape[2]
    score = (q @ k.transpose(-2, -1)) * (d**-0.5 if scale is None else scale)
    index = [torch.arange(n).view([n if a == axis else 1 for a in range(4)])
             for axis, n in enumerate((b, h, n_q, n_k))]  # fmt: skip
    return fn(score, *index).expand(score.shape)


def mod_for(name, settings, case, grad=False):
    b, h, n_q, n_k, d, offset, causal = case
    scheme = build(name, settings, h, d)
    q, k, v = inputs(b, h, n_q, n_k, d, grad=grad)
    with torch.set_grad_enabled(grad):  # FlexAttention forward only: tables without a graph
        mod = score_mod_of(scheme, q, k, offset, causal=causal)
    assert isinstance(mod, Mod) and mod.kind == "score_mod", mod
    return scheme, q, k, v, mod


def test_every_folder_gives_a_score_mod_or_says_why_not() -> None:
    folders = [entry.name for entry in scheme_entries() if entry.folder]
    assert len(folders) >= 7
    for name in folders:
        module = score_mod_module(name)
        assert module is not None, f"{name}'s folder has no score_mod module"
        assert not hasattr(module, "SCORE_MOD"), f"{name}: a placeholder"
    assert len(WITH_MOD) >= 6 and WORDS_ONLY  # every paper's scheme but RoPE has one


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@pytest.mark.parametrize(("name", "settings"), VARIANTS, ids=VARIANT_IDS)
def test_flex_attention_with_the_score_mod_equals_the_scheme(name, settings, case) -> None:
    scheme, q, k, v, mod = mod_for(name, settings, case)
    _, _, n_q, n_k, _, offset, causal = case
    block_mask = causal_block_mask(n_q, n_k, offset) if causal else None
    with torch.no_grad():
        out = flex_attention(q, k, v, score_mod=mod.fn, scale=mod.scale, block_mask=block_mask)
        z, weights = scheme(q, k, v, causal=causal, query_offset=offset)
        extra = scheme.relative_values(weights, causal, offset)
        logits = grid_logits(mod.fn, mod.scale, q, k)
        expected_logits = scheme.logits(q, k, causal=causal, query_offset=offset)
    assert (extra is not None) == scheme.has_value_term
    without_values = z if extra is None else z - extra
    torch.testing.assert_close(out, without_values, **CLOSE)
    torch.testing.assert_close(logits, expected_logits, **CLOSE)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@pytest.mark.parametrize(("name", "settings"), VARIANTS, ids=VARIANT_IDS)
def test_the_score_mod_has_the_schemes_gradients(name, settings, case) -> None:
    _, _, n_q, n_k, _, offset, causal = case
    scheme, q, k, v, _ = mod_for(name, settings, case, grad=True)
    weigh = torch.randn(q.shape[:3] + v.shape[-1:], generator=torch.Generator().manual_seed(9),
                        dtype=F64)  # fmt: skip
    wrt = [q, k, v, *scheme.parameters()]

    z, _ = scheme(q, k, v, causal=causal, query_offset=offset)
    expected = torch.autograd.grad((z * weigh).sum(), wrt, allow_unused=True)

    mod = score_mod_of(scheme, q, k, offset, causal=causal)  # its tables built from q, k, params
    logits = grid_logits(mod.fn, mod.scale, q, k)
    weights = logits.masked_fill(~allowed(n_q, n_k, offset, causal), float("-inf")).softmax(-1)
    out = weights @ v
    extra = scheme.relative_values(weights, causal, offset)
    out = out if extra is None else out + extra
    got = torch.autograd.grad((out * weigh).sum(), wrt, allow_unused=True)

    names = ["q", "k", "v", *(n for n, _ in scheme.named_parameters())]
    for what, mine, theirs in zip(names, got, expected, strict=True):
        assert (mine is None) == (theirs is None), what
        if theirs is not None:
            torch.testing.assert_close(mine, theirs, **CLOSE, msg=lambda m, w=what: f"{w}: {m}")


def test_flex_attention_has_no_cpu_backward_here() -> None:
    """Why the gradients above come from the dense evaluation: if torch gains a CPU backward,
    compare it directly."""
    q, k, v = inputs(1, 1, 3, 3, 2, grad=True)
    with pytest.raises(NotImplementedError, match="backward on CPU"):
        flex_attention(q, k, v).sum().backward()


@pytest.mark.parametrize("name", WITH_MOD)
def test_the_source_runs_with_torch_alone(name: str) -> None:
    """What the source reads: its arguments, its own locals, ``torch`` and the tensors it
    closes over; no import, no library name."""
    _, q, k, _, mod = mod_for(name, SMALL.get(name, {}), CASES[2])
    tree = ast.parse(mod.source)
    assert [type(node) for node in tree.body] == [ast.FunctionDef]
    assert tree.body[0].name == mod.name
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    arguments = {a.arg for a in tree.body[0].args.args}
    assert arguments == {"score", "b", "h", "q_idx", "kv_idx"}
    names = [n for n in ast.walk(tree) if isinstance(n, ast.Name)]
    stored = {n.id for n in names if isinstance(n.ctx, ast.Store)}
    read = {n.id for n in names if isinstance(n.ctx, ast.Load)}
    assert read - stored - arguments <= {"torch", *mod.closes_over}
    assert set(mod.closes_over) <= read  # nothing closed over that the function does not read
    assert "relpos" not in mod.source
    for tensor_name in mod.closes_over:  # the words name every tensor it closes over
        assert re.search(rf"\b{tensor_name}\b", mod.words), tensor_name


def test_every_source_runs_in_a_python_that_has_only_torch(tmp_path: Path) -> None:
    """Each source exec'd in a fresh, isolated interpreter (the repository off its path) with
    the closed-over tensors loaded from a file, as a downloaded script would: the same logits."""
    saved, expected = {}, {}
    for name in WITH_MOD:
        _, q, k, _, mod = mod_for(name, SMALL.get(name, {}), CASES[3])
        tensors = {key: value.detach() for key, value in mod.closes_over.items()}
        saved[name] = (mod.source, mod.name, tensors, q, k, mod.scale)
        expected[name] = grid_logits(mod.fn, mod.scale, q, k).detach()
    torch.save(saved, tmp_path / "mods.pt")
    script = """
import sys, torch
try:
    import relpos_core
    sys.exit("the library is importable: this is no test of a file with torch alone")
except ImportError:
    pass
saved = torch.load("mods.pt")
out = {}
for key, (source, name, tensors, q, k, scale) in saved.items():
    namespace = {"torch": torch, **tensors}
    exec(source, namespace)
    b, h, n_q, d = q.shape
    n_k = k.shape[2]
    score = (q @ k.transpose(-2, -1)) * (d ** -0.5 if scale is None else scale)
    idx = [torch.arange(n).view([n if a == axis else 1 for a in range(4)])
           for axis, n in enumerate((b, h, n_q, n_k))]
    out[key] = namespace[name](score, *idx).expand(score.shape)
torch.save(out, "out.pt")
"""
    done = subprocess.run(
        [sys.executable, "-I", "-c", script], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    got = torch.load(tmp_path / "out.pt")
    assert set(got) == set(expected)
    for name in expected:
        torch.testing.assert_close(got[name], expected[name], rtol=0, atol=0)


@pytest.mark.parametrize("name", WITH_MOD)
def test_the_tables_are_smaller_than_the_term(name: str) -> None:
    """It closes over tables by distance, by query or by key, never the (n_q, n_k) term."""
    _, q, k, _, mod = mod_for(name, SMALL.get(name, {}), CASES[3])
    n_q, n_k = q.shape[2], k.shape[2]
    for key, tensor in mod.closes_over.items():
        assert tuple(tensor.shape[-2:]) != (n_q, n_k), key


def test_a_scheme_that_is_no_score_mod_says_how_flexattention_runs_it() -> None:
    for name in WORDS_ONLY:
        scheme = build(name, {}, 2, 4)
        q, k, _ = inputs(1, 2, 3, 3, 4)
        words = score_mod_of(scheme, q, k)
        assert isinstance(words, str) and "flex_attention(" in words
        assert words == score_mod_module(name).NOT_A_SCORE_MOD


ROPE_SETTINGS = [{}, {"scaling": {"rope_type": "yarn", "factor": 4.0,
                                  "original_max_position_embeddings": 4}}]  # fmt: skip


@pytest.mark.skipif("rope" not in WORDS_ONLY, reason="RoPE's folder gives words, not a mod")
@pytest.mark.parametrize("settings", ROPE_SETTINGS, ids=["plain", "yarn"])
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_rope_is_flex_attention_over_the_rotated_vectors(case, settings) -> None:
    """What RoPE's words say: flex_attention(rotate(q), rotate(k), v) with no score_mod, the
    rotation from the scheme's own ``rotate_queries_keys``."""
    b, h, n_q, n_k, d, offset, causal = case
    scheme = build("rope", settings, h, d)
    q, k, v = inputs(b, h, n_q, n_k, d)
    words = score_mod_of(scheme, q, k, offset, causal=causal)
    assert "rotate_queries_keys" in words
    block_mask = causal_block_mask(n_q, n_k, offset) if causal else None
    q_rot, k_rot = scheme.rotate_queries_keys(q, k, offset)
    out = flex_attention(q_rot, k_rot, v, block_mask=block_mask)
    z, _ = scheme(q, k, v, causal=causal, query_offset=offset)
    torch.testing.assert_close(out, z, **CLOSE)


@pytest.mark.parametrize("name", scheme_names())
def test_value_term_words_exactly_where_a_scheme_has_a_value_term(name: str) -> None:
    scheme = make_scheme(name, 2, 4)
    overrides = type(scheme).relative_values is not PositionScheme.relative_values
    words = value_term_words(name)
    assert (words is not None) == overrides
    if words is None:
        return
    assert "score_mod" in words and "relative_values(weights, causal, query_offset)" in words
    assert hasattr(scheme, "relative_values")
    for dotted in re.findall(r"relpos_core(?:\.\w+)+", words):  # every call it names exists
        module, _, attribute = dotted.rpartition(".")
        assert hasattr(importlib.import_module(module), attribute), dotted


@pytest.mark.skipif("shaw" not in WITH_MOD, reason="Shaw's folder has no score_mod")
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_shaw_flex_plus_the_named_value_term_is_relative_attention(case) -> None:
    """Shaw's words: FlexAttention's output plus the value term is the library's
    ``relative_attention``; with a zero value table, FlexAttention alone is."""
    scheme, q, k, v, mod = mod_for("shaw", SMALL["shaw"], case)
    _, _, n_q, n_k, _, offset, causal = case
    assert "relpos_core.relative_attention" in value_term_words("shaw")
    block_mask = causal_block_mask(n_q, n_k, offset) if causal else None
    with torch.no_grad():
        out = flex_attention(q, k, v, score_mod=mod.fn, scale=mod.scale, block_mask=block_mask)
        zero = torch.zeros_like(scheme.table_v)
        kwargs = {"causal": causal, "query_offset": offset}
        plain = relative_attention(q, k, v, scheme.table_k, zero, **kwargs)
        whole, weights = relative_attention(
            q, k, v, scheme.table_k, scheme.table_v, return_weights=True, **kwargs
        )
        extra = scheme.relative_values(weights, causal, offset)
    torch.testing.assert_close(out, plain, **CLOSE)
    torch.testing.assert_close(out + extra, whole, **CLOSE)


def test_bad_input_is_refused_in_words() -> None:
    name = WITH_MOD[0]
    scheme = build(name, SMALL.get(name, {}), 2, 4)
    q, k, _ = inputs(1, 2, 3, 3, 4)
    with pytest.raises(ValueError, match=r"q must have shape \(b, heads=2"):
        score_mod_of(scheme, q[:, :1], k)
    with pytest.raises(TypeError, match="causal must be a bool"):
        score_mod_of(scheme, q, k, causal="yes")
    with pytest.raises(ValueError, match="query_offset"):
        score_mod_of(scheme, q, k, -1)
    with pytest.raises(ValueError, match="scheme must be a PositionScheme"):
        score_mod_of("alibi", q, k)
    with pytest.raises(ValueError, match="score_mod tables .* need"):
        score_mod_of(scheme, q, k, max_bytes=1)
