"""Errors a user can cause with a scheme: ValueError (TypeError for a wrong type) whose message
names the argument and shows the value; the guard refusing an oversized call before it
allocates; ``make_scheme``'s seeding; the inputs' dtype deciding the computation's.
"""

import re

import numpy as np
import pytest
import torch

import relpos_core.guard as guard
from relpos_core.schemes import (
    ALiBi,
    MusicRelative,
    Rotary,
    ShawRelative,
    T5Bias,
    TransformerXL,
    alibi_slopes,
    distance_profile,
    make_scheme,
    rotary_angles,
    rotate,
    scheme_profile,
    t5_bucket,
    xl_sinusoid,
)
from relpos_core.schemes.catalogue import scheme_entry, scheme_names
from tests.largest_tensor import LargestTensor


def message_with(*parts: str) -> str:
    """A regex matching a message that contains every part, in any order."""
    return "(?s)" + "".join(f"(?=.*{re.escape(p)})" for p in parts)


# (id, call, exception, parts the message must contain)
CONSTRUCTORS = [
    ("heads 0", lambda: ShawRelative(0, 4), ValueError, ("heads", "[1, 4096]", "got 0")),
    ("head_dim 0", lambda: ALiBi(2, 0), ValueError, ("head_dim", "[1, 65536]", "got 0")),
    ("heads float", lambda: Rotary(2.0, 4), TypeError, ("heads", "int", "2.0")),
    ("shaw k < 0", lambda: ShawRelative(2, 4, -1), ValueError, ("max_relative_position", "-1")),
    ("rope odd d", lambda: Rotary(2, 3), ValueError, ("head_dim", "even", "got 3")),
    ("rope base 1", lambda: Rotary(2, 4, base=1.0), ValueError, ("base", "(1, 1e9]", "1.0")),
    ("rope base < 1", lambda: Rotary(2, 4, 0.5), ValueError, ("base", "(1, 1e9]", "0.5")),
    ("rope base bool", lambda: Rotary(2, 4, True), TypeError, ("base", "True")),
    ("rope base str", lambda: Rotary(2, 4, "1e4"), TypeError, ("base", "'1e4'")),
    ("xl odd d_model", lambda: TransformerXL(1, 3), ValueError, ("d_model", "even", "got 3")),
    ("t5 odd buckets", lambda: T5Bias(2, 4, 31), ValueError, ("num_buckets", "even", "31")),
    ("t5 one bucket", lambda: T5Bias(2, 4, 1), ValueError, ("num_buckets", "[2, 4096]", "got 1")),
    (
        "t5 two buckets",
        lambda: T5Bias(2, 4, 2),
        ValueError,
        ("at least 2 buckets per direction", "num_buckets = 2"),
    ),
    (
        "t5 max_distance at the exact buckets",
        lambda: T5Bias(2, 4, 32, 8),
        ValueError,
        ("max_distance > 8", "max_distance = 8"),
    ),
    (
        "t5 max_distance too small one-way",
        lambda: T5Bias(2, 4, 4, 2),
        ValueError,
        ("max_distance > 2", "num_buckets = 4", "max_distance = 2"),
    ),
    ("t5 max_distance 0", lambda: T5Bias(2, 4, 32, 0), ValueError, ("max_distance", "got 0")),
    (
        "t5_bucket odd bidirectional",
        lambda: t5_bucket(torch.tensor([1]), True, 7, 20),
        ValueError,
        ("num_buckets", "even", "got 7"),
    ),
    (
        "t5_bucket direction int",
        lambda: t5_bucket(torch.tensor([1]), 1),
        TypeError,
        ("bidirectional", "bool", "1"),
    ),
    ("alibi max_bias 0", lambda: ALiBi(2, 4, 0), ValueError, ("max_bias", "(0, 64]", "got 0")),
    ("alibi max_bias 65", lambda: ALiBi(2, 4, 65), ValueError, ("max_bias", "(0, 64]", "65")),
    ("alibi max_bias nan", lambda: ALiBi(2, 4, float("nan")), ValueError, ("max_bias", "nan")),
    ("alibi max_bias bool", lambda: ALiBi(2, 4, True), TypeError, ("max_bias", "True")),
    ("alibi max_bias None", lambda: ALiBi(2, 4, None), TypeError, ("max_bias", "None")),
    ("music L 0", lambda: MusicRelative(2, 4, 0), ValueError, ("table length L", ">= 1", "0")),
    ("music values int", lambda: MusicRelative(2, 4, 3, 1), TypeError, ("values", "bool", "1")),
    (
        "music enormous table",
        lambda: MusicRelative(64, 64, 2**40),
        ValueError,
        ("L = 1099511627776", "needs about", "max_bytes"),
    ),
    (
        "unknown scheme",
        lambda: make_scheme("nope", 2, 4),
        ValueError,
        ("scheme", ", ".join(scheme_names()), "'nope'"),
    ),
    (
        "unknown keyword",
        lambda: make_scheme("alibi", 2, 4, num_buckets=3),
        ValueError,
        ("'alibi'", "num_buckets"),
    ),
    (
        "unknown keyword, learned",
        lambda: make_scheme("xl", 2, 4, base=3.0),
        ValueError,
        ("'xl'", "base"),
    ),
    (
        "generator given to make_scheme",
        lambda: make_scheme("t5", 2, 4, generator=torch.Generator()),
        ValueError,
        ("seed=", "generator="),
    ),
    ("seed < 0", lambda: make_scheme("t5", 2, 4, seed=-1), ValueError, ("seed", "got -1")),
    ("seed None", lambda: make_scheme("t5", 2, 4, None), TypeError, ("seed", "None")),
]


