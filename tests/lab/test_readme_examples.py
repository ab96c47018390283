"""The README's "Use it in your model" code runs as written and trains the relative tables."""

import math
import re
from pathlib import Path

import torch

README = Path(__file__).resolve().parents[2] / "docs" / "library.md"


def section_code(title: str) -> list[str]:
    text = README.read_text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return re.findall(r"```python\n(.*?)```", text[start:end], flags=re.S)


def test_use_it_in_your_model_runs_and_trains():
    blocks = section_code("Use it in your model")
    assert len(blocks) == 3
    namespace: dict = {}
    torch.manual_seed(0)
    exec(blocks[0], namespace)  # noqa: S102 - the README's own code
    layer, loss = namespace["layer"], namespace["loss"]
    assert math.isfinite(loss.item())
    for table in (layer.relative_position_k, layer.relative_position_v):
        assert table.embeddings_table.grad is not None
        assert table.embeddings_table.grad.abs().sum() > 0
    layer.zero_grad()
    exec(blocks[1], namespace)  # noqa: S102 - torch.compile(fullgraph=True) under autocast
    assert namespace["y"].dtype == torch.bfloat16
    assert math.isfinite(namespace["loss"].item())
    table = layer.relative_position_k.embeddings_table
    assert table.grad is not None and table.grad.dtype == torch.float32
    assert table.grad.abs().sum() > 0
    exec(blocks[2], namespace)  # noqa: S102 - includes an assert on the cached-query call
    assert namespace["z"].shape == (1, 2, 16, 8)
    assert [s.name for s in namespace["trace"].steps()][-1] == "output"


def test_family_of_schemes_example_runs():
    (block,) = section_code("The family of schemes")
    namespace: dict = {}
    torch.manual_seed(0)
    exec(block, namespace)  # noqa: S102 - the README's own code
    assert namespace["z"].shape == (1, 8, 64, 16)
    assert namespace["alpha"].shape == (1, 8, 64, 64)
    assert set(namespace["terms"]) == {"content", "bias"}
    rope, q, k = namespace["rope"], namespace["q"], namespace["k"]
    assert namespace["profile"].toeplitz_deviation > 0.1
    assert namespace["scheme_profile"](rope, q, k, position_only=True).toeplitz_deviation < 1e-5
