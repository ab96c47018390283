"""The Schemes page's cached views against direct core calls and plain definitions."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pytest
import torch

from explorer.frame.budget import plan_scheme, rows_within_budget
from explorer.frame.params import ViewParams
from explorer.stories.family import profiles
from explorer.stories.family import settings as family_settings
from explorer.stories.family import views as family
from explorer.stories.family.plots import shown_distances
from explorer.weights.example import derived_seed, example_inputs
from relpos_core.schemes import make_scheme, scheme_profile
from relpos_core.schemes.catalogue import scheme_entries, scheme_entry, scheme_names

SETTINGS = family_settings.FamilySettings()
CLOSE = {"rtol": 1e-5, "atol": 1e-5}


def whole_term(params: ViewParams, name: str, content_free: bool = False) -> np.ndarray:
    """The scheme's position term over the whole sequence, (h, n, n), straight from the core."""
    scheme = make_scheme(
        name,
        params.heads,
        params.head_dim,
        derived_seed(params.seed, "scheme:" + name),
        **dict(SETTINGS.config(name, params).options),
    )
    inputs = example_inputs(params)
    if name == "shaw":  # Shaw's tables: the view's own, as every page draws them
        with torch.no_grad():
            scheme.table_k.copy_(inputs.table_k)
            scheme.table_v.copy_(inputs.table_v)
    q, k = inputs.q, inputs.k
    if content_free:
        q, k = q.mean(-2, keepdim=True).expand_as(q), k.mean(-2, keepdim=True).expand_as(k)
    with torch.no_grad():
        return scheme.position_term(q, k, causal=params.causal)[0].numpy()


@pytest.mark.parametrize("name", scheme_names())
def test_window_block_equals_block_of_the_whole(name: str) -> None:
    params = ViewParams(n=530, win=11, heads=2, d_model=16, k=3)
    start, stop = params.window
    assert (start, stop) == (11, 523)
    view = family.position_view(params, SETTINGS.config(name, params))
    expected = whole_term(params, name)[:, start:stop, start:stop]
    np.testing.assert_allclose(view.term, expected, rtol=1e-4, atol=1e-4)


def test_alibi_is_minus_slope_times_distance() -> None:
    params = ViewParams(n=9, heads=4, d_model=16)
    view = family.position_view(params, SETTINGS.config("alibi", params))
    distance = np.abs(np.arange(9)[None, :] - np.arange(9)[:, None])
    for h in range(4):  # m_h = 2^(-8 h / H), h = 1..H
        np.testing.assert_allclose(view.term[h], -(2.0 ** (-8 * (h + 1) / 4)) * distance, **CLOSE)


def reference_bucket(r: int, bidirectional: bool, buckets: int, max_distance: int) -> int:
    """T5's relative_position_bucket for one distance r = j - i, written out."""
    out = 0
    if bidirectional:
        buckets //= 2
        out = buckets if r > 0 else 0
        n = abs(r)
    else:
        n = max(-r, 0)
    exact = buckets // 2
    if n < exact:
        return out + n
    scale = np.float32(math.log(max_distance / exact))
    grow = np.log(np.float32(n) / np.float32(exact)) / scale * np.float32(buckets - exact)
    return out + min(exact + int(grow), buckets - 1)


