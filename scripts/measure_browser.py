"""Measure what a person waits for in a real browser, per page of the explorer.

    python scripts/measure_browser.py [--pages lookup skew] [--queries "" "?n=1024"]
                                      [--repeats 7] [--load-repeats 3] [--slider k]
                                      [--keypress] [--navigate] [--url http://127.0.0.1:8501]
                                      [--json bench-results/browser.json]

Serves app.py on a free port (or measures ``--url``) and drives Debian's Chromium. For every
page of app.py's ``st.navigation`` list (URL path: the file stem; the default page is ``/``) at
every query string:

* load: a fresh browser context (nothing cached), ``page.goto`` to idle. Counts the bytes the
  websocket received (payloads of CDP ``Network.webSocketFrameReceived``, binary frames decoded)
  and the HTTP bytes (``Network.loadingFinished`` encodedDataLength), and times the first chart
  drawn and the page idle. Repeated ``--load-repeats`` times, each in a new context; the first
  load of a view may also fill the server's caches. After each, a warm load: the same URL again
  in the same context, the app's code (about 8 MB of JavaScript) now from the browser's cache.
* key press (at the default view, at every query with ``--keypress``): focus a sidebar slider,
  press an arrow key (right, left, right, ... so the value stays near where it was), time the
  first chart drawn with new data and the page idle again, ``--repeats`` times.
* link (with ``--navigate``): in a fresh context, load the landing page at the query (for the
  landing page itself, the next page), then click the page's link in the sidebar: Streamlit
  runs it in the same session without loading the document again, as a visitor touring the
  pages meets it. Time the first chart drawn with new data and the idle moment from the click,
  ``--load-repeats`` times.

Idle means: Streamlit reports the app connected and its script run finished, no status widget,
no element still loading its code (``stSkeleton``), every chart drawn (plotly's
``plotly_afterplot`` seen and its ``.main-svg`` present), and no websocket frame, HTTP request
or response, chart draw or change of those conditions for ``--quiet-ms``. The idle moment
reported is the last of those events, not the end of the quiet wait.

Prints the machine (CPU, cores, load average at start and end: other work slows every number
here), a markdown table and writes JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import statistics
import sys
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser, BrowserContext, CDPSession, Page, sync_playwright

if __package__:  # imported as scripts.measure_browser (the tests)
    from .local_app import APP_IDLE, CHROMIUM, CHROMIUM_ARGS, REPO, served_app
else:  # run as python scripts/measure_browser.py
    from local_app import APP_IDLE, CHROMIUM, CHROMIUM_ARGS, REPO, served_app

DEFAULT_QUERIES = ("", "?n=1024", "?n=4096")
BARE_PAGE = "scripts/floor_app.py"  # the yardstick of --bare, relative to the repository
FRAME_PAGE = "scripts/frame_app.py"  # the explorer's frame around the same one chart
YARDSTICKS = {"floor": BARE_PAGE, "frame": FRAME_PAGE}  # --bare measures both
# labels in explorer/frame/controls.py
SLIDERS = {"k": "k (clip distance)", "n": "n (sequence length)"}
VIEWPORT = {"width": 1400, "height": 900}
POLL_S = 0.02
MB = 1e6

# Installed in every document before the app's own scripts run (context.add_init_script).
# It keeps, in the page's own clock (performance.now(), ms):
#   readySince  when the idle conditions last became true (null while they are false)
#   firstDraw / lastDraw  the first and the latest plotly_afterplot of any chart
#   keyAt       the timeStamp of the first keydown or mouse button press after arm()
#   plotlyMs    the main thread's time inside Plotly.newPlot / Plotly.react calls, summed
#               (their synchronous part: what plotly.js computes and lays out; images decode
#               after it). Streamlit's chart module sets window.Plotly; a setter wraps both.
#   changedAt   the first plotly_afterplot, after arm(), of a chart whose data or shapes are
#               none of the charts' at arm() time (a chart redrawn with new data, or a new
#               outline such as a picked pair's)
# Plotly attaches its event emitter to a chart's div as `div._ev` before the first draw; a
# setter on HTMLElement.prototype sees that moment, so no draw is missed, whether Streamlit
# redraws a chart in place or mounts a new div for it.
INSTRUMENT_JS = r"""
(() => {
  if (window.__measure) return;
  const APP_IDLE = __APP_IDLE__;
  const w = window.__measure = {
    readySince: null, firstDraw: null, lastDraw: null, draws: 0, hooked: 0,
    base: null, keyAt: null, changedAt: null, plotlyMs: 0,
  };
  let plotly;
  Object.defineProperty(window, 'Plotly', {
    configurable: true,
    get() { return plotly; },
    set(module) {
      plotly = module;
      for (const name of ['newPlot', 'react']) {
        const draw = module && module[name];
        if (typeof draw !== 'function' || draw.__timed) continue;
        const timed = function (...args) {
          const t = performance.now();
          try { return draw.apply(this, args); } finally { w.plotlyMs += performance.now() - t; }
        };
        timed.__timed = true;
        module[name] = timed;
      }
    },
  });
  const pick = (text) => {  // a cheap hash of a long string: its length and a strided sample
    const step = Math.max(1, Math.floor(text.length / 4096));
    let h = 2166136261;
    for (let i = 0; i < text.length; i += step) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
    return text.length + '#' + (h >>> 0).toString(36);
  };
  const sample = (v, depth) => {
    if (v === null || v === undefined) return String(v);
    if (typeof v === 'string') return v.length <= 64 ? JSON.stringify(v) : pick(v);
    if (typeof v !== 'object') return String(v);
    if (depth > 8) return '~';
    if (Array.isArray(v) || ArrayBuffer.isView(v)) {
      const step = Math.max(1, Math.floor(v.length / 64));
      let s = '[' + v.length + ':';
      for (let i = 0; i < v.length; i += step) s += sample(v[i], depth + 1) + ',';
      return s + ']';
    }
    let s = '{';
    for (const key of Object.keys(v).sort()) {
      if (key !== 'uid' && key[0] !== '_') s += key + '=' + sample(v[key], depth + 1) + ';';
    }
    return s + '}';
  };
  const fingerprint = (gd) => sample(gd.data, 0) + '|' + sample(gd.layout && gd.layout.title, 0)
    + '|' + sample(gd.layout && gd.layout.shapes, 0);
  const chartsDrawn = () => {
    for (const chart of document.querySelectorAll('[data-testid="stPlotlyChart"]')) {
      const gd = chart.querySelector('.js-plotly-plot');
      if (!chart.querySelector('.main-svg')) return false;
      if (w.hooked && !(gd && gd.__drawn)) return false;  // plotly has not finished drawing it
    }
    return true;
  };
  w.ready = () => Boolean(
    document.querySelector(APP_IDLE)
    && !document.querySelector('[data-testid="stStatusWidget"]')
    // an element whose code is still loading (React Suspense fallback), e.g. every chart
    // until plotly's bundle has arrived
    && !document.querySelector('[data-testid="stSkeleton"]')
    && chartsDrawn()
  );
  w.check = () => {
    if (!w.ready()) w.readySince = null;
    else if (w.readySince === null) w.readySince = performance.now();
  };
  const onDraw = (gd) => {
    const t = performance.now();
    gd.__drawn = true;
    w.draws += 1;
    if (w.firstDraw === null) w.firstDraw = t;
    w.lastDraw = t;
    if (w.base && w.changedAt === null && !w.base.has(fingerprint(gd))) w.changedAt = t;
    w.check();
  };
  Object.defineProperty(HTMLElement.prototype, '_ev', {
    configurable: true,
    get() { return undefined; },
    set(emitter) {
      Object.defineProperty(this, '_ev', {
        value: emitter, writable: true, configurable: true, enumerable: true,
      });
      w.hooked += 1;
      emitter.on('plotly_afterplot', () => onDraw(this));
    },
  });
  w.arm = () => {
    w.base = new Set(Array.from(document.querySelectorAll('.js-plotly-plot'), fingerprint));
    w.keyAt = null;
    w.changedAt = null;
    return w.plotlyMs;  // the plotly.js time so far: what follows is the input's
  };
  for (const kind of ['keydown', 'mousedown']) {
    window.addEventListener(kind, (event) => {
      if (w.base && w.keyAt === null) w.keyAt = event.timeStamp;
    }, true);
  }
  w.state = () => {
    w.check();
    return {
      origin: performance.timeOrigin, now: performance.now(),
      ready: w.readySince !== null, readySince: w.readySince,
      firstDraw: w.firstDraw, lastDraw: w.lastDraw, draws: w.draws, hooked: w.hooked,
      keyAt: w.keyAt, changedAt: w.changedAt, plotlyMs: w.plotlyMs,
    };
  };
  const start = () => new MutationObserver(w.check).observe(document.documentElement, {
    childList: true, subtree: true, attributes: true,
    attributeFilter: ['data-test-script-state', 'data-test-connection-state'],
  });
  if (document.documentElement) start();
  else document.addEventListener('readystatechange', start, {once: true});
})();
""".replace("__APP_IDLE__", json.dumps(APP_IDLE))


def on_repo_path() -> None:
    """Let this script import the project's packages (it runs from scripts/)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))


