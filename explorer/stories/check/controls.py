"""The Check page's own controls beyond the kind: ALiBi's head count, the one input of a kind
that no sidebar control gives (the sidebar's heads are powers of two, where ALiBi's slope rule
for other counts never shows)."""

from __future__ import annotations

from explorer.frame.widgets import choice
from explorer.stories.check.inputs import ALIBI_HEADS, ALIBI_HEADS_DEFAULT


def alibi_heads(kind: str) -> int:
    """ALiBi's head count (URL key ``check_alibi_heads``), drawn only for that kind."""
    if kind != "alibi":
        return ALIBI_HEADS_DEFAULT
    return choice(
        "heads (H in m_h = 2^(-8h/H))",
        list(ALIBI_HEADS),
        "check_alibi_heads",
        default=ALIBI_HEADS_DEFAULT,
        help="Not a power of two by default: the paper's slopes then take the closest power "
        "of two's, then every other slope of twice that, which is where implementations differ.",
    )
