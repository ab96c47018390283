"""The family, trained: one small causal character model per position scheme, on real text.

    python -m relpos_lab.family train [NAME ...]    train, store checkpoints and results.json
    python -m relpos_lab.family eval NAME --length L    bits per character, computed afresh
    python -m relpos_lab.family table [--check docs/experiments.md]   the README's tables

``load(name)`` gives a shipped model in eval mode, offline, from a clean clone; ``results()``
the shipped ``results.json``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

# The models' code loads torch; it is imported with the first model loaded, so that reading the
# corpus (relpos_lab.family.corpus) does not load it.
if TYPE_CHECKING:
    from relpos_lab.family.corpus import Vocabulary
    from relpos_lab.family.model import CharLM

FAMILY_DIR = Path(__file__).resolve().parent / "checkpoints"
RESULTS_FILE = FAMILY_DIR / "results.json"


def checkpoint_path(name: str) -> Path:
    from relpos_lab.family.registry import model_names

    if name not in model_names():
        raise ValueError(f"model must be one of {', '.join(model_names())}; got {name!r}")
    return FAMILY_DIR / f"{name}.pt"


def load(name: str) -> CharLM:
    """The shipped model ``name`` in float32 and eval mode."""
    return load_with_vocabulary(name)[0]


def load_with_vocabulary(name: str) -> tuple[CharLM, Vocabulary]:
    path = checkpoint_path(name)
    if not path.exists():
        raise FileNotFoundError(f"no shipped checkpoint for {name!r} at {path}")
    from relpos_lab.family.train import load_checkpoint

    model, vocabulary, _ = load_checkpoint(path)
    return model, vocabulary


@cache
def _results_text() -> str:
    return RESULTS_FILE.read_text()


def results() -> dict[str, Any]:
    """The shipped results.json (a fresh copy)."""
    return json.loads(_results_text())


__all__ = [
    "FAMILY_DIR",
    "RESULTS_FILE",
    "checkpoint_path",
    "load",
    "results",
]