def discover_pages() -> dict[str, str]:
    """Page stem -> URL path for every page in the navigation (``explorer.frame.navigation.PAGES``,
    the list app.py builds its ``st.navigation`` from); the default page is served at ``/``."""
    on_repo_path()
    from explorer.frame.navigation import PAGES, url_path

    return {page.stem: url_path(page) for page in PAGES}


def payload_bytes(response: dict) -> int:
    """Size of one websocket frame's payload as the page got it.

    CDP sends binary frames (opcode 2) base64-encoded and text frames (opcode 1) as text.
    """
    data = response.get("payloadData", "")
    if response.get("opcode") == 2:
        return len(data) * 3 // 4 - (2 if data.endswith("==") else 1 if data.endswith("=") else 0)
    return len(data.encode())


class Network:
    """Websocket frames and HTTP bytes of one page, from its CDP session.

    Frame times are CDP ``MonotonicTime``, on Linux the clock of Python's ``time.monotonic``.
    If a frame's time is not shortly before the moment Python receives it, the receipt time is
    used instead (``clock`` then says "receipt").
    """

    def __init__(self, cdp: CDPSession) -> None:
        self.frames: list[tuple[float, int]] = []  # (monotonic s, payload bytes)
        self.http_events: list[float] = []  # requests sent, finished, failed (monotonic s)
        self.http_bytes = 0
        self.clock = "cdp"
        cdp.on("Network.webSocketFrameReceived", self._frame)
        cdp.on("Network.requestWillBeSent", self._http_event)
        cdp.on("Network.loadingFinished", self._loaded)
        cdp.on("Network.loadingFailed", self._http_event)
        cdp.send("Network.enable")

    def _stamp(self, event: dict) -> float:
        received = time.monotonic()
        stamp = float(event["timestamp"])
        if not -0.01 <= received - stamp <= 10.0:
            self.clock = "receipt"
        return stamp if self.clock == "cdp" else received

    def _frame(self, event: dict) -> None:
        response = event["response"]
        if response.get("opcode") in (1, 2):  # text, binary; not ping, pong, close
            self.frames.append((self._stamp(event), payload_bytes(response)))

    def _http_event(self, event: dict) -> None:
        self.http_events.append(self._stamp(event))

    def _loaded(self, event: dict) -> None:
        self._http_event(event)
        self.http_bytes += int(event.get("encodedDataLength", 0))

    def since(self, start: float) -> list[tuple[float, int]]:
        """Websocket frames received at or after ``start`` (monotonic s)."""
        return [frame for frame in self.frames if frame[0] >= start]

    def last_http_event(self) -> float | None:
        return self.http_events[-1] if self.http_events else None


