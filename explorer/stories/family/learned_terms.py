"""What each trained scheme learned: its position term against the distance j - i, per layer
and head, on held-out text four times the training length, so the distances no training window
held are drawn beside the ones it did.

Two readings of one term t_ij (logit units, 1/sqrt(d) applied, causal: j <= i):
    position only   q and k replaced by their mean over the text (relpos_core's content_free):
                    a function of j - i alone, the distance preference the scheme learned
    on the text     the mean of t_ij over every cell of the text at that distance: what the
                    position term adds on average, content included
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explorer.frame.memory import cached
from explorer.weights.reading import held_out_passage
from explorer.weights.trained import attention_inputs, model_scheme
from relpos_core.schemes import content_free, distance_profile
from relpos_core.schemes.catalogue import scheme_entry
from relpos_lab.family import results

# s schemes · l layers · h heads · m distances j - i = -(L-1)..0

LENGTH = 256  # characters read: four times the training length


@dataclass(frozen=True)
class LearnedTerms:
    distance: np.ndarray  # (m,) j - i, -(LENGTH-1)..0
    schemes: tuple[str, ...]  # the trained schemes, in catalogue order
    models: tuple[str, ...]  # the family model drawn for each
    position_only: np.ndarray  # (s, l, h, m)
    on_text: np.ndarray  # (s, l, h, m)
    context: int  # the training length: distances beyond -(context - 1) were never seen

    def curves(self, part: str, layer: int) -> dict[str, np.ndarray]:
        """scheme -> (h, m) of ``part`` ("position only" or "on the text") at ``layer``."""
        data = self.position_only if part == "position only" else self.on_text
        return {name: data[s, layer] for s, name in enumerate(self.schemes)}

    def titled_curves(self, part: str, layer: int, k: int) -> dict[str, np.ndarray]:
        """:meth:`curves` under each scheme's chart title (with the clip distance k where a
        scheme's setting is the sidebar's k, as Shaw's)."""
        return {
            scheme_entry(s).label + (f", k = {k}" if scheme_entry(s).from_view("k") else ""): c
            for s, c in self.curves(part, layer).items()
        }


def _terms(name: str, text: str) -> tuple[np.ndarray, np.ndarray]:
    """(position only, on the text) of model ``name``, each (l, h, m)."""
    qkv = attention_inputs(name, text)  # (l, 3, h, n, d); only the result is kept
    n = qkv.shape[-2]
    free, mean = [], []
    with torch.no_grad():
        for layer, (q, k, _) in enumerate(qkv[:, :, None]):  # each (1, h, n, d)
            scheme = model_scheme(name, layer)
            last = scheme.position_term(  # the last query row holds every distance -(n-1)..0
                content_free(q)[:, :, -1:], content_free(k), causal=True, query_offset=n - 1
            )
            free.append(last[0, :, 0].numpy())
            term = scheme.position_term(q, k, causal=True)
            mean.append(distance_profile(term, causal=True).mean[0, :, :n].numpy())
    return np.stack(free), np.stack(mean)


@cached(4)
def learned_terms(scheme_models: tuple[tuple[str, str], ...]) -> LearnedTerms:
    """The learned term of each (scheme, family model) pair (``TensorSource.scheme_models``)."""
    text = held_out_passage()[:LENGTH]
    schemes, models = zip(*scheme_models, strict=True)
    free, on_text = zip(*(_terms(name, text) for name in models), strict=True)
    return LearnedTerms(
        distance=np.arange(-(len(text) - 1), 1),
        schemes=schemes,
        models=models,
        position_only=np.stack(free).astype(np.float32),
        on_text=np.stack(on_text).astype(np.float32),
        context=int(results()["training"]["context"]),
    )
