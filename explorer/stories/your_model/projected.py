"""Projected relative embeddings (DeBERTa's) at every distance r = j - i: which row of the table
P each distance reads (distances that read one row share a bucket), and each head's position
key P^K and position query P^Q read there, as a heatmap of channel against distance and as
norms. The row each distance reads is the scheme folder's own reading (``ProjectedLayer.rows``).

    c2p_ij = q_i · P^K[c(j - i)] / sqrt(f d)      p2c_ij = k_j · P^Q[c(j - i)] / sqrt(f d)
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import torch

from explorer.figures.heatmaps import Panel, panel_grid
from explorer.figures.scales import make_scale
from explorer.frame.screen import is_phone
from explorer.pair.definition import Pair
from relpos_core import by_distance as bd
from relpos_lab.extract.projected import ProjectedLayer

DISTANCE = "distance r = j - i (key - query)"
SYMBOLS = {"key": "P^K", "query": "P^Q"}  # the vectors' names on the page
READERS = {
    "key": "each query reads it: c2p = q_i · P^K",
    "query": "each key reads it: p2c = k_j · P^Q",
}


@dataclass(frozen=True)
class ProjectedView:
    layer: ProjectedLayer
    distance: np.ndarray  # (m,) r = -(n - 1) .. n - 1
    row: np.ndarray  # (m,) the row of P distance r reads
    vectors: dict[str, np.ndarray]  # "P^K" / "P^Q" -> (h, m, d): the row read at each r
    spans: tuple[tuple[int, int, int], ...]  # (row, first r, last r), runs along r

    @property
    def n(self) -> int:
        return (len(self.distance) + 1) // 2


def projected_view(layer: ProjectedLayer, n: int) -> ProjectedView:
    rows = layer.rows(n)
    r = bd.distances(n)
    vectors = {SYMBOLS[part]: v[:, rows.numpy()] for part, v in layer.vectors().items()}
    spans = tuple(bd.bucket_spans(rows, r))
    return ProjectedView(layer, r.numpy(), rows.numpy(), vectors, spans)


def view_terms(view: ProjectedView, q: np.ndarray, k: np.ndarray) -> dict[str, np.ndarray]:
    """c2p and p2c (h, n, n) for queries q and keys k (h, n, d), from the rows drawn."""
    by_r = {part: torch.from_numpy(view.vectors[s]) for part, s in SYMBOLS.items()
            if s in view.vectors}  # fmt: skip
    terms = bd.disentangled_terms(torch.from_numpy(q), torch.from_numpy(k), by_r.get("key"),
                                  by_r.get("query"), view.layer.divisor_terms)  # fmt: skip
    return {name: t.numpy() for name, t in terms.items()}


def rows_figure(view: ProjectedView) -> go.Figure:
    """The row each distance reads, as steps: a flat step is a bucket of distances."""
    fig = go.Figure(
        go.Scatter(
            x=view.distance,
            y=view.row.astype(np.float64),
            mode="lines+markers" if view.n <= 32 else "lines",
            line={"shape": "hv", "width": 1.6},
            marker={"size": 4},
            name="row c(r)",
            hovertemplate="r=%{x}<br>reads row %{y}<extra></extra>",
        )
    )
    fig.update_layout(
        height=340,
        margin={"l": 60, "r": 10, "t": 20, "b": 50},
        xaxis_title=DISTANCE,
        yaxis_title="row of P read, c",
        showlegend=False,
    )
    return fig


def vectors_figure(view: ProjectedView, head: int) -> tuple[go.Figure, str]:
    """Head ``head``'s P^K and P^Q rows at each distance: channel (down) against r (across)."""
    panels = [
        Panel(v[head].T.astype(np.float64), title=f"{name}[c(r)], head {head}", x_title=DISTANCE,
              y_title="channel", x_symbol="r", y_symbol="channel", col_offset=-(view.n - 1))
        for name, v in view.vectors.items()
    ]  # fmt: skip
    scale = make_scale("diverging", [p.z for p in panels])
    fig = panel_grid(panels, scale, columns=1, max_width=720)
    return fig, scale.caption


def norms_figure(view: ProjectedView, head: int) -> go.Figure:
    """|P^K[c(r)]| and |P^Q[c(r)]| of one head against r: how large a vector each distance
    hands the query (c2p) and the key (p2c) to read."""
    fig = go.Figure()
    for name, v in view.vectors.items():
        label = html.escape(f"|{name}[c(r)]|, head {head}")
        fig.add_trace(go.Scatter(x=view.distance, y=np.linalg.norm(v[head], axis=-1).astype(
            np.float64), name=label, mode="lines", line={"shape": "hv", "width": 1.6},
            hovertemplate=f"{label}<br>r=%{{x}}<br>%{{y:.4g}}<extra></extra>"))  # fmt: skip
    phone = is_phone()
    fig.update_layout(
        height=420 if phone else 360,
        margin={"l": 60, "r": 10, "t": 20, "b": 50 + (48 if phone else 40)},
        xaxis_title=DISTANCE,
        yaxis_title="norm of the vector read",
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom"},
    )
    return fig


def rows_note(view: ProjectedView, pair: Pair | None) -> str:
    """What the step chart shows, read from its data."""
    layer, read = view.layer, len(set(view.row.tolist()))
    widest = max(view.spans, key=lambda s: (s[2] - s[1], -abs(s[1])))
    note = (
        f"At n = {view.n} the {len(view.distance)} distances read {read} of the table's "
        f"{layer.table_rows} rows ({', '.join(f'{k} {v}' for k, v in layer.settings)})."
    )
    if widest[2] > widest[1]:
        note += (
            f" The widest bucket shown: r = {widest[1]} to {widest[2]} all read row {widest[0]}, "
            "so the position terms cannot tell those distances apart."
        )
    else:
        note += " Every distance shown reads a row of its own."
    if pair is not None and abs(pair.distance) < view.n:
        c = int(view.row[pair.distance + view.n - 1])
        note += f" The picked pair (i = {pair.i}, j = {pair.j}) reads row {c}."
    return note


def vectors_note(view: ProjectedView, head: int) -> str:
    parts = [f"{SYMBOLS[p]}: {READERS[p]}" for p in SYMBOLS if SYMBOLS[p] in view.vectors]
    missing = [s for s in SYMBOLS.values() if s not in view.vectors]
    divisor = f"sqrt({view.layer.divisor_terms} d), d = {view.layer.head_dim}"
    note = (
        f"Each column is the row of P that distance reads, projected for head {head} "
        f"({view.layer.origin}): {'; '.join(parts)}; each term is divided by {divisor}. A "
        "checkpoint holds no queries or keys, so what a head makes of these vectors depends on "
        "the text."
    )
    if missing:
        note += (
            f" The model adds no {' or '.join(missing)} term (its config says which terms it adds)."
        )
    return note


def arrays(view: ProjectedView, head: int) -> dict[str, np.ndarray]:
    """The download: the row read at each distance, and the head's vectors (m, d)."""
    label = f"{view.layer.scheme}_layer{view.layer.layer}"
    out = {f"{label}_rows_by_distance": np.column_stack([view.distance, view.row])}
    for name, v in view.vectors.items():
        out[f"{label}_head{head}_{name.replace('^', '')}_by_distance"] = v[head]
    return out
