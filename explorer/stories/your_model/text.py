"""The page's words: what it shows, where the numbers come from, and notes that read the data
they sit under."""

from __future__ import annotations

import numpy as np

from explorer.frame.widgets import md_escape
from explorer.stories.your_model.sources import FAMILY, UPLOAD, Picked
from explorer.stories.your_model.views import RopeView, ShawView, T5View
from relpos_core import by_distance as bd
from relpos_lab.extract import MAX_UPLOAD_MB

INTRO = (
    "Bring a checkpoint and see what its position parameters hold, head by head: T5's bias "
    "for each bucket of distances (T5, mT5, LongT5, UMT5), the key and value tables of Shaw "
    "et al.'s layer, ALiBi's slopes, RoPE's frequencies. Every value is read from the file as "
    "data, never run, and drawn at the sidebar's *n*."
)
UPLOAD_HELP = (
    f"One weights file (.safetensors, or a PyTorch state dict .pt/.pth/.bin, loaded weights-only) "
    f"of at most {MAX_UPLOAD_MB} MB, with its config.json if you have it (T5's bucket count and "
    "max distance, RoPE's base and scaling, ALiBi's heads are read from it). A larger model: run "
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


def t5_note(view: T5View, n: int) -> str:
    """Which heads are local, long-range or one-directional at this n, with each group's
    weight near r = 0, read from the bias alone."""
    seen, weights = view.weights
    near = weights[:, np.abs(seen) <= bd.LOCAL_REACH].sum(-1)
    who = "the last query" if not view.stack.bidirectional else f"query {(n - 1) // 2}"
    groups = "; ".join(
        f"{shape}: head{'s' * (len(heads) > 1)} {', '.join(map(str, heads))}"
        for shape, heads in view.groups().items()
    )
    best = int(np.argmax(near))
    return (
        f"With equal content scores, {who} of {n} gives keys within |r| <= {bd.LOCAL_REACH} "
        f"{near.min():.0%} to {near.max():.0%} of its weight from the bias alone (most: head "
        f"{best}). By shape: {groups}. Local: a near key gets at least {bd.LOCAL_RATIO:g} times "
        f"a far key's weight; one direction: at least {bd.ONE_SIDE_SHARE:.0%} of the weight off "
        "r = 0 on one side."
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
    return (
        f"{len(slopes)} heads, slopes {slopes.max():.4g} down to {slopes.min():.4g} (fixed by "
        f"the head count, never trained). At r = ±{far} the bias is {-slopes.max() * far:.3g} "
        f"in the steepest head and {-slopes.min() * far:.3g} in the flattest."
    )


def rope_note(view: RopeView, n: int) -> str:
    turns = int((view.wavelength <= n).sum())
    pairs = len(view.wavelength)
    trained = view.rope.max_positions
    within = (
        f"; {int((view.wavelength <= trained).sum())} within max_position_embeddings = {trained}"
        if trained
        else ""
    )
    scaled = f" ({view.scaling})" if view.scaling else ""
    return (
        f"{turns} of {pairs} rotary pairs complete a full turn within n = {n} positions{within}; "
        f"the slowest pair turns once every {view.wavelength.max():.4g} positions{scaled}."
    )
