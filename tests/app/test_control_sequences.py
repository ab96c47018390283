"""Seeded random sequences of control changes on every page: never an exception, never an error.

A sequence opens a page at a random view (its URL), then makes 2 to 4 moves. A move changes one
control the page shows at that moment, found on the page rather than listed here (so a control
is exercised the day it is added), to a value read from the widget itself: an end of its range,
a step such as PageUp or PageDown, a random value, another option; or it switches to another
page in the same session, which keeps every bound widget's value. After the first run and after
every move, the page must show no exception, no error box, and no widget with a value outside
its own range or options (which a browser refuses with an exception); after a move, no warning
may blame the URL, which the user has not touched since the page opened.

``CONTROL_SEQUENCES`` sets how many sequences run (default below, sized for CI); sequence s is
drawn from ``random.Random(s)``, so a failure names the seed that replays it.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable

import pytest
from streamlit.testing.v1 import AppTest

from explorer.frame.navigation import PAGES
from tests.app.conftest import open_page

SEQUENCES = int(os.environ.get("CONTROL_SEQUENCES", "240"))
STEMS = [page.stem for page in PAGES]
# Lengths a sequence may set: mostly small (fast), some with images and a zoom (above 128), some
# just past the window edge (512), a few long enough for a window to move; n = 4096 is covered
# by tests/app/test_extremes.py.
LENGTHS = (1, 2, 3, 5, 8, 8, 16, 33, 64, 100, 200, 300, 511, 512, 513, 600, 600, 777, 1024)
WORDS = ("the", "cat", "sat", "on", "a", "mat", "<b>", "x_1", "[CLS]", "the")
SKIP = {"speed_measure"}  # a benchmark of several seconds: tests/app/test_speed_page.py runs it
# The shared controls and how often a move picks each: those that move other controls' ranges
# most often.
SHARED = {
    "n": 6, "win": 6, "text": 3, "heads": 2, "d_model": 2, "k": 1, "mask": 1, "pad": 1, "seed": 1,
}  # fmt: skip
WIDGETS = (
    "slider", "number_input", "selectbox", "radio", "button_group", "toggle", "text_input",
    "select_slider", "multiselect", "button",
)  # fmt: skip


def sentence(rng: random.Random) -> str:
    """Typed text: none, a few words, or more words than a window holds."""
    count = rng.choice([0, 1, 3, 7, 20, 40, 520, 700])
    return " ".join(rng.choice(WORDS) for _ in range(count))


def start_view(rng: random.Random) -> tuple[str, dict[str, str]]:
    """A page and a URL to open it with."""
    query: dict[str, str] = {}
    n = rng.choice(LENGTHS)
    if rng.random() < 0.8:
        query["n"] = str(n)
    if n > 512 and rng.random() < 0.6:
        query["win"] = str(rng.randint(0, n - 400))  # sometimes past the last start
    for key, options in (("heads", "1248"), ("d_model", ("8", "16", "64")), ("k", ("0", "5"))):
        if rng.random() < 0.3:
            query[key] = rng.choice(options)
    if rng.random() < 0.2:
        query["mask"] = rng.choice(["causal", "padding", "causal-padding"])
    if rng.random() < 0.1:
        query["text"] = sentence(rng)
    return rng.choice(STEMS), query


def number(widget, rng: random.Random) -> int:
    """A value in the widget's range: an end (most often the top, which a shrinking range
    leaves behind), PageUp / PageDown, a step, or anything."""
    low, high = int(widget.proto.min), int(widget.proto.max)
    if widget.key == "n":
        return min(max(rng.choice(LENGTHS), low), high)
    now = int(widget.value if widget.value is not None else low)
    page = max(1, (high - low) // 10)
    picked = rng.choices(
        [high, low, now + page, now - page, now + 1, now - 1, rng.randint(low, high)],
        weights=[4, 1, 2, 1, 1, 1, 3],
    )[0]
    return min(max(picked, low), high)


def option_value(widget, label: str) -> object:
    """The option whose label is ``label`` (AppTest takes a label where the label is a str())."""
    labels = getattr(widget.format_func, "__self__", None)  # format_func=SOME_DICT.get
    if isinstance(labels, dict):
        return next(option for option, text in labels.items() if text == label)
    return label


def control_move(widget, rng: random.Random) -> tuple[str, Callable[[], object]]:
    """(what the move does, how) for one widget."""
    kind, key = widget.type, widget.key
    if kind in ("slider", "number_input"):
        value = number(widget, rng)
        return f"{key} = {value}", lambda: widget.set_value(value)
    if kind in ("selectbox", "radio", "button_group", "select_slider"):
        labels = [str(o) for o in widget.options] if kind != "select_slider" else None
        if labels is None:
            value = rng.choice(list(widget.proto.options))
            cast = float if isinstance(widget.value, float) else int  # a float option: 0.8
            plain = str(value).replace(",", "")  # an option shown with thousands separators
            return f"{key} = {value}", lambda: widget.set_value(cast(plain))
        if kind == "button_group" and rng.random() < 0.1:
            return f"{key} deselected", lambda: widget.set_value(None)
        label = rng.choice(labels)
        return f"{key} = {label!r}", lambda: widget.set_value(option_value(widget, label))
    if kind == "toggle":
        return f"{key} = {not widget.value}", lambda: widget.set_value(not widget.value)
    if kind == "text_input":
        if key == "trained_tokens":
            text = " ".join(str(rng.randint(1, 15)) for _ in range(rng.randint(1, 40)))
        else:
            text = sentence(rng)
        shown = text if len(text) < 30 else f"{len(text.split())} words"
        return f"{key} = {shown!r}", lambda: widget.set_value(text)
    if kind == "multiselect":
        options = list(widget.options)
        chosen = rng.sample(options, rng.randint(1, len(options)))
        return f"{key} = {chosen}", lambda: widget.set_value(chosen)
    return f"click {key}", widget.click


def move(at: AppTest, rng: random.Random, first: bool) -> str:
    """Make one move on the page ``at`` shows and run it; return what it was.

    A first move most often sets one of the page's own controls that has a range (a zoom, a
    picked cell, a channel); later moves most often change a shared control that moves other
    controls' ranges (n, the window start, the typed text, heads, d_model). The rest change any
    other control or switch pages.
    """
    shown = {
        widget.key: widget
        for kind in WIDGETS
        for widget in getattr(at, kind)
        if widget.key and widget.key not in SKIP and not getattr(widget.proto, "disabled", False)
    }
    shared = [key for key in SHARED if key in shown]
    own = [key for key in shown if key not in SHARED]
    ranged = [key for key in own if shown[key].type in ("slider", "number_input")]
    roll = rng.random()
    if roll < 0.12 or not shown:
        stem = rng.choice(STEMS)
        at.switch_page(f"../../../pages/{stem}.py")
        at.run()
        return f"switch to {stem}"
    if first and ranged and roll < 0.7:
        key = rng.choice(ranged)
    elif not first and shared and roll < 0.65 or not own:
        key = rng.choices(shared, weights=[SHARED[k] for k in shared])[0]
    else:
        key = rng.choice(own)
    what, do = control_move(shown[key], rng)
    do()
    at.run()
    return what


def outside(at: AppTest) -> list[str]:
    """Every widget drawn with a value outside its own range or options.

    A browser raises on such a widget (StreamlitValueBelowMinError, ...) where AppTest only
    shows the value, so this is checked as well as the exceptions.
    """
    found = []
    for kind in ("slider", "number_input"):
        for widget in getattr(at, kind):
            low, high, value = widget.proto.min, widget.proto.max, widget.value
            if value is not None and not low <= value <= high:
                found.append(f"outside: {widget.key} = {value} not in [{low:g}, {high:g}]")
    for kind in ("selectbox", "radio", "button_group"):
        for widget in getattr(at, kind):
            try:  # ValueError (or the format function's error): not among the options
                if kind == "button_group":
                    fits = all(label in widget.options for label in widget.formatted_values)
                else:
                    fits = widget.index is not None or widget.value is None
            except (ValueError, KeyError, TypeError):
                fits = False
            if not fits:
                found.append(f"outside: {widget.key} = {widget.value!r} not in {widget.options}")
    return found


def problems(at: AppTest, moved: bool) -> list[str]:
    """What must never show; after a move, also a warning about the URL, which the user has not
    touched since the page opened (its own values were checked on the first run)."""
    blamed = [w.value for w in at.warning if moved and w.value.startswith("URL parameter")]
    return (
        [f"exception: {e.value}" for e in at.exception]
        + [f"error: {e.value}" for e in at.error]
        + outside(at)
        + [f"blamed the URL: {message}" for message in blamed]
    )


def run_sequence(seed: int) -> list[str]:
    """Play sequence ``seed``; return its steps, ending with the problem if one showed."""
    rng = random.Random(seed)
    stem, query = start_view(rng)
    shown_query = "&".join(
        f"{k}={v if len(v) < 30 else str(len(v.split())) + ' words'}" for k, v in query.items()
    )
    steps = [f"open /{stem}?{shown_query}"]
    at = open_page(stem, **query)
    for step in range(rng.randint(2, 4) + 1):
        if step:
            steps.append(move(at, rng, first=step == 1))
        found = problems(at, moved=step > 0)
        if found:
            return [*steps, *found]
    return steps


@pytest.mark.parametrize("seed", range(SEQUENCES))
def test_a_random_sequence_of_controls_never_fails(seed: int) -> None:
    steps = run_sequence(seed)
    failed = ("exception:", "error:", "outside:", "blamed the URL:")
    assert not any(s.startswith(failed) for s in steps), "\n".join(steps)
