"""The checker's skew and rel-shift kinds: implementations as people write them get the verdict
they deserve, each wrong one named by its bug, and the definitions are the papers' formulas."""

import dataclasses

import numpy as np
import pytest
import torch

from relpos_core.check.verdict import CANNOT, DIFFERS, EQUAL, check
from relpos_core.schemes.music.reference import SKEW
from relpos_core.schemes.music.reference import definition as skew_definition
from relpos_core.schemes.xl.shift import rel_shift
from relpos_core.schemes.xl.reference import REL_SHIFT
from relpos_core.schemes.xl.reference import definition as rel_shift_definition
from relpos_core.skew import skew_masked
from tests.check.examples import rel_shift as shift_examples
from tests.check.examples import skew as skew_examples

RIGHT = [
    (SKEW, skew_examples.paper_skew),
    (SKEW, skew_examples.gather_skew),
    (SKEW, skew_examples.loop_skew),
    (SKEW, skew_masked),  # the library's
    (REL_SHIFT, shift_examples.transformer_xl),
    (REL_SHIFT, shift_examples.gather_shift),
    (REL_SHIFT, rel_shift),  # the library's
]
WRONG = [
    (SKEW, skew_examples.pad_right, "the pad is on the wrong side (right instead of left)"),
    (SKEW, skew_examples.drop_last_row, "the wrong row is dropped (the last instead of the first)"),
    (SKEW, skew_examples.loop_other_way, "rows shifted the other way (rel[i, j - (n - 1 - i)])"),
    (
        SKEW,
        skew_examples.gather_query_minus_key,
        "the table is read in reverse order (column c as distance -c: rel[i, i - j])",
    ),
    (REL_SHIFT, shift_examples.roll_other_way, "shifted the other way (x[i, j - (n - 1 - i)])"),
    (REL_SHIFT, shift_examples.pad_right, "the pad on the wrong side (right instead of left)"),
    (
        REL_SHIFT,
        shift_examples.drop_last_row,
        "the wrong row dropped (the last instead of the first)",
    ),
    (
        REL_SHIFT,
        shift_examples.gather_without_memory,
        "the memory ignored (m taken as n: query i at position i, x[i, j + m - 1 - i])",
    ),
    (
        REL_SHIFT,
        shift_examples.gather_one_off,
        "one position off (x[i, j + n - 2 - i]: each key read one distance further)",
    ),
    (
        REL_SHIFT,
        shift_examples.gather_increasing,
        "R taken in increasing order (column c as the distance c, not m - 1 - c)",
    ),
]
KINDS = [SKEW, REL_SHIFT]


def name(value):
    return getattr(value, "name", None) or getattr(value, "__name__", None)


@pytest.mark.parametrize(("kind", "fn"), RIGHT, ids=[f"{k.name}-{name(f)}" for k, f in RIGHT])
def test_right_implementations_are_equal(kind, fn):
    verdict = check(kind, fn)
    assert verdict.status == EQUAL, verdict.text
    assert verdict.bug is None


@pytest.mark.parametrize(
    ("kind", "fn", "bug"), WRONG, ids=[f"{k.name}-{name(f)}" for k, f, _ in WRONG]
)
def test_wrong_implementations_differ_by_their_bug(kind, fn, bug):
    verdict = check(kind, fn)
    assert verdict.status == DIFFERS, verdict.text
    assert verdict.bug == bug, verdict.text
    assert bug in verdict.text


def test_every_bug_has_an_example():
    for kind in KINDS:
        assert {bug for k, _, bug in WRONG if k is kind} == set(kind.bugs)


def raises(x):
    raise RuntimeError("shape '[2, 1, 3, 2]' is invalid for input of size 12")


def wrong_shape(x):
    return x[..., :-1]


def not_a_number(x):
    return x * float("nan")


@pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])
@pytest.mark.parametrize(
    ("fn", "words"),
    [
        (raises, "it raised RuntimeError: shape '[2, 1, 3, 2]' is invalid"),
        (wrong_shape, "it returned shape"),
        (not_a_number, "it returned NaN or inf"),
    ],
    ids=["raises", "wrong-shape", "nan"],
)
def test_what_cannot_be_called_is_said_in_words(kind, fn, words):
    verdict = check(kind, fn)
    assert verdict.status == CANNOT
    assert verdict.text.startswith("cannot be called at ")
    assert words in verdict.text
    assert "Traceback" not in verdict.text and "\n" not in verdict.text


def test_the_skew_definition_is_the_papers_formula_by_hand():
    # rel = 1..9 in rows; out[i, j] = rel[i, 2 - i + j]: query 0 sees key 0 at distance 0 (the
    # last column), query 2 sees keys 0, 1, 2 at distances -2, -1, 0 (columns 0, 1, 2)
    rel = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], dtype=torch.float64)
    want = np.array([[3.0, 0, 0], [5.0, 6.0, 0], [7.0, 8.0, 9.0]])
    lower = np.tril(np.ones((3, 3), bool))
    out = skew_definition({"n": 3}, {"rel": rel[None, None]})[0, 0]
    assert np.array_equal(out[lower], want[lower])
    paper = skew_examples.paper_skew(rel[None, None])[0, 0].numpy()
    assert np.array_equal(paper[lower], want[lower])


def test_the_rel_shift_definition_is_the_papers_formula_by_hand():
    # n = 2 queries at positions 1, 2 after m - n = 1 memory key; columns hold distances 2, 1, 0.
    # query 0 (position 1): key 0 at distance 1 -> column 1, key 1 at 0 -> column 2, key 2 later;
    # query 1 (position 2): keys 0, 1, 2 at distances 2, 1, 0 -> columns 0, 1, 2
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64)
    want = np.array([[2.0, 3.0, 0], [4.0, 5.0, 6.0]])
    where = np.array([[True, True, False], [True, True, True]])
    out = rel_shift_definition({"n": 2, "m": 3}, {"x": x[None, None]})[0, 0]
    assert np.array_equal(out[where], want[where])
    paper = shift_examples.transformer_xl(x[None, None])[0, 0].numpy()
    assert np.array_equal(paper[where], want[where])


@pytest.mark.parametrize(
    ("kind", "fn"),
    [(SKEW, skew_examples.paper_skew), (REL_SHIFT, shift_examples.transformer_xl)],
    ids=["skew", "rel-shift"],
)
def test_a_wrong_definition_would_fail_the_right_example(kind, fn):
    for bug, wrong in kind.bugs.items():
        mistaken = dataclasses.replace(kind, references=lambda c, x, w=wrong: {"wrong": w(c, x)})
        assert check(mistaken, fn).status == DIFFERS, bug


def test_each_kind_compares_the_causal_cells_only():
    assert SKEW.compared({"n": 3}).tolist() == [
        [True, False, False],
        [True, True, False],
        [True, True, True],
    ]
    assert REL_SHIFT.compared({"n": 2, "m": 4}).tolist() == [
        [True, True, True, False],
        [True, True, True, True],
    ]
