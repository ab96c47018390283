"""Frozen traces: the named intermediate tensors of one computation, in paper order."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Step:
    """One named intermediate: what it is, its formula, and the tensor."""

    name: str
    formula: str
    value: torch.Tensor

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.value.shape)


class Trace:
    """Mixin for frozen dataclasses whose tensor fields are steps of a computation.

    Subclasses list ``FORMULAS`` (field name -> formula) in the order the steps happen; a
    tensor field not listed there (such as a mask of where a step is valid) is not a step.
    """

    FORMULAS: dict[str, str] = {}

    def steps(self) -> tuple[Step, ...]:
        out = []
        for field in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, field.name)
            if isinstance(value, torch.Tensor) and field.name in self.FORMULAS:
                out.append(Step(field.name, self.FORMULAS.get(field.name, ""), value))
        return tuple(out)
