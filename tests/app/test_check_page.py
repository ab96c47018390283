"""The Check your implementation page through app.py: its definition is the library's own
computation on the view's inputs, every example implementation uploaded gets the verdict that
``check_implementation`` gives the function itself, and every bad upload a message."""

from __future__ import annotations

import io
import math
import pickle
from types import ModuleType

import numpy as np
import pytest
import torch

from explorer.frame.params import ViewParams
from explorer.stories.check.inputs import ROPE_FIRST, T5_BUCKETS, T5_MAX, page_inputs
from explorer.weights.example import example_inputs
from relpos_core import relative_attention
from relpos_core.check import KINDS, check_implementation
from relpos_core.schemes import alibi_slopes, rel_shift, t5_bucket
from relpos_core.skew import skew_masked
from tests.app.conftest import assert_clean, chart_keys, open_page
from tests.app.panels import panel_z
from tests.check.examples import alibi, rope, shaw, skew, t5
from tests.check.examples import rel_shift as shift_examples

EXAMPLES: dict[str, ModuleType] = {
    "shaw": shaw, "skew": skew, "rel-shift": shift_examples, "alibi": alibi, "t5-bucket": t5,
    "rope": rope,
}  # fmt: skip
# Each kind on a view where every known bug shows: Shaw's under a causal mask (a bug that ignores
# it), T5's both ways (the halving between directions).
VIEWS = {"shaw": {"mask": "causal"}}
CLOSE = {"rtol": 1e-6, "atol": 1e-8}


def examples() -> list[tuple[str, str]]:
    return [
        (kind, name)
        for kind, module in EXAMPLES.items()
        for name, value in vars(module).items()
        if callable(value) and not name.startswith("_") and value.__module__ == module.__name__
    ]


def npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(array))
    return buffer.getvalue()


def shown_verdict(at) -> str:
    notes = [e.value for e in (*at.success, *at.warning) if "Verdict:" in e.value]
    assert len(notes) == 1, [e.value for e in (*at.success, *at.warning)]
    return notes[0].replace("\\", "")


@pytest.mark.parametrize(("kind", "name"), examples())
def test_an_uploaded_output_gets_the_verdict_the_library_gives_the_function(kind, name) -> None:
    function = getattr(EXAMPLES[kind], name)
    library = check_implementation(kind, function)
    query = {"n": "8", **VIEWS.get(kind, {})}
    params = ViewParams(n=8, weights="random", **VIEWS.get(kind, {}))
    inputs = page_inputs(kind, params)
    output = function(*KINDS[kind].arguments(inputs.case_dict, inputs.tensors()))
    at = open_page("check", check_kind=kind, **query)
    at.file_uploader(key=f"check_upload_{kind}").upload("out.npy", npy(output)).run()
    assert_clean(at)
    shown = shown_verdict(at)
    assert f"**Verdict:** {library.status}" in shown
    if library.bug:
        assert f"it matches a known bug: {library.bug}" in shown
    assert ("check_comparison" in chart_keys(at)) and "check_reference" not in chart_keys(at)


def test_the_definition_drawn_is_the_librarys_own_computation() -> None:
    params = ViewParams(n=8, weights="random", mask="causal")
    view = example_inputs(params)
    q, k, v, tk, tv = (t.double() for t in (view.q, view.k, view.v, view.table_k, view.table_v))
    n = 8
    expected = {
        "shaw": relative_attention(q, k, v, tk, tv, causal=True)[0, 1],
        "alibi": -alibi_slopes(6)[1] * (torch.arange(n)[:, None] - torch.arange(n)[None]),
        "t5-bucket": t5_bucket(
            torch.arange(16)[None] - torch.arange(16)[:, None], False, T5_BUCKETS, T5_MAX
        ),
    }
    for kind, want in expected.items():
        at = open_page("check", check_kind=kind, n="8", mask="causal", check_head="1")
        assert_clean(at)
        drawn = panel_z(at, "check_reference")
        lower = (
            np.tril(np.ones(drawn.shape, bool)) if kind == "alibi" else np.ones(drawn.shape, bool)
        )
        np.testing.assert_allclose(drawn[lower], want.numpy()[lower], **CLOSE)
        assert np.isnan(drawn[~lower]).all()  # cells the convention does not compare: blank
    # skew and rel-shift: the library's skew and Transformer-XL's shift of the inputs given
    for kind, library in (("skew", skew_masked), ("rel-shift", rel_shift)):
        inputs = page_inputs(kind, params)
        (x,) = inputs.tensors().values()
        at = open_page("check", check_kind=kind, n="8", mask="causal")
        drawn = panel_z(at, "check_reference")
        shifted = library(x)[0, 0].numpy()
        width = shifted.shape[-1]
        compared = np.arange(width)[None, :] <= np.arange(n)[:, None] + width - n
        np.testing.assert_allclose(drawn[compared], shifted[compared], **CLOSE)
    # RoPE: neighbouring pairs or the two halves, each from the formula, positions from 10
    at = open_page("check", check_kind="rope", n="8")
    drawn = panel_z(at, "check_reference")
    x = example_inputs(ViewParams(n=8, weights="random")).q[0, 0].double().numpy()
    d = x.shape[-1]
    theta = 10000.0 ** (-np.arange(0, d, 2) / d)
    angle = (np.arange(n) + ROPE_FIRST)[:, None] * theta[None, :]
    half = d // 2
    first, second = x[:, :half], x[:, half:]
    halves = np.concatenate(
        [
            first * np.cos(angle) - second * np.sin(angle),
            first * np.sin(angle) + second * np.cos(angle),
        ],
        -1,
    )
    np.testing.assert_allclose(drawn, halves, **CLOSE)