@pytest.mark.parametrize(
    ("call", "error", "parts"), [c[1:] for c in CONSTRUCTORS], ids=[c[0] for c in CONSTRUCTORS]
)
def test_bad_parameters_are_named(call, error, parts):
    with pytest.raises(error, match=message_with(*parts)):
        call()


def t(*shape, dtype=torch.float32):
    return torch.zeros(*shape, dtype=dtype)


GOOD = t(1, 2, 5, 4)  # (b, h, n, d) that fits the schemes below: heads 2, head_dim 4

# (id, q, k, v, keywords, exception, parts)
INPUTS = [
    ("q rank 3", t(2, 5, 4), GOOD, None, {}, ValueError, ("q", "4 dimensions", "(2, 5, 4)")),
    ("q int", t(1, 2, 5, 4, dtype=torch.int64), GOOD, None, {}, TypeError, ("q", "torch.int64")),
    ("heads", t(1, 3, 5, 4), t(1, 3, 5, 4), None, {}, ValueError, ("heads=2", "(1, 3, 5, 4)")),
    ("head_dim", t(1, 2, 5, 6), t(1, 2, 5, 6), None, {}, ValueError, ("head_dim=4", "5, 6)")),
    ("no query", t(1, 2, 0, 4), GOOD, None, {}, ValueError, ("q", "(1, 2, 0, 4)")),
    ("k head dim", GOOD, t(1, 2, 5, 3), None, {}, ValueError, ("k", "(1, 2, 5, 3)")),
    ("k batch", GOOD, t(3, 2, 5, 4), None, {}, ValueError, ("k", "(3, 2, 5, 4)")),
    ("v keys", GOOD, GOOD, t(1, 2, 4, 4), {}, ValueError, ("v", "(1, 2, 4, 4)")),
    (
        "dtypes", GOOD, t(1, 2, 5, 4, dtype=torch.float64), None, {}, TypeError,
        ("one dtype", "q=torch.float32", "k=torch.float64"),
    ),
    (
        "offset < 0", GOOD, GOOD, None, {"query_offset": -1}, ValueError,
        ("query_offset", ">= 0", "got -1"),
    ),
    ("causal int", GOOD, GOOD, None, {"causal": 1}, TypeError, ("causal", "bool", "1")),
    ("causal str", GOOD, GOOD, None, {"causal": "yes"}, TypeError, ("causal", "bool", "'yes'")),
    ("q nan", torch.full((1, 2, 5, 4), float("nan")), GOOD, None, {}, ValueError, ("q", "finite")),
]  # fmt: skip


