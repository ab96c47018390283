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
from explorer.stories.check.inputs import page_inputs
from explorer.weights.example import example_inputs
from relpos_core import relative_attention
from relpos_core.check import KINDS, check_implementation
from relpos_core.schemes import alibi_slopes, rel_shift, t5_bucket
from relpos_core.schemes.rope.reference import PAGE_FIRST
from relpos_core.schemes.t5.reference import PAGE_BUCKETS, PAGE_MAX
from relpos_core.skew import skew_masked
from tests.app.conftest import assert_clean, chart_keys, chart_spec, open_page
from tests.app.panels import array_of, panel_z
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
            torch.arange(16)[None] - torch.arange(16)[:, None], False, PAGE_BUCKETS, PAGE_MAX
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
    angle = (np.arange(n) + PAGE_FIRST)[:, None] * theta[None, :]
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
        ("out.pt", torch_file.getvalue(), "'out.pt': it holds Python objects (print) besides "
         "tensors; the page reads tensors only"),
        ("../../etc/passwd.npy", b"root:x:0:0", "'passwd.npy' could not be read as .npy"),
        # names a hostile client sends: Streamlit's own check of the name would fail before the
        # page ran, on its error page
        ("out\x00.npy", b"garbage!", "'out?.npy' could not be read as .npy"),
        ("out.npy\x00.exe", npy(np.zeros(3)), "'out.npy?.exe': the file type must be one of "
         ".npy, .npz, .pt, .safetensors, got '.exe'"),
        ("out.exe", b"MZ", "'out.exe': the file type must be one of"),
        ("\x1b[2J\r\nout.npy", b"garbage!", "'?[2J??out.npy' could not be read as .npy"),
        ("out.npy", b"\x93NUMPY\x01\x00" + b"garbage", "could not be read as .npy"),
        ("out.npy", npy(np.zeros((1, 2, 8, 3))), "returned shape (1, 2, 8, 3), the definition's "
         "is (1, 2, 8, 8)"),
        ("out.npy", npy(np.full((1, 2, 8, 8), np.nan)), "NaN or inf where the definition is "
         "finite"),
        ("out.npz", pickle.dumps([1]), "'out.npz': it is not a zip archive (no end record)"),
    ]  # fmt: skip


@pytest.mark.parametrize(("name", "data", "message"), hostile_files())
def test_a_bad_upload_gets_a_message_and_the_page_stays_up(name, data, message, capsys) -> None:
    at = open_page("check", check_kind="shaw", n="8")
    at.file_uploader(key="check_upload_shaw").upload(name, data).run()
    assert_clean(at)
    warnings = " ".join(w.value for w in at.warning).replace("\\", "")
    assert message in warnings
    assert "check_reference" in chart_keys(at)  # the page goes on: the definition is drawn
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


# ---- every differing cell marked, the mask said, the picked pair, the URL ------------------------


def hatched_cells(at, key: str, panel: int) -> set[tuple[int, int]]:
    """The cells the hatch trace of panel ``panel`` covers: each closed rectangle of its path
    (five corners, then a gap) spans the cells of one row from its left to its right edge."""
    spec = chart_spec(at, key)
    axis = spec["data"][panel].get("xaxis", "x")
    traces = [
        t
        for t in spec["data"]
        if t.get("name") == "differing cells" and t.get("xaxis", "x") == axis
    ]
    assert len(traces) == 1, [t.get("name") for t in spec["data"]]
    x, y = array_of(traces[0]["x"]).reshape(-1, 6), array_of(traces[0]["y"]).reshape(-1, 6)
    assert np.isnan(x[:, 5]).all() and np.isnan(y[:, 5]).all()
    cells = set()
    for xs, ys in zip(x, y, strict=True):
        row = int(round(ys[0] + 0.5))
        first, last = int(round(xs[0] + 0.5)), int(round(xs[1] - 0.5))
        cells.update((row, col) for col in range(first, last + 1))
    return cells


def trained_inputs(at) -> tuple[ViewParams, dict]:
    params = at.session_state["_view_params"]
    inputs = page_inputs("shaw", params)
    return params, inputs


