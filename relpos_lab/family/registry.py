"""The models of the family, by name: the schemes, and Shaw et al.'s two ablations.

Every model has the same size, data, seed and steps; only how position enters differs.
``shaw`` uses k = 8 and the ablations vary one thing from it: the clip distance (Shaw et al.
2018, Table 2) or which of a^K, a^V is learned (their Table 3).
"""

from __future__ import annotations

from relpos_lab.family.model import ModelConfig

SHAW_K = 8  # shaw's own clip distance: the ablations' k0..k64 lie on both sides of it
SHAW_CLIPS = (0, 1, 2, 4, 16, 64)  # Table 2's distances, beside shaw's own


def _specs() -> dict[str, dict]:
    specs: dict[str, dict] = {
        "nope": {"position": "nope"},
        "sinusoidal": {"position": "sinusoidal"},
        "shaw": {"position": "shaw", "scheme_params": {"max_relative_position": SHAW_K}},
        # Music Transformer: one table row per distance of the training length, keys only
        "music": {"position": "music", "scheme_params": {"max_relative_position": 64}},
        "xl": {"position": "xl"},
        "t5": {"position": "t5", "scheme_params": {"num_buckets": 32, "max_distance": 128}},
        "alibi": {"position": "alibi"},
        "rope": {"position": "rope"},
    }
    for k in SHAW_CLIPS:
        specs[f"shaw-k{k}"] = {"position": "shaw", "scheme_params": {"max_relative_position": k}}
    shaw = specs["shaw"]["scheme_params"]
    specs["shaw-keys-only"] = {"position": "shaw", "scheme_params": shaw, "values": False}
    specs["shaw-values-only"] = {"position": "shaw", "scheme_params": shaw, "keys": False}
    return specs


SPECS = _specs()
MODEL_NAMES = tuple(SPECS)
SCHEME_MODELS = ("nope", "sinusoidal", "shaw", "music", "xl", "t5", "alibi", "rope")
CLIP_MODELS = tuple(
    sorted(
        ("shaw", *(f"shaw-k{k}" for k in SHAW_CLIPS)),
        key=lambda name: SHAW_K if name == "shaw" else int(name.removeprefix("shaw-k")),
    )
)
PLACEMENT_MODELS = ("shaw", "shaw-keys-only", "shaw-values-only")


def model_config(name: str, vocab: int, context: int) -> ModelConfig:
    """The architecture of family model ``name`` for a vocabulary and training length."""
    if name not in SPECS:
        raise ValueError(f"model must be one of {', '.join(MODEL_NAMES)}; got {name!r}")
    return ModelConfig(vocab=vocab, context=context, **SPECS[name])


def clip_distance(name: str) -> int | None:
    """k of a Shaw model, else None."""
    spec = SPECS[name]
    return spec["scheme_params"]["max_relative_position"] if spec["position"] == "shaw" else None
