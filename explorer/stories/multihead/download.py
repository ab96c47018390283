"""What the Multi-head and masks page's download holds: every array it draws, with its axes
named, and what params.json records about the page's controls and its weights."""

from __future__ import annotations

import numpy as np

from explorer.frame.downloads import Labelled, position_labels
from explorer.frame.params import ViewParams
from explorer.stories.multihead.masks import MaskView
from explorer.stories.multihead.views import TRAINED_MODEL, MultiHeadView
from explorer.weights.source import TensorSource


def arrays(
    view: MultiHeadView, masks: MaskView, kind: str, params: ViewParams
) -> dict[str, Labelled]:
    """Name -> array of the multi-head view (its query rows and drawn keys) and of the masks."""
    positions = position_labels(params, 0, view.cols)
    query_rows = positions[: view.rows]
    ids = [str(t) for t in masks.tokens]
    channels = {"corner": "position \\ channel"}
    pairs = {"rows": query_rows, "cols": positions, "corner": "query i \\ key j"}
    token_pairs = {"rows": ids, "cols": ids, "corner": "query token id \\ key token id"}
    return {
        "x": Labelled(view.x, "the input rows drawn", rows=query_rows, **channels),
        "q": Labelled(view.q, "Q = x W^Q + b^Q", rows=query_rows, **channels),
        "k": Labelled(view.k, "K = x W^K + b^K", rows=positions, **channels),
        "v": Labelled(view.v, "V = x W^V + b^V", rows=positions, **channels),
        "q_heads": Labelled(
            view.q_heads, "Q split into heads", rows=query_rows, split="head", **channels
        ),
        "k_heads": Labelled(
            view.k_heads, "K split into heads", rows=positions, split="head", **channels
        ),
        "v_heads": Labelled(
            view.v_heads, "V split into heads", rows=positions, split="head", **channels
        ),
        "weights": Labelled(
            np.where(view.hidden, np.nan, view.weights),
            "alpha per head, hidden cells empty",
            split="head",
            **pairs,
        ),
        "head_outputs": Labelled(
            view.head_outputs, "head_m = alpha V_m", rows=query_rows, split="head", **channels
        ),
        "concat": Labelled(view.concat, "Concat(heads)", rows=query_rows, **channels),
        "output": Labelled(view.output, "Concat W^O + b^O", rows=query_rows, **channels),
        "mask_padding": Labelled(
            np.broadcast_to(masks.padding, masks.mask.shape),
            "1 = hidden key (token id 0): create_padding_mask's one row (1, 1, 1, n), "
            "broadcast over the queries as drawn and as the softmax sees it",
            **token_pairs,
        ),
        "mask_look_ahead": Labelled(masks.look_ahead, "1 = hidden (j > i)", **token_pairs),
        "mask_applied": Labelled(masks.mask, f"{kind}, 1 = hidden", **token_pairs),
        "mask_logits": Labelled(masks.logits, "q.k / sqrt(d), before the mask", **token_pairs),
        "mask_logits_masked": Labelled(
            np.where(masks.hidden, np.nan, masks.logits),
            "mask_logits with the mask applied: hidden cells empty (-inf before the softmax)",
            **token_pairs,
        ),
        "mask_weights": Labelled(
            masks.weights, "softmax over visible keys, 0 where hidden", **token_pairs
        ),
    }


def extra(
    split_of: str, kind: str, masks: MaskView, view: MultiHeadView, source: TensorSource
) -> dict:
    """The page's own controls, then (trained weights) the model and the characters it read."""
    record = {
        "multihead_split": split_of,
        "multihead_mask": kind,
        "multihead_tokens": " ".join(str(t) for t in masks.tokens),
    }
    if source.trained:
        record.update(_model=TRAINED_MODEL, _characters=(source.text() or "")[: view.rows])
    return record
