"""The public API under Hypothesis: every call returns what the definition gives, or raises a
ValueError or TypeError that names the argument at fault; never IndexError, RuntimeError or
MemoryError, and nothing large is allocated before a refusal.

Inputs: masks of every broadcastable rank (0 to 4) and of ranks that do not broadcast, bool,
integer and float masks, every dtype torch has for q, zero batch or heads, empty sequences,
and sizes from a few cells to far beyond memory. One fault at most is put into each call, so
the error it raises must name that fault. Seeded (``derandomize``) and bounded.
"""

from __future__ import annotations

import contextlib
import re
from unittest import mock

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import relpos_core as rc
import relpos_core.guard as guard
from relpos_core.schemes import make_scheme
from relpos_core.schemes.catalogue import scheme_entry, scheme_names
from tests.largest_tensor import LargestTensor
from tests.schemes.plain import softmax_loop
from tests.test_attention import reference_attention, tolerance

FUZZ = settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
NAMED = (ValueError, TypeError)
MACHINE = 64 * 2**20  # the device memory the size properties assume: 64 MiB


@contextlib.contextmanager
def machine_of(size: int):
    """The guard's default limit (the device's memory) fixed at ``size`` bytes."""
    with mock.patch.object(guard, "device_memory_bytes", lambda device=None: size):
        yield


# --- relative_attention: the definition, or an error naming the fault -------------------------

FAULTS = (
    "q rank", "q dtype", "k width", "v keys", "table_k rows", "table_v width", "mixed dtype",
    "no query", "no key", "mask shape", "mask rank 5", "mask value", "mask type", "method",
    "causal", "query_offset", "trace", "return_weights with trace", "dropout_p",
    "dropout_p with trace", "generator", "max_bytes bool", "max_bytes negative",
)  # fmt: skip
# the name the message must contain for each fault
NAMES = {
    "q rank": "q", "q dtype": "q", "k width": "k must have shape", "v keys": "v must have shape",
    "table_k rows": "table_k", "table_v width": "table_v", "mixed dtype": "dtype",
    "no query": "q must hold", "no key": "k must hold", "mask shape": "mask",
    "mask rank 5": "mask", "mask value": "mask", "mask type": "mask", "method": "method",
    "causal": "causal", "query_offset": "query_offset", "trace": "trace",
    "return_weights with trace": "return_weights", "dropout_p": "dropout_p",
    "dropout_p with trace": "dropout_p", "generator": "generator",
    "max_bytes bool": "max_bytes", "max_bytes negative": "max_bytes",
}  # fmt: skip
Q_DTYPES = (torch.float16, torch.bfloat16, torch.int64, torch.bool, torch.complex64)
MASK_DTYPES = (torch.bool, torch.uint8, torch.int64, torch.float32)


