"""How many bytes a Hub fetch of a model's positions reads, against the checkpoint's size.

    PYTHONPATH=. python scripts/measure_hub_read.py [--out /tmp/hub]

Writes a model.safetensors with the exact tensor names and shapes of t5-small (transformers'
T5ForConditionalGeneration with t5-small's config, built on the meta device; the tied embeddings
stored once, as save_pretrained does) as a sparse file of that full size, serves it on loopback
with range requests, runs the page's Hub reader against it and prints a table: the file's size,
the bytes received, and what they were.
"""

from __future__ import annotations

import argparse
import json
import math
import struct
import sys
import tempfile
from pathlib import Path

import numpy as np

T5_SMALL = {  # t5-small's config.json, the keys that shape its tensors
    "model_type": "t5", "d_model": 512, "d_ff": 2048, "d_kv": 64, "num_heads": 8,
    "num_layers": 6, "num_decoder_layers": 6, "vocab_size": 32128,
    "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128,
}  # fmt: skip
TIED = ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight", "lm_head.weight")


def t5_small_shapes() -> dict[str, tuple[int, ...]]:
    import torch
    import transformers

    config = transformers.T5Config(**{k: v for k, v in T5_SMALL.items() if k != "model_type"})
    with torch.device("meta"):
        model = transformers.T5ForConditionalGeneration(config)
    return {n: tuple(t.shape) for n, t in model.state_dict().items() if n not in TIED}


def write_layout(folder: Path, seed: int = 0) -> dict[str, np.ndarray]:
    """model.safetensors (sparse, full size) and config.json of t5-small's layout in
    ``folder``; returns the position tensors written into it (random, float32)."""
    folder.mkdir(parents=True, exist_ok=True)
    shapes = t5_small_shapes()
    header, offset = {}, 0
    for name, shape in shapes.items():
        size = 4 * math.prod(shape)
        header[name] = {
            "dtype": "F32",
            "shape": list(shape),
            "data_offsets": [offset, offset + size],
        }
        offset += size
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    base = 8 + len(text)
    rng = np.random.default_rng(seed)
    written = {}
    with (folder / "model.safetensors").open("wb") as handle:
        handle.write(struct.pack("<Q", len(text)) + text)
        handle.truncate(base + offset)  # sparse: the weights' bytes are never written
        for name, info in header.items():
            if name.endswith("relative_attention_bias.weight"):
                written[name] = rng.standard_normal(info["shape"]).astype(np.float32)
                handle.seek(base + info["data_offsets"][0])
                handle.write(written[name].tobytes())
    (folder / "config.json").write_text(json.dumps(T5_SMALL))
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "lab"))
    from ranged_server import RangedServer

    from relpos_lab.extract.hub import from_hub

    root = args.out or Path(tempfile.mkdtemp())
    write_layout(root / "acme" / "t5-small-layout")
    server = RangedServer(root)
    try:
        positions, received = from_hub("acme/t5-small-layout", host=server.url)
    finally:
        server.close()
    size = (root / "acme" / "t5-small-layout" / "model.safetensors").stat().st_size
    print("| file | size | received | share | found |")
    print("|---|---|---|---|---|")
    print(f"| t5-small layout model.safetensors | {size:,} B | {received:,} B | "
          f"{received / size:.5%} | {len(positions.t5)} T5 stacks |")  # fmt: skip


if __name__ == "__main__":
    main()