@pytest.mark.parametrize("causal", [False, True])
def test_t5_is_its_bias_at_the_bucket_of_the_distance(causal: bool) -> None:
    params = ViewParams(n=300, mask="causal" if causal else "none", heads=2)
    settings = family_settings.FamilySettings(t5_buckets=16, t5_max=100)
    config = settings.config("t5", params)
    scheme = config.build(params)
    bias = scheme.bias.detach().numpy()  # (B, h)
    n = params.length
    with torch.no_grad():
        inputs = example_inputs(params)
        term = scheme.position_term(inputs.q, inputs.k, causal=causal)[0].numpy()
    for i in (0, 17, 150, 299):
        for j in range(n):
            b = reference_bucket(j - i, not causal, 16, 100)
            np.testing.assert_allclose(term[:, i, j], bias[b], **CLOSE)
    # the page's window is the whole sequence here; its unmasked cells are those values
    view = family.position_view(params, config)
    allowed = ~np.isnan(view.term[0])
    np.testing.assert_allclose(view.term[:, allowed], term[:, allowed], **CLOSE)
    assert allowed.sum() == (n * (n + 1) // 2 if causal else n * n)


def test_masked_cells_are_blank() -> None:
    params = ViewParams(n=8, mask="causal-padding", pad=3)
    view = family.position_view(params, SETTINGS.config("rope", params))
    j, i = np.meshgrid(np.arange(8), np.arange(8))
    allowed = (j <= i) & (j < 5)
    assert np.isnan(view.term[:, ~allowed]).all()
    assert np.isfinite(view.term[:, allowed]).all()
    np.testing.assert_array_equal(view.allowed, allowed.astype(np.float32))


@pytest.mark.parametrize("mask", ["none", "causal"])
def test_profile_matches_the_core_and_the_diagonals(mask: str) -> None:
    params = ViewParams(n=12, mask=mask, heads=2)
    for name in ("shaw", "rope"):
        view = profiles.profile_view(params, SETTINGS.config(name, params))
        scheme = SETTINGS.config(name, params).build(params)
        inputs = example_inputs(params)
        with torch.no_grad():
            core = scheme_profile(scheme, inputs.q, inputs.k, causal=params.causal)
        assert view.with_content and view.over == "whole"
        np.testing.assert_allclose(view.mean, core.mean[0].numpy(), **CLOSE)
        assert view.deviation == pytest.approx(core.toeplitz_deviation)
        term = whole_term(params, name)  # the mean of a diagonal, by hand
        for r in (-11, -3, 0, 4):
            cells = np.diagonal(term, offset=r, axis1=1, axis2=2)  # (h, n - |r|)
            if params.causal and r > 0:
                assert np.isnan(view.mean[:, r + 11]).all()
                continue
            np.testing.assert_allclose(view.mean[:, r + 11], cells.mean(-1), **CLOSE)
            np.testing.assert_allclose(view.pooled_mean[r + 11], cells.mean(), **CLOSE)
        assert view.toeplitz(position_only=True) and not view.toeplitz()


@pytest.fixture
def large_n_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """profile_view takes its large-n path, with no view cached by the other path before or
    after (an app test in the same process may have drawn the same small view)."""
    monkeypatch.setattr(profiles, "FULL_PROFILE_CELLS", 0)
    profiles.profile_view.clear()
    yield
    profiles.profile_view.clear()


@pytest.mark.parametrize("mask", ["none", "causal"])
@pytest.mark.parametrize("name", scheme_names())
@pytest.mark.usefixtures("large_n_path")
def test_cheap_profile_is_the_position_only_diagonals(name: str, mask: str) -> None:
    params = ViewParams(n=20, mask=mask, heads=2, win=0)
    view = profiles.profile_view(params, SETTINGS.config(name, params))
    assert not view.with_content and view.over == "window"
    free = whole_term(params, name, content_free=True)  # (h, n, n), a function of j - i
    for r in range(-19, 20):
        value = np.diagonal(free, offset=r, axis1=1, axis2=2)[:, 0]
        if params.causal and r > 0:
            assert np.isnan(view.mean[:, r + 19]).all()
        else:
            np.testing.assert_allclose(view.mean[:, r + 19], value, **CLOSE)
    assert view.toeplitz(position_only=True)


@pytest.mark.parametrize("name", scheme_names())
def test_position_only_curve_is_the_content_free_diagonals(name: str) -> None:
    params = ViewParams(n=12, heads=2)
    view = profiles.profile_view(params, SETTINGS.config(name, params))
    assert view.with_content  # small: both curves offered
    free = whole_term(params, name, content_free=True)  # (h, n, n)
    for r in range(-11, 12):
        value = np.diagonal(free, offset=r, axis1=1, axis2=2)[:, 0]  # (h,)
        mean, std = view.curve(head=None, position_only=True)
        np.testing.assert_allclose(mean[r + 11], value.mean(), **CLOSE)
        np.testing.assert_allclose(std[r + 11], value.std(), **CLOSE)
        np.testing.assert_allclose(
            view.curve(head=1, position_only=True)[0][r + 11], value[1], **CLOSE
        )


def test_curve_normalised_peaks_at_one() -> None:
    params = ViewParams(n=16)
    view = profiles.profile_view(params, SETTINGS.config("alibi", params))
    mean, std = view.curve(normalise=True)
    assert np.nanmax(np.abs(mean)) == pytest.approx(1.0)
    raw, _ = view.curve()
    assert raw.min() == pytest.approx(-15 * np.mean([2.0**-4, 2.0**-8]), rel=1e-6)  # pooled
    np.testing.assert_allclose(view.curve(head=1)[0][0], -15 * 2.0**-8, rtol=1e-6)


@pytest.mark.parametrize("blocks", [None, 7])
def test_compare_equals_whole_attention(monkeypatch, blocks: int | None) -> None:
    if blocks is not None:
        monkeypatch.setattr(family, "rows_within_budget", lambda *args, **kwargs: blocks)
    params = ViewParams(n=520, win=5, mask="padding", pad=4, heads=2)
    a, b = SETTINGS.config("shaw", params), SETTINGS.config("music", params)
    view = family.compare_view(params, a, b)
    start, stop = params.window
    inputs = example_inputs(params)
    outputs = {}
    for config in (a, b):
        with torch.no_grad():
            z, alpha = config.build(params)(inputs.q, inputs.k, inputs.v, mask=inputs.mask)
        outputs[config.name] = (z[0, :, start:stop].numpy(), alpha[0, :, start:stop].numpy())
    (z_a, w_a), (z_b, w_b) = outputs["shaw"], outputs["music"]
    keys = slice(start, stop)
    padded = np.arange(start, stop) >= 516
    np.testing.assert_allclose(view.weights_a[..., ~padded], w_a[..., keys][..., ~padded], **CLOSE)
    np.testing.assert_allclose(view.weights_b[..., ~padded], w_b[..., keys][..., ~padded], **CLOSE)
    assert np.isnan(view.weights_a[..., padded]).all()
    np.testing.assert_allclose(view.difference, view.weights_b - view.weights_a)
    np.testing.assert_allclose(view.weight_diff, np.abs(w_b - w_a).max((-2, -1)), **CLOSE)
    np.testing.assert_allclose(view.output_diff, np.abs(z_b - z_a).max((-2, -1)), **CLOSE)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("scheme", "nope", f"scheme must be one of {', '.join(scheme_names())}, got 'nope'"),
        ("music_len", 0, "music_len (table length L) must be an integer in [1, 4096], got 0"),
        ("t5_max", 16, "t5_max (max_distance) must be an integer in [17, 8192], got 16"),
        ("t5_buckets", 33, "t5_buckets (num_buckets) must be one of 8, 16, 32, 64, 128, got 33"),
        ("alibi_bias", 3, "alibi_bias (max_bias) must be one of 2, 4, 8, 16, got 3"),
        ("rope_base", True, "rope_base (base) must be one of"),
        ("built_for", 5000, "built_for (trained length) must be an integer in [1, 4096]"),
        ("music_values", "yes", "music_values must be true or false, got 'yes'"),
        ("compare_b", "T5", "compare_b must be one of"),
    ],
)
def test_settings_name_the_control_range_and_value(field: str, value, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):  # fmt: skip
        family_settings.FamilySettings(**{field: value})