@st.composite
def attention_calls(draw):
    """(arguments, keyword arguments, the bool (b, h, n_q, n_k) mask meant, fault or None)."""
    fault = draw(st.one_of(st.none(), st.sampled_from(FAULTS)))
    b, h = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    n_q = 0 if fault == "no query" else draw(st.integers(1, 5))
    n_k = 0 if fault == "no key" else draw(st.integers(1, 5))
    d, d_v = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    k = draw(st.sampled_from([0, 1, 3, 7]))
    dtype = draw(st.sampled_from([torch.float32, torch.float64]))
    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**16)))

    def randn(*shape, kind=dtype):
        return torch.randn(*shape, generator=gen, dtype=torch.float64).to(kind)

    q = randn(b, h, n_q, d, kind=draw(st.sampled_from(Q_DTYPES))) if fault == "q dtype" else (
        randn(h, n_q, d) if fault == "q rank" else randn(b, h, n_q, d)
    )  # fmt: skip
    key = randn(b, h, n_k, d + 1 if fault == "k width" else d)
    v = randn(b, h, n_k + 1 if fault == "v keys" else n_k, d_v)
    table_k = randn(2 * k + 2 if fault == "table_k rows" else 2 * k + 1, d)
    other = torch.float64 if dtype == torch.float32 else torch.float32
    table_v = randn(2 * k + 1, d_v + 1 if fault == "table_v width" else d_v,
                    kind=other if fault == "mixed dtype" else dtype)  # fmt: skip

    full = (b, h, n_q, n_k)
    rank = draw(st.integers(-1, 4))  # -1: no mask
    shape = tuple(draw(st.sampled_from([1, size])) for size in full[4 - rank :] if rank >= 0)
    allowed = torch.ones(full, dtype=torch.bool)
    mask = None
    if rank >= 0:
        bools = torch.rand(shape, generator=gen) < 0.7
        allowed = torch.broadcast_to(bools, full)
        mask = bools.to(draw(st.sampled_from(MASK_DTYPES)))
    if fault == "mask shape":
        mask = torch.ones(*full[:-1], n_k + 1, dtype=torch.bool)
    elif fault == "mask rank 5":
        mask = torch.ones(2, *full, dtype=torch.bool)
    elif fault == "mask value":
        mask = torch.full(full, 0.5)
    elif fault == "mask type":
        mask = np.ones(full, dtype=bool)

    options = {
        "mask": mask,
        "causal": 1 if fault == "causal" else draw(st.booleans()),
        "query_offset": -1 if fault == "query_offset" else draw(st.sampled_from([0, 1, n_k])),
        "method": "flash" if fault == "method" else draw(st.sampled_from(rc.ATTENTION_METHODS)),
        "trace": "yes" if fault == "trace" else draw(st.booleans()),
    }
    if fault in ("return_weights with trace", "dropout_p with trace"):
        options["trace"] = True
    if fault == "return_weights with trace":
        options["return_weights"] = True
    elif options["trace"] is False:
        options["return_weights"] = draw(st.booleans())
    if fault in ("dropout_p", "dropout_p with trace"):
        options["dropout_p"] = draw(st.sampled_from([1.5, -0.1, "0.1", float("nan")])) if (
            fault == "dropout_p"
        ) else 0.1  # fmt: skip
    if fault == "generator":
        options["generator"] = "seed 0"
    options["max_bytes"] = {"max_bytes bool": True, "max_bytes negative": -1}.get(
        fault, draw(st.sampled_from([None, None, 10**9, 2000]))
    )
    return (q, key, v, table_k, table_v), options, allowed, fault


def causal_allowed(allowed: torch.Tensor, options: dict) -> torch.Tensor:
    if options["causal"] is not True:
        return allowed
    n_q, n_k = allowed.shape[-2:]
    rows = torch.arange(n_k)[None, :] <= torch.arange(n_q)[:, None] + options["query_offset"]
    return allowed & rows


@FUZZ
@given(call=attention_calls())
def test_relative_attention_is_the_definition_or_a_named_error(call):
    tensors, options, allowed, fault = call
    try:
        result = rc.relative_attention(*tensors, **options)
    except NAMED as error:
        message = str(error)
        if fault is not None:
            assert NAMES[fault] in message, (fault, message)
        else:  # the only refusals of a valid call: a method that cannot run, the memory guard
            assert "cannot run here" in message or "needs about" in message, message
            assert ("method" in message) if "cannot run" in message else "max_bytes" in message
        return
    assert fault is None, f"{fault} was accepted"
    weights, out = reference_attention(
        *(t.numpy() for t in tensors), causal_allowed(allowed, options).numpy(),
        options["query_offset"],
    )  # fmt: skip
    close = tolerance(tensors[0].dtype)
    if options["trace"]:
        torch.testing.assert_close(result.output, torch.from_numpy(out).to(result.output), **close)
        want = torch.from_numpy(weights).to(result.weights.dtype)
        torch.testing.assert_close(result.weights, want, **close)
    elif options.get("return_weights"):
        z, alpha = result
        torch.testing.assert_close(z, torch.from_numpy(out).to(z.dtype), **close)
        torch.testing.assert_close(alpha, torch.from_numpy(weights).to(z.dtype), **close)
    else:
        torch.testing.assert_close(result, torch.from_numpy(out).to(result.dtype), **close)


