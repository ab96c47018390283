"""The models of the family, by name: one per scheme of the catalogue, two baselines, and Shaw
et al.'s two ablations.

Every model has the same size, data, seed and steps; only how position enters differs. A
scheme's model is built with the keywords its catalogue entry records (``model_params``); a
scheme the catalogue lists with no model is still a spec here, ready to train
(``python -m relpos_lab.family train NAME``), but not one of the shipped ``model_names()``.
``shaw`` uses k = 8 and the ablations vary one thing from it: the clip distance (Shaw et al.
2018, Table 2) or which of a^K, a^V is learned (their Table 3).
"""

from __future__ import annotations

from relpos_core.schemes.catalogue import SchemeEntry, scheme_entries, scheme_entry
from relpos_lab.family.model import ModelConfig

BASELINES = {  # no scheme object: plain causal attention
    "nope": "no position information",
    "sinusoidal": "absolute sinusoid (Vaswani et al. 2017)",
}
BASELINE_WORDS = {"nope": "the model without position", "sinusoidal": "the sinusoidal model"}
SHAW_K = dict(scheme_entry("shaw").model_params)["max_relative_position"]  # its model's k
SHAW_CLIPS = (0, 1, 2, 4, 16, 64)  # Table 2's distances, beside shaw's own


def scheme_spec(entry: SchemeEntry) -> dict:
    """The spec of the model of one scheme: its name and the keywords it is built with."""
    spec: dict = {"position": entry.name}
    if entry.model_params:
        spec["scheme_params"] = dict(entry.model_params)
    return spec


def specs() -> dict[str, dict]:
    """Every model the lab can train, by name: baselines, one per scheme, Shaw's ablations."""
    out: dict[str, dict] = {name: {"position": name} for name in BASELINES}
    for entry in scheme_entries():
        out[entry.model or entry.name] = scheme_spec(entry)
    shaw = out["shaw"]["scheme_params"]
    for k in SHAW_CLIPS:
        out[f"shaw-k{k}"] = {"position": "shaw", "scheme_params": {"max_relative_position": k}}
    out["shaw-keys-only"] = {"position": "shaw", "scheme_params": shaw, "values": False}
    out["shaw-values-only"] = {"position": "shaw", "scheme_params": shaw, "keys": False}
    return out


def untrained_schemes() -> tuple[str, ...]:
    """The catalogue's schemes with no trained model (their specs can be trained)."""
    return tuple(e.name for e in scheme_entries() if e.model is None)


def model_names() -> tuple[str, ...]:
    """The shipped family: every spec but those of schemes never trained."""
    return tuple(name for name in specs() if name not in untrained_schemes())


def scheme_models() -> tuple[str, ...]:
    """One trained model per scheme of the catalogue, after the two baselines."""
    return (*BASELINES, *(e.model for e in scheme_entries() if e.model))


def clip_models() -> tuple[str, ...]:
    """Shaw's models by clip distance, ascending (Table 2)."""
    names = ("shaw", *(f"shaw-k{k}" for k in SHAW_CLIPS))
    return tuple(sorted(names, key=clip_distance))  # type: ignore[arg-type]


PLACEMENT_MODELS = ("shaw", "shaw-keys-only", "shaw-values-only")


def model_config(name: str, vocab: int, context: int) -> ModelConfig:
    """The architecture of family model ``name`` for a vocabulary and training length."""
    known = specs()
    if name not in known:
        raise ValueError(f"model must be one of {', '.join(known)}; got {name!r}")
    return ModelConfig(vocab=vocab, context=context, **known[name])


def clip_setting(position: str):
    """The setting of scheme ``position`` that is the view's clip distance k (Shaw's), else
    None (a baseline, or a scheme with no clip)."""
    if position not in (e.name for e in scheme_entries()):
        return None
    return next((s for s in scheme_entry(position).settings if s.view == "k"), None)


def clip_distance(name: str) -> int | None:
    """k of a Shaw model, else None."""
    spec = specs()[name]
    setting = clip_setting(spec["position"])
    return None if setting is None else spec["scheme_params"][setting.keyword]


def model_words(name: str) -> str:
    """Model ``name`` as a learner reads it: words, never the file name.

    >>> model_words("shaw-k2"), model_words("nope"), model_words("shaw-keys-only")
    ("Shaw's model, k = 2", 'the model without position', "Shaw's model with a^K only, k = 8")
    >>> model_words("t5"), model_words("sinusoidal")
    ('the T5 model', 'the sinusoidal model')
    """
    spec = specs()[name]
    if spec["position"] in BASELINE_WORDS:
        return BASELINE_WORDS[spec["position"]]
    setting = clip_setting(spec["position"])
    if setting is not None:
        only = {"values": "a^K", "keys": "a^V"}
        part = next((f" with {only[off]} only" for off in only if not spec.get(off, True)), "")
        label = scheme_entry(spec["position"]).label
        return f"{label}'s model{part}, {setting.text(clip_distance(name), short=True)}"
    return f"the {scheme_entry(spec['position']).label} model"


def describe(name: str) -> str:
    """Model ``name`` in words: its scheme's title and the settings it was built with."""
    spec = specs()[name]
    if spec["position"] in BASELINES:
        return BASELINES[spec["position"]]
    entry = scheme_entry(spec["position"])
    words = entry.settings_text(spec.get("scheme_params", {}), short=True)
    ablation = [
        part
        for part, off in (("keys-only", "values"), ("values-only", "keys"))
        if not spec.get(off, True)
    ]
    return ", ".join([entry.title, *([words] if words else []), *ablation])