class PageClock:
    """Converts between the page's ``performance.now()`` (ms) and ``time.monotonic()`` (s).

    Every poll of the page is a sample (monotonic before, page time, monotonic after); the
    sample with the shortest round trip gives the offset, good to half that round trip.
    """

    def __init__(self, origin: float | None = None) -> None:
        self.origin = origin  # the document's performance.timeOrigin
        self.offset_s = 0.0
        self.round_trip_s = float("inf")

    def sample(self, before: float, page_ms: float, after: float) -> None:
        if after - before < self.round_trip_s:
            self.round_trip_s = after - before
            self.offset_s = (before + after) / 2 - page_ms / 1000

    def to_page(self, monotonic_s: float) -> float:
        return (monotonic_s - self.offset_s) * 1000

    def to_monotonic(self, page_ms: float) -> float:
        return page_ms / 1000 + self.offset_s


@dataclasses.dataclass
class Tab:
    """One page in its own browser context (no cache or session shared with other tabs)."""

    context: BrowserContext
    page: Page
    net: Network
    clock: PageClock

    def poll(self) -> dict:
        """The in-page watcher's state; also a clock sample."""
        before = time.monotonic()
        state = self.page.evaluate("window.__measure.state()")
        if state["origin"] != self.clock.origin:  # a new document: a new performance.now()
            self.clock = PageClock(state["origin"])
        self.clock.sample(before, state["now"], time.monotonic())
        return state

    def calibrate(self, samples: int = 5) -> None:
        for _ in range(samples):
            self.poll()


