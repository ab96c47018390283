"""The checker's alibi, t5-bucket and rope kinds: each right implementation gets its status
(BLOOM's ALiBi equal up to a constant per row, each RoPE layout named), each wrong one differs
with its bug named, broken ones get words, and each definition is pinned to numbers worked from
its paper."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from relpos_core.check.verdict import CANNOT, DIFFERS, EQUAL, ROW_CONSTANT, check, judge
from relpos_core.schemes.alibi import alibi_slopes
from relpos_core.schemes.alibi.reference import ALIBI, slopes
from relpos_core.schemes.alibi.reference import bias as alibi_bias
from relpos_core.schemes.rope import rotary_angles, rotate
from relpos_core.schemes.rope.reference import HALVES, NEIGHBOURS, ROPE, rotated
from relpos_core.schemes.t5 import t5_bucket
from relpos_core.schemes.t5.reference import T5_BUCKET, buckets
from tests.check.examples import alibi as alibi_examples
from tests.check.examples import rope as rope_examples
from tests.check.examples import t5 as t5_examples

KINDS = {
    "alibi": (ALIBI, alibi_examples),
    "t5": (T5_BUCKET, t5_examples),
    "rope": (ROPE, rope_examples),
}
RIGHT = [
    ("alibi", "right_press", EQUAL, None),
    ("alibi", "right_numpy_abs", EQUAL, None),
    ("alibi", "right_bloom", ROW_CONSTANT, None),
    ("t5", "right_hf", EQUAL, None),
    ("t5", "right_numpy_scalar", EQUAL, None),
    ("rope", "right_llama", EQUAL, HALVES),
    ("rope", "right_gptj", EQUAL, NEIGHBOURS),
    ("rope", "right_complex", EQUAL, NEIGHBOURS),
]
EVERY_DIMENSION = "frequencies over every dimension instead of every pair (base^(-m/d))"
MIXED = "the two layouts mixed (pairs of one layout, frequencies of the other)"
WRONG = [
    ("alibi", "wrong_sign", "the slope sign is flipped (+m_h (i - j))"),
    (
        "alibi",
        "wrong_direct_slopes",
        "slopes wrong for a head count that is not a power of two (2^(-8h/H) used directly)",
    ),
    (
        "alibi",
        "wrong_heads_from_zero",
        "heads counted from 0 (m_h = 2^(-8(h-1)/H), the first slope 1)",
    ),  # fmt: skip
    ("alibi", "wrong_reversed_heads", "slopes in reverse head order"),
    ("t5", "wrong_query_minus_key", "the direction of j - i is reversed (query - key)"),
    ("t5", "wrong_not_halved", "the buckets are not halved between the two directions"),
    ("t5", "wrong_rounded", "log buckets rounded instead of truncated"),
    ("t5", "wrong_not_clamped", "distances past max_distance not clamped to the last bucket"),
    ("t5", "wrong_exact_all", "the exact range uses all num_buckets instead of half"),
    ("rope", "wrong_every_dimension", f"{EVERY_DIMENSION}, with {HALVES}"),
    ("rope", "wrong_every_dimension_gptj", f"{EVERY_DIMENSION}, with {NEIGHBOURS}"),
    ("rope", "wrong_direction", "the rotation is the wrong way (angle -theta)"),
    ("rope", "wrong_positions_from_zero", "positions ignored (counted from 0)"),
    ("rope", "wrong_mixed_layouts", f"{MIXED}, with {HALVES}"),
    ("rope", "wrong_mixed_layouts_gptj", f"{MIXED}, with {NEIGHBOURS}"),
]


@pytest.mark.parametrize(("kind", "name", "status", "convention"), RIGHT)
def test_right_implementations_get_their_status(kind, name, status, convention) -> None:
    definition, examples = KINDS[kind]
    verdict = check(definition, getattr(examples, name))
    assert verdict.status == status, verdict.text
    assert verdict.exit_code == 0 and verdict.convention == convention
    if convention is not None:
        assert verdict.text == f"equal ({convention})"


@pytest.mark.parametrize(("kind", "name", "bug"), WRONG)
def test_each_wrong_implementation_is_named(kind, name, bug) -> None:
    definition, examples = KINDS[kind]
    verdict = check(definition, getattr(examples, name))
    assert verdict.status == DIFFERS and verdict.exit_code == 1, verdict.text
    assert verdict.bug == bug, verdict.text
    assert verdict.text.endswith(f"it matches a known bug: {bug}")
    assert verdict.differing is not None and verdict.differing.any()


@pytest.mark.parametrize("kind", KINDS)
def test_every_known_bug_has_an_example(kind) -> None:
    definition, _ = KINDS[kind]
    assert {bug for k, _, bug in WRONG if k == kind} == set(definition.bugs)


def test_float32_implementations_are_judged_within_float32_rounding() -> None:
    as32 = lambda fn: lambda *a: torch.as_tensor(fn(*a)).float()  # noqa: E731
    assert check(ALIBI, as32(alibi_examples.right_bloom)).status == ROW_CONSTANT
    assert check(ROPE, as32(rope_examples.right_llama)).convention == HALVES
    wrong = check(ALIBI, as32(alibi_examples.wrong_reversed_heads))
    assert wrong.bug == "slopes in reverse head order"


def test_an_output_at_d_2_is_judged_under_a_layout_decided_elsewhere() -> None:
    case = ROPE.cases()[0]
    x = ROPE.inputs(case)
    got = rope_examples.right_gptj(*ROPE.arguments(case, x)).numpy()
    assert judge(ROPE, case, x, got, NEIGHBOURS).status == EQUAL


def test_a_masked_alibi_bias_is_compared_below_the_diagonal_only() -> None:
    def masked(heads, n):  # -inf above the diagonal, as a causal bias often comes
        full = alibi_examples.right_press(heads, n)
        return full.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))

    assert check(ALIBI, masked).status == EQUAL


def test_broken_functions_get_words_not_tracebacks() -> None:
    nan = check(ALIBI, lambda heads, n: torch.full((heads, n, n), float("nan")))
    assert nan.status == CANNOT and nan.exit_code == 2
    assert nan.text == (
        "cannot be called at heads = 1, n = 1: it returned NaN or inf where the definition is "
        "finite"
    )

    def one_distance_at_a_time(relative_position, bidirectional, num_buckets, max_distance):
        return num_buckets // 2 if relative_position > 0 else 0  # written for one int

    raised = check(T5_BUCKET, one_distance_at_a_time)
    assert raised.status == CANNOT
    assert raised.text == (
        "cannot be called at distances = j - i, i, j < 20, bidirectional, num_buckets = 8, "
        "max_distance = 16: it raised RuntimeError: Boolean value of Tensor with more than one "
        "value is ambiguous"
    )
    shape = check(ROPE, lambda x, positions, base: x[..., : x.shape[-1] // 2])
    assert shape.status == CANNOT
    assert shape.text == (
        "cannot be called at n = 1, d = 2, base = 10000.0, positions = 7..7: it returned shape "
        "(2, 2, 1, 1), the definition's is (2, 2, 1, 2)"
    )


# The definitions, pinned to numbers worked from the papers and cross-checked with the library.


def test_alibi_slopes_are_the_papers() -> None:
    assert slopes(8).tolist() == [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]
    assert slopes(1).tolist() == [1 / 256]
    assert slopes(3).tolist() == [1 / 16, 1 / 256, 1 / 4]  # H = 2's, then H = 4's first odd
    assert slopes(6).tolist() == [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8]
    twelve = [0.7071067811865476, 0.3535533905932738, 0.1767766952966369, 0.0883883476483184]
    assert slopes(12)[8:] == pytest.approx(twelve, rel=1e-14)  # 2^-0.5, 2^-1.5, ... of H = 16
    for heads in range(1, 65):
        assert slopes(heads) == pytest.approx(alibi_slopes(heads).numpy(), rel=1e-14)
    one = alibi_bias({"heads": 1, "n": 3}, {})
    assert (one[0] * 256).tolist() == [[0, 1, 2], [-1, 0, 1], [-2, -1, 0]]  # -(i - j), j ≤ i


def test_t5_buckets_worked_by_hand() -> None:
    """Bidirectional, 32 buckets, 128: 16 per direction, exact below 8; 20 ->
    8 + int(ln(20/8) / ln(128/8) · 8) = 8 + int(2.64) = 10; 200 -> 8 + int(9.29) -> 15.
    Unidirectional: exact below 16; 20 -> 16 + int(ln(20/16) / ln(8) · 16) = 16 + int(1.72)."""
    r = torch.tensor([-200, -20, -8, -7, -1, 0, 1, 7, 8, 20, 200])
    both = {"bidirectional": True, "num_buckets": 32, "max_distance": 128}
    past = {"bidirectional": False, "num_buckets": 32, "max_distance": 128}
    assert buckets(both, {"relative_position": r}).tolist() == [
        15, 10, 8, 7, 1, 0, 17, 23, 24, 26, 31,
    ]  # fmt: skip
    assert buckets(past, {"relative_position": r}).tolist() == [
        31, 17, 8, 7, 1, 0, 0, 0, 0, 0, 0,
    ]  # fmt: skip
    for case in T5_BUCKET.cases():
        x = T5_BUCKET.inputs(case)
        library = t5_bucket(*T5_BUCKET.arguments(case, x)).numpy()
        assert np.array_equal(buckets(case, x), library), case


def test_rope_turns_each_pair_by_position_times_theta() -> None:
    quarter = {
        "x": torch.tensor([[1.0, 0.0]]),
        "positions": torch.tensor([math.pi / 2], dtype=torch.float64),
    }
    for layout in (HALVES, NEIGHBOURS):  # a 2-vector turned 90 degrees
        assert rotated({"base": 10000.0}, quarter, layout=layout) == pytest.approx(
            np.array([[0.0, 1.0]]), abs=1e-15
        )
    one = {"x": torch.tensor([[1.0, 0.0]]), "positions": torch.tensor([1])}  # θ_0 = 1 radian
    assert rotated({"base": 10000.0}, one, layout=HALVES)[0].tolist() == pytest.approx(
        [0.5403023058681398, 0.8414709848078965]
    )
    # d = 8, base 10000: θ = 1, 0.1, 0.01, 0.001; channel 2 at position 1 turns by 0.1
    e2 = {"x": torch.eye(8, dtype=torch.float64)[2:3], "positions": torch.tensor([1])}
    neighbours = rotated({"base": 10000.0}, e2, layout=NEIGHBOURS)[0]
    assert neighbours.tolist() == pytest.approx(
        [0, 0, 0.9950041652780258, 0.09983341664682815, 0, 0, 0, 0]
    )
    halves = rotated({"base": 10000.0}, e2, layout=HALVES)[0]  # pair (2, 6): θ_2 = 0.01
    assert halves.tolist() == pytest.approx(
        [0, 0, 0.9999500004166653, 0, 0, 0, 0.009999833334166664, 0]
    )
    for case in ROPE.cases():  # the library rotates neighbouring pairs
        x = ROPE.inputs(case)
        angles = rotary_angles(x["positions"], int(case["d"]), float(case["base"]))
        library = rotate(x["x"], angles).numpy()
        assert rotated(case, x, layout=NEIGHBOURS) == pytest.approx(library, rel=1e-12, abs=1e-14)
