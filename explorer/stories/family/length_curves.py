"""The family's measured length curves: held-out bits per character against the evaluation
length, as ``python -m relpos_lab.family eval`` measured them (the shipped results.json).

Every model was trained on windows of ``context`` characters and scored on the same held-out
characters at every length; past ``context`` it meets distances it never saw (Press et al.
2022, Fig. 1). The figure marks the training length and shades what lies beyond it.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import numpy as np
import plotly.colors as pc
import plotly.graph_objects as go

from explorer.figures.lines import legend_band
from explorer.frame.csv_tables import Labelled
from explorer.frame.memory import cached
from relpos_lab.family import results
from relpos_lab.family.registry import scheme_models
from relpos_lab.family.tables import describe

COLOURS = pc.qualitative.D3


@dataclass(frozen=True)
class LengthCurves:
    context: int  # the training length, in characters
    lengths: np.ndarray  # (m,) evaluation lengths
    bpc: dict[str, np.ndarray]  # model name -> (m,) bits per character
    corpus: str  # what the models were trained and scored on
    vocabulary: int  # how many different characters it holds

    def at(self, name: str, length: int) -> float:
        """Bits per character of ``name`` at ``length`` (one of ``lengths``)."""
        return float(self.bpc[name][list(self.lengths).index(length)])

    @staticmethod
    def described(name: str) -> str:
        """How the figure's legend names model ``name`` ("Shaw et al. 2018, k = 8")."""
        return describe(name)

    def change(self, name: str) -> float:
        """How far ``name`` moves from the training length to the longest length, in bits."""
        return abs(float(self.bpc[name][-1]) - self.at(name, self.context))


@cached(4)
def length_curves(names: tuple[str, ...]) -> LengthCurves:
    shipped = results()
    lengths = sorted(int(length) for length in shipped["models"][names[0]]["bpc"])
    bpc = {
        name: np.array([shipped["models"][name]["bpc"][str(L)] for L in lengths], np.float32)
        for name in names
    }
    return LengthCurves(
        context=int(shipped["training"]["context"]),
        lengths=np.array(lengths, dtype=np.int64),
        bpc=bpc,
        corpus=shipped["corpus"]["name"],
        vocabulary=int(shipped["corpus"]["vocabulary_size"]),
    )


def curves_table(curves: LengthCurves) -> Labelled:
    """The curves as one table for a download: a row per evaluation length, a column per
    model, bits per character."""
    return Labelled(
        np.stack(list(curves.bpc.values()), axis=1),
        f"bits per character on held-out {curves.corpus}; trained at {curves.context}",
        rows=[str(int(length)) for length in curves.lengths],
        cols=list(curves.bpc),
        corner="length \\ model",
    )


def family_lengths() -> LengthCurves:
    """The curves of the family's models: one per scheme, and nope and sinusoidal."""
    return length_curves(scheme_models())


def bits_per_character(curves: LengthCurves) -> str:
    """The measure the length curves are in, defined where a learner first meets it."""
    return (
        "How well a model predicts text it never trained on is measured in **bits per "
        "character**: the average, over the characters of that held-out text, of "
        "$-\\log_2$ of the probability the model gave the character that came next. Fewer is "
        f"better; guessing each of the text's {curves.vocabulary} different characters as "
        f"likely as any other spends $\\log_2 {curves.vocabulary} = "
        f"{math.log2(curves.vocabulary):.1f}$."
    )


def lengths_caption(curves: LengthCurves) -> str:
    """What the length curves are: which models (in words, with their settings: Shaw's is not
    every page's Shaw model), trained and scored on what, and what the dashed line and the
    shading mark."""
    models = ", ".join(describe(name) for name in curves.bpc)
    return (
        f"Small character models of the family, identical but for position, trained on "
        f"{curves.context}-character windows of {curves.corpus}; held-out bits per character "
        "(fewer is better) at every evaluation length (Press et al. 2022, Fig. 1), read from the "
        "shipped results. "
        f"Dashed: the training length, {curves.context} characters; shaded: longer than any "
        f"training window. The models drawn: {models}."
    )


def reach_note(curves: LengthCurves) -> str:
    """Which model's bits per character change least and most past the training length."""
    longest = int(curves.lengths.max())
    flat, worst = min(curves.bpc, key=curves.change), max(curves.bpc, key=curves.change)
    return (
        f"From {curves.context} to {longest} characters, {describe(flat)} changes least "
        f"({curves.at(flat, curves.context):.2f} to {curves.at(flat, longest):.2f} bits per "
        f"character) and {describe(worst)} most ({curves.at(worst, curves.context):.2f} to "
        f"{curves.at(worst, longest):.2f})."
    )


def length_figure(curves: LengthCurves, *, height: int = 340) -> go.Figure:
    """One line per model against the evaluation length (log 2 axis); the training length
    dashed and every length beyond it shaded."""
    legend, legend_px = legend_band(len(curves.bpc))
    top = max(float(v.max()) for v in curves.bpc.values())
    x_end = float(curves.lengths.max()) * 1.15
    x_start = float(curves.lengths.min()) / 1.6  # room left of the training length
    edge = {"x0": curves.context, "xref": "x", "y0": 0, "y1": 1, "yref": "y domain"}
    shapes = [  # the lengths beyond training shaded, the training length dashed
        {**edge, "type": "rect", "x1": x_end, "fillcolor": "rgba(120,120,120,0.08)",
         "line": {"width": 0}},
        {**edge, "type": "line", "x1": curves.context,
         "line": {"dash": "dash", "color": "#555", "width": 1}},
    ]  # fmt: skip
    data = [
        {
            "type": "scatter",
            "x": curves.lengths.astype(np.float32),
            "y": bpc,
            "mode": "lines+markers",
            "name": html.escape(describe(name), quote=False),
            "line": {"color": COLOURS[t % len(COLOURS)], "width": 2},
            "hovertemplate": f"{html.escape(name)}<br>length %{{x}}<br>%{{y:.3f}} bits per "
            "character<extra></extra>",
        }
        for t, (name, bpc) in enumerate(curves.bpc.items())
    ]
    layout = {
        "shapes": shapes,
        "height": height + legend_px,
        "margin": {"l": 60, "r": 10, "t": 30, "b": 60 + legend_px},
        "xaxis": {
            "type": "log",
            # short enough for a phone: the caption says what is dashed and shaded
            "title": {"text": "evaluation length (characters)"},
            "tickvals": curves.lengths.tolist(),
            "ticktext": [str(L) for L in curves.lengths],
            "range": [np.log10(x_start), np.log10(x_end)],
        },
        "yaxis": {"title": {"text": "held-out bits per character"}, "range": [1.5, top + 0.3]},
        "legend": legend,
        "hovermode": "closest",
    }
    return go.Figure({"data": data, "layout": layout})