@contextmanager
def open_tab(browser: Browser) -> Iterator[Tab]:
    """A fresh context and page with the in-page watcher and CDP network counting."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        context.add_init_script(INSTRUMENT_JS)
        page = context.new_page()
        net = Network(context.new_cdp_session(page))
        yield Tab(context, page, net, PageClock())
    finally:
        context.close()


def wait_until_idle(tab: Tab, since: float, quiet_ms: float, timeout_s: float) -> float:
    """Wait for the page to go idle after ``since`` (monotonic s); return the idle moment in
    page ms: the last of the websocket frames, HTTP events, chart draws and the idle
    conditions becoming true, once ``quiet_ms`` have passed with none of them and at least
    one websocket frame arrived after ``since``."""
    deadline = time.monotonic() + timeout_s
    while True:
        state = tab.poll()
        frames = tab.net.since(since)
        if state["ready"] and frames:
            events = [state["readySince"], tab.clock.to_page(frames[-1][0])]
            events += [state["lastDraw"]] if state["lastDraw"] is not None else []
            http = tab.net.last_http_event()
            events += [tab.clock.to_page(http)] if http is not None and http >= since else []
            last = max(events)
            if state["now"] - last >= quiet_ms:
                return last
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"not idle {timeout_s:.0f} s after the start ({len(frames)} websocket frames; "
                f"watcher state {state})"
            )
        time.sleep(POLL_S)


def error_boxes(page: Page) -> int:
    return page.locator('[data-testid="stException"], [data-testid="stAlertContentError"]').count()


def measure_load(tab: Tab, url: str, quiet_ms: float = 300, timeout_s: float = 300) -> dict:
    """Open ``url`` in the (fresh) tab. Measures, from the start of ``page.goto``: websocket
    and HTTP bytes received until idle, the first chart drawn and the idle moment (s)."""
    start = time.monotonic()
    http_before = tab.net.http_bytes
    tab.page.goto(url, timeout=timeout_s * 1000)
    idle_page_ms = wait_until_idle(tab, start, quiet_ms, timeout_s)
    state = tab.poll()
    frames = tab.net.since(start)  # none after the idle moment: it is the last activity
    idle = tab.clock.to_monotonic(idle_page_ms)
    first = state["firstDraw"]
    return {
        "ws_bytes": sum(size for _, size in frames),
        "ws_frames": len(frames),
        "http_bytes": tab.net.http_bytes - http_before,
        "first_chart_s": None if first is None else tab.clock.to_monotonic(first) - start,
        "idle_s": idle - start,
        "charts": tab.page.locator('[data-testid="stPlotlyChart"]').count(),
        "draws": state["draws"],
        "plotly_ms": state["plotlyMs"],
        "error_boxes": error_boxes(tab.page),
        "frame_clock": tab.net.clock,
    }


def press_slider(
    tab: Tab, label: str, key: str, quiet_ms: float = 300, timeout_s: float = 300
) -> dict:
    """Press ``key`` (ArrowRight / ArrowLeft) on the focused slider ``label``. Measures, from
    the key event's timestamp in the page: the first chart drawn with new data (None if no
    chart changed) and the idle moment (ms); also the websocket bytes of the rerun."""
    slider = tab.page.get_by_role("slider", name=label)
    before = slider.input_value()
    slider.focus()
    timed = timed_input(
        tab, lambda: tab.page.keyboard.press(key), f"keydown for {key} on slider {label!r}",
        quiet_ms, timeout_s,
    )  # fmt: skip
    return {"key": key, "value_before": int(before), "value_after": int(slider.input_value()),
            **timed}  # fmt: skip


def timed_input(
    tab: Tab, act: Callable[[], None], what: str, quiet_ms: float, timeout_s: float
) -> dict:
    """Run ``act`` (a key press or a click) and time it from the input event's timestamp in the
    page: the first chart drawn with new data (None if no chart changed) and the idle moment
    (ms); also the websocket bytes received and the error boxes shown."""
    tab.calibrate()
    plotly_before = tab.page.evaluate("window.__measure.arm()")
    start = time.monotonic()
    act()
    idle_page_ms = wait_until_idle(tab, start, quiet_ms, timeout_s)
    state = tab.poll()
    input_at, changed_at = state["keyAt"], state["changedAt"]
    if input_at is None:
        raise RuntimeError(f"the page saw no {what}")
    return {
        "redraw_ms": None if changed_at is None else changed_at - input_at,
        "idle_ms": idle_page_ms - input_at,
        "plotly_ms": state["plotlyMs"] - plotly_before,
        "ws_bytes": sum(size for _, size in tab.net.since(start)),
        "error_boxes": error_boxes(tab.page),
    }


def click_page_link(tab: Tab, path: str, quiet_ms: float = 300, timeout_s: float = 300) -> dict:
    """Click the sidebar's link to page ``path`` (/ for the default page): Streamlit runs that
    page in the same session, without loading the document again (plotly.js and the app's code
    stay loaded), the sidebar's controls kept. Measures, from the mouse press in the page, the
    first chart drawn with new data and the idle moment (ms)."""
    link = tab.page.locator(f'[data-testid="stSidebarNav"] a[href$="{path}"]')
    timed = timed_input(tab, link.click, f"mouse press on the link to {path}", quiet_ms, timeout_s)
    shown = urllib.parse.urlsplit(tab.page.url).path
    if not shown.endswith(path):
        raise RuntimeError(f"the link to {path} opened {shown}")
    return timed


def measure_keypresses(
    tab: Tab, label: str, repeats: int, quiet_ms: float = 300, timeout_s: float = 300
) -> list[dict]:
    """``repeats`` presses on slider ``label``, alternating right and left (left first at the
    slider's maximum), each timed by :func:`press_slider`."""
    slider = tab.page.get_by_role("slider", name=label)
    at_max = slider.input_value() == slider.get_attribute("max")
    keys = ("ArrowLeft", "ArrowRight") if at_max else ("ArrowRight", "ArrowLeft")
    return [press_slider(tab, label, keys[i % 2], quiet_ms, timeout_s) for i in range(repeats)]


def spread(values: Sequence[float | None], scale: float = 1.0) -> dict | None:
    """Median, min and max of the values that are not None (times ``scale``)."""
    kept = [v * scale for v in values if v is not None]
    if not kept:
        return None
    return {"median": statistics.median(kept), "min": min(kept), "max": max(kept), "n": len(kept)}


def measure_view(
    browser: Browser,
    base_url: str,
    path: str,
    query: str,
    *,
    load_repeats: int,
    key_repeats: int,
    slider: str,
    quiet_ms: float,
    timeout_s: float,
    arrive_from: str | None = None,
) -> dict:
    """Loads of one (page, query), each in a fresh context; then, if ``key_repeats``, key
    presses in the context of the last load; and with ``arrive_from`` (a page's path), as many
    visits from that page by its sidebar link, each in a fresh context where that page was
    loaded at the same query."""
    url = f"{base_url}{path}{query}"
    result: dict = {"path": path, "query": query, "url": url, "loads": [], "keypresses": []}
    result["warm_loads"], result["arrivals"] = [], []
    for repeat in range(load_repeats):
        with open_tab(browser) as tab:
            result["loads"].append(measure_load(tab, url, quiet_ms, timeout_s))
            # the same URL again in the same context: the app's code now comes from the
            # browser's cache, as on a person's second visit or a shared link opened twice
            result["warm_loads"].append(measure_load(tab, url, quiet_ms, timeout_s))
            if key_repeats and repeat == load_repeats - 1:
                result["keypresses"] = measure_keypresses(
                    tab, SLIDERS[slider], key_repeats, quiet_ms, timeout_s
                )
    for _ in range(load_repeats if arrive_from is not None else 0):
        with open_tab(browser) as tab:
            measure_load(tab, f"{base_url}{arrive_from}{query}", quiet_ms, timeout_s)
            result["arrivals"].append(click_page_link(tab, path, quiet_ms, timeout_s))
    loads, presses, arrivals = result["loads"], result["keypresses"], result["arrivals"]
    result["summary"] = {
        "ws_mb": spread([load["ws_bytes"] for load in loads], 1 / MB),
        "http_mb": spread([load["http_bytes"] for load in loads], 1 / MB),
        "first_chart_s": spread([load["first_chart_s"] for load in loads]),
        "idle_s": spread([load["idle_s"] for load in loads]),
        "warm_idle_s": spread([load["idle_s"] for load in result["warm_loads"]]),
        "warm_http_mb": spread([load["http_bytes"] for load in result["warm_loads"]], 1 / MB),
        "warm_plotly_ms": spread([load["plotly_ms"] for load in result["warm_loads"]]),
        "key_redraw_ms": spread([press["redraw_ms"] for press in presses]),
        "key_idle_ms": spread([press["idle_ms"] for press in presses]),
        "key_plotly_ms": spread([press["plotly_ms"] for press in presses]),
        "key_ws_mb": spread([press["ws_bytes"] for press in presses], 1 / MB),
        "link_redraw_ms": spread([a["redraw_ms"] for a in arrivals]),
        "link_idle_ms": spread([a["idle_ms"] for a in arrivals]),
        "error_boxes": max(
            [load["error_boxes"] for load in loads]
            + [p["error_boxes"] for p in [*presses, *arrivals]]
        ),
    }
    return result


def machine() -> dict:
    """CPU model, core count and load average: how busy the machine was matters here."""
    on_repo_path()
    from relpos_lab.bench import cpu_model

    return {"cpu": cpu_model(), "cores": os.cpu_count(), "load_avg_start": os.getloadavg()}


def cell(stat: dict | None, digits: int, with_range: bool = True) -> str:
    if stat is None:
        return "–"
    text = f"{stat['median']:.{digits}f}"
    if with_range and stat["n"] > 1:
        text += f" ({stat['min']:.{digits}f}–{stat['max']:.{digits}f})"
    return text


def markdown(report: dict) -> str:
    """The machine, then one table row per (page, query)."""
    m = report["machine"]
    load_start = ", ".join(f"{v:.2f}" for v in m["load_avg_start"])
    load_end = ", ".join(f"{v:.2f}" for v in m["load_avg_end"])
    s = report["settings"]
    lines = [
        f"Machine: {m['cpu']}, {m['cores']} cores; load average (1, 5, 15 min) "
        f"{load_start} at the start, {load_end} at the end. Chromium headless, "
        f"viewport {VIEWPORT['width']}x{VIEWPORT['height']}.",
        f"Loads: {s['load_repeats']} per row, each in a fresh browser context (nothing cached), "
        "then once more in the same context (warm: the app's code from the browser cache) "
        "(median, min–max; "
        f"MB = 10^6 bytes). Key presses: {s['repeats']} on slider {s['slider']!r}, "
        "alternating right/left; ms from the key event. Link (with --navigate): the page "
        "opened by its sidebar link from another page loaded at the same query, in the same "
        "session (no reload), ms from the click. plotly.js ms: the main thread's time in "
        "plotly.js's drawing calls (every chart is drawn twice: Streamlit hands plotly.js a "
        "themed copy). Load 1 min: the load average after the row.",
        "",
        "| page | query | WS MB | HTTP MB | first chart s | idle s | warm: HTTP MB "
        "| warm: idle s | warm: plotly.js ms | key: redraw ms | key: idle ms "
        "| key: plotly.js ms | key: WS MB | link: first chart ms | link: idle ms | load 1 min |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in report["results"]:
        if "error" in row:
            lines.append(f"| {row['path']} | {row['query'] or '(default)'} | {row['error']} |")
            continue
        t = row["summary"]
        flag = f" ({t['error_boxes']} error boxes)" if t["error_boxes"] else ""
        no_redraw = row["keypresses"] and t["key_redraw_ms"] is None
        lines.append(
            f"| {row['path']}{flag} | {row['query'] or '(default)'} "
            f"| {cell(t['ws_mb'], 2, False)} | {cell(t['http_mb'], 2, False)} "
            f"| {cell(t['first_chart_s'], 2)} | {cell(t['idle_s'], 2)} "
            f"| {cell(t['warm_http_mb'], 2, False)} | {cell(t['warm_idle_s'], 2)} "
            f"| {cell(t['warm_plotly_ms'], 0)} "
            f"| {'no chart changed' if no_redraw else cell(t['key_redraw_ms'], 0)} "
            f"| {cell(t['key_idle_ms'], 0)} | {cell(t['key_plotly_ms'], 0)} "
            f"| {cell(t['key_ws_mb'], 2, False)} "
            f"| {cell(t['link_redraw_ms'], 0)} | {cell(t['link_idle_ms'], 0)} "
            f"| {row['load_avg_1m']:.1f} |"
        )
    return "\n".join(lines)


def measure_bare(
    browser: Browser, bare_url: str, args: argparse.Namespace, yardstick: str = "floor"
) -> dict:
    """A yardstick (YARDSTICKS: the bare page, or the frame around its chart) measured as every
    page is: loads, warm loads and key presses on its k."""
    print(f"measuring the {yardstick} page ...", file=sys.stderr, flush=True)
    row = measure_view(
        browser, bare_url, "/", "",
        load_repeats=args.load_repeats, key_repeats=args.repeats, slider="k",
        quiet_ms=args.quiet_ms, timeout_s=args.timeout,
    )  # fmt: skip
    row["load_avg_1m"] = os.getloadavg()[0]
    row["yardstick"] = yardstick
    return row


def yardstick_rows(rows: Sequence[dict], yardstick: str) -> list[dict]:
    """The rows of one yardstick (a row that names none is the floor's)."""
    return [row for row in rows if row.get("yardstick", "floor") == yardstick]


# The goals, as ratios to the bare page opened the same way in the same run; a key press in ms.
GOAL_RATIO = {"?n=1024": 1.5, "": 1.2}  # query -> the most a page's open may take, x bare
GOAL_KEY_MS = 300.0


def bare_summary(rows: Sequence[dict]) -> dict:
    """The bare page's medians over every load and press of its rows (before and after)."""
    loads = [load for row in rows for load in row["loads"]]
    warm = [load for row in rows for load in row["warm_loads"]]
    presses = [press for row in rows for press in row["keypresses"]]
    return {
        "idle_s": spread([load["idle_s"] for load in loads]),
        "warm_idle_s": spread([load["idle_s"] for load in warm]),
        "key_redraw_ms": spread([press["redraw_ms"] for press in presses]),
        "ws_mb": spread([load["ws_bytes"] for load in loads], 1 / MB),
        "http_mb": spread([load["http_bytes"] for load in loads], 1 / MB),
    }


def goal_misses(row: dict, bare: dict) -> list[str]:
    """What of the goals one (page, query) misses: its opens (fresh and cached) over the
    query's ratio to the bare page's, its key press over GOAL_KEY_MS."""
    t, misses = row["summary"], []
    most = GOAL_RATIO.get(row["query"])
    for key, how in (("idle_s", "fresh"), ("warm_idle_s", "cached")):
        if most is not None and t[key] and bare[key]:
            ratio = t[key]["median"] / bare[key]["median"]
            if ratio > most:
                misses.append(f"{how} {ratio:.2f}x > {most}x")
    if t["key_redraw_ms"] and t["key_redraw_ms"]["median"] > GOAL_KEY_MS:
        misses.append(f"key {t['key_redraw_ms']['median']:.0f} ms > {GOAL_KEY_MS:.0f}")
    return misses


def verdict(row: dict, misses: Sequence[str]) -> str:
    """The goals' column: the misses, "met", or "no goal" where this query has no ratio goal
    and no key press was timed."""
    judged = row["query"] in GOAL_RATIO or row["summary"]["key_redraw_ms"] is not None
    return "; ".join(misses) or ("met" if judged else "no goal")


def ratio_markdown(report: dict) -> str:
    """Every page's open and key press beside the bare page's in the same run, as ratios; with
    the frame's rows, the frame first (judged as a default view) and a column of what each page
    adds to it (its cached open less the frame's)."""
    bare = bare_summary(yardstick_rows(report["bare"], "floor"))
    frame_rows = yardstick_rows(report["bare"], "frame")
    frame = bare_summary(frame_rows) if frame_rows else None

    def times(stat: dict | None, base: dict | None, digits: int) -> str:
        if stat is None or base is None:
            return "–"
        return f"{stat['median']:.{digits}f} ({stat['median'] / base['median']:.2f}x)"

    def key_cell(row: dict, bare: dict) -> str:
        if row["keypresses"] and row["summary"]["key_redraw_ms"] is None:
            return "k redraws no chart"
        return times(row["summary"]["key_redraw_ms"], bare["key_redraw_ms"], 0)

    goals = ", ".join(f"{q or 'default'} {r}x" for q, r in GOAL_RATIO.items())
    lines = [
        "Against the bare page (scripts/floor_app.py: one slider, one 64 x 64 heatmap), "
        "opened the same ways in the same run, before the pages and after them: fresh open "
        f"{cell(bare['idle_s'], 2)} s, cached {cell(bare['warm_idle_s'], 2)} s, key press "
        f"{cell(bare['key_redraw_ms'], 0)} ms, WS {cell(bare['ws_mb'], 3, False)} MB, HTTP "
        f"{cell(bare['http_mb'], 2, False)} MB. Fresh: a new browser context, nothing cached; "
        "cached: the same link again in that context, the app's scripts from the browser's "
        "cache, a new session. Medians; in brackets the ratio to the bare page's. Goals: "
        f"open (fresh and cached) within {goals} of the bare page, key press to the first "
        f"chart redrawn within {GOAL_KEY_MS:.0f} ms."
        + (
            f" The frame ({FRAME_PAGE}: the explorer's sidebar, navigation, notes and links "
            "around the bare page's one chart) is the first row; the last column is each "
            "page's cached open less the frame's, what the page itself draws."
            if frame
            else ""
        ),
        "",
        "| page | query | fresh open s | cached open s | key press ms | WS MB | goals |"
        + (" over the frame, cached s |" if frame else ""),
        "|---|---|---:|---:|---:|---:|---|" + ("---:|" if frame else ""),
    ]

    def own(t: dict) -> str:  # the page's cached open less the frame's
        if t["warm_idle_s"] is None or frame["warm_idle_s"] is None:
            return "–"
        return f"{t['warm_idle_s']['median'] - frame['warm_idle_s']['median']:+.2f}"

    rows = report["results"]
    if frame:
        presses = [press for row in frame_rows for press in row["keypresses"]]
        frame_row = {"path": f"frame ({FRAME_PAGE})", "query": "", "summary": frame}
        rows = [frame_row | {"keypresses": presses}, *rows]
    for row in rows:
        if "error" in row:
            lines.append(f"| {row['path']} | {row['query'] or '(default)'} | {row['error']} |")
            continue
        t = row["summary"]
        misses = goal_misses(row, bare)
        lines.append(
            f"| {row['path']} | {row['query'] or '(default)'} "
            f"| {times(t['idle_s'], bare['idle_s'], 2)} "
            f"| {times(t['warm_idle_s'], bare['warm_idle_s'], 2)} "
            f"| {key_cell(row, bare)} "
            f"| {cell(t['ws_mb'], 2, False)} | {verdict(row, misses)} |"
            + (f" {own(t)} |" if frame else "")
        )
    return "\n".join(lines)


def run(
    base_url: str,
    args: argparse.Namespace,
    pages: dict[str, str],
    yardsticks: dict[str, str] | None = None,
) -> tuple[list[dict], list[dict]]:
    """Measure every (page, query) in one Chromium; a failed view is reported, not fatal. With
    ``yardsticks`` (name -> base URL: the floor page, the frame), those too, before the pages
    and after them: (pages' rows, yardsticks' rows)."""
    yardsticks = yardsticks or {}
    results, bare = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        # The first run of app.py registers the pages (st.navigation) and imports torch:
        # do it once, unmeasured, so no row pays for it. The bare page's first run likewise.
        with open_tab(browser) as tab:
            measure_load(tab, base_url + "/", args.quiet_ms, args.timeout)
            for url in yardsticks.values():
                measure_load(tab, url + "/", args.quiet_ms, args.timeout)
        bare += [measure_bare(browser, url, args, name) for name, url in yardsticks.items()]
        second_page = list(discover_pages().values())[1]  # the first is the landing page, /
        for name, path in pages.items():
            # arrive from the landing page; at the landing page, from the next page
            arrive_from = (second_page if path == "/" else "/") if args.navigate else None
            for query in args.queries:
                query = query if not query or query.startswith("?") else f"?{query}"
                keys = args.repeats if (query == "" or args.keypress) else 0
                print(f"measuring {path}{query} ...", file=sys.stderr, flush=True)
                try:
                    row = measure_view(
                        browser, base_url, path, query,
                        load_repeats=args.load_repeats, key_repeats=keys, slider=args.slider,
                        quiet_ms=args.quiet_ms, timeout_s=args.timeout, arrive_from=arrive_from,
                    )  # fmt: skip
                except Exception as error:  # a timeout or a missing control: say so, go on
                    first_line = (str(error).splitlines() or [""])[0][:200]
                    row = {"path": path, "query": query,
                           "error": f"{type(error).__name__}: {first_line}"}  # fmt: skip
                row["page"] = name
                row["load_avg_1m"] = os.getloadavg()[0]  # after the row: what it ran under
                results.append(row)
        bare += [measure_bare(browser, url, args, name) for name, url in yardsticks.items()]
        browser.close()
    return results, bare


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[2:]),
    )
    parser.add_argument(
        "--pages",
        nargs="+",
        metavar="STEM",
        help="page file stems to measure (default: every page in app.py)",
    )
    parser.add_argument(
        "--queries",
        nargs="+",
        default=list(DEFAULT_QUERIES),
        metavar="Q",
        help='query strings, "" is the default view (default: "" ?n=1024 ?n=4096)',
    )
    parser.add_argument("--repeats", type=int, default=7, help="key presses per view")
    parser.add_argument(
        "--load-repeats",
        type=int,
        default=3,
        help="loads per view, each in a fresh browser context",
    )
    parser.add_argument(
        "--slider",
        choices=sorted(SLIDERS),
        default="k",
        help="sidebar slider to press keys on (k changes a chart on more pages)",
    )
    parser.add_argument(
        "--keypress", action="store_true", help="also time key presses at the non-default queries"
    )
    parser.add_argument(
        "--navigate",
        action="store_true",
        help="also time each page opened by its sidebar link from the landing page "
        "(the landing page: from the next page), at each query, --load-repeats times",
    )
    parser.add_argument(
        "--bare",
        action="store_true",
        help="also serve scripts/floor_app.py and scripts/frame_app.py and measure them the "
        "same ways, before the pages and after them; print every page's times as ratios to "
        "the floor's, and what each adds to the frame",
    )
    parser.add_argument("--url", help="measure this running server instead of starting one")
    parser.add_argument(
        "--quiet-ms",
        type=float,
        default=300.0,
        help="no websocket frame or chart draw for this long means idle",
    )
    parser.add_argument(
        "--timeout", type=float, default=300.0, help="seconds one load or key press may take"
    )
    parser.add_argument("--json", type=Path, default=REPO / "bench-results" / "browser.json")
    return parser.parse_args(argv)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    pages = discover_pages()
    if args.pages:
        unknown = set(args.pages) - set(pages)
        if unknown:
            sys.exit(f"unknown page(s) {sorted(unknown)}; app.py has {sorted(pages)}")
        pages = {name: path for name, path in pages.items() if name in args.pages}
    report: dict = {"machine": machine(), "settings": {**vars(args), "json": str(args.json)}}
    started = time.monotonic()
    with contextlib.ExitStack() as stack:
        yardsticks = {}
        for name, entry in YARDSTICKS.items() if args.bare else ():
            log = Path(f"/tmp/measure_browser_{name}_{os.getpid()}.log")
            yardsticks[name], _ = stack.enter_context(served_app(log, entry=entry))
        if args.url:
            base_url = args.url.rstrip("/")
        else:
            log = Path(f"/tmp/measure_browser_server_{os.getpid()}.log")
            base_url, _ = stack.enter_context(served_app(log))
        report["results"], report["bare"] = run(base_url, args, pages, yardsticks)
    report["machine"]["load_avg_end"] = os.getloadavg()
    report["wall_s"] = round(time.monotonic() - started, 1)
    print(markdown(report))
    if report["bare"]:
        print("\n" + ratio_markdown(report))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1))
    print(f"\nwrote {args.json} ({report['wall_s']} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
