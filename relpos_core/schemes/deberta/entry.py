"""DeBERTa's catalogue entry: labels, paper, formulas, settings and trained model (no torch: the
pages read it before any tensor is needed)."""

from __future__ import annotations

from relpos_core.schemes.catalogue import SchemeEntry, Setting

ENTRY = SchemeEntry(
    name="deberta",
    label="DeBERTa",
    title="DeBERTa (He et al. 2021)",
    paper='He et al. 2021, "DeBERTa: Decoding-enhanced BERT with Disentangled Attention"',
    description="the query reads a relative embedding (c2p) and the key is read by one (p2c)",
    logit_formula=(
        r"A_{ij} = \tfrac{1}{\sqrt{3d}}\Bigl(\underbrace{q_i^\top k_j}_{\text{c2c}}"
        r" + \underbrace{q_i^\top P^K_{c(i,j)}}_{\text{c2p}}"
        r" + \allowbreak \underbrace{k_j^\top P^Q_{c(i,j)}}_{\text{p2c}}\Bigr)"
    ),
    position_formula=r"\frac{q_i^\top P^K_{c(i,j)} + k_j^\top P^Q_{c(i,j)}}{\sqrt{3d}}",
    terms=("key", "bias"),
    scheme_class=".maths:DeBERTa",
    parameters_text="P: (2·span, d_model) relative embeddings; W^K_r, W^Q_r: (d_model, h·d)",
    memory_text="P W_r: 2·(2 span)·d_model; q P^K^T and k P^Q^T: b·h·2n·(2 span)",
    extrapolation="log buckets to max_relative_positions, then every farther distance shares "
    "the table's last row",
    settings=(
        Setting(
            "position_buckets",
            "position_buckets",
            32,
            url_key="deberta_buckets",
            label="DeBERTa: position_buckets (0: no buckets)",
            choices=(0, 8, 16, 32, 64, 256),
            words="{} buckets",
        ),
        Setting(
            "max_relative_positions",
            "max_relative_positions",
            128,
            url_key="deberta_max",
            label="DeBERTa: max_relative_positions",
            low=lambda others: int(others["position_buckets"]) // 2 + 2,  # type: ignore[call-overload]
            high=4096,
            help="With buckets: where the log buckets end. Without: the table's span, the "
            "clip distance of i - j.",
            words="max relative position {}",
            short="",
        ),
    ),
    learned=True,
    divisor="√(3d)",
    model="deberta",
    model_params=(("position_buckets", 32), ("max_relative_positions", 128)),
    note="c(i, j) = clamp(bucket(i - j) + span, 0, 2 span - 1), span = position_buckets (or "
    "max_relative_positions without buckets); bucket(r) = r for |r| <= span / 2, logarithmic "
    "beyond. The relative position is i - j, query minus key.",
    term_titles={
        "content": "content-to-content q·k",
        "c2p": "content-to-position q · P^K",
        "p2c": "position-to-content k · P^Q",
    },
    terms_note="All three share the divisor sqrt(3d). p2c depends on the key and the distance, "
    "not the query: the key's content decides how it is seen from each distance. No other "
    "scheme of the family has such a term: T5's and ALiBi's biases give every key at one "
    "distance the same number, and Shaw's, the Music Transformer's, Transformer-XL's and "
    "RoPE's position terms read the query.",
    order=6,
)