def test_config_carries_only_its_scheme_and_the_sidebar_k() -> None:
    params = ViewParams(k=5)
    settings = family_settings.FamilySettings(t5_buckets=16, t5_max=40, music_len=9, rope_base=100)
    assert settings.config("shaw", params).options == (("max_relative_position", 5),)
    assert settings.config("t5", params).text == "16 buckets, max distance 40"
    assert settings.config("music", params).text == "table length L = 9, on keys only"
    assert settings.config("shaw", params).text == "clip distance k = 5"
    assert settings.config("xl", params).options == ()
    assert settings.config("rope", params).build(params).base == 100.0
    assert settings.config("music", params).build(params).max_relative_position == 9


def test_budget_refuses_an_oversized_scheme_and_sizes_blocks() -> None:
    scheme = make_scheme("xl", heads=8, head_dim=16)
    with pytest.raises(ValueError, match=r"xl scheme with heads = 8.*4096 queries over n"):
        plan_scheme("attention", scheme, 4096, 4096)
    rows = rows_within_budget(scheme, 4096, 512, traces=2)
    assert 1 <= rows < 512
    assert plan_scheme("attention", scheme, rows, 4096, traces=2) <= 256 * 2**20
    with pytest.raises(ValueError):
        plan_scheme("attention", scheme, rows + 1, 4096, traces=2)


def test_shown_distances_keep_the_centre_and_thin_the_rest() -> None:
    distance = np.arange(-4095, 4096)
    index, stride = shown_distances(distance)
    kept = distance[index]
    assert set(range(-511, 512)) <= set(kept.tolist())
    assert stride > 1 and len(kept) <= 1023 + 1024 + 2
    assert np.all(np.abs(kept[np.abs(kept) >= 512]) % stride == 0)


SETTING_NAMES = tuple(  # every setting's keyword, from the catalogue
    dict.fromkeys(setting.keyword for entry in scheme_entries() for setting in entry.settings)
)


@pytest.mark.parametrize("name", scheme_names())
def test_the_settings_shown_with_trained_weights_are_the_trained_models(name: str) -> None:
    """With trained weights the pages show the default settings as the models': they must be."""
    from relpos_lab.family import load

    params = ViewParams(weights="trained", d_model=128, heads=4, mask="causal", k=8)
    shown = SETTINGS.config(name, params).build(params)
    trained = load(name).blocks[0].attention.scheme
    settings = {s: getattr(trained, s) for s in SETTING_NAMES if hasattr(trained, s)}
    assert settings == {s: getattr(shown, s) for s in settings}
    assert bool(settings) == bool(scheme_entry(name).settings)  # each of its settings compared
    for (key, fixed), (_, drawn) in zip(
        trained.named_buffers(), shown.named_buffers(), strict=True
    ):
        torch.testing.assert_close(fixed, drawn, msg=f"{name} buffer {key}")
