"""The Predict page's words: what each figure shows, and notes computed from the data shown."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from explorer.frame.params import ViewParams
from explorer.frame.widgets import md_escape
from explorer.stories.predict.heads import HeadsView
from explorer.stories.predict.views import (
    CONTEXT_MAX,
    TEXT_MAX,
    Generation,
    LossAlong,
    NextView,
    WritingStep,
)
from explorer.weights.reading import shown
from relpos_lab.family.registry import describe, scheme_models

MODEL_NAMES = scheme_models()  # one model per published scheme, and the two baselines
MODELS = "the family's trained character models"
UNTRAINED = (
    "a model with random weights predicts every character about equally, so this page has "
    "nothing to show for it"
)
INTRO = (
    "Each model of the family reads the text one character at a time and, at every position, "
    "gives every character of its vocabulary a probability of coming next. The models are "
    "identical but for how position enters attention, and were trained the same way, on "
    "windows of 64 characters of Python's help topics. Here one of them predicts, writes, and "
    "is scored character by character."
)
NEXT_FORMULA = (
    r"p(x_{t+1} = c \mid x_0 \dots x_t) = \operatorname{softmax}_c\bigl(W h_t + b\bigr),"
    r"\qquad \text{bits}_t = -\log_2 p(x_{t+1} \mid x_0 \dots x_t)"
)
ATTENTION_FORMULA = (
    r"\alpha^{(\ell, h)}_{n-1,\,j} = \operatorname{softmax}_{j \le n-1}\bigl("
    r"e^{(\ell, h)}_{n-1,\,j}\bigr),\quad e = \frac{q_{n-1} \cdot k_j}{\sqrt{d}}"
    r" + \text{the layer's position term}"
)
WRITER_FORMULA = (
    r"x_{t} \sim p(\cdot \mid \text{what it read}),\quad \alpha^{(\ell, h)}_{m-1,\,j} = "
    r"\operatorname{softmax}_{j \le m-1}\bigl(e^{(\ell, h)}_{m-1,\,j}\bigr)"
    r"\ \text{over the } m \text{ characters read}"
)
RUNNING_FORMULA = r"\bar b_t = \frac{1}{t} \sum_{s=1}^{t} \text{bits}_s"
SAMPLE_FORMULA = (
    r"x_{t+1} \sim \operatorname{softmax}_{c\, \in\, \text{top-}k(\ell)}\bigl(\ell_c / T\bigr)"
)
SAMPLE_WORDS = (
    "Each new character is drawn from the model's logits ℓ divided by the temperature T (below "
    "1 sharpens the distribution, above 1 flattens it), over the k characters with the largest "
    "logits only; the drawn character joins the text and the model reads it for the next."
)


def model_label(name: str) -> str:
    """The name a learner reads for family model ``name``."""
    return f"{describe(name)} ({name})"


def model_line(name: str, config) -> str:
    """What model ``name`` is (``config``: its ``ModelConfig``)."""
    return (
        f"{name}: {describe(name)}; {config.layers} layers of {config.heads} heads, "
        f"d_model = {config.d_model}, trained on windows of {config.context} characters."
    )


def quoted(chars: str) -> str:
    """Characters as a learner reads them: whitespace made visible, in quotes."""
    return "'" + "".join(shown(c) for c in chars) + "'"


def source_line(params: ViewParams, view: NextView) -> str:
    """Which characters the model read."""
    whence = "the sidebar's sentence" if params.text else f"n = {params.length} held-out characters"
    read = len(params.text) if params.text else params.length
    cut = f", its last {TEXT_MAX}" if len(view.text) == TEXT_MAX < read else ""
    return (
        f"{view.name} reads {whence}{cut} ({len(view.text)} characters, ending "
        f"{quoted(view.text[-24:])}) and predicts the character after the last."
    )


def unread_line(view: NextView) -> str:
    """The characters of the text the model reads as its one unknown id."""
    different = sorted(set(view.unread))
    return (
        f"{len(view.unread)} of the {len(view.text)} characters are outside the model's "
        f"vocabulary ({len(different)} different: {' '.join(different)}): it reads each as the "
        "same unknown id and cannot tell them apart."
    )


def written(gen: Generation) -> str:
    """The text's last characters in grey, then what the model wrote in bold, on one line
    (whitespace made visible, as on the axes; markdown escaped)."""
    tail = "".join(shown(c) for c in gen.prompt[-60:])
    new = "".join(shown(c) for c in gen.text)
    return f":gray[…{md_escape(tail)}]**{md_escape(new)}**"


def bits_caption(label: str, context: int, ceiling: float, vocab: int) -> str:
    return (
        f"{label}: each character coloured by the bits the model spent on it, given every "
        f"character before it in the passage. The red line closes the first {context} "
        "characters, the training length: every line under it is further than any training "
        f"window reached. Colours run from 0 to {ceiling:.2f} bits, what a uniform guess over "
        f"the {vocab} ids costs; more takes the top colour."
    )


def passage_line(loss: LossAlong, context: int) -> str:
    """Which passage section 3 scores."""
    return (
        f"The first {loss.length} characters of the held-out part of the corpus, the passage "
        f"the length table scores ({loss.length // context} x the training length of "
        f"{context}), read as one window: character t is predicted from characters 0..t-1."
    )


def top_note(view: NextView) -> str:
    """The most likely next character and how much the list holds."""
    first, p = view.top_chars[0], float(view.top_probs[0])
    return (
        f"After {quoted(view.text[-12:])}, {view.name} gives {quoted(first)} "
        f"{p:.1%}; the ten listed hold {float(view.top_probs.sum()):.1%} of the probability."
    )


def attention_note(view: NextView) -> str:
    """Where the single largest weight of the last character goes, and how many heads look at
    the character itself or the one before."""
    layers, heads, n = view.attention.shape
    layer, head, key = np.unravel_index(int(np.argmax(view.attention)), view.attention.shape)
    weight = float(view.attention[layer, head, key])
    back = n - 1 - int(key)
    where = "itself" if back == 0 else f"{back} character{'s' if back > 1 else ''} back"
    near = int((view.attention[:, :, -2:].sum(-1) > 0.5).sum())
    return (
        f"The largest weight: layer {layer}, head {head} puts {weight:.0%} on key {key}, "
        f"{quoted(view.text[key])}, {where}. {near} of the {layers * heads} heads put more "
        f"than half their weight on the last character or the one before it."
    )


def generation_caption(gen: Generation, temperature: float, top_k: int, seed: int) -> str:
    return (
        f"{len(gen.chars)} characters drawn after the text with T = {temperature}, top-k = "
        f"{top_k}, seed {seed}: the same settings (and the link) draw the same characters. "
        "Each cell is a drawn character, coloured by the bits of its draw "
        "(-log2 of its probability in the cut distribution); hover for the 3 characters the "
        "model found most likely there, click for the attention that drew it (below, outlined "
        "in red here)."
    )


def loss_note(loss: LossAlong, context: int, names: Mapping[str, str] | None = None) -> str:
    """Which curve's running mean moves most, and which least, from the training length to
    the end of the passage (in bits per character); ``names``: every curve drawn and how the
    note names it (default: the family's models)."""
    names = {n: describe(n) for n in MODEL_NAMES} if names is None else names
    if loss.length <= context:
        return (
            f"The passage is {loss.length} characters, within the {context} the models were "
            "trained on: choose a longer passage to see them read past it."
        )
    change = {n: float(loss.running_mean(n)[-1] - loss.running_mean(n)[context - 1]) for n in names}
    worst, best = max(change, key=change.get), min(change, key=lambda n: abs(change[n]))
    at = {n: (float(loss.running_mean(n)[context - 1]), float(loss.running_mean(n)[-1]))
          for n in (worst, best)}  # fmt: skip
    return (
        f"From {context} characters (the training length) to {loss.length}, "
        f"{names[worst]}'s mean rises most, from {at[worst][0]:.2f} to {at[worst][1]:.2f} "
        f"bits per character; {names[best]}'s moves least, from {at[best][0]:.2f} to "
        f"{at[best][1]:.2f}. Each curve's last value is the length table's bits per character "
        f"for this one window of {loss.length}."
    )


GRID_FORMULA = (
    r"\alpha^{(\ell, h)}_{ij} = \operatorname{softmax}_{j \le i}\bigl(e^{(\ell, h)}_{ij}\bigr),"
    r"\qquad 0 \le j \le i < m"
)


def grid_line(heads: HeadsView, config) -> str:
    """What the grid reads and draws."""
    m = len(heads.text)
    return (
        f"{heads.name} on the text's first {m} characters: a row per layer, a column per head, "
        f"each map one head's weights, query i down, key j across; keys after the query are "
        f"blank (the models are causal, so these rows are the same whatever follows). "
        f"{config.layers} x {config.heads} maps."
    )


def grid_caption(scale_caption: str, name: str, link: tuple[str, dict] | None) -> str:
    """How to read a map's second line, and where a click on a map goes."""
    reading = (
        "Under each map, where that head's weight goes, read from the map itself: the distance "
        "j - i or the fixed key j with the largest mean share of a row's weight (with, in "
        "brackets, the share an even spread over the keys a row sees would give it), or, when "
        "none stands out, how even the rows are (entropy as a share of log of the keys seen)."
    )
    if link is None:
        where = (
            f"{describe(name)} has no position term in its attention, so no other page draws "
            "its heads: this grid is all of them."
        )
    elif link[0] == "attention.py":
        where = (
            "Click a map to open that layer and head on the Attention page (Shaw's model with "
            "k = 8, trained weights), on the same characters."
        )
    else:
        where = (
            f"Click a map to open that layer and head of the {describe(name)} model on the "
            "Position schemes page, which draws what the scheme adds to each logit (its "
            "position term), on the same characters."
        )
    return f"{reading} {where} {scale_caption}"


def grid_note(heads: HeadsView) -> str:
    """How many heads follow the previous character, one other distance, one fixed key, or
    none, from their readings."""
    readings = [r for layer in heads.readings for r in layer]
    standing = [r for r in readings if r.pattern in ("distance", "key", "leans")]
    previous = sum(r.best.kind == "distance" and r.best.at == -1 for r in standing)
    distance = sum(r.best.kind == "distance" and r.best.at != -1 for r in standing)
    key = sum(r.best.kind == "key" for r in standing)
    rest = len(readings) - len(standing)
    return (
        f"Of {heads.name}'s {len(readings)} heads on these {len(heads.text)} characters, "
        f"{previous} put their largest share on the previous character (j - i = -1), "
        f"{distance} on another distance, {key} on one fixed key, and {rest} on no one "
        "distance or key."
    )


def step_caption(step: WritingStep, gen: Generation, scale_caption: str) -> str:
    """What the attention behind a written character shows."""
    cut = f" (its last {CONTEXT_MAX}, as generation reads)" if len(step.text) == CONTEXT_MAX else ""
    own = (
        f"; shaded: the {step.written} character{'s' * (step.written != 1)} it had written before"
        if step.written
        else "; it had written nothing before it"
    )
    return (
        f"Character {step.t} of the generation, {quoted(gen.chars[step.t])} (p = "
        f"{float(gen.probs[step.t]):.1%} in the cut distribution), was drawn from the logits "
        f"of the last of the {len(step.text)} characters the model read{cut}: these are that "
        f"character's weights over them, every layer and head{own}. {scale_caption}"
    )


def step_note(step: WritingStep) -> str:
    """Where the largest weight behind a written character went, and how much of the last
    layer's weight went to what the model had written itself."""
    layers, heads, n = step.attention.shape
    layer, head, key = np.unravel_index(int(np.argmax(step.attention)), step.attention.shape)
    back = n - 1 - int(key)
    where = "itself" if back == 0 else f"{back} character{'s' if back > 1 else ''} back"
    own = (
        f" The last layer's heads put on average "
        f"{float(step.attention[-1, :, n - step.written :].sum(-1).mean()):.0%} of their "
        f"weight on the {step.written} character{'s' * (step.written != 1)} the model wrote."
        if step.written
        else ""
    )
    return (
        f"The largest weight: layer {layer}, head {head} puts "
        f"{float(step.attention[layer, head, key]):.0%} on key {key}, "
        f"{quoted(step.text[key])}, {where} from the last character read.{own}"
    )
