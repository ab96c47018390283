"""Shaw et al. 2018's catalogue entry: labels, paper, formulas, settings and trained model (no
torch: the pages read it before any tensor is needed)."""

from __future__ import annotations

from relpos_core.schemes.catalogue import SchemeEntry, Setting

ENTRY = SchemeEntry(
    name="shaw",
    label="Shaw",
    title="Shaw et al. 2018",
    paper='Shaw, Uszkoreit, Vaswani 2018, "Self-Attention with Relative Position Representations"',
    description="clipped learned tables w^K, w^V added to keys and values",
    logit_formula=r"e_{ij} = \frac{q_i \bigl(k_j + a^K_{ij}\bigr)^\top}{\sqrt{d}},\quad "
    r"a^K_{ij} = w^K_{\operatorname{clip}(j - i,\, k)}",
    position_formula=r"\frac{q_i\,(a^K_{ij})^\top}{\sqrt{d}}",
    terms=("key", "value"),
    scheme_class=".maths:ShawRelative",
    parameters_text="w^K, w^V: (2k+1, d) each, shared by heads",
    memory_text="Q (w^K)^T: b·h·n·(2k+1)",
    extrapolation="clips: every distance beyond ±k uses the edge vector w_±k",
    settings=(
        Setting(
            "max_relative_position",
            "clip distance k",
            8,
            view="k",
            words="clip distance k = {}",
            short="k = {}",
        ),
    ),
    learned=True,
    model="shaw",
    model_params=(("max_relative_position", 8),),
    order=0,
)
