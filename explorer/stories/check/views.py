"""The Check page's views: the definition's output on the page's inputs (cached, shared), and
the checker's verdict on a visitor's uploaded output (not cached: it is theirs alone).

Both go through ``relpos_core.check``: the reference is the kind's own definition and the
verdict the same ``judge`` the library's ``check_implementation`` and the command give.
"""

from __future__ import annotations

import io
from collections.abc import MutableMapping
from dataclasses import dataclass

import numpy as np

from explorer.frame.memory import cached
from explorer.frame.params import ViewParams
from explorer.stories.check.inputs import PageInputs, page_inputs
from explorer.stories.check.upload import UploadProblem, read_upload
from relpos_core.check import KINDS, Verdict
from relpos_core.check.verdict import judge


@dataclass(frozen=True)
class Reference:
    """A kind's inputs on this view and the definition's output on them (the first accepted
    convention where several are right), with the cells that are compared."""

    inputs: PageInputs
    output: np.ndarray
    compared: np.ndarray  # bool, the output's shape
    convention: str  # which convention the output follows ("" when only one is right)


@cached(8)
def reference(kind: str, params: ViewParams, own: int | None = None) -> Reference:
    """The definition's output for ``kind`` on this view's inputs (``own``: the value of the
    kind's own control, its default when None)."""
    inputs = page_inputs(kind, params, own)
    references = KINDS[kind].references(inputs.case_dict, inputs.tensors())
    convention, output = next(iter(references.items()))
    mask = KINDS[kind].compared(inputs.case_dict)
    compared = np.ones(output.shape, bool) if mask is None else np.broadcast_to(mask, output.shape)
    return Reference(
        inputs, np.asarray(output), np.array(compared), convention if len(references) > 1 else ""
    )


def inputs_file(ref: Reference) -> bytes:
    """The page's inputs as one .npz: each tensor argument under its name."""
    buffer = io.BytesIO()
    np.savez(buffer, **dict(ref.inputs.arrays))
    return buffer.getvalue()


def verdict_on_upload(
    kind: str, params: ViewParams, name: str, data: bytes, own: int | None = None
) -> Verdict:
    """The checker's verdict on an uploaded output (UploadProblem for a file it cannot read)."""
    ref = reference(kind, params, own)
    got = read_upload(name, data)
    return judge(KINDS[kind], ref.inputs.case_dict, ref.inputs.tensors(), got)


def remembered_verdict(
    memo: MutableMapping,
    file_id: str,
    kind: str,
    params: ViewParams,
    name: str,
    data: bytes,
    own: int | None = None,
) -> Verdict | str:
    """The verdict on an upload, or why it cannot be read (in words), kept in ``memo`` (the
    visitor's session) for this file and view: a rerun (another head, a pick) neither reads
    nor judges the file again, a refused one included."""
    key = (file_id, kind, params, own)
    if memo.get("key") != key:
        try:
            result: Verdict | str = verdict_on_upload(kind, params, name, data, own)
        except UploadProblem as problem:
            result = str(problem)
        memo.clear()
        memo.update(key=key, result=result)
    return memo["result"]
