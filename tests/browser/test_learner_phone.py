"""What a learner sees, on a phone (an iPhone 13 as Playwright describes it) and on a wide screen:
tick labels with room to be read, one meaning per symbol on every page, Plotly's toolbar over no
title, every display formula inside its box, every axis title inside its chart.

Each page is opened once per screen (a module fixture) and measured in the page itself; each
test then reads one class of facts for every page.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, expect

from explorer.frame.navigation import PAGES as NAVIGATION
from explorer.frame.navigation import url_path

PAGES = tuple(url_path(page) for page in NAVIGATION)
TIMEOUT_MS = 60_000
# Pages drawn at a desktop's width too: the panels whose tick labels were crushed (the (8, 128)
# sinusoid, the output split, tensor2tensor's steps) and the scheme pickers side by side.
WIDE = ("/absolute", "/attention", "/logits", "/multihead", "/compare?compare_b=alibi")
ROPE_PICK = "/family?scheme=rope&i=3&j=1"  # a pair picked on a view that draws no Shaw table
SHAW_PICK = "/lookup?i=3&j=1"  # the same pair on Shaw's lookup table
# KaTeX ends a sub- or superscript with a 2 px cell for Safari (.vlist-s): not a visible overflow
KATEX_SLACK_PX = 2

MEASURE = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const box = (el) => el.getBoundingClientRect();
  const shown = (el) => { const b = box(el); return b.width > 0 && b.height > 0; };
  const meets = (a, b) => a.left < b.right && a.right > b.left
    && a.top < b.bottom && a.bottom > b.top;
  const facts = {crushed: [], toolbar: [], formulas: [], titles: [], buttons: [], cut: [],
    breaks: [], rows: [], badges: [], tables: []};
  for (const chart of main.querySelectorAll('[data-testid="stPlotlyChart"]')) {
    const svg = chart.querySelector('.main-svg');
    if (!svg) continue;
    // the whole drawing inside the chart's box: a box shorter than its figure hides the bottom
    if (box(svg).bottom > box(chart).bottom + 1 || chart.scrollHeight > chart.clientHeight + 1)
      facts.cut.push(`${Math.round(box(svg).bottom - box(chart).bottom)} px of `
        + `${(chart.querySelector('.gtitle') || {}).textContent || 'a chart'}`);
    // tick labels of one axis that overlap their neighbour
    for (const layer of chart.querySelectorAll('.yaxislayer-above, .xaxislayer-above')) {
      const vertical = layer.classList.contains('yaxislayer-above');
      const labels = [...layer.querySelectorAll('.ytick text, .xtick text')].filter(shown)
        .filter((t) => vertical || !(t.getAttribute('transform') || '').includes('rotate'))
        .map((t) => [box(t), t.textContent])
        .sort((a, b) => vertical ? a[0].top - b[0].top : a[0].left - b[0].left);
      for (let t = 1; t < labels.length; t++) {
        const [a, b] = [labels[t - 1][0], labels[t][0]];
        if (vertical ? b.top < a.bottom - 1 : b.left < a.right - 1)
          facts.crushed.push(`${labels[t - 1][1]} / ${labels[t][1]}`);
      }
    }
    // the toolbar over any title, axis title, legend entry or tick label
    const bar = chart.querySelector('.modebar');
    const titles = [...chart.querySelectorAll('.infolayer .annotation-text, .gtitle, '
      + '.g-xtitle text, .g-ytitle text, .legendtext, .xtick text, .ytick text')].filter(shown);
    if (bar && getComputedStyle(bar).opacity !== '0' && shown(bar)) {
      facts.toolbar.push(
        ...titles.filter((t) => meets(box(t), box(bar))).map((t) => t.textContent));
      // the toolbar itself inside the chart's frame (its strip is the frame's), not cut off
      const own = box(chart.closest('[data-testid="stFullScreenFrame"]') || chart);
      if (box(bar).top < own.top - 1 || box(bar).right > own.right + 1)
        facts.toolbar.push('the toolbar outside its chart');
    }
    // axis and figure titles inside the chart's own drawing
    const edge = box(svg);
    for (const t of chart.querySelectorAll('.g-xtitle text, .g-ytitle text, .gtitle')) {
      const b = box(t);
      if (shown(t) && (b.left < edge.left - 1 || b.right > edge.right + 1 || b.top < edge.top - 1
          || b.bottom > edge.bottom + 1)) facts.titles.push(t.textContent);
    }
    // the legend inside the chart too, and off the x axis title
    const legend = chart.querySelector('g.legend');
    if (legend && shown(legend)) {
      const b = box(legend);
      if (b.bottom > edge.bottom + 1 || b.right > edge.right + 1) facts.titles.push('legend cut');
      for (const t of chart.querySelectorAll('.g-xtitle text'))
        if (meets(box(t), b)) facts.titles.push(`legend over ${t.textContent}`);
    }
  }
  for (const f of main.querySelectorAll('.katex-display')) {
    if (f.scrollWidth > f.clientWidth + %(slack)d) {
      const tex = f.querySelector('annotation');
      facts.formulas.push(`${f.scrollWidth} > ${f.clientWidth}: ${tex ? tex.textContent : ''}`);
    }
  }
  // a wrapped formula's new line starts after a relation, a comma or an explicit \\allowbreak,
  // never inside an expression (after a + or a -)
  for (const html of main.querySelectorAll('.katex-display .katex-html')) {
    const bases = [...html.children].filter((b) => b.classList.contains('base'));
    for (let b = 1; b < bases.length; b++) {
      if (box(bases[b]).left > box(bases[b - 1]).left + 1) continue;  // the same line
      const ends = [...bases[b - 1].children].filter((c) => !c.classList.contains('strut')
        && !(c.classList.contains('mspace') && !c.classList.contains('allowbreak')));
      const last = ends[ends.length - 1];
      if (!last || !['mrel', 'mpunct', 'allowbreak'].some((c) => last.classList.contains(c))) {
        const tex = html.closest('.katex').querySelector('annotation');
        facts.breaks.push(`after "${bases[b - 1].textContent.slice(-16)}": `
          + (tex ? tex.textContent : ''));
      }
    }
  }
  // a check badge shows its whole text (its number), never an ellipsis
  for (const b of main.querySelectorAll('.stMarkdownBadge'))
    if (b.scrollWidth > b.clientWidth + 1) facts.badges.push(b.textContent);
  // a table shows every column, none scrolled out of sight
  for (const t of main.querySelectorAll('[data-testid="stMarkdownContainer"] table'))
    if (t.scrollWidth > t.clientWidth + 1)
      facts.tables.push(`${t.scrollWidth} > ${t.clientWidth}: ${t.rows[0].textContent}`);
  // a segmented control's buttons on one row, read as one control
  for (const g of main.querySelectorAll('[data-testid="stButtonGroup"]')) {
    const tops = new Set([...g.querySelectorAll('[role="radiogroup"] button')].filter(shown)
      .map((b) => Math.round(box(b).top)));
    if (tops.size > 1) facts.rows.push(`${tops.size} rows: ${g.innerText.replace(/\\n/g, ' / ')}`);
  }
  for (const b of main.querySelectorAll('[data-testid="stButtonGroup"] button')) {
    const column = (b.closest('[data-testid="stColumn"]') || main).getBoundingClientRect();
    if (box(b).right > column.right + 1 || b.scrollWidth > b.clientWidth + 1)
      facts.buttons.push(b.innerText);
  }
  const tex = [...main.querySelectorAll('annotation')].map((a) => a.textContent);
  const charts = [...main.querySelectorAll('[data-testid="stPlotlyChart"] svg text')]
    .map((t) => t.textContent);
  facts.text = [main.innerText, ...tex, ...charts].join('\\n');
  const sidebar = document.querySelector('[data-testid="stSidebar"]');
  facts.sidebar = sidebar ? sidebar.textContent : '';
  const glossary = sidebar && [...sidebar.querySelectorAll('[data-testid="stExpander"]')]
    .find((e) => e.textContent.includes('Symbols'));
  facts.glossary = glossary ? glossary.querySelector('table')?.textContent || '' : '';
  return facts;
}""".replace("%(slack)d", str(KATEX_SLACK_PX))


