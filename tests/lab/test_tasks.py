"""The synthetic tasks against their definitions, written as plain loops."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from relpos_lab.generalization.tasks import (
    BLANK,
    TaskConfig,
    evaluation_set,
    reverse_window_targets,
    sample_batch,
    shift_targets,
    task_targets,
)

token_rows = st.integers(1, 3).flatmap(
    lambda b: st.integers(1, 12).flatmap(
        lambda n: st.lists(
            st.lists(st.integers(1, 15), min_size=n, max_size=n), min_size=b, max_size=b
        )
    )
)


@given(rows=token_rows, shift=st.integers(1, 14))
def test_shift_target_is_the_token_shift_places_to_the_left(rows, shift):
    tokens = torch.tensor(rows)
    targets = shift_targets(tokens, shift)
    for b, row in enumerate(rows):
        for i in range(len(row)):
            want = row[i - shift] if i >= shift else BLANK
            assert targets[b, i] == want


@given(rows=token_rows, window=st.integers(2, 6))
def test_reverse_window_mirrors_each_window(rows, window):
    tokens = torch.tensor(rows)
    targets = reverse_window_targets(tokens, window)
    for b, row in enumerate(rows):
        want = []
        for start in range(0, len(row), window):
            want += row[start : start + window][::-1]
        assert targets[b].tolist() == want


def test_worked_examples():
    tokens = torch.tensor([[5, 6, 7, 8, 9]])
    assert shift_targets(tokens, 1).tolist() == [[0, 5, 6, 7, 8]]
    assert shift_targets(tokens, 7).tolist() == [[0, 0, 0, 0, 0]]
    assert reverse_window_targets(tokens, 3).tolist() == [[7, 6, 5, 9, 8]]


def test_task_targets_dispatches_on_the_name():
    tokens = torch.tensor([[1, 2, 3, 4]])
    shift = TaskConfig(name="shift", shift=3)
    reverse = TaskConfig(name="reverse-window", window=2)
    assert torch.equal(task_targets(tokens, shift), shift_targets(tokens, 3))
    assert torch.equal(task_targets(tokens, reverse), reverse_window_targets(tokens, 2))


def test_sample_batch_draws_real_tokens_from_the_generator():
    task = TaskConfig(vocab=5)
    tokens, targets = sample_batch(task, 64, 10, torch.Generator().manual_seed(3))
    assert tokens.shape == targets.shape == (64, 10)
    assert tokens.dtype == torch.long
    assert tokens.min() >= 1 and tokens.max() <= 4  # BLANK is never an input
    assert set(tokens.unique().tolist()) == {1, 2, 3, 4}
    again, _ = sample_batch(task, 64, 10, torch.Generator().manual_seed(3))
    assert torch.equal(tokens, again)
    assert torch.equal(targets, task_targets(tokens, task))


def test_sample_batch_leaves_the_global_rng_alone():
    state = torch.random.get_rng_state()
    sample_batch(TaskConfig(), 4, 4, torch.Generator().manual_seed(0))
    assert torch.equal(state, torch.random.get_rng_state())


def test_evaluation_set_is_fixed_and_independent_per_length():
    task = TaskConfig()
    first = evaluation_set(task, (8, 24), 16, seed=7)
    second = evaluation_set(task, (24, 64), 16, seed=7)
    assert torch.equal(first[24][0], second[24][0])
    assert first[8][0].shape == (16, 8)
    other_seed = evaluation_set(task, (24,), 16, seed=8)
    assert not torch.equal(first[24][0], other_seed[24][0])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "copy"}, "name \\(task\\) must be one of"),
        ({"vocab": 2}, "vocab .* must be >= 3, got 2"),
        ({"shift": 0}, "shift .* must be >= 1, got 0"),
        ({"window": 1}, "window .* must be >= 2, got 1"),
    ],
)
def test_task_config_rejects_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TaskConfig(**kwargs)


def test_task_targets_rejects_float_tokens():
    with pytest.raises(TypeError, match="long tensor"):
        task_targets(torch.zeros(1, 3), TaskConfig())
