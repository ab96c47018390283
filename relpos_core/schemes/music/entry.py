"""The Music Transformer's catalogue entry: labels, paper, formulas, settings and trained model (no
torch: the pages read it before any tensor is needed)."""

from __future__ import annotations

from relpos_core.schemes.catalogue import SchemeEntry, Setting

ENTRY = SchemeEntry(
    name="music",
    label="Music Transformer",
    title="Music Transformer (Huang et al. 2018)",
    paper='Huang et al. 2018, "Music Transformer"; tensor2tensor\'s relative attention v2',
    description="one learned vector per distance, per head; zero past the table",
    logit_formula=r"e_{ij} = \frac{q_i \bigl(k_j + E_{j-i}\bigr)^\top}{\sqrt{d}},\quad "
    r"E_{j-i} = 0 \ \text{ for } |j - i| > L - 1",
    position_formula=r"\frac{q_i\,E_{j-i}^\top}{\sqrt{d}}",
    terms=("key", "value"),
    scheme_class=".maths:MusicRelative",
    parameters_text="E (and E^V): (h, 2L-1, d), per head; L-1 past entries when causal",
    memory_text="Q E^T through the skew: b·h·n·(2n-1), or b·h·n·n causal",
    extrapolation="drops out: distances past L-1 get the zero vector, no position signal",
    settings=(
        Setting(
            "max_relative_position",
            "table length L",
            64,
            url_key="music_len",
            label="Music: L (table length, max_relative_position)",
            high=4096,  # the explorer's longest n
            help="Distances |j - i| > L - 1 get the zero vector.",
            words="table length L = {}",
            short="L = {}",
        ),
        Setting(
            "values",
            "value term",
            False,
            url_key="music_values",
            label="Music: value term E^V (values)",
            words=("on keys only", "on keys and values"),
        ),
    ),
    learned=True,
    model="music",
    model_params=(("max_relative_position", 64),),
    order=1,
)
