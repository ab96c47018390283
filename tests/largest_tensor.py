"""Test helper: the largest allocation any aten op produces inside a ``with`` block."""

import torch
from torch.utils._python_dispatch import TorchDispatchMode


def _elements(t: torch.Tensor) -> int:
    """Elements of the memory behind ``t``: a broadcast view (``expand``) of one value is 1."""
    try:
        return t.untyped_storage().nbytes() // max(t.element_size(), 1)
    except (RuntimeError, NotImplementedError):  # a tensor without storage
        return t.numel()


class LargestTensor(TorchDispatchMode):
    """Records the largest storage, in elements, any aten op produces (factories included)."""

    def __init__(self):
        super().__init__()
        self.largest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        for t in result if isinstance(result, (tuple, list)) else (result,):
            if isinstance(t, torch.Tensor):
                self.largest = max(self.largest, _elements(t))
        return result
