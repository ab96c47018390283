"""FlexAttention's ``score_mod`` and ``mask_mod`` as data: the source, what it closes over, and
the function built from exactly that source.

    score_mod(score, b, h, q_idx, kv_idx) -> the logit: score = q_i · k_j · scale, plus a bias
    mask_mod(b, h, q_idx, kv_idx) -> bool: may query q_idx attend to key kv_idx

A :class:`Mod` holds the Python source of one such function, by ``name``, and the tensors it
reads as globals (``closes_over``: ALiBi's slopes, T5's bucket table, a precomputed q · w^K).
``fn`` is compiled from that source with those tensors, so what runs in the tests is what the
explorer prints and puts in a download, character for character. The source may use ``torch``
and the names of ``closes_over``; nothing else.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import torch

KINDS = ("score_mod", "mask_mod")


@dataclass(frozen=True)
class Mod:
    """One FlexAttention modification: its ``kind``, the function ``name`` and ``source``, the
    tensors it reads (``closes_over``, by the names the source uses) and words for people."""

    kind: str
    name: str
    source: str
    closes_over: Mapping[str, torch.Tensor] = field(default_factory=dict)
    words: str = ""
    scale: float | None = None  # a score_mod's softmax scale (None: FlexAttention's 1/sqrt(d))

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if not self.name.isidentifier():
            raise ValueError(f"name must be a Python identifier, got {self.name!r}")
        for key, value in self.closes_over.items():
            if not key.isidentifier() or not isinstance(value, torch.Tensor):
                raise ValueError(f"closes_over must map identifiers to tensors, got {key!r}")
        object.__setattr__(self, "source", textwrap.dedent(self.source).strip() + "\n")
        object.__setattr__(self, "closes_over", MappingProxyType(dict(self.closes_over)))

    @property
    def fn(self) -> Callable[..., torch.Tensor]:
        """The function compiled from ``source``, reading ``closes_over`` as its globals."""
        return compiled(self.source, self.name, self.closes_over)


def compiled(
    source: str, name: str, tensors: Mapping[str, torch.Tensor]
) -> Callable[..., torch.Tensor]:
    """Function ``name`` defined by ``source``, with ``torch`` and ``tensors`` as its globals.

    The source is this library's own (the scheme folders' and the masks' templates filled with
    numbers), never a visitor's text.

    >>> f = compiled("def add(score, b, h, q, kv):\\n    return score + bias[h]", "add",
    ...              {"bias": torch.tensor([1.0, 2.0])})
    >>> f(torch.tensor(0.5), 0, 1, 0, 0)
    tensor(2.5000)
    """
    namespace: dict[str, object] = {"torch": torch, **tensors}
    exec(compile(source, f"<{name}>", "exec"), namespace)  # noqa: S102 - the library's own source
    return namespace[name]  # type: ignore[return-value]