@pytest.mark.parametrize("name", scheme_names())
@pytest.mark.parametrize(
    ("q", "k", "v", "keywords", "error", "parts"),
    [c[1:] for c in INPUTS],
    ids=[c[0] for c in INPUTS],
)
def test_bad_inputs_are_named(name, q, k, v, keywords, error, parts):
    scheme = make_scheme(name, 2, 4)
    v = k if v is None else v
    calls = [
        lambda: scheme(q, k, v, **keywords),
        lambda: scheme.terms(q, k, **keywords),
        lambda: scheme.position_term(q, k, **keywords),
    ]
    if v is not k:  # only the forward takes v
        calls = calls[:1]
    for call in calls:
        with pytest.raises(error, match=message_with(*parts)):
            call()


def test_profile_arguments_are_named():
    scheme = make_scheme("alibi", 2, 4)
    q = t(1, 2, 3, 4)
    with pytest.raises(TypeError, match=message_with("position_only", "bool", "1")):
        scheme_profile(scheme, q, q, position_only=1)
    with pytest.raises(ValueError, match=message_with("query_offset", ">= 0", "-2")):
        distance_profile(t(1, 2, 3, 3), query_offset=-2)
    with pytest.raises(TypeError, match=message_with("causal", "bool", "None")):
        distance_profile(t(1, 2, 3, 3), causal=None)


# ---- the guard -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", scheme_names())
def test_an_oversized_call_is_refused_before_allocating(name):
    """max_bytes one byte below the estimate: refused, and nothing as large as the logits
    (b·h·n·n) was ever made; the whole input is the largest tensor seen."""
    scheme = make_scheme(name, 2, 4)
    q = torch.randn(1, 2, 64, 4)
    need = scheme.logit_bytes(64, 64, 1, 4)
    calls = {
        "forward": lambda: scheme(q, q, q, max_bytes=need - 1),
        "terms": lambda: scheme.terms(q, q, max_bytes=need - 1),
        "position_term": lambda: scheme.position_term(q, q, max_bytes=need - 1),
        "scheme_profile": lambda: scheme_profile(scheme, q, q, max_bytes=need - 1),
    }
    for what, call in calls.items():
        watch = LargestTensor()
        with watch, pytest.raises(ValueError) as error:
            call()
        assert watch.largest <= q.numel(), what
        for part in (f"{name} scheme", "n_q = 64", f"max_bytes = {need - 1}", "needs about"):
            assert part in str(error.value), what


@pytest.mark.parametrize(("n_q", "n_k", "offset"), [(12, 20, 8), (8, 8, 0), (8, 8, 3)])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("name", scheme_names())
def test_the_estimate_covers_the_largest_tensor(name, causal, n_q, n_k, offset):
    """At max_bytes = the estimate the call runs, and no single tensor it makes is larger,
    also with tables much longer than the sequence."""
    params = {"shaw": {"max_relative_position": 40}, "music": {"max_relative_position": 512}}
    scheme = make_scheme(name, 2, 4, **params.get(name, {}))
    q = torch.randn(2, 2, n_q, 4)
    k = torch.randn(2, 2, n_k, 4)
    need = scheme.logit_bytes(n_q, n_k, 2, 4)
    watch = LargestTensor()
    with watch:
        scheme.terms(q, k, causal=causal, query_offset=offset, max_bytes=need)
    assert 4 * watch.largest <= need


# ---- make_scheme -----------------------------------------------------------------------------


def parameters(scheme) -> dict[str, torch.Tensor]:
    return {name: p.detach().clone() for name, p in scheme.named_parameters()}


