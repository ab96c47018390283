"""The Position schemes page's tables, as markdown: which schemes are functions of j - i (and
what their logits cost), and what each does beyond the distances a training length holds."""

from __future__ import annotations

from explorer.figures.draw import bytes_text
from explorer.figures.tables import markdown_table
from explorer.frame.params import ViewParams
from explorer.stories.family.profiles import ProfileView
from explorer.stories.family.settings import FamilySettings
from relpos_core.schemes.catalogue import scheme_entries, scheme_label


def _verdict(ok: bool) -> str:
    return "yes" if ok else "no"


def toeplitz_table(profiles: dict[str, ProfileView], picked: str, n: int) -> str:
    """One row per scheme that runs here (the ``picked`` one in bold): is its term Toeplitz
    with content and position only, how far from it, and its logits' memory at ``n``."""
    shown = tuple(profiles)
    rows = [profiles[s] for s in shown]
    columns = {
        "scheme": [scheme_label(s) for s in shown],
        "with content": [_verdict(p.toeplitz()) for p in rows],
        "max deviation": [f"{p.deviation:.2g}" for p in rows],
        "position only": [_verdict(p.toeplitz(True)) for p in rows],
        "max deviation (position only)": [f"{p.deviation_position:.2g}" for p in rows],
        f"logits memory at n = {n}": [bytes_text(p.logit_bytes) for p in rows],
    }
    return markdown_table(columns, bold_row=shown.index(picked) if picked in profiles else None)


def beyond_table(settings: FamilySettings, params: ViewParams) -> str:
    """What every scheme does past the trained distances, with its settings on this view."""
    entries = scheme_entries()
    return markdown_table(
        {
            "scheme": [e.label for e in entries],
            "beyond the trained distances": [e.extrapolation for e in entries],
            "settings": [settings.config(e.name, params).text or "(none)" for e in entries],
        }
    )
