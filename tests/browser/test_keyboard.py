"""The keyboard alone: Tab reaches every sidebar control with a visible focus ring, the arrow
keys move the n slider, and the page's chart redraws for the new n."""

from __future__ import annotations

from playwright.sync_api import Page, expect

SIDEBAR_CONTROLS = ("weights", "Sentence", "n (sequence length)", "k (clip distance)",
                    "d_model", "heads", "seed", "mask", "colours")  # fmt: skip
TABS_MAX = 120


def focused(page: Page) -> dict:
    """The focused element's accessible name, role, whether it is in the sidebar, and whether
    a focus indicator (outline or box shadow) is drawn on it or its nearest control box."""
    return page.evaluate(
        """() => {
        const e = document.activeElement;
        const label = e.closest('[role=radiogroup]')?.getAttribute('aria-label')
            || e.getAttribute('aria-label') || (e.labels && e.labels[0]
            && e.labels[0].innerText) || e.closest('[data-testid^=st]')?.querySelector(
            'label')?.innerText || e.innerText || '';
        const ring = (el) => { const s = getComputedStyle(el);
            return (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0)
                || s.boxShadow !== 'none'; };
        let shown = ring(e);
        for (let p = e.parentElement, up = 0; !shown && p && up < 4; p = p.parentElement, up++)
            shown = ring(p);
        return {label: label.trim().split('\\n')[0], role: e.getAttribute('role')
            || e.tagName.toLowerCase(), sidebar: !!e.closest('[data-testid=stSidebar]'),
            ring: shown, value: e.value ?? null};
    }"""
    )


def test_a_page_by_keyboard_alone(app_server: str, page: Page, wait_for_app_run) -> None:
    page.goto(f"{app_server}/lookup?weights=random")
    wait_for_app_run(page)
    # the explorer's stylesheet (its focus ring) is in place: a server that has served other
    # pages answers before the browser has mounted it
    page.wait_for_function(
        "() => [...document.querySelectorAll('.sr-only')].some("
        "(e) => getComputedStyle(e).position === 'absolute')"
    )
    reached, no_ring = [], []
    page.locator("body").focus()
    for _ in range(TABS_MAX):
        page.keyboard.press("Tab")
        now = focused(page)
        if now["sidebar"]:
            reached.append(now["label"])
            if not now["ring"]:
                no_ring.append(now["label"])
        if now["label"].startswith("n (sequence length)") and now["role"] in ("slider", "input"):
            break
    else:
        raise AssertionError(f"Tab never reached the n slider; reached {reached}")
    assert no_ring == [], f"focused without a visible indicator: {no_ring}"
    description = page.locator(".sr-only", has_text="Chart:").first
    expect(description).to_contain_text("0 to 7")  # n = 8 positions
    page.keyboard.press("ArrowRight")
    expect(page.get_by_role("slider", name="n (sequence length)")).to_have_value("9")
    wait_for_app_run(page)
    expect(page.locator(".sr-only", has_text="Chart:").first).to_contain_text("0 to 8")
    # the rest of the sidebar: every control is reached by Tab
    for _ in range(TABS_MAX):
        page.keyboard.press("Tab")
        now = focused(page)
        if not now["sidebar"] and reached and now["label"]:
            if all(any(r.startswith(c) for r in reached) for c in SIDEBAR_CONTROLS):
                break
        if now["sidebar"]:
            reached.append(now["label"])
            if not now["ring"]:
                no_ring.append(now["label"])
    missing = [c for c in SIDEBAR_CONTROLS if not any(r.startswith(c) for r in reached)]
    assert missing == [], f"not reached by Tab: {missing}; reached {reached}"
    assert no_ring == [], f"focused without a visible indicator: {no_ring}"
