"""The words a learner meets, as data: each term, how a page writes it, the page that defines it
and the words that define it there.

A route (``explorer.frame.routes``) must define a term before any page of it uses one, or the
page must explain it where it is used (its ``gloss``); ``tests/app/test_routes.py`` walks every
route and holds both. Symbols (n, k, d, ...) are the sidebar's glossary (``glossary.py``), drawn
on every page; this module is for words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    name: str
    uses: str  # a regular expression (case-insensitive) for the term as pages write it
    defined_on: str  # the page (file stem) whose text defines it
    definition: str  # a regular expression for the defining words on that page
    gloss: str = ""  # a regular expression for a short explanation beside a use, on any page

    def used_in(self, text: str) -> bool:
        return re.search(self.uses, text, re.IGNORECASE) is not None

    def defined_in(self, text: str) -> bool:
        return re.search(self.definition, text, re.IGNORECASE) is not None

    def glossed_in(self, text: str) -> bool:
        return bool(self.gloss) and re.search(self.gloss, text, re.IGNORECASE) is not None


TERMS = (
    Term(
        "the family",
        r"\bthe family\b|\bfamily's\b|\bfamily models?\b",
        "overview",
        r"\*\*the family\*\*: six published position schemes",
        gloss=r"the family \(small causal character models, one per position scheme",
    ),
    Term(
        "causal",
        r"\bcausal\b",
        "overview",
        r"\*\*causal\*\* attention: query \$i\$ sees only the keys \$j \\?le i\$",
        gloss=r"causal[^.]*(sees? (only )?(the )?keys j <= i|hides every key ahead|sees only the "
        r"characters before it)",
    ),
    Term(
        "E_r",
        r"\$?E_r\b|\bEr\b",
        "overview",
        r"one embedding per distance as the rows of a matrix \$E_r\$",
    ),
    Term(
        "skew",
        r"\bskew",
        "overview",
        r"The \*\*skew\*\* instead stacks",
    ),
    Term(
        "bits per character",
        r"bits per character",
        "absolute",
        r"\*\*bits per character\*\*",
        gloss=r"bits per character \(the average",
    ),
    Term(
        "tensor2tensor",
        r"tensor2tensor",
        "logits",
        r"\*\*tensor2tensor\*\*, the library",
        gloss=r"tensor2tensor \(the library",
    ),
    Term(
        "the methods' names",
        r"\bbanded\b|\bbucket (method|gather)|\bmaterialized a\^K",
        "logits",
        r"\*banded\*: only the 2k \+ 1 diagonals",
    ),
    Term(
        "rel_shift",
        r"rel_shift",
        "rel_shift",
        r"Transformer-XL's \*\*rel_shift\*\*",
        gloss=r"rel_shift \(Transformer-XL's",
    ),
    Term(
        "score_mod",
        r"\bscore_mods?\b",
        "flex",
        r"A \*\*score_mod\*\* is a function",
    ),
    Term(
        "mask_mod",
        r"\bmask_mods?\b",
        "flex",
        r"A \*\*mask_mod\*\* is a function",
    ),
    Term(
        "BlockMask",
        r"\bBlockMask",
        "flex",
        r"A \*\*BlockMask\*\* is the mask read in tiles",
    ),
)
