"""The checker's verdict on one implementation, and how it is reached.

For each case of its kind, in order (the smallest sizes and the edges first), the user's
function is called on the case's float64 inputs and its output compared with the definition,
cell by cell, on the cells that count:

    equal                                    every case, every cell, within float64 rounding
    equal up to a constant per softmax row   (bias kinds) out - definition is constant along each
                                             row: softmax over the row cancels it
    differs                                  the first case where it does not, which cells, and
                                             the known bug whose output it equals, if one does
    cannot be called                         it raised (an exit, ``SystemExit``, too), or returned
                                             the wrong shape, a dtype that is not a number, NaN
                                             or inf

A ``KeyboardInterrupt`` is not the function's answer but a person stopping the run: it passes.

A verdict is words and arrays, never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from relpos_core.check.kind import Case, Kind, describe

EQUAL = "equal"
ROW_CONSTANT = "equal up to a constant per softmax row"
DIFFERS = "differs"
CANNOT = "cannot be called"
# Rounding, not a bug, by the dtype of the output: float64 is what the inputs are; an output
# computed in a narrower type is compared within that type's rounding.
TOLERANCES = {"float64": (1e-7, 1e-9), "float32": (1e-4, 1e-5), "float16": (1e-2, 1e-3)}
SHOWN_CELLS = 5  # cells named in the verdict's words


@dataclass(frozen=True)
class Verdict:
    """What the checker found. ``text`` says it in words; on ``differs`` the failing case's
    ``expected`` and ``got`` arrays and the ``differing`` cells (bool, same shape) are kept for
    a figure."""

    kind: str
    status: str  # EQUAL, ROW_CONSTANT, DIFFERS or CANNOT
    text: str
    case: str = ""  # the case it was decided on, in words
    bug: str | None = None  # the known bug class its output equals
    convention: str | None = None  # which accepted convention it follows, when several are
    cells: tuple[tuple[int, ...], ...] = ()  # the first differing cells
    expected: np.ndarray | None = field(default=None, repr=False)
    got: np.ndarray | None = field(default=None, repr=False)
    differing: np.ndarray | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.status in (EQUAL, ROW_CONSTANT)

    @property
    def exit_code(self) -> int:
        """0 equal (or up to a row constant), 1 differs, 2 cannot be called."""
        return {EQUAL: 0, ROW_CONSTANT: 0, DIFFERS: 1}.get(self.status, 2)


def as_output(value: object) -> np.ndarray:
    """A torch tensor or numpy array returned by the user's function, as a plain numpy array
    of its own (ValueError in words for anything else). A subclass's hooks run here, inside
    the call's guard, never later in the comparison."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        if value.is_complex() or value.dtype == torch.bool:
            raise ValueError(f"it returned a {value.dtype} tensor, not real numbers")
        if value.dtype == torch.bfloat16:
            value = value.float()
        value = value.numpy() if value.is_floating_point() else value.to(torch.int64).numpy()
    elif not isinstance(value, np.ndarray):
        raise ValueError(f"it returned a {type(value).__name__}, not a torch tensor or numpy array")
    plain = np.ndarray.view(value, np.ndarray).copy()  # the base class's own methods
    if plain.dtype.kind not in "fiu":
        raise ValueError(f"it returned a numpy array of dtype {plain.dtype}, not numbers")
    return plain


def raised(error: BaseException) -> str:
    """What the user's code raised, in words: ``it raised TypeError: <its first line>``, an
    exit as the call it was. Safe against an exception whose name or message itself raises
    (a ``__str__`` that calls ``sys.exit``)."""
    try:
        name = type(error).__name__
        name = name if isinstance(name, str) else "an exception"
    except BaseException:  # the user's class: anything may come back
        name = "an exception"
    if isinstance(error, SystemExit):
        try:
            code = error.code
            code = repr(code) if code is None or isinstance(code, int | str) else "an object"
        except BaseException:
            code = "an object"
        return (
            f"it raised SystemExit (sys.exit({code[:80]})): a function under check must "
            "return its output, not end the process"
        )
    try:
        text = str(error).strip()
        text = text.splitlines()[0] if text else ""
    except BaseException:
        text = ""
    return f"it raised {name[:80]}" + (f": {text[:300]}" if text else "")


def close(got: np.ndarray, want: np.ndarray, exact: bool) -> np.ndarray:
    """Where ``got`` equals ``want``: exactly for integers, else within the rounding of the
    type ``got`` was computed in."""
    if exact:
        return got == want
    rtol, atol = TOLERANCES.get(got.dtype.name, TOLERANCES["float64"])
    return np.isclose(got.astype(np.float64), want, rtol=rtol, atol=atol)


def row_offsets_agree(got: np.ndarray, want: np.ndarray, where: np.ndarray) -> bool:
    """got - want is one constant along each row (the last axis) over the compared cells."""
    diff = np.where(where, got - want, np.nan)
    with np.errstate(all="ignore"):
        offset = np.nanmean(diff, axis=-1, keepdims=True)
    offset = np.where(np.isnan(offset), 0.0, offset)
    return bool(np.all(~where | close((got - offset).astype(got.dtype), want, exact=False)))


def matches(kind: Kind, got: np.ndarray, want: np.ndarray, where: np.ndarray) -> str | None:
    """EQUAL or ROW_CONSTANT when ``got`` is the reference ``want`` on ``where``, else None."""
    if got.shape != want.shape:
        return None
    if bool(np.all(~where | close(got, want, kind.exact))):
        return EQUAL
    if kind.row_constant and row_offsets_agree(got, want, where):
        return ROW_CONSTANT
    return None


