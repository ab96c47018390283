"""The view as one HTML page that opens without the server or the network.

Every chart a page draws goes through :func:`explorer.figures.draw.plotly_chart`, which records
it in this run's list (:func:`record_figure`). The page's download reads that list when it is
clicked and writes, with plotly's own ``to_html``, one document: the page's title and what it
shows, the parameters, the link back to the live view, then each chart with its formula and
caption. plotly.js (about 4.6 MB) is written once, with the first chart.

The list lives in the session state until the next full run replaces it: what the download of
the view on screen needs, no more (the HTML itself is built only on a click).
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

FIGURES_STATE_KEY = "_view_figures"
#: a chart with no height of its own (plotly's default is 450 px; "100%" of an unsized div is 0)
DEFAULT_HEIGHT = "450px"


@dataclass(frozen=True)
class ShownFigure:
    """One chart as the page shows it: its key, the figure, the text above and below it."""

    key: str
    figure: go.Figure | Mapping
    formula: str = ""  # LaTeX source or a formula in words, shown above the chart
    caption: str = ""  # shape and notes, shown under the chart
    config: Mapping = field(default_factory=dict)  # plotly config (the camera button's name)


def start_recording() -> None:
    """Begin the figure list of a full run (app.py calls this before the page runs).

    The previous view's list is dropped here; its download button keeps its own reference
    until Streamlit releases that button.
    """
    st.session_state[FIGURES_STATE_KEY] = {}


def figures_of_this_view() -> dict[str, ShownFigure]:
    """This view's charts by key, in the order drawn (the same dict for the whole view: a
    download made before the page's last chart is drawn still sees it when clicked)."""
    return st.session_state.setdefault(FIGURES_STATE_KEY, {})


def record_figure(shown: ShownFigure) -> None:
    """Add a chart to this view; a fragment's rerun replaces its own charts in place."""
    figures_of_this_view()[shown.key] = shown


def _figure_title(figure: go.Figure | Mapping) -> str:
    if isinstance(figure, go.Figure):
        layout = figure.layout.to_plotly_json()
    else:
        layout = figure.get("layout", {})
    title = layout.get("title", {})
    text = title.get("text", "") if isinstance(title, Mapping) else str(title)
    return text.replace("<br>", " ")


STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5rem auto; max-width: 1100px;
       padding: 0 1rem; color: #262730; }
pre { background: #f6f6f8; padding: 0.6rem; overflow-x: auto; white-space: pre-wrap; }
section.chart { margin: 2rem 0; }
p.caption { color: #6b6b76; font-size: 0.9rem; }
"""


def view_html(
    *,
    title: str,
    about: str,
    parameters: Mapping[str, object],
    link: str,
    figures: Sequence[ShownFigure],
) -> str:
    """One HTML document of the view: title, what it shows, the link back, the parameters
    (as in params.json) and every chart with its formula and caption, plotly.js inside."""
    e = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{e(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{e(title)}</h1>",
        f"<p>{e(about)}</p>" if about else "",
        f'<p>Live view: <a href="{e(link, quote=True)}">{e(link)}</a></p>',
        "<h2>Parameters</h2>",
        f'<pre id="parameters">{e(json.dumps(parameters, indent=2, default=str))}</pre>',
        f"<h2>Charts ({len(figures)})</h2>",
    ]
    for number, shown in enumerate(figures):
        heading = _figure_title(shown.figure) or shown.key.removeprefix("chart_").replace("_", " ")
        parts.append(f'<section class="chart" id="{e(shown.key, quote=True)}">')
        parts.append(f"<h3>{e(heading)}</h3>")
        if shown.formula:
            parts.append(f'<pre class="formula"><code>{e(shown.formula)}</code></pre>')
        parts.append(
            pio.to_html(
                shown.figure,
                config=dict(shown.config),
                include_plotlyjs=number == 0,  # one copy of plotly.js, before the first chart
                full_html=False,
                div_id=f"figure-{number}",
                default_height=DEFAULT_HEIGHT,
            )
        )
        if shown.caption:
            parts.append(f'<p class="caption">{e(shown.caption)}</p>')
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(p for p in parts if p)
