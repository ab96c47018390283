"""T5's catalogue entry: labels, paper, formulas, settings and trained model (no
torch: the pages read it before any tensor is needed)."""

from __future__ import annotations

from relpos_core.schemes.catalogue import SchemeEntry, Setting

ENTRY = SchemeEntry(
    name="t5",
    label="T5",
    title="T5 (Raffel et al. 2020)",
    paper='Raffel et al. 2020, "Exploring the Limits of Transfer Learning with a Unified '
    'Text-to-Text Transformer"',
    description="one learned scalar per head per log-spaced bucket of j - i",
    logit_formula=r"e_{ij} = \frac{q_i \cdot k_j}{\sqrt{d}} + b_h\bigl(\operatorname{bucket}"
    r"(j - i)\bigr)",
    position_formula=r"b_h\bigl(\operatorname{bucket}(j - i)\bigr)",
    terms=("bias",),
    scheme_class=".maths:T5Bias",
    parameters_text="b: (B, h), one scalar per bucket per head",
    memory_text="bias: h·n·n (shared by the batch)",
    extrapolation="saturates: every distance past max_distance shares the last bucket",
    settings=(
        Setting(
            "num_buckets",
            "num_buckets",
            32,
            url_key="t5_buckets",
            label="T5: num_buckets",
            choices=(8, 16, 32, 64, 128),
            words="{} buckets",
        ),
        Setting(
            "max_distance",
            "max_distance",
            128,
            url_key="t5_max",
            label="T5: max_distance (last log-spaced bucket)",
            # causal T5 uses all buckets for the past: max_exact = num_buckets / 2 exact distances
            low=lambda others: int(others["num_buckets"]) // 2 + 1,  # type: ignore[call-overload]
            high=8192,  # twice the explorer's longest n
            help="Every distance beyond it shares the last bucket. It must exceed "
            "num_buckets / 2, the exact buckets of one direction.",
            words="max distance {}",
            short="",
        ),
    ),
    learned=True,
    scaled=False,  # T5 folds the factor into its initialisation
    model="t5",
    model_params=(("num_buckets", 32), ("max_distance", 128)),
    order=3,
)
