"""In Chromium, every page: a link that sets several of the page's own controls and sidebar
values settles on an address that keeps every one of them, each as params.json (in the page's
download) has it, and that address, opened in a browser context that shares nothing with the
first, settles on itself and shows the same view: the same params.json.

Some links spell a value otherwise than the control writes it (an option's own name, a
scheme's paper's name): the settled address holds the control's own form, and still reopens
the view.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.sync_api import Browser, Page, expect

from explorer.frame.navigation import PAGES, url_path
from scripts.local_app import APP_IDLE

TIMEOUT_MS = 60_000
# stem -> the link's query: several of the page's own controls and sidebar values, each away
# from its default (``weights=random`` frees the sidebar's d_model, heads and mask).
LINKS: dict[str, list[tuple[str, str]]] = {
    "overview": [("weights", "random"), ("n", "6"), ("k", "1"), ("seed", "3"), ("i", "4"),
                 ("j", "1")],
    "basics": [("weights", "random"), ("n", "5"), ("items", "2 4 1 3"),
               ("example_source", "the keys themselves (self-attention)"), ("scale_keys", "8"),
               ("example_v", "1 0; 2 0; 3 5; 4 6")],
    "multihead": [("weights", "random"), ("k", "3"), ("multihead_split", "K"),
                  ("multihead_mask", "padding"), ("multihead_tokens", "5 6 7 0")],
    "absolute": [("weights", "random"), ("n", "130"), ("k", "3"), ("absolute_zoom", "100")],
    "lookup": [("weights", "random"), ("n", "10"), ("k", "3"), ("ak_view", "by query row"),
               ("ak_row", "6")],
    "logits": [("weights", "random"), ("n", "6"), ("mask", "causal"), ("logits_head", "1"),
               ("logits_scale", "shared"), ("logits_method", "einsum"), ("t2t_step", "product")],
    "attention": [("k", "4"), ("layer", "1"), ("text", "the cat sat"), ("attention_head", "2"),
                  ("attention_more", "the mask"), ("token_focus", "q2")],
    "trained": [("trained_model", "absolute"), ("trained_length", "20"), ("trained_seed", "3"),
                ("trained_tables_kind", "random"), ("trained_tables_layer", "1")],
    "skew": [("weights", "random"), ("n", "6"), ("skew_kind", "unmasked (two-sided)"),
             ("skew_head", "1"), ("skew_step", "3"), ("skew_distance", "false")],
    "rel_shift": [("weights", "random"), ("n", "6"), ("xl_mem", "3"), ("xl_head", "1"),
                  ("xl_step", "3 reshaped"), ("xl_distance", "false"), ("i", "2"),
                  ("j", "4")],
    "speed": [("weights", "random"), ("k", "5"), ("speed_methods", "skew"),
              ("speed_methods", "bucket"), ("speed_max_n", "64"), ("speed_repeats", "5")],
    "family": [("weights", "random"), ("n", "10"), ("scheme", "alibi"), ("alibi_bias", "4"),
               ("family_head", "1"), ("family_scale", "shared"), ("profile_head", "head 1"),
               ("profile_part", "position only"), ("profile_norm", "false"), ("built_for", "4"),
               ("t5_buckets", "16")],
    "compare": [("weights", "random"), ("k", "3"), ("compare_a", "alibi"),
                ("compare_b", "Transformer-XL"), ("compare_head", "1"), ("rope_base", "1000")],
    "predict": [("weights", "random"), ("n", "40"), ("predict_model", "rope"),
                ("predict_count", "12"), ("predict_temperature", "1.2"), ("predict_top_k", "5"),
                ("predict_seed", "3"), ("predict_length", "128"), ("predict_extension", "yarn"),
                ("predict_char", "5")],
    "check": [("weights", "random"), ("n", "10"), ("check_kind", "alibi"),
              ("check_alibi_heads", "12"), ("check_head", "3")],
    "long_context": [("n", "300"), ("lc_base", "1000"), ("lc_factor", "8"),
                     ("lc_decay_layer", "1"), ("lc_rule", "s = 4"), ("lc_sink_layer", "2")],
    "flex": [("weights", "random"), ("n", "10"), ("flex_scheme", "t5"), ("flex_sinks", "true"),
             ("flex_s", "2"), ("flex_w", "3"), ("flex_how", "or"), ("flex_block", "4"),
             ("flex_head", "1")],
    "your_model": [("n", "20"), ("your_model_stack", "model, layer 1"), ("your_model_head", "2"),
                   ("your_model_layer", "2")],
}  # fmt: skip


def test_every_page_has_a_link() -> None:
    assert set(LINKS) == {page.stem for page in PAGES}


def settled(page: Page) -> dict[str, list[str]]:
    """Wait until the script run is over and every chart is drawn; the address's query then."""
    page.wait_for_selector(APP_IDLE, timeout=TIMEOUT_MS)
    charts = page.locator('[data-testid="stPlotlyChart"]')
    expect(charts.first).to_be_attached(timeout=TIMEOUT_MS)
    for index in range(charts.count()):
        expect(charts.nth(index).locator(".main-svg").first).to_be_attached(timeout=TIMEOUT_MS)
    page.wait_for_selector(APP_IDLE, timeout=TIMEOUT_MS)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    expect(page.locator('[data-testid="stAlertContentError"]')).to_have_count(0)
    return parse_qs(urlsplit(page.url).query, keep_blank_values=True)


