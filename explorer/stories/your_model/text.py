"""The page's words: what it shows, where the numbers come from, and notes that read the data
they sit under."""

from __future__ import annotations

import numpy as np

from explorer.figures.numbers import percent, plural
from explorer.frame.widgets import md_escape
from explorer.stories.your_model.sources import FAMILY, UPLOAD, Picked
from explorer.stories.your_model.views import RopeView, ShawView, T5View
from relpos_core import by_distance as bd
from relpos_lab.extract import MAX_UPLOAD_MB, T5Stack

INTRO = (
    "Bring a checkpoint and see what its position parameters hold, head by head: T5's bias "
    "for each bucket of distances (T5, mT5, LongT5, UMT5), the key and value tables of Shaw "
    "et al.'s layer, ALiBi's slopes, RoPE's frequencies, DeBERTa-v2's and v3's relative "
    "embeddings projected per layer and head. Every value is read from the file as "
    "data, never run, and drawn at the sidebar's *n*."
)
UPLOAD_HELP = (
    f"One weights file (.safetensors, or a PyTorch state dict .pt/.pth/.bin, loaded weights-only) "
    f"of at most {MAX_UPLOAD_MB} MB, with its config.json if you have it (T5's bucket count and "
    "max distance, RoPE's base and scaling, ALiBi's heads, DeBERTa's buckets are read from it). "
    "A larger model: run "
    "`python -m relpos_lab.extract PATH --out positions.safetensors` where it lives and upload "
    "that file (kilobytes). What you upload is seen by this session only."
)
HUB_HELP = (
    "A model name on the Hugging Face Hub, such as t5-small or google/flan-t5-base: only the "
    "position tensors' bytes are read from its model.safetensors (its header, then a range read "
    "of each), never the whole checkpoint."
)
COMMAND = (
    "From the command line: `python -m relpos_lab.extract PATH --out positions.safetensors` "
    "reads a .safetensors file, a folder as save_pretrained writes it or a PyTorch state dict, "
    "prints what it found and writes only the position parameters."
)
SHAW_QUERIES = (
    "The key term a head adds is $q_i \\cdot w^K_{\\mathrm{clip}(j - i, k)}$: what a head makes "
    "of these rows depends on its queries, which a checkpoint does not hold. Shown are the "
    "tables themselves and the norm of the row each distance uses."
)


def origin_caption(picked: Picked) -> str:
    """The line under the title: whose weights are drawn. The sidebar's weights switch does not
    apply: every table is a checkpoint's own."""
    source = md_escape(picked.positions.source)  # a file's name is the visitor's text
    unswitched = "The sidebar's weights switch does not apply here."
    if picked.origin == FAMILY:
        return (
            f":material/school: **Weights: trained**: {source}, as they were trained; nothing "
            f"of yours uploaded. {unswitched}"
        )
    if picked.origin == UPLOAD:
        return (
            f":material/upload_file: **Weights: your upload** '{source}', seen by this "
            f"session only. {unswitched}"
        )
    kb = picked.received / 1024
    return (
        f":material/cloud_download: **Weights: the Hub model {source}**: {kb:.1f} kB read by "
        f"range requests. {unswitched}"
    )


SHAPE_RULES = {  # each shape's rule, in words (relpos_core.by_distance.head_shapes)
    "local": "at least half the weight near, a near key on average at least twice a far key's",
    "near and far": "a near key on average at least twice a far key's weight, but only 10% to "
    "half of the weight near",
    "looks back": "at least 90% of the weight off r = 0 on keys before the query",
    "looks ahead": "at least 90% of the weight off r = 0 on keys after the query",
    "long-range": "less than half the weight near: under 10%, or a near key gets less than "
    "twice a far key's",
    "few far keys": "half the weight or more near, but a near key gets less than twice a far "
    "key's: at this n most keys are near",
    "every key near": f"no key lies beyond |r| <= {bd.LOCAL_REACH} at this n: too short to tell",
}


def share_range(values: np.ndarray) -> str:
    low, high = float(values.min()), float(values.max())
    return percent(low) if percent(low) == percent(high) else f"{percent(low)} to {percent(high)}"


def reading_query(view: T5View) -> str:
    seen, _ = view.weights
    n = view.n
    if view.stack.bidirectional:
        who = f"the middle query (i = {(n - 1) // 2})"
    else:
        who = f"the last query (i = {n - 1})"
    return f"{who}, which sees {plural(len(seen), 'key')}"