def test_every_differing_cell_is_hatched_on_every_panel() -> None:
    """Trained weights at n = 12 (the model's 32 channels a head): a clip one short differs on
    320 cells of head 0, past the 256 a cap once outlined, rows 9-11 among them. The cells
    marked are those where the upload and the library's own attention differ."""
    at = open_page("check", n="12", weights="trained")
    params, inputs = trained_inputs(at)
    x = inputs.tensors()
    output = shaw.wrong_clipped_short(*KINDS["shaw"].arguments(inputs.case_dict, x))
    at.file_uploader(key="check_upload_shaw").upload("out.npy", npy(output)).run()
    assert_clean(at)
    library = relative_attention(
        x["q"], x["k"], x["v"], x["table_k"], x["table_v"], causal=params.causal
    )
    for head in (0, 3):
        if head:
            at.button_group(key="check_head").set_value(str(head)).run()
        differ = ~np.isclose(output[0, head].numpy(), library[0, head].numpy(), **CLOSE)
        want = {(int(r), int(c)) for r, c in np.argwhere(differ)}
        assert len(want) > 256 and {r for r, _ in want} >= {9, 10, 11}
        for panel in range(3):
            assert hatched_cells(at, "check_comparison", panel) == want
        captions = " ".join(c.value for c in at.caption).replace("\\", "")
        said = f"Every differing cell of this head is hatched and outlined in black ({len(want)}"
        assert f"{said} of 384 compared)" in captions


def test_the_page_says_what_its_inputs_take_of_the_sidebars_mask() -> None:
    """Under causal + padding the inputs take the causal part and no padded key: the drawn
    definition is the library's causal attention over every key, and the page says so."""
    at = open_page("check", n="8", mask="causal-padding", pad="3")
    assert_clean(at)
    captions = " ".join(c.value for c in at.caption).replace("\\", "")
    assert "The sidebar's mask is causal-padding: its causal part is the call's causal=True." in (
        captions
    )
    assert "Its 3 padded key(s) are not in these inputs" in captions
    view = example_inputs(ViewParams(n=8, weights="random"))
    q, k, v, tk, tv = (t.double() for t in (view.q, view.k, view.v, view.table_k, view.table_v))
    causal = relative_attention(q, k, v, tk, tv, causal=True)[0, 0].numpy()
    np.testing.assert_allclose(panel_z(at, "check_reference"), causal, rtol=1e-5, atol=1e-6)
    t5_page = open_page("check", check_kind="t5-bucket", n="8", mask="padding")
    captions = " ".join(c.value for c in t5_page.caption).replace("\\", "")
    assert "its causal part is the call's bidirectional=True" in captions
    assert "Its 2 padded key(s) are not in these inputs" in captions
    plain = open_page("check", n="8")
    assert not any("The sidebar's mask" in c.value for c in plain.caption)


def pair_note(at) -> str:
    notes = [c.value.replace("\\", "") for c in at.caption]
    notes = [note for note in notes if "Picked pair (i, j)" in note]
    assert len(notes) == 1, notes
    return notes[0]


def pair_boxes(at, key: str) -> list[tuple[float, float, float, float]]:
    shapes = chart_spec(at, key)["layout"].get("shapes", [])
    return sorted(
        {(s["x0"], s["y0"], s["x1"], s["y1"]) for s in shapes if s.get("name") == "picked pair"}
    )