def measure(browser: Browser, base_url: str, paths, device: dict) -> dict[str, dict]:
    """Open each path in a fresh context of ``device`` and measure it once its run is done."""
    facts = {}
    for path in paths:
        context = browser.new_context(**device)
        page = context.new_page()
        page.goto(f"{base_url}{path}")
        page.wait_for_selector(
            '[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=TIMEOUT_MS
        )
        expect(page.locator('[data-testid="stPlotlyChart"] .main-svg').first).to_be_visible(
            timeout=TIMEOUT_MS
        )
        page.wait_for_timeout(1_500)  # KaTeX typesets and plotly draws after the run
        facts[path] = page.evaluate(MEASURE)
        context.close()
    return facts


@pytest.fixture(scope="module")
def on_phone(browser: Browser, playwright, app_server: str) -> dict[str, dict]:
    return measure(
        browser, app_server, (*PAGES, ROPE_PICK, SHAW_PICK), playwright.devices["iPhone 13"]
    )


@pytest.fixture(scope="module")
def on_desktop(browser: Browser, app_server: str) -> dict[str, dict]:
    return measure(browser, app_server, WIDE, {"viewport": {"width": 1440, "height": 1000}})


def failures(facts: dict[str, dict], kind: str) -> dict[str, list]:
    return {path: page[kind] for path, page in facts.items() if page[kind]}