@pytest.mark.parametrize("name", scheme_names())
def test_make_scheme_is_deterministic_and_leaves_the_global_rng_alone(name):
    torch.manual_seed(123)
    before = torch.get_rng_state()
    first = parameters(make_scheme(name, 2, 4, seed=5))
    again = parameters(make_scheme(name, 2, 4, seed=5))
    other = parameters(make_scheme(name, 2, 4, seed=6))
    assert torch.equal(torch.get_rng_state(), before)
    assert first.keys() == again.keys() == other.keys()
    learned = scheme_entry(name).learned  # its constructor draws from the seed's generator
    for key in first:
        assert torch.equal(first[key], again[key])
        assert torch.equal(first[key], other[key]) != learned


def test_make_scheme_passes_the_schemes_own_parameters():
    assert make_scheme("shaw", 2, 4, max_relative_position=3).table_k.shape == (7, 4)
    assert make_scheme("music", 2, 4, max_relative_position=3, values=True).embed_v.shape == (
        2, 5, 4,
    )  # fmt: skip
    assert make_scheme("t5", 2, 4, num_buckets=8, max_distance=20).bias.shape == (8, 2)
    assert make_scheme("alibi", 2, 4, max_bias=4.0).slopes.tolist() == [0.25, 0.0625]
    assert make_scheme("rope", 2, 4, base=100.0).base == 100.0


# ---- dtypes ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", scheme_names())
def test_float64_inputs_run_with_float32_parameters(name):
    """The inputs decide the dtype: a float32 scheme on float64 q, k, v computes in float64,
    the same numbers as the scheme converted to float64 first (every parameter is exactly
    representable in both)."""
    params = {"values": True} if name == "music" else {}
    scheme = make_scheme(name, 2, 4, seed=1, **params)
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 2, 5, 4, generator=gen, dtype=torch.float64) for _ in range(3))
    z, alpha = scheme(q, k, v, causal=True)
    want_z, want_alpha = scheme.double()(q, k, v, causal=True)
    assert z.dtype == alpha.dtype == torch.float64
    torch.testing.assert_close(z, want_z, rtol=0, atol=0)
    torch.testing.assert_close(alpha, want_alpha, rtol=0, atol=0)
    z32, _ = scheme(q.float(), k.float(), v.float(), causal=True)  # now a float64 scheme
    assert z32.dtype == torch.float32


# ---- found by fuzzing the public API ---------------------------------------------------------


FUZZED = [
    (
        "shaw value width",
        lambda: make_scheme("shaw", 2, 4)(GOOD, GOOD, t(1, 2, 5, 3)),
        ValueError,
        ("v", "head_dim", "(1, 2, 5, 4)", "(1, 2, 5, 3)", "value term"),
    ),
    (
        "music value width",
        lambda: make_scheme("music", 2, 4, values=True)(GOOD, GOOD, t(1, 2, 5, 6)),
        ValueError,
        ("v", "head_dim", "(1, 2, 5, 6)"),
    ),
    (
        "profile without queries",
        lambda: scheme_profile(make_scheme("alibi", 2, 4), t(1, 2, 0, 4), GOOD),
        ValueError,
        ("q", "at least one query", "(1, 2, 0, 4)"),
    ),
    (
        "profile without queries, position only",
        lambda: scheme_profile(make_scheme("t5", 2, 4), t(1, 2, 0, 4), GOOD, position_only=True),
        ValueError,
        ("q", "(1, 2, 0, 4)"),
    ),
    (
        "profile of a name, not a scheme",
        lambda: scheme_profile("alibi", GOOD, GOOD),
        TypeError,
        ("scheme", "PositionScheme", "str"),
    ),
    (
        "t5_bucket of floats",
        lambda: t5_bucket(torch.tensor([1.5, -3.0])),
        TypeError,
        ("relative_position", "integer", "torch.float32"),
    ),
    (
        "t5_bucket of a list",
        lambda: t5_bucket([1, 2]),
        TypeError,
        ("relative_position", "torch.Tensor", "list"),
    ),
    (
        "distance_profile of a list",
        lambda: distance_profile([[[[1.0]]]]),
        TypeError,
        ("term", "torch.Tensor", "list"),
    ),
    (
        "distance_profile of integers",
        lambda: distance_profile(torch.zeros(1, 1, 2, 2, dtype=torch.int64)),
        TypeError,
        ("term", "floating-point", "torch.int64"),
    ),
    (
        "distance_profile of an empty term",
        lambda: distance_profile(t(1, 1, 0, 3)),
        ValueError,
        ("term", "(1, 1, 0, 3)"),
    ),
    (
        "generator a seed",
        lambda: ShawRelative(2, 4, generator=0),
        TypeError,
        ("generator", "torch.Generator", "int 0"),
    ),
    (
        "generator a seed, xl",
        lambda: TransformerXL(2, 4, generator="0"),
        TypeError,
        ("generator", "torch.Generator", "'0'"),
    ),
    (
        "rotate with angles of another length",
        lambda: rotate(t(2, 5, 4), t(4, 2)),
        ValueError,
        ("angles", "(5, 2)", "(4, 2)"),
    ),
    (
        "rotary_angles base 1",
        lambda: rotary_angles(torch.arange(3), 4, 1.0),
        ValueError,
        ("base", "(1, 1e9]", "1.0"),
    ),
]


