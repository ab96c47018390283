"""Where a view's tensors come from, decided once per rerun: the family's trained character
models on the view's characters, or seeded random draws.

Pages and stories ask a :class:`TensorSource` (``source_of(params)``) instead of testing the
sidebar's switch themselves: what a position is called, which model a scheme's view reads,
what the download records and the caption under a page's title all follow from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.frame.params import ViewParams
from explorer.weights.reading import axis_labels, model_for, sequence
from relpos_core.schemes.catalogue import scheme_entries

# what "the family" is, said wherever a trained view names one of its models
FAMILY_GLOSS = (
    "(small causal character models, one per position scheme, each of whose positions sees only "
    "the characters before it, trained on the same text, Python's help topics, with the same "
    "budget)"
)


@dataclass(frozen=True)
class TensorSource:
    """The source of one view's tensors: the family's trained models or seeded random draws."""

    params: ViewParams

    @property
    def trained(self) -> bool:
        return self.params.trained

    @property
    def unit(self) -> str:
        """What one position is: a character the model reads, or an abstract position."""
        return "character" if self.trained else "position"

    @property
    def seed(self) -> int:
        """The seed of the random draws; 0 for trained weights, which draw nothing."""
        return 0 if self.trained else self.params.seed

    def text(self) -> str | None:
        """The characters a trained view reads (typed, else held out); None for random weights."""
        return sequence(self.params) if self.trained else None

    def unread(self, scheme: str = "shaw") -> tuple[str, ...]:
        """The characters of the text the model of ``scheme`` reads as the one unknown id (in
        order, repeats kept); none for random weights, which read every token."""
        if not self.trained:
            return ()
        from explorer.weights.trained import unread_characters  # runs the model: loads torch

        return unread_characters(self.params, scheme)

    def key_names(self) -> tuple[str, ...]:
        """What a note calls each key: its character (trained weights) or typed token; none for
        random weights on abstract positions, which a note names by index, not k0, k1, ..."""
        if self.trained or self.params.tokens:
            return axis_labels(self.params)[1]
        return ()

    def never_trained(self) -> tuple[int, ...]:
        """The distances r whose Shaw table rows w_r training never updated (keys ahead, and
        distances beyond the training windows); none for random weights, where no row is
        trained."""
        if not self.trained:
            return ()
        from explorer.weights.trained import never_trained  # reads the model: loads torch

        return never_trained(self.params)

    def model(self, scheme: str = "shaw") -> str | None:
        """The family model the view of ``scheme`` reads; None for random weights."""
        return model_for(self.params, scheme) if self.trained else None

    def scheme_models(self) -> tuple[tuple[str, str], ...]:
        """(scheme, the family model its view reads) for every scheme of the catalogue a model
        was trained with; none for random weights."""
        if not self.trained:
            return ()
        return tuple((e.name, model_for(self.params, e.name)) for e in scheme_entries() if e.model)

    def provenance(self, *schemes: str) -> dict[str, object]:
        """What a download's params.json records about the weights: the model (one per scheme
        when several are given) for trained weights, nothing for random ones (their seed is a
        parameter already)."""
        if not self.trained:
            return {}
        names = schemes or ("shaw",)
        if len(names) == 1:
            return {"_model": self.model(names[0])}
        return {"_model": {scheme: self.model(scheme) for scheme in names}}

    def caption(self, scheme: str = "shaw") -> str:
        """One line under a page's title: where its numbers come from (``scheme``: the family
        model the page draws, a scheme's name, or "each" for one model per scheme)."""
        params = self.params
        if not self.trained:
            return (
                f":material/casino: **Weights: random, untrained** (seed {params.seed}). The "
                "token vectors, the projections to q, k and v and the relative tables are "
                "seeded random draws, not learned, so their patterns are not ones a model "
                "found; the sidebar's weights switch draws a trained model instead."
            )
        characters = f"{params.length} character{'s' * (params.length != 1)}"
        reading = (
            f"the {characters} typed"
            if params.text
            else f"{characters} held out of the corpus (from its first sentence of prose)"
        )
        from relpos_lab.family.registry import model_words  # torch only once a model is read

        if scheme == "each":
            model = (
                f"each scheme's own model of the family (Shaw's: {model_words(model_for(params))})"
            )
        else:
            model = f"{model_words(model_for(params, scheme))} of the family"
        return (
            f":material/school: **Weights: trained**: layer {params.layer} of {model} "
            f"{FAMILY_GLOSS}, reading {reading}. Every tensor below is the model's own."
        )


def source_of(params: ViewParams) -> TensorSource:
    """The source of the tensors every view of this rerun reads."""
    return TensorSource(params)


def no_model_caption(drawn: str) -> str:
    """The line under the title of a page that draws no model: what its figures are instead."""
    return (
        f":material/functions: **No model on this page**: {drawn}. The sidebar's weights switch "
        "changes nothing here."
    )


def own_models_caption(source: TensorSource, models: str, untrained: str) -> str:
    """The line under the title of a page that draws its own ``models`` whatever the switch says:
    the switch's value, that it does not apply, and where the page's ``untrained`` counterpart
    is."""
    return (
        f":material/school: **Weights: {models}.** The sidebar's weights switch is set to "
        f"{'trained' if source.trained else 'random'}, but does not apply here: these models "
        f"are loaded as they were trained, whatever it says; {untrained}."
    )