def test_the_picked_pair_is_outlined_with_its_numbers_for_every_kind() -> None:
    params = ViewParams(n=8, weights="random")
    # skew: the cell (5, 3) holds rel[5, (n - 1) - 5 + 3], the library's skew of it
    at = open_page("check", check_kind="skew", n="8", i="5", j="3")
    assert_clean(at)
    (rel,) = page_inputs("skew", params).tensors().values()
    value = float(skew_masked(rel)[0, 0, 5, 3])
    assert f"In head 0 the definition gives {value:.4g}." in pair_note(at)
    assert pair_boxes(at, "check_reference") == [(2.5, 4.5, 3.5, 5.5)]
    # rel-shift: the cell (i, M + j), M = 4 memory keys first; the same logit as the skew's
    at = open_page("check", check_kind="rel-shift", n="8", i="5", j="3")
    (x,) = page_inputs("rel-shift", params).tensors().values()
    value = float(rel_shift(x)[0, 0, 5, 4 + 3])
    note = pair_note(at)
    assert "its cell is row 5, column 7 (the 4 memory keys come first" in note
    assert f"the definition gives {value:.4g}." in note
    assert (6.5, 4.5, 7.5, 5.5) in pair_boxes(at, "check_reference")
    # an uploaded output: its number beside the definition's, and their difference
    wrong = shift_examples.gather_one_off(x)
    at.file_uploader(key="check_upload_rel-shift").upload("out.npy", npy(wrong)).run()
    got = float(wrong[0, 0, 5, 7])
    assert f"yours {got:.4g} (difference {abs(got - value):.3g})" in pair_note(at)
    assert (6.5, 4.5, 7.5, 5.5) in pair_boxes(at, "check_comparison")
    # alibi: a key after the query is not compared, and the page says so
    at = open_page("check", check_kind="alibi", n="8", i="2", j="6")
    assert "this cell is not compared: key 6 comes after query 2" in pair_note(at)
    # shaw: the row z_2, outlined whole; its first entries from the library's attention
    at = open_page("check", check_kind="shaw", n="8", i="2", j="6")
    view = example_inputs(params)
    q, k, v, tk, tv = (t.double() for t in (view.q, view.k, view.v, view.table_k, view.table_v))
    z = relative_attention(q, k, v, tk, tv)[0, 0, 2].numpy()
    assert f"row 2: the definition ({', '.join(f'{e:.3g}' for e in z[:4])}, …" in pair_note(at)
    assert pair_boxes(at, "check_reference") == [(-0.5, 1.5, 7.5, 2.5)]
    # rope: the rows of positions i and j
    at = open_page("check", check_kind="rope", n="8", i="2", j="6")
    assert f"rows 2 (position {PAGE_FIRST + 2}) and 6 (position {PAGE_FIRST + 6})" in pair_note(at)
    assert pair_boxes(at, "check_reference") == [(-0.5, 1.5, 7.5, 2.5), (-0.5, 5.5, 7.5, 6.5)]


def test_a_pair_beyond_the_pages_positions_is_said_to_be() -> None:
    at = open_page("check", n="100", i="80", j="3")
    assert_clean(at)
    assert "this page checks positions 0-63, so the pair is not on its maps" in pair_note(at)


@pytest.mark.parametrize("key", ["check_upload_shaw", "check_inputs", "pair_clear"])
def test_a_url_key_of_a_control_the_address_cannot_set_is_named(key) -> None:
    at = open_page("check", n="8", **{key: "x"})
    assert_clean(at)
    shown = [w.value.replace("\\", "") for w in at.warning]
    assert shown == [
        f"URL parameter {key} is not a setting the address can hold (uploads and buttons are "
        "set on the page); ignored and removed from the address"
    ]
    assert key not in at.query_params


def test_an_upload_is_read_once_for_the_session(monkeypatch) -> None:
    """Another head, another pick: the file is neither read nor judged again (nor is a
    refused one)."""
    from explorer.stories.check import views

    calls = []
    real = views.read_upload
    monkeypatch.setattr(views, "read_upload", lambda *a: calls.append(a[0]) or real(*a))
    inputs = page_inputs("shaw", ViewParams(n=8, weights="random"))
    output = shaw.wrong_i_minus_j(*KINDS["shaw"].arguments(inputs.case_dict, inputs.tensors()))
    at = open_page("check", n="8")
    at.file_uploader(key="check_upload_shaw").upload("mine.npy", npy(output)).run()
    at.button_group(key="check_head").set_value("1").run()
    assert calls == ["mine.npy"] and "check_comparison" in chart_keys(at)
    at.file_uploader(key="check_upload_shaw").upload("bad.npy", b"garbage!").run()
    at.button_group(key="check_head").set_value("0").run()
    assert calls == ["mine.npy", "bad.npy"]