@FUZZ
@given(
    rank=st.integers(0, 4),
    keep=st.lists(st.booleans(), min_size=4, max_size=4),
    method=st.sampled_from(rc.ATTENTION_METHODS),
    causal=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_a_mask_of_any_rank_means_its_broadcast_on_every_method(rank, keep, method, causal, seed):
    """A key mask (n_k,), a scalar, a (n_q, n_k) pattern ...: the same as the full 4-D mask."""
    gen = torch.Generator().manual_seed(seed)
    full = (2, 3, 4, 4)
    q, k, v = (torch.randn(full[:3] + (2,), generator=gen) for _ in "qkv")
    table = torch.randn(5, 2, generator=gen)
    shape = tuple(size if on else 1 for size, on in zip(full[4 - rank :], keep, strict=False))
    mask = torch.rand(shape, generator=gen) < 0.6
    options = {"causal": causal, "method": method}
    got = rc.relative_attention(q, k, v, table, table, mask=mask, **options)
    want = rc.relative_attention(q, k, v, table, table, mask=mask.expand(full), **options)
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    layer = rc.RelativeMultiHeadAttention(6, 3, 2, method=method)
    x = torch.randn(2, 4, 6, generator=gen)
    torch.testing.assert_close(layer(x, x, x, mask), layer(x, x, x, mask.expand(full)))


# --- sizes near and far beyond memory: refused before allocating, or exact --------------------

BIG = st.one_of(st.integers(1, 3000), st.integers(3000, 10**6), st.integers(10**6, 10**15))


def _expanded(*shape: int) -> torch.Tensor:
    """A (b, h, n, d) float32 tensor of any size that holds one number (a stride-0 view)."""
    return torch.ones(()).expand(*shape)


SIZED_CALLS = {
    "relative_distances": lambda n, m: rc.relative_distances(n, m),
    "relative_index": lambda n, m: rc.relative_index(n, m, 2),
    "causal_mask": lambda n, m: rc.causal_mask(n, m),
    "trailing_padding_mask": lambda n, m: rc.trailing_padding_mask(n, 1),
    "sinusoidal_encoding": lambda n, m: rc.sinusoidal_encoding(n, m),
    "skew_embeddings": lambda n, m: rc.skew_embeddings(torch.zeros(5, min(m, 64)), n),
    "RelativePosition.forward": lambda n, m: rc.RelativePosition(4, 2)(n, m),
    "relative_table": lambda n, m: rc.relative_table(n, m),
    "relative_attention": lambda n, m: rc.relative_attention(
        _expanded(1, 1, n, 4),
        _expanded(1, 1, m, 4),
        _expanded(1, 1, m, 4),
        torch.zeros(5, 4),
        torch.zeros(5, 4),
        method="banded" if n % 2 else "bucket",
    ),  # fmt: skip
    "make_scheme xl": lambda n, m: make_scheme("xl", min(n, 4096), 2 * min(m, 2**15)),
    "make_scheme shaw": lambda n, m: make_scheme(
        "shaw", 1, min(m, 2**16), max_relative_position=min(n, 2**20)
    ),
    "make_scheme music": lambda n, m: make_scheme(
        "music", 1, min(m, 2**16), max_relative_position=n
    ),
    "encoding_similarity": lambda n, m: rc.encoding_similarity(torch.ones(1, 1).expand(n, 1)),
}


def _definition_holds(call: str, n: int, m: int, result: object) -> bool:
    """What the call must have returned, checked against its definition (numpy or a formula)."""
    if call in ("relative_distances", "relative_index", "causal_mask"):  # (n, m) was made
        rows, cols = np.arange(n)[:, None], np.arange(m)[None, :]
    if call == "relative_distances":
        return np.array_equal(result.numpy(), cols - rows)
    if call == "relative_index":
        return np.array_equal(result.numpy(), np.clip(cols - rows, -2, 2) + 2)
    if call == "causal_mask":
        return np.array_equal(result.numpy(), cols <= rows)
    if call == "trailing_padding_mask":
        return result.shape == (1, 1, 1, n) and int(result.sum()) == n - 1
    if call == "sinusoidal_encoding":  # PE[p, 0] = sin(p), PE[p, 1] = cos(p) (channel pair 0)
        p = np.arange(n)
        ok = np.allclose(result[:, 0].numpy(), np.sin(p), atol=1e-5)
        return ok and (m < 2 or np.allclose(result[:, 1].numpy(), np.cos(p), atol=1e-5))
    if call == "skew_embeddings":
        return result.shape == (2 * n - 1, min(m, 64)) and not result.any()
    if call == "RelativePosition.forward":
        return result.shape == (n, m, 4)
    if call == "relative_table":
        return result.shape == (2 * n + 1, m)
    if call == "relative_attention":  # v = 1, zero tables: z = sum_j alpha_ij = 1 (m float32 terms)
        return result.shape == (1, 1, n, 4) and torch.allclose(
            result, torch.ones(()), rtol=0, atol=1.2e-7 * m
        )
    if call == "encoding_similarity":  # PE = 1: PE_i · PE_j = 1
        return result.shape == (n, n) and bool((result == 1).all())
    return isinstance(result, torch.nn.Module)


@FUZZ
@given(call=st.sampled_from(sorted(SIZED_CALLS)), n=BIG, m=BIG)
def test_sizes_beyond_memory_are_refused_before_anything_large_is_made(call, n, m):
    """On a 64 MiB machine a call is exact, or refused naming its sizes and the estimate; the
    refusal allocates nothing of the size it refuses."""
    watch = LargestTensor()
    with machine_of(MACHINE):
        try:
            with watch:
                result = SIZED_CALLS[call](n, m)
        except NAMED as error:
            message = str(error)
            guard_said = re.search(r"needs about [\d.]+ [KMGT]?i?B, more than max_bytes", message)
            assert guard_said or re.search(r"must be (in|<=|>=)", message), message
            assert watch.largest * 4 <= MACHINE, (call, watch.largest)
            return
    assert _definition_holds(call, n, m, result), call


def test_a_far_too_large_call_is_refused_at_once():
    """No allocator error, no swap: 10^12 by 10^12 is refused from its sizes alone."""
    with machine_of(MACHINE):
        for call in SIZED_CALLS.values():
            with pytest.raises(ValueError, match="needs about"):
                call(10**12, 10**12)


# --- the schemes: the definition, masks of any rank, or a named error -------------------------

PARAMS = {
    "shaw": {"max_relative_position": st.sampled_from([0, 2, np.int64(3)])},
    "music": {"max_relative_position": st.sampled_from([1, 3]), "values": st.booleans()},
    "xl": {},
    "t5": {"num_buckets": st.sampled_from([4, 8]), "max_distance": st.sampled_from([5, 20])},
    "alibi": {"max_bias": st.sampled_from([8.0, np.float32(4), 2])},
    "rope": {"base": st.sampled_from([10000.0, np.float64(100.0), 50])},
}


@st.composite
def scheme_calls(draw):
    name = draw(st.sampled_from(scheme_names()))
    # a scheme added to the catalogue is drawn at its settings' defaults
    defaults = {s.keyword: st.just(s.default) for s in scheme_entry(name).settings}
    params = {key: draw(value) for key, value in PARAMS.get(name, defaults).items()}
    heads = draw(st.sampled_from([1, 2, np.int64(2)]))
    head_dim = draw(st.sampled_from([2, 4]))
    scheme = make_scheme(name, heads, head_dim, seed=draw(st.integers(0, 9)), **params)
    b, n_q, n_k = draw(st.integers(1, 2)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    offset = draw(st.sampled_from([0, 1, max(0, n_k - n_q)]))
    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**16)))
    q, k, v = (torch.randn(b, int(heads), n, head_dim, generator=gen, dtype=torch.float64)
               for n in (n_q, n_k, n_k))  # fmt: skip
    rank = draw(st.integers(0, 4))
    full = (b, int(heads), n_q, n_k)
    shape = tuple(draw(st.sampled_from([1, s])) for s in full[4 - rank :])
    mask = torch.rand(shape, generator=gen) < 0.7
    return scheme, (q, k, v), mask, draw(st.booleans()), offset


@FUZZ
@given(call=scheme_calls())
def test_every_scheme_is_softmax_of_its_terms_for_masks_of_any_rank(call):
    """The schemes' tables are parameters; the maths is checked without autograd."""
    with torch.no_grad():
        scheme, (q, k, v), mask, causal, offset = call
        z, weights = scheme(q, k, v, mask=mask, causal=causal, query_offset=offset)
        logits = sum(scheme.terms(q, k, causal=causal, query_offset=offset).values())
        full = torch.broadcast_to(mask, logits.shape)
        blocked = logits.masked_fill(~full, float("-inf"))  # the loop skips -inf by `causal`
        want = softmax_loop(blocked.nan_to_num(neginf=-1e300), offset, causal) * full
        rows = want.sum(-1, keepdim=True)
        want = torch.where(rows > 0, want / rows.clamp(min=1e-300), 0.0)
        torch.testing.assert_close(weights, want, rtol=1e-10, atol=1e-12)
        extra = scheme.relative_values(weights, causal, offset)
        torch.testing.assert_close(z, weights @ v + (0 if extra is None else extra))
        z_full, _ = scheme(q, k, v, mask=full, causal=causal, query_offset=offset)
        torch.testing.assert_close(z, z_full, rtol=0, atol=0)
