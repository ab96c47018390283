"""The arrays of the parts of a view that rerun alone, for the view's one download.

A part of a page inside an ``st.fragment`` reruns without the page when its own controls move
(Lookup's a^K channel, a tensor2tensor step, the profile chart's curves), while the page's
download button, drawn by the full run, keeps the arrays it was given then. Such a part hands
what it draws to :func:`download_part` instead; the button reads :func:`parts_of_this_view`
when clicked, so the zip holds what each part shows at that moment.

The record lives in the session state until the next full run replaces it (app.py calls
:func:`start_parts` before the page runs), as the chart list of explorer.frame.offline_view.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import streamlit as st

from explorer.frame.csv_tables import Labelled

PARTS_STATE_KEY = "_view_download_parts"

Arrays = Mapping[str, Labelled | np.ndarray]


def start_parts() -> None:
    """Begin the record of a full run's parts (app.py calls this before the page runs).

    The previous view's parts are dropped here; its download button keeps its own reference.
    """
    st.session_state[PARTS_STATE_KEY] = {}


def parts_of_this_view() -> dict[str, Arrays]:
    """Part name -> the arrays it draws now (the same dict for the whole view)."""
    return st.session_state.setdefault(PARTS_STATE_KEY, {})


def download_part(part: str, arrays: Arrays) -> None:
    """Put the arrays one part of the view draws in the view's download. The part's next run
    replaces them; a part that draws nothing passes ``{}``."""
    parts_of_this_view()[part] = dict(arrays)


def with_parts(arrays: Arrays, parts: Mapping[str, Arrays] | None) -> dict[str, object]:
    """The page's arrays, then each part's. One copy of the parts: a fragment's rerun may
    replace one while the zip is written."""
    merged = dict(arrays)
    for part in list((parts or {}).values()):
        merged.update(part)
    return merged
