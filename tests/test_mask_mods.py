"""The masks as FlexAttention mask_mods (``relpos_core.mask_mods``) against their definitions.

Each mask's definition is written here as a rule on (i, j) and filled in by loops; ``dense``
must give it, torch's ``create_block_mask`` and eager ``flex_attention`` must honour it, and
``block_kinds`` must sort FlexAttention's blocks as counting the padded mask block by block does.
"""

from __future__ import annotations

import ast
import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

from relpos_core import mask_mods as mm
from relpos_core.mods import Mod

# eager FlexAttention warns that it runs its unfused reference: that is what is checked here
pytestmark = pytest.mark.filterwarnings(
    "ignore:flex_attention called without torch.compile:UserWarning"
)

F64 = torch.float64
SIZES = [1, 7, 16, 33, 130, 257]  # 130 and 257 cross 128-blocks with a ragged last one


def loops(rule, n_q, n_k):
    """The mask a rule on (i, j) defines, cell by cell."""
    return torch.tensor([[bool(rule(i, j)) for j in range(n_k)] for i in range(n_q)]).reshape(
        n_q, n_k
    )


def segments_of(n, seed, sorted_ids=True):
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, max(1, n // 5), (n,), generator=gen)
    return ids.sort().values if sorted_ids else ids


def cases(n):
    """(mod, rule on (i, j)) for every mask at length n, over its parameters' edges."""
    out = [(mm.causal(), lambda i, j: j <= i)]
    for w in sorted({1, min(3, n), (n + 1) // 2, n}):
        out.append((mm.sliding_window(w, n), lambda i, j, w=w: i - w < j <= i))
        for s in sorted({0, 1, w // 2, w} & set(range(w + 1))):
            out.append((mm.sinks(s, w, n), lambda i, j, s=s, w=w: j <= i and (j < s or i - j < w)))
    for p in sorted({0, 1, n // 4, n}):
        out.append((mm.prefix_lm(p, n), lambda i, j, p=p: j < p or j <= i))
    for v in sorted({1, (n + 1) // 2, n}):
        out.append((mm.padding(v, n), lambda i, j, v=v: j < v))
    for seed, ordered in ((0, True), (1, False)):
        seg = segments_of(n, seed, ordered)
        ids = seg.tolist()
        out.append((mm.document(seg), lambda i, j, ids=ids: ids[i] == ids[j]))
    return out


@pytest.mark.parametrize("n", SIZES)
def test_dense_is_the_mask_it_stands_for(n):
    for mod, rule in cases(n):
        got = mm.dense(mod, n, n)
        assert got.dtype == torch.bool and got.shape == (n, n)
        assert torch.equal(got, loops(rule, n, n)), mod.source


def test_dense_with_fewer_queries_than_keys():
    for mod, rule in cases(33):
        assert torch.equal(mm.dense(mod, 20, 33), loops(rule, 20, 33)), mod.source


@given(
    n=st.integers(1, 40),
    w=st.integers(1, 40),
    s=st.integers(0, 40),
    p=st.integers(0, 40),
    v=st.integers(1, 40),
    seed=st.integers(0, 1000),
)
def test_masks_at_random_settings(n, w, s, p, v, seed):
    w, p, v = min(w, n), min(p, n), min(v, n)
    s = min(s, w)
    seg = segments_of(n, seed, sorted_ids=seed % 2 == 0)
    for mod, rule in [
        (mm.sliding_window(w, n), lambda i, j: i - w < j <= i),
        (mm.sinks(s, w, n), lambda i, j: j <= i and (j < s or i - j < w)),
        (mm.prefix_lm(p, n), lambda i, j: j < p or j <= i),
        (mm.padding(v, n), lambda i, j: j < v),
        (mm.document(seg), lambda i, j: seg[i] == seg[j]),
    ]:
        assert torch.equal(mm.dense(mod, n, n), loops(rule, n, n)), mod.source


@pytest.mark.parametrize("how", ["and", "or"])
@pytest.mark.parametrize("n", [7, 33, 130])
def test_combine_is_the_elementwise_and_or(how, n):
    op = torch.logical_and if how == "and" else torch.logical_or
    groups = [
        [mm.causal(), mm.document(segments_of(n, 2))],
        [mm.sliding_window(min(4, n), n), mm.padding((n + 1) // 2, n)],
        # same names twice (two windows, two documents closing over "segments"): renamed apart
        [mm.sliding_window(2, n), mm.sliding_window(n, n), mm.prefix_lm(n // 3, n)],
        [mm.document(segments_of(n, 3)), mm.document(segments_of(n, 4, False)), mm.sinks(1, 2, n)],
    ]
    for parts in groups:
        both = mm.combine(parts, how)
        want = mm.dense(parts[0], n, n)
        for part in parts[1:]:
            want = op(want, mm.dense(part, n, n))
        assert torch.equal(mm.dense(both, n, n), want), both.source
        assert both.kind == "mask_mod" and both.name in both.source
    # a combination of combinations: the inner parts' names stay apart from the outer ones
    seg5, seg6 = segments_of(n, 5).tolist(), segments_of(n, 6).tolist()
    inner = mm.combine([mm.causal(), mm.document(torch.tensor(seg5))], "or")
    outer = mm.combine([inner, mm.causal(), mm.document(torch.tensor(seg6))], how)
    rules = [
        lambda i, j: j <= i or seg5[i] == seg5[j],
        lambda i, j: j <= i,
        lambda i, j: seg6[i] == seg6[j],
    ]
    pick = all if how == "and" else any
    want = loops(lambda i, j: pick(rule(i, j) for rule in rules), n, n)
    assert torch.equal(mm.dense(outer, n, n), want), outer.source


def attention_under(q, k, v, allowed):
    """Softmax attention with the dense mask (the definition FlexAttention must meet)."""
    logits = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    return torch.softmax(logits.masked_fill(~allowed, float("-inf")), -1) @ v


@pytest.mark.parametrize("n", [7, 33, 130])
@pytest.mark.parametrize("block", [16, 128])
def test_flex_attention_with_the_block_mask_is_attention_under_the_dense_mask(n, block):
    gen = torch.Generator().manual_seed(n)
    q, k, v = (torch.randn(1, 2, n, 8, generator=gen, dtype=F64) for _ in range(3))
    w = min(5, n)
    mods = [mm.causal(), mm.sliding_window(w, n), mm.sinks(2 % (w + 1), w, n)]
    mods += [
        mm.prefix_lm(n // 4, n),
        mm.padding((n + 1) // 2, n),
        mm.document(segments_of(n, 1, False)),
    ]
    mods += [
        mm.combine([mm.causal(), mm.document(segments_of(n, 7))], "and"),
        mm.combine([mm.sliding_window(min(3, n), n), mm.prefix_lm(n // 2, n)], "or"),
    ]
    for mod in mods:
        allowed = mm.check_rows(mm.dense(mod, n, n))
        blocks = create_block_mask(mod.fn, 1, 1, n, n, device="cpu", BLOCK_SIZE=block)
        got = flex_attention(q, k, v, block_mask=blocks)
        torch.testing.assert_close(got, attention_under(q, k, v, allowed), msg=mod.source)


def count_blocks(allowed, block):
    """Kinds by counting: the mask padded with False to whole blocks, a block skipped when no
    cell is allowed, full when every cell is, partial otherwise; and the share skipped."""
    n_q, n_k = allowed.shape
    rows, cols = -(-n_q // block), -(-n_k // block)
    padded = torch.zeros(rows * block, cols * block, dtype=torch.bool)
    padded[:n_q, :n_k] = allowed
    kinds = torch.zeros(rows, cols, dtype=torch.int64)
    for r in range(rows):
        for c in range(cols):
            cells = padded[r * block : (r + 1) * block, c * block : (c + 1) * block]
            kinds[r, c] = 0 if not cells.any() else 2 if cells.all() else 1
    return kinds, (kinds == 0).sum().item() / kinds.numel()


@pytest.mark.parametrize("block", [16, 32, 128])
@pytest.mark.parametrize(("n_q", "n_k"), [(33, 33), (128, 128), (200, 200), (130, 257)])
def test_block_kinds_count_the_dense_mask_block_by_block(block, n_q, n_k):
    n = max(n_q, n_k)
    mods = [
        mm.causal(),
        mm.sliding_window(min(40, n), n),
        mm.sinks(4, min(40, n), n),
        mm.prefix_lm(n // 4, n),
    ]
    mods += [mm.padding(n // 2 + 3, n), mm.document(segments_of(n, 8))]
    mods += [mm.combine([mm.causal(), mm.document(segments_of(n, 9))], "and")]
    for mod in mods:
        kinds, skipped = mm.block_kinds(mod, n_q, n_k, block)
        want, want_skipped = count_blocks(mm.dense(mod, n_q, n_k), block)
        assert torch.equal(kinds, want), (mod.source, kinds, want)
        assert skipped == pytest.approx(want_skipped)
        # the page's way, without create_block_mask: the same blocks from the dense mask
        tiles, tiles_skipped = mm.tile_kinds(mm.dense(mod, n_q, n_k), block)
        assert torch.equal(tiles, kinds) and tiles_skipped == skipped
    # a ragged edge is never full, even where every cell inside the sequence is allowed
    kinds, _ = mm.block_kinds(mm.padding(n_k, n_k), n_q, n_k, block)
    assert (kinds[-1] == 2).any() == (n_q % block == 0 and n_k >= block)


def test_block_kinds_default_block_is_flex_attentions():
    kinds, skipped = mm.block_kinds(mm.causal(), 512, 512)
    assert kinds.shape == (4, 4) and skipped == pytest.approx(6 / 16)


def free_names(source):
    """Names the source reads that it does not define: its globals."""
    tree = ast.parse(source)
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    params = {
        a.arg
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
        for a in node.args.args
    }
    read = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    assert not any(isinstance(node, (ast.Import, ast.ImportFrom)) for node in ast.walk(tree))
    return read - defined - params


def test_source_reads_only_torch_and_what_it_closes_over():
    n = 33
    mods = [mod for mod, _ in cases(n)] + [
        mm.combine([mm.document(segments_of(n, 1)), mm.document(segments_of(n, 2))], "and")
    ]
    for mod in mods:
        assert free_names(mod.source) <= {"torch"} | set(mod.closes_over), mod.source
        assert "relpos_core" not in mod.source and "mask_mods" not in mod.source
        namespace = {"torch": torch, **mod.closes_over}  # what the downloaded file provides
        exec(compile(mod.source, "<download>", "exec"), namespace)  # noqa: S102
        fn = namespace[mod.name]
        i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
        assert torch.equal(torch.broadcast_to(fn(0, 0, i, j), (n, n)), mm.dense(mod, n, n))


def test_source_writes_its_numbers_in():
    assert "< 16)" in mm.sliding_window(16, 40).source
    assert "< 3)" in mm.sinks(3, 16, 40).source and "< 16)" in mm.sinks(3, 16, 40).source
    assert "kv_idx < 9" in mm.prefix_lm(9, 40).source
    assert "kv_idx < 30" in mm.padding(30, 40).source
    assert mm.padding(30, 40).closes_over == {} and mm.causal().closes_over == {}
    seg = torch.tensor([0, 0, 1], dtype=torch.int32)
    doc = mm.document(seg)
    assert torch.equal(doc.closes_over["segments"], seg.long())
    seg[0] = 5  # the mod keeps its own copy
    assert doc.closes_over["segments"][0] == 0


def test_check_rows_names_the_queries_left_with_no_key():
    seg = torch.tensor([0, 0, 1, 1, 2, 2])
    blind = mm.combine([mm.document(seg), mm.padding(2, 6)], "and")
    with pytest.raises(ValueError, match=r"4 of 6 queries .*\(queries 2, 3, 4, 5\)"):
        mm.check_rows(mm.dense(blind, 6, 6))
    one = mm.combine([mm.document(torch.tensor([0, 0, 1])), mm.padding(2, 3)], "and")
    with pytest.raises(ValueError, match=r"1 of 3 queries .*\(query 2\)"):
        mm.check_rows(mm.dense(one, 3, 3))
    many = mm.combine([mm.document(torch.arange(20) // 10), mm.padding(10, 20)], "and")
    with pytest.raises(ValueError, match=r"10 of 20 .*queries 10, 11, 12, 13, 14 and 5 more"):
        mm.check_rows(mm.dense(many, 20, 20))
    fine = mm.dense(mm.causal(), 4, 4)
    assert mm.check_rows(fine) is fine
    with pytest.raises(ValueError, match=r"allowed .* must be bool, got torch.int64"):
        mm.check_rows(fine.long())


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (
            lambda: mm.sliding_window(0, 8),
            r"window \(keys each query sees, at most n\) must be in \[1, 8\], got 0",
        ),
        (lambda: mm.sliding_window(9, 8), r"window .* must be in \[1, 8\], got 9"),
        (lambda: mm.sliding_window(2, 0), r"n \(sequence length\) must be >= 1, got 0"),
        (
            lambda: mm.sinks(5, 4, 8),
            r"count \(attention sinks, at most the window\) must be in \[0, 4\], got 5",
        ),
        (lambda: mm.sinks(9, 8, 8), r"count .* must be in \[0, 8\], got 9"),
        (lambda: mm.sinks(-1, 4, 8), r"count .* must be in \[0, 4\], got -1"),
        (lambda: mm.sinks(1, 0, 8), r"window .* must be in \[1, 8\], got 0"),
        (
            lambda: mm.prefix_lm(9, 8),
            r"prefix \(keys every query sees, at most n\) must be in \[0, 8\], got 9",
        ),
        (
            lambda: mm.padding(0, 8),
            r"valid \(keys before the padding, at most n\) must be in \[1, 8\], got 0",
        ),
        (lambda: mm.padding(9, 8), r"valid .* must be in \[1, 8\], got 9"),
        (
            lambda: mm.document(torch.zeros(2, 3, dtype=torch.long)),
            r"segments \(one int id .* must have 1 dimensions, got shape \(2, 3\)",
        ),
        (lambda: mm.document(torch.zeros(4)), r"segments .* must hold integers, got torch.float32"),
        (
            lambda: mm.document(torch.ones(4, dtype=torch.bool)),
            r"segments .* must hold integers, got torch.bool",
        ),
        (
            lambda: mm.document(torch.zeros(0, dtype=torch.long)),
            r"segments .* at least 1 position, got shape \(0,\)",
        ),
        (
            lambda: mm.combine([mm.causal()], "xor"),
            r"how \(how the masks combine\) must be one of and, or; got 'xor'",
        ),
        (
            lambda: mm.combine([], "and"),
            r"mods \(the masks to combine\) must hold at least 1 mask_mod, got none",
        ),
        (lambda: mm.combine([mm.causal(), "causal"]), r"mods\[1\] must be a mask_mod .*, got str"),
        (
            lambda: mm.combine(
                [Mod("score_mod", "bias", "def bias(s, b, h, q, kv):\n    return s")]
            ),
            r"mods\[0\] must be a mask_mod .*, got a score_mod 'bias'",
        ),
        (lambda: mm.dense(mm.causal(), 0, 4), r"n_q \(number of queries\) must be >= 1, got 0"),
        (
            lambda: mm.dense(mm.document(torch.tensor([0, 1])), 3, 3),
            r"n_q, n_k = 3, 3 reach past the positions document closes over",
        ),
        (
            lambda: mm.block_kinds(mm.causal(), 8, 8, 0),
            r"block_size \(FlexAttention's block, at most max\(128, n_q, n_k\)\) .* got 0",
        ),
        (
            lambda: mm.block_kinds(mm.causal(), 300, 200, 301),
            r"block_size .* must be in \[1, 300\], got 301",
        ),
        (
            lambda: mm.block_kinds(mm.causal(), 8, 0, 16),
            r"n_k \(number of keys\) must be >= 1, got 0",
        ),
    ],
)
def test_bad_input_is_refused_in_words(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_wrong_types_are_refused_in_words():
    with pytest.raises(TypeError, match=r"window .* must be an int, got float 2.5"):
        mm.sliding_window(2.5, 8)
    with pytest.raises(TypeError, match=r"segments .* must be a torch.Tensor, got list"):
        mm.document([0, 0, 1])
