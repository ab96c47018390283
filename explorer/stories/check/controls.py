"""The Check page's own controls beyond the kind: an input of a kind's own that no sidebar
control gives (ALiBi's head count: the sidebar's heads are powers of two, where ALiBi's slope
rule for other counts never shows), as the kind declares it in its scheme's folder."""

from __future__ import annotations

from explorer.frame.widgets import choice
from relpos_core.check import KINDS


def own_value(kind: str) -> int | None:
    """The value of ``kind``'s own control (at its URL key), drawn only for a kind that has
    one; None for the others."""
    control = KINDS[kind].control
    if control is None:
        return None
    return choice(
        control.label,
        list(control.choices),
        control.url_key,
        default=control.default,
        help=control.help,
    )
