"""RoPE's catalogue entry: labels, paper, formulas, settings and trained model (no
torch: the pages read it before any tensor is needed)."""

from __future__ import annotations

from relpos_core.schemes.catalogue import SchemeEntry, Setting

ENTRY = SchemeEntry(
    name="rope",
    label="RoPE",
    title="RoPE (Su et al. 2021)",
    paper='Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding"',
    description="queries and keys rotated by angles proportional to their positions",
    logit_formula=(
        r"\begin{gathered}e_{ij} = \frac{(R_{\Theta,i}\,q_i)^\top (R_{\Theta,j}\,k_j)}{\sqrt{d}}"
        r" = \frac{q_i^\top R_{\Theta,\,j-i}\,k_j}{\sqrt{d}},\\ \theta_m = \mathrm{base}^{-2m/d}"
        r"\end{gathered}"
    ),
    position_formula=r"\frac{q_i^\top \bigl(R_{\Theta,\,j-i} - I\bigr)\,k_j}{\sqrt{d}}",
    terms=("rotation",),
    scheme_class=".maths:Rotary",
    parameters_text="none learned; base (10000) sets theta_m = base^(-2m/d)",
    memory_text="rotated q and k: b·h·(n_q + n_k)·d",
    extrapolation="rotates on: angles (j - i)·theta_m beyond the trained lengths are unseen",
    settings=(
        Setting(
            "base",
            "base",
            10_000,
            url_key="rope_base",
            label="RoPE: base (θ_m = base^(-2m/d))",
            choices=(100, 1_000, 10_000, 100_000, 1_000_000),
            words="base {:,}",
        ),
    ),
    model="rope",
    order=5,
)