def params_json(page: Page) -> dict:
    """params.json of the zip the page's one download button saves."""
    button = page.locator('[data-testid="stDownloadButton"]').get_by_role("button")
    expect(button).to_have_count(1, timeout=TIMEOUT_MS)
    with page.expect_download(timeout=TIMEOUT_MS) as info:
        button.click()
    with zipfile.ZipFile(io.BytesIO(info.value.path().read_bytes())) as archive:
        return json.loads(archive.read("params.json"))


def url_values(value: object) -> list[str]:
    """A params.json value as the URL writes it (a list as repeated keys, true and false)."""
    items = value if isinstance(value, list) else [value]
    return [str(item).lower() if isinstance(item, bool) else str(item) for item in items]


@pytest.fixture(scope="module")
def tabs(browser: Browser) -> Iterator[tuple[Page, Page]]:
    """(a tab that opens the links, a tab that opens the addresses they settled on), each in
    its own browser context: the two share nothing, and every visit is a new session."""
    link_context, copy_context = browser.new_context(), browser.new_context()
    yield link_context.new_page(), copy_context.new_page()
    link_context.close()
    copy_context.close()


def opened(tab: Page, url: str) -> tuple[dict[str, list[str]], dict]:
    """Open ``url`` in ``tab``: (the query of the address it settled on, its params.json);
    the view shows no warning."""
    tab.goto(url)
    query = settled(tab)
    expect(tab.locator('[data-testid="stAlertContentWarning"]')).to_have_count(0)
    return query, params_json(tab)


@pytest.mark.parametrize("page", PAGES, ids=[page.stem for page in PAGES])
def test_the_settled_address_of_a_link_reopens_its_view(
    app_server: str, tabs: tuple[Page, Page], page
) -> None:
    link_tab, copy_tab = tabs
    link = f"{app_server}{url_path(page)}?{urlencode(LINKS[page.stem])}"
    query, params = opened(link_tab, link)
    lost = {key for key, _ in LINKS[page.stem]} - set(query)
    assert not lost, f"{link_tab.url} lost {sorted(lost)} of {link}"
    named = {key: url_values(params[key]) for key in set(query) & set(params)}
    assert named == {key: query[key] for key in named}, "the view is not what its address says"

    copy_query, copy_params = opened(copy_tab, link_tab.url)
    assert copy_query == query, f"{link_tab.url} settled on {copy_tab.url}"
    assert copy_params == params
