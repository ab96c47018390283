"""Whose positions the page draws: the family's T5 and Shaw models, a visitor's upload, or a
model on the Hub.

An upload is read as data (relpos_lab.extract: a safetensors header and slices, or a weights-only
state dict), once per file, and kept in the visitor's own session: no cache another visitor can
reach holds it. A refused file is remembered there too, by its name, size and SHA-256, so no
rerun (and no second upload of the same bytes) reads it again. A Hub model is public: what was
read of it is kept in a cache every visitor shares (the last 16 names; a failure is not kept), so
a shared link draws without reading the Hub again.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

import streamlit as st

from explorer.frame.memory import cached
from relpos_lab.extract import MAX_UPLOAD_MB, FileProblem, Positions, from_path, from_upload
from relpos_lab.extract.hub import from_hub
from relpos_lab.extract.sources import shown
from relpos_lab.family import checkpoint_path
from relpos_lab.family.registry import describe, model_words

FAMILY = "the family's T5 and Shaw"
UPLOAD = "your upload"
HUB = "a Hub model"
SOURCES = (FAMILY, UPLOAD, HUB)
FAMILY_MODELS = ("t5", "shaw")
__all__ = ["MAX_UPLOAD_MB", "SOURCES", "pick"]
SESSION_KEY = "your_model_read"  # (file ids, Positions or the problem) of this session's upload
REFUSED_KEY = "your_model_refused"  # {(name, size, sha256) of each file: the problem}
REFUSED_KEPT = 16
LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class Picked:
    """What the page draws and where it came from; ``problem`` when the visitor's own source
    could not be read (the family's models are drawn instead)."""

    positions: Positions
    origin: str  # FAMILY, UPLOAD or HUB: what is drawn, after any fallback
    problem: str = ""
    received: int = 0  # bytes read from the Hub


@cached(1)
def family_positions() -> Positions:
    """The family's trained T5 and Shaw models, read by the same extractor as any upload."""
    t5, shaw = (from_path(checkpoint_path(name)) for name in FAMILY_MODELS)
    words = " and ".join(f"{model_words(name)} ({describe(name)})" for name in FAMILY_MODELS)
    return Positions(f"the family's trained models, {words}", t5=t5.t5, shaw=shaw.shaw)


def identity(files: list) -> tuple:
    """What the files are, whatever upload brought them: name, size and SHA-256 of each."""
    return tuple((shown(f.name), f.size, hashlib.sha256(f.getbuffer()).hexdigest()) for f in files)


def read_upload(files: list) -> Positions | str:
    """The positions in ``files``, or why they cannot be read, in words."""
    try:
        return from_upload([(f.name, f.getvalue()) for f in files])
    except FileProblem as problem:
        return str(problem)
    except RecursionError:
        return "it nests containers deeper than can be read"
    except MemoryError:
        return "reading it would take more memory than this server has free"
    except Exception:  # a case no check foresaw: the log has it, the visitor a sentence
        LOG.exception("an upload could not be read")
        return "it could not be read as a checkpoint (the server's log has the details)"


def uploaded_positions(files: list) -> Positions:
    """The positions in this session's uploaded files (FileProblem when they cannot be read)."""
    ids = tuple(f.file_id for f in files)
    kept = st.session_state.get(SESSION_KEY)
    if kept is None or kept[0] != ids:
        key = identity(files)
        refused = st.session_state.setdefault(REFUSED_KEY, {})
        read = refused.get(key)
        if read is None:
            read = read_upload(files)
            if isinstance(read, str):
                refused[key] = read
                while len(refused) > REFUSED_KEPT:
                    del refused[next(iter(refused))]
        kept = st.session_state[SESSION_KEY] = (ids, read)
    if isinstance(kept[1], str):
        raise FileProblem(kept[1])
    return kept[1]


@cached(16)
def hub_positions(name: str) -> tuple[Positions, int]:
    """Hub model ``name``'s positions and the bytes read (FileProblem, never cached, when the
    Hub cannot be reached or refuses)."""
    return from_hub(name)


def printable(text: str) -> str:
    """A visitor's text as a message quotes it: printable, at most 100 characters."""
    return "".join(c if c.isprintable() else "?" for c in text[:100])


def pick(origin: str, files: list, hub_name: str) -> Picked:
    """The positions to draw for the picked source."""
    family = family_positions()
    if origin == UPLOAD and files:
        try:
            found = uploaded_positions(files)
        except FileProblem as problem:
            return Picked(family, FAMILY, f"Your upload could not be read: {problem}")
        if found.empty:
            return Picked(family, FAMILY, nothing_found(found.source))
        return Picked(found, UPLOAD)
    if origin == HUB and hub_name:
        try:
            found, received = hub_positions(hub_name.strip())
        except FileProblem as problem:
            return Picked(family, FAMILY, f"{printable(hub_name.strip())}: {problem}")
        except Exception:  # a case no check foresaw: the log has it, the visitor a sentence
            LOG.exception("a Hub model could not be read")
            words = "could not be read from the Hub (the server's log has the details)"
            return Picked(family, FAMILY, f"{printable(hub_name.strip())}: {words}")
        if found.empty:
            return Picked(family, FAMILY, nothing_found(found.source), received)
        return Picked(found, HUB, received=received)
    return Picked(family, FAMILY)


def nothing_found(source: str) -> str:
    from relpos_lab.extract import looked_for

    return f"{source} holds no position parameters this page reads. Looked for: " + "; ".join(
        looked_for()
    )