def hostile_files() -> list[tuple[str, bytes, str]]:
    class Payload:
        def __reduce__(self):
            return (print, ("this must never run",))

    torch_file = io.BytesIO()
    torch.save({"z": Payload()}, torch_file)
    return [
        ("out.pt", torch_file.getvalue(), "could not be read as .pt (UnpicklingError"),
        ("../../etc/passwd.npy", b"root:x:0:0", "'passwd.npy' could not be read as .npy"),
        ("out.npy", npy(np.zeros((1, 2, 8, 3))), "returned shape (1, 2, 8, 3), the definition's "
         "is (1, 2, 8, 8)"),
        ("out.npy", npy(np.full((1, 2, 8, 8), np.nan)), "NaN or inf where the definition is "
         "finite"),
        ("out.npz", pickle.dumps([1]), "could not be read as .npz"),
    ]  # fmt: skip


@pytest.mark.parametrize(("name", "data", "message"), hostile_files())
def test_a_bad_upload_gets_a_message_and_the_page_stays_up(name, data, message, capsys) -> None:
    at = open_page("check", check_kind="shaw", n="8")
    at.file_uploader(key="check_upload_shaw").upload(name, data).run()
    assert_clean(at)
    warnings = " ".join(w.value for w in at.warning).replace("\\", "")
    assert message in warnings
    assert "this must never run" not in capsys.readouterr().out
    assert "check_comparison" not in chart_keys(at)


def test_alibi_takes_a_head_count_of_its_own_and_shapes_follow_the_sidebar() -> None:
    at = open_page("check", check_kind="alibi", n="100", check_alibi_heads="12")
    assert_clean(at)
    captions = " ".join(c.value for c in at.caption).replace("\\", "")
    assert "fn(heads=12, n=64)" in captions
    assert "two sizes: n = 64 and a head count of this page's own, 12" in captions
    assert "seeded random" not in captions  # no tensor of the view is among its inputs
    rope = open_page("check", check_kind="rope", n="100")
    captions = " ".join(c.value for c in rope.caption).replace("\\", "")
    assert "x (1, 2, 64, 8) float64" in captions and "at most 64 here" in captions
    assert "the positions start at 10" in captions
    assert at.button_group(key="check_head").options == [str(h) for h in range(12)]
    assert math.isclose(float(np.nanmax(panel_z(at, "check_reference"))), 0.0, abs_tol=1e-12)


def test_one_visitors_upload_is_seen_by_that_visitor_alone() -> None:
    params = ViewParams(n=8, weights="random")
    inputs = page_inputs("shaw", params)
    output = shaw.wrong_i_minus_j(*KINDS["shaw"].arguments(inputs.case_dict, inputs.tensors()))
    first, second = open_page("check", n="8"), open_page("check", n="8")
    first.file_uploader(key="check_upload_shaw").upload("mine.npy", npy(output)).run()
    second.run()
    assert "check_comparison" in chart_keys(first)
    assert "check_comparison" not in chart_keys(second)  # the other session: no upload there
    assert not any("Verdict:" in w.value for w in second.warning)