def t5_note(view: T5View, n: int) -> str:
    """Each head's shape at this n, read from the bias drawn: the weights one query gives with
    equal content scores, its share near r = 0 against an even spread's; the rule of each
    shape named; where the training length is known, the weight on untrained buckets."""
    seen, _ = view.weights
    near = view.near
    even = float((np.abs(seen) <= bd.LOCAL_REACH).mean())
    groups = view.groups()
    by_shape = "; ".join(
        f"{shape}: head{'s' * (len(heads) > 1)} {', '.join(map(str, heads))}"
        for shape, heads in groups.items()
    )
    rules = "; ".join(f"{shape}: {SHAPE_RULES[shape]}" for shape in groups)
    parts = [
        f"Shapes read from the bias drawn at n = {n}: with every content score equal, "
        f"{reading_query(view)}, puts {share_range(near)} of its weight within |r| <= "
        f"{bd.LOCAL_REACH} (an even spread: {percent(even)}; most: head {int(np.argmax(near))}).",
        f"By shape: {by_shape} ({rules}).",
    ]
    return " ".join(parts + [untrained_note(view)]).strip()


def untrained_note(view: T5View) -> str:
    """Which buckets training never reached, and the weight on them at this n ('' unknown)."""
    if view.trained is None:
        return ""
    never = view.never_trained
    length = view.training_length
    if not never:
        return f"Trained on {length} positions, every bucket these distances use was trained."
    words = (
        f"Bucket{'s' * (len(never) > 1)} {ranges(never)} {'were' if len(never) > 1 else 'was'} "
        f"never trained: no distance under the training length {length} reaches "
        f"{'them' if len(never) > 1 else 'it'}, so {'their' if len(never) > 1 else 'its'} bias "
        "kept its initial value."
    )
    share = view.untrained_weight
    if share is not None and share.max() > 0:
        return words + (
            f" At n = {view.n} the reading query puts {share_range(share)} of its weight on "
            "distances in them."
        )
    return words + f" At n = {view.n} the reading query sees no distance in them."


def ranges(values: list[int]) -> str:
    """'27-31' for a run, '3, 5-7' for runs.

    >>> ranges([3, 5, 6, 7]), ranges([27, 28, 29, 30, 31])
    ('3, 5-7', '27-31')
    """
    out: list[list[int]] = []
    for v in values:
        if out and v == out[-1][1] + 1:
            out[-1][1] = v
        else:
            out.append([v, v])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in out)


def training_unknown(stack: T5Stack) -> str:
    """Why an upload's untrained buckets cannot be marked, and what would mark them."""
    return (
        "Which buckets were trained cannot be known from a checkpoint: it does not record the "
        "lengths it was trained on. A model trained on sequences longer than max_distance = "
        f"{stack.max_distance} used every bucket; one trained on shorter ones left the "
        "buckets past its length at their initial values (the family's T5, trained on 64 "
        "characters with max_distance 128, never trained buckets 27-31). Give its training "
        "length to mark them; 0 leaves them unmarked."
    )


def shaw_note(view: ShawView, n: int) -> str:
    k = view.layer.k
    parts = []
    for name, table in view.tables.items():
        norms = np.linalg.norm(table, axis=-1)
        r = int(np.argmax(norms)) - k
        parts.append(f"{name}'s largest row is r = {r} (norm {norms.max():.3g})")
    beyond = (
        f"every |r| > {k} reads the edge row, so the norm is flat past ±{k}"
        if n - 1 > k
        else f"n = {n} never reaches the clip at ±{k}: every row used is its own distance's"
    )
    return f"{'; '.join(parts)}; {beyond}."


def alibi_note(slopes: np.ndarray, n: int) -> str:
    far = n - 1
    heads = plural(len(slopes), "head")
    fixed = "fixed by the head count, never trained"
    if len(slopes) == 1:
        start = f"{heads}, slope {slopes[0]:.4g} ({fixed})."
    else:
        start = f"{heads}, slopes {slopes.max():.4g} down to {slopes.min():.4g} ({fixed})."
    if far == 0:
        return f"{start} At n = 1 the only distance is r = 0, where every head's bias is 0."
    return (
        f"{start} At r = ±{far} the bias is {-slopes.max() * far:.3g} in the steepest head and "
        f"{-slopes.min() * far:.3g} in the flattest."
    )


def rope_note(view: RopeView, n: int) -> str:
    """How many pairs turn full circle within the page's largest distance n - 1 (the dotted
    line) and within the configured length."""
    turns = int((view.wavelength <= n - 1).sum())
    pairs = len(view.wavelength)
    trained = view.rope.max_positions
    within = (
        f"; {int((view.wavelength <= trained).sum())} have a wavelength of at most "
        f"max_position_embeddings = {trained}"
        if trained
        else ""
    )
    scaled = f" ({view.scaling})" if view.scaling else ""
    return (
        f"{turns} of {plural(pairs, 'rotary pair')} turn full circle within the largest distance "
        f"at n = {n}, n - 1 = {n - 1} (wavelength at most {n - 1}){within}; the slowest pair "
        f"turns once every {view.wavelength.max():.4g} positions{scaled}."
    )
