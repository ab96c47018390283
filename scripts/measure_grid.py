"""Measure the Predict page's every-head grid on its own: the server's work and the browser's.

    python scripts/measure_grid.py [--models alibi xl] [--lengths 64 128 256] [--repeats 5]

For each model and text length (the first n held-out characters): the server's time to compute
the view (every layer's attention on the text and each head's reading, cold: the cache cleared)
and to build the figure (the PNGs of maps past 128 characters encoded), the figure's JSON bytes
(what the websocket carries for it), and the time Debian's Chromium takes to draw it with
plotly.js (``Plotly.newPlot`` to the next animation frame, the figure alone in a page, after one
draw to warm it). Prints a markdown table; medians, min-max in brackets.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.sync_api import sync_playwright  # noqa: E402
from plotly.offline import get_plotlyjs  # noqa: E402

from explorer.figures import panel_traces  # noqa: E402
from explorer.stories.predict import figures, heads  # noqa: E402
from explorer.weights.reading import held_out_passage  # noqa: E402
from scripts.local_app import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

DRAW = """async (spec) => {
    const figure = JSON.parse(spec);
    const div = document.getElementById("grid");
    Plotly.purge(div);
    const start = performance.now();
    await Plotly.newPlot(div, figure.data, figure.layout);
    await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
    return performance.now() - start;
}"""


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.0f} ({min(values):.0f}-{max(values):.0f})"


def server_side(name: str, text: str, repeats: int) -> tuple[list[float], list[float], str]:
    """(view ms, figure ms) over ``repeats`` cold runs, and the figure's JSON."""
    view_ms, figure_ms = [], []
    for _ in range(repeats):
        heads._heads_view.clear()
        panel_traces._png.clear()  # the maps' PNGs, cached by their bytes
        start = time.perf_counter()
        view = heads.heads_view(name, text)
        middle = time.perf_counter()
        grid = figures.heads_figure(view.weights, view.readings, view.labels)
        spec = grid.figure.to_json()
        view_ms.append((middle - start) * 1000)
        figure_ms.append((time.perf_counter() - middle) * 1000)
    return view_ms, figure_ms, spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["alibi", "xl"])
    parser.add_argument("--lengths", nargs="+", type=int, default=[64, 128, 256])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    passage = held_out_passage()
    rows = []
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as pw:
        page_file = Path(folder) / "grid.html"
        page_file.write_text(
            f"<html><body><script>{get_plotlyjs()}</script><div id='grid'></div></body></html>"
        )
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(page_file.as_uri())
        for name in args.models:
            for n in args.lengths:
                view_ms, figure_ms, spec = server_side(name, passage[:n], args.repeats)
                page.evaluate(DRAW, spec)  # warm: plotly's first draw of a kind compiles more
                draw_ms = [page.evaluate(DRAW, spec) for _ in range(args.repeats)]
                rows.append(
                    f"| {name} | {n} | {spread(view_ms)} | {spread(figure_ms)} | "
                    f"{len(spec) / 1e6:.2f} | {spread(draw_ms)} |"
                )
        browser.close()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    cpu = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
         if line.startswith("model name")),
        platform.machine(),
    )  # fmt: skip
    print(
        f"Machine: {cpu}, {os.cpu_count()} cores; "
        f"load average {load} at the end. Grid of 3 layers x 4 heads on the first n held-out "
        f"characters; {args.repeats} repeats; ms."
    )
    print()
    print("| model | n | view ms (cold) | figure ms | figure MB | browser draw ms |")
    print("|---|---:|---:|---:|---:|---:|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