@pytest.mark.parametrize(
    ("call", "error", "parts"), [c[1:] for c in FUZZED], ids=[c[0] for c in FUZZED]
)
def test_fuzzed_calls_are_named(call, error, parts):
    with pytest.raises(error, match=message_with(*parts)):
        call()


def test_music_without_values_takes_any_value_width():
    z, _ = make_scheme("music", 2, 4)(GOOD, GOOD, t(1, 2, 5, 3))
    assert z.shape == (1, 2, 5, 3)


def test_t5_bucket_takes_any_integer_dtype():
    r = torch.arange(-40, 41)
    want = t5_bucket(r)
    for dtype in (torch.int32, torch.int16, torch.int8):
        assert torch.equal(t5_bucket(r.to(dtype)), want)


def test_numpy_floats_are_the_python_float_they_hold():
    """np.float32(8) was refused as "out of range"; it is the number 8."""
    assert torch.equal(ALiBi(4, 4, np.float32(8)).slopes, ALiBi(4, 4, 8.0).slopes)
    assert torch.equal(alibi_slopes(3, np.float64(4)), alibi_slopes(3, 4.0))
    assert Rotary(2, 4, np.float32(100)).base == 100.0
    assert type(ALiBi(2, 4, np.float32(8)).max_bias) is float
    q = torch.randn(1, 2, 5, 4, generator=torch.Generator().manual_seed(0))
    rotation = Rotary(2, 4, np.int64(100)).terms(q, q)["rotation"]
    torch.testing.assert_close(rotation, Rotary(2, 4, 100.0).terms(q, q)["rotation"])


ENORMOUS = [
    ("xl 64 heads of 1024", lambda: make_scheme("xl", 64, 1024), ("heads = 64", "(65536, 65536)")),
    ("xl direct", lambda: TransformerXL(4096, 4096), ("head_dim = 4096",)),
    (
        "xl_sinusoid",
        lambda: xl_sinusoid(torch.zeros(1, dtype=torch.int64).expand(10**6), 10**6),
        ("d_model = 1000000",),
    ),
    (
        "rotary_angles",
        lambda: rotary_angles(torch.zeros(1, dtype=torch.int64).expand(10**9), 2**16, 10.0),
        ("1000000000 positions",),
    ),
    (
        "distance_profile",
        lambda: distance_profile(torch.zeros(()).expand(1, 1, 10**6, 10**6)),
        ("(1, 1, 1000000, 1000000)",),
    ),
]


@pytest.mark.parametrize(("call", "parts"), [c[1:] for c in ENORMOUS], ids=[c[0] for c in ENORMOUS])
def test_enormous_parameters_are_refused_before_allocating(monkeypatch, call, parts):
    monkeypatch.setattr(guard, "device_memory_bytes", lambda device=None: 16 * 2**30)
    watch = LargestTensor()
    with (
        watch,
        pytest.raises(ValueError, match=r"needs about .* [GT]iB, more than max_bytes") as error,
    ):
        call()
    assert watch.largest < 10**6
    for part in parts:
        assert part in str(error.value)
