"""The pinned corpus: real English prose and code examples, the same on every machine.

The text is the Python language reference's help topics as CPython 3.11.7 ships them
(``pydoc_data.topics``), stored compressed beside this package with its licence notice
(``relpos_lab/corpus/NOTICE.txt``) and checked against its sha256 when read. It is split once,
at the first line break after 90% of the characters: the training part before it, the
held-out part after it (whole topics, never seen in training).

Characters are the tokens. The vocabulary is every distinct character of the training part,
in code-point order, from id 1; id 0 stands for any character outside it, so any text a user
types maps to ids.
"""

from __future__ import annotations

import hashlib
import lzma
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the text is read without torch (the explorer's landing page labels its axes)
    import torch

CORPUS_DIR = Path(__file__).resolve().parent.parent / "corpus"
CORPUS_FILE = "python-3.11.7-topics.txt.xz"
CORPUS_NAME = "Python 3.11.7 language reference help topics (pydoc_data.topics)"
CORPUS_SHA256 = "71f2ff5d99bdc1f9c48c5c2353ad138201c5ca1c377e0226857ef8fa89b8bcee"
CORPUS_CHARS = 465126
TRAIN_FRACTION = 0.9
UNKNOWN = 0  # the id of every character outside the vocabulary


@cache
def corpus_text() -> str:
    """The whole corpus, verified against its sha256."""
    raw = lzma.decompress((CORPUS_DIR / CORPUS_FILE).read_bytes())
    digest = hashlib.sha256(raw).hexdigest()
    if digest != CORPUS_SHA256:
        raise RuntimeError(
            f"{CORPUS_FILE} has sha256 {digest}, expected {CORPUS_SHA256}: the corpus changed"
        )
    return raw.decode("utf-8")


@cache
def split_point() -> int:
    """Index of the first held-out character: just after the first line break past 90%."""
    text = corpus_text()
    return text.index("\n", int(len(text) * TRAIN_FRACTION)) + 1


def train_text() -> str:
    return corpus_text()[: split_point()]


def held_out_text() -> str:
    return corpus_text()[split_point() :]


@dataclass(frozen=True)
class Vocabulary:
    """Characters <-> ids; id 0 is the unknown character."""

    chars: str  # id c + 1 is chars[c]

    @property
    def size(self) -> int:
        return len(self.chars) + 1

    def encode(self, text: str) -> torch.Tensor:
        """(len(text),) long ids; a character outside the vocabulary gets ``UNKNOWN``.

        >>> Vocabulary("ab").encode("abc")
        tensor([1, 2, 0])
        """
        import torch

        index = {c: i + 1 for i, c in enumerate(self.chars)}
        return torch.tensor([index.get(c, UNKNOWN) for c in text], dtype=torch.long)

    def decode(self, ids) -> str:
        """Text for ids; the unknown id reads as U+FFFD.

        >>> Vocabulary("ab").decode([2, 1, 0])
        'ba\\ufffd'
        """
        return "".join(self.chars[i - 1] if i > 0 else "\ufffd" for i in map(int, ids))


@cache
def corpus_vocabulary() -> Vocabulary:
    """Every distinct character of the training part, in code-point order."""
    return Vocabulary("".join(sorted(set(train_text()))))


@cache
def train_ids() -> torch.Tensor:
    return corpus_vocabulary().encode(train_text())


@cache
def held_out_ids() -> torch.Tensor:
    return corpus_vocabulary().encode(held_out_text())