def check(kind: Kind, fn: Callable) -> Verdict:
    """The verdict on ``fn`` as an implementation of ``kind``: every case in order, until one
    differs or cannot be called."""
    if not callable(fn):
        return Verdict(
            kind.name, CANNOT, f"cannot be called: {type(fn).__name__} is not a function"
        )
    found: list[Verdict] = []
    convention: str | None = None
    for case in kind.cases():
        inputs = kind.inputs(case)
        try:
            got = as_output(fn(*kind.arguments(case, inputs)))
        except KeyboardInterrupt:  # a person stopping the run: it stops (the command says so)
            raise
        except BaseException as error:  # the user's code: any failure, an exit or a
            return cannot(kind, case, raised(error))  # BaseException of its own, in words
        verdict = judge(kind, case, inputs, got, convention)
        if not verdict.ok:
            return verdict
        convention = verdict.convention
        found.append(verdict)
    return (
        found[-1]
        if all(v.status == EQUAL for v in found)
        else next(v for v in found if v.status == ROW_CONSTANT)
    )


def judge(
    kind: Kind, case: Case, inputs, got: np.ndarray, convention: str | None = None
) -> Verdict:
    """The verdict on one output ``got`` of ``case``'s inputs (a function's, or an uploaded
    array): equal, equal up to a constant per row, differs or cannot (shape, NaN). With
    ``convention`` only that accepted convention counts."""
    references = kind.references(case, inputs)
    if convention is not None:
        references = {convention: references[convention]}
    want = next(iter(references.values()))
    where = compared(kind, case, want.shape)
    if got.shape != want.shape:
        return cannot(
            kind, case, f"it returned shape {got.shape}, the definition's is {want.shape}"
        )
    if not kind.exact and not np.all(np.isfinite(got[where])):
        return cannot(kind, case, "it returned NaN or inf where the definition is finite")
    results = {name: matches(kind, got, ref, where) for name, ref in references.items()}
    hit = next((name for name, result in results.items() if result), None)
    if hit is None:
        return differs(kind, case, inputs, got, want, where)
    named = hit if len(references) > 1 or convention is not None else None
    text = results[hit]
    if text == ROW_CONSTANT:
        text += (
            ": its output differs from the definition by one number per row, which the softmax "
            "over that row cancels (it adds the same logit to every key of a query), so the "
            "attention weights are the same"
        )
    if named is not None:
        text += f" ({named})"
    return Verdict(
        kind.name, results[hit], text, case=describe(case), convention=named,
        expected=references[hit], got=got, differing=np.zeros(got.shape, bool),
    )  # fmt: skip


def compared(kind: Kind, case: Case, shape: tuple[int, ...]) -> np.ndarray:
    """The cells that count at this case, as a bool array of the output's shape."""
    mask = kind.compared(case)
    return np.ones(shape, bool) if mask is None else np.broadcast_to(mask, shape)


def spans(indices: np.ndarray) -> str:
    """Sorted integers as runs: ``0-2, 5``; a run from a negative number ``-3 to -1``."""
    values = sorted({int(i) for i in indices})
    runs: list[list[int]] = []
    for value in values:
        if runs and value == runs[-1][1] + 1:
            runs[-1][1] = value
        else:
            runs.append([value, value])
    return ", ".join(str(a) if a == b else f"{a} to {b}" if a < 0 else f"{a}-{b}" for a, b in runs)


def located(kind: Kind, bad: np.ndarray) -> str:
    """Where the differing cells are, axis by axis in the kind's words, with the distances
    j - i when the last two axes are query and key (a wrong diagonal shows as one distance)."""
    found = np.argwhere(bad)
    if not kind.axes or len(kind.axes) != bad.ndim:
        return "at " + ", ".join(str(tuple(int(i) for i in c)) for c in found[:SHOWN_CELLS])
    parts = [f"{axis} {spans(found[:, a])}" for a, axis in enumerate(kind.axes) if bad.shape[a] > 1]
    if kind.axes[-2:] == ("query", "key"):
        parts.append(f"distances j - i = {spans(found[:, -1] - found[:, -2])}")
    return "in " + "; ".join(parts)


def cannot(kind: Kind, case: Case, why: str) -> Verdict:
    where = describe(case)
    return Verdict(kind.name, CANNOT, f"cannot be called at {where}: {why}", case=where)


def differs(kind, case, inputs, got, want, where) -> Verdict:
    """The verdict on the first failing case: where, and which known bug it equals."""
    bad = where & ~close(got, want, kind.exact)
    cells = tuple(tuple(int(i) for i in index) for index in np.argwhere(bad)[:SHOWN_CELLS])
    bug = next(
        (
            name
            for name, wrong in kind.bugs.items()
            if matches(kind, got, np.asarray(wrong(case, inputs)), where)
        ),
        None,
    )
    count = int(bad.sum())
    total = int(where.sum())
    text = (
        f"differs at {describe(case)}: {count} of {total} compared cells, {located(kind, bad)}"
        + (f"; it matches a known bug: {bug}" if bug else "; it matches no known bug")
    )
    return Verdict(
        kind.name, DIFFERS, text, case=describe(case), bug=bug, cells=cells,
        expected=want, got=got, differing=bad,
    )  # fmt: skip
