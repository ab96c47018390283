"""The checker's shaw kind: each right implementation is equal, each wrong one differs with
its bug named, and broken ones get words, never a traceback."""

from __future__ import annotations

import math

import pytest
import torch

from relpos_core.check import CANNOT, DIFFERS, EQUAL, KINDS, check_implementation
from relpos_core.schemes.shaw.reference import attention
from tests.check.examples import shaw as examples

BUGS = {
    "wrong_i_minus_j": "the tables are read at i - j instead of j - i",
    "wrong_clipped_short": "the distance is clipped one short (to ±(clip - 1))",
    "wrong_no_value_term": "the value term sum_j alpha_ij a^V_ij is missing",
    "wrong_scale_content_only": "only the content term q·k is divided by √d",
    "wrong_scale_relative_only": "only the relative term q·a^K is divided by √d",
    "wrong_ignores_causal": "causal is ignored: queries see keys ahead",
}


@pytest.mark.parametrize("name", ["right_gather", "right_numpy_loops"])
def test_right_implementations_are_equal(name: str) -> None:
    verdict = check_implementation("shaw", getattr(examples, name))
    assert verdict.status == EQUAL and verdict.text == "equal" and verdict.exit_code == 0


@pytest.mark.parametrize(("name", "bug"), BUGS.items())
def test_each_wrong_implementation_is_named(name: str, bug: str) -> None:
    verdict = check_implementation("shaw", getattr(examples, name))
    assert verdict.status == DIFFERS and verdict.exit_code == 1
    assert verdict.bug == bug, verdict.text
    assert verdict.text.endswith(f"it matches a known bug: {bug}")
    assert verdict.differing is not None and verdict.differing.any()
    assert verdict.got.shape == verdict.expected.shape


def test_every_known_bug_has_an_example() -> None:
    assert set(BUGS.values()) == set(KINDS["shaw"].bugs)


def test_the_definition_is_eq_3_to_5_on_one_worked_cell() -> None:
    """n = 2, d = 1, clip = 1, two-sided, by hand: e_01 = q_0 (k_1 + w^K_1) with w rows
    (-1, 0, 1) -> w^K = (10, 20, 30), so a^K_00 = 20, a^K_01 = 30."""
    case = {"n": 2, "clip": 1, "heads": 1, "causal": False}
    x = {
        "q": torch.tensor([[[[1.0], [0.0]]]], dtype=torch.float64),
        "k": torch.tensor([[[[0.0], [0.0]]]], dtype=torch.float64),
        "v": torch.tensor([[[[1.0], [2.0]]]], dtype=torch.float64),
        "table_k": torch.tensor([[0.0], [0.0], [math.log(3.0)]], dtype=torch.float64),
        "table_v": torch.tensor([[0.0], [100.0], [200.0]], dtype=torch.float64),
    }
    z = attention(case, x)
    # query 0: e_00 = 0, e_01 = log 3 -> alpha = (1/4, 3/4); z_0 = 1/4 (1 + 100) + 3/4 (2 + 200)
    assert z[0, 0, 0, 0] == pytest.approx(0.25 * 101 + 0.75 * 202)


def test_broken_functions_get_words_not_tracebacks() -> None:
    raised = check_implementation("shaw", lambda *args: 1 / 0)
    assert raised.status == CANNOT and raised.exit_code == 2
    assert raised.text == (
        "cannot be called at n = 1, clip = 0, heads = 1, not causal: it raised "
        "ZeroDivisionError: division by zero"
    )
    shape = check_implementation("shaw", lambda q, *args: q[..., :1])
    assert shape.status == CANNOT and "returned shape (2, 1, 1, 1)" in shape.text
    nan = check_implementation("shaw", lambda q, *args: q * float("nan"))
    assert nan.status == CANNOT and "NaN or inf" in nan.text
    text = check_implementation("shaw", lambda *args: "z")
    assert text.status == CANNOT and "returned a str" in text.text
    with pytest.raises(ValueError, match="kind must be one of shaw"):
        check_implementation("shav", examples.right_gather)


def test_an_output_computed_in_float32_is_compared_within_float32_rounding() -> None:
    def in_float32(q, k, v, table_k, table_v, clip, causal):
        args = (t.float() for t in (q, k, v, table_k, table_v))
        return examples.right_gather(*args, clip, causal)

    assert check_implementation("shaw", in_float32).status == EQUAL
    wrong = check_implementation(
        "shaw", lambda *a: examples.wrong_clipped_short(*(t.float() for t in a[:5]), *a[5:])
    )
    assert wrong.bug == "the distance is clipped one short (to ±(clip - 1))"
