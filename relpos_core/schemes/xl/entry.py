"""Transformer-XL's catalogue entry: labels, paper, formulas, settings and trained model (no
torch: the pages read it before any tensor is needed)."""

from __future__ import annotations

from relpos_core.schemes.catalogue import SchemeEntry

ENTRY = SchemeEntry(
    name="xl",
    label="Transformer-XL",
    title="Transformer-XL (Dai et al. 2019)",
    paper='Dai et al. 2019, "Transformer-XL: Attentive Language Models Beyond a Fixed-Length '
    'Context"',
    description="a fixed sinusoid of i - j, projected, with global biases u and v",
    logit_formula=(
        r"A_{ij} = \tfrac{1}{\sqrt{d}}\Bigl(\underbrace{q_i^\top k_j}_{(a)}"
        r" + \underbrace{q_i^\top W_{k,R} R_{i-j}}_{(b)}"
        r" + \allowbreak \underbrace{u^\top k_j}_{(c)}"  # a narrow screen: (a) + (b) over (c) + (d)
        r" + \underbrace{v^\top W_{k,R} R_{i-j}}_{(d)}\Bigr)"
    ),
    position_formula=r"\frac{(q_i + v)^\top W_{k,R} R_{i-j}}{\sqrt{d}} \quad \text{(b) + (d)}",
    terms=("key", "bias"),
    scheme_class=".maths:TransformerXL",
    parameters_text="W_R: (d_model, h·d); u, v: (h, d); R fixed sinusoid",
    memory_text="R and W_R R: (n_q+n_k-1)·(d_model + h·d); (q+v) (W_R R)^T: b·h·n·(2n-1)",
    extrapolation="continues the sinusoid: unseen distances get new but smooth R_(i-j)",
    learned=True,
    model="xl",
    no_settings="R is a fixed sinusoid of i - j",
    term_titles={
        "content": "(a) content q·k",
        "position": "(b) q · W_R R",
        "global_content": "(c) u · k",
        "global_position": "(d) v · W_R R",
    },
    terms_note="(b) + (d) is the position term above; (c) depends on the key alone, so each "
    "column is constant.",
    order=2,
)
