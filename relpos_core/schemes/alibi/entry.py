"""ALiBi's catalogue entry: labels, paper, formulas, settings and trained model (no
torch: the pages read it before any tensor is needed)."""

from __future__ import annotations

from relpos_core.schemes.catalogue import SchemeEntry, Setting

ENTRY = SchemeEntry(
    name="alibi",
    label="ALiBi",
    title="ALiBi (Press et al. 2022)",
    paper='Press, Smith, Lewis 2022, "Train Short, Test Long: Attention with Linear Biases"',
    description="a fixed linear penalty -m_h |j - i|, one slope per head",
    # Two lines (gathered): on a 390 px phone one line of both would scroll out of its column.
    logit_formula=(
        r"\begin{gathered}e_{ij} = \frac{q_i \cdot k_j}{\sqrt{d}} - m_h\,|i - j|,\\"
        r"m_h = 2^{-8h/H}\ \ (h = 1, \dots, H)\end{gathered}"
    ),
    position_formula=r"-m_h\,|i - j|",
    terms=("bias",),
    scheme_class=".maths:ALiBi",
    parameters_text="none learned; slopes m_h = 2^(-8h/H), fixed",
    memory_text="bias: h·n·n (shared by the batch)",
    extrapolation="grows linearly: -m_h |j - i| keeps falling, so far keys fade for every n",
    settings=(
        Setting(
            "max_bias",
            "max_bias",
            8,
            url_key="alibi_bias",
            label="ALiBi: max_bias (m_h = 2^(-max_bias·h/H))",
            choices=(2, 4, 8, 16),
            words="max bias {}",
        ),
    ),
    scaled=False,  # its slopes are set for unscaled logits
    model="alibi",
    note="The paper's 8 in m_h is max_bias below; h counts heads from 1.",
    order=4,
)