def test_tick_labels_are_not_crushed(on_phone, on_desktop) -> None:
    """No tick label overlaps its neighbour on any panel, and no picker's button is cut."""
    assert failures(on_phone, "crushed") == {}
    assert failures(on_desktop, "crushed") == {}
    assert failures(on_phone, "buttons") == {} and failures(on_desktop, "buttons") == {}


# The other names of the head dimension (the papers'), and L as the sequence length.
OTHER_NAMES = re.compile(r"d_\{?[zk]\b|√d_?[zk]\b|\bL = (n|2048)\b|sequence length L\b")
SKEW_STORY = "/skew"  # its own text (explorer/stories/shift) is fixed with that story


def test_one_meaning_per_symbol(on_phone) -> None:
    """No page writes d_z, d_k or L for the sequence length; the glossary is the same on every
    page and names the papers' symbols; a pair picked on the RoPE view gets no Shaw table row."""
    misnamed = {
        path: sorted(set(m.group(0) for m in OTHER_NAMES.finditer(page["text"])))
        for path, page in on_phone.items()
        if path != SKEW_STORY and OTHER_NAMES.search(page["text"])
    }
    assert misnamed == {}
    glossaries = {page["glossary"] for page in on_phone.values()}
    assert len(glossaries) == 1 and all(name in next(iter(glossaries)) for name in ("d_z", "d_k"))
    rope = on_phone[ROPE_PICK]["sidebar"]
    assert "j - i = -2" in rope and "table row" not in rope
    shaw = re.search(r"table row clip\(-2, (\d+)\) \+ \1 = (\d+)", on_phone[SHAW_PICK]["sidebar"])
    assert shaw is not None, on_phone[SHAW_PICK]["sidebar"]
    k, row = int(shaw.group(1)), int(shaw.group(2))
    assert row == max(-2, -k) + k  # clip(j - i, k) + k for (i, j) = (3, 1)


def test_every_chart_is_drawn_whole(on_phone, on_desktop) -> None:
    """No chart's box is shorter than its figure: the bottom (a legend, the x axis title, a
    heatmap's last row) is never hidden."""
    assert failures(on_phone, "cut") == {}
    assert failures(on_desktop, "cut") == {}


def test_controls_keep_one_row(on_phone, on_desktop) -> None:
    """Every segmented control's buttons lie on one row; on a phone a control whose buttons
    would wrap is a select box (the Skew, Transformer-XL shift and Relative logits steppers)."""
    assert failures(on_phone, "rows") == {}
    assert failures(on_desktop, "rows") == {}


def test_check_badges_show_their_numbers(on_phone) -> None:
    """A badge comparing a figure with the definition wraps on a phone: its number shows."""
    assert failures(on_phone, "badges") == {}


def test_tables_show_every_column(on_phone) -> None:
    """Every table fits a phone's width: no column is hidden in a scroll without a cue."""
    assert failures(on_phone, "tables") == {}


def test_toolbar_covers_no_title(on_phone) -> None:
    """Plotly's toolbar, always shown on a touch screen, lies over no title or label."""
    assert failures(on_phone, "toolbar") == {}


def test_display_formulas_fit_a_phone(on_phone) -> None:
    """Every display formula is as wide as its box or narrower at 390 px: none scrolls, and one
    that wraps breaks after a relation (=, ∈), between clauses or where its TeX allows it,
    never inside an expression ("clip(j - i, k) +" over "k")."""
    assert failures(on_phone, "formulas") == {}
    assert failures(on_phone, "breaks") == {}


def test_axis_titles_inside_the_chart(on_phone) -> None:
    """Every axis title, figure title and legend lies inside its chart at 390 px, and no legend
    lies over an axis title."""
    assert failures(on_phone, "titles") == {}
