"""The Masks and biases view as code that runs: ``flex_attention.py``, which defines
``attention(q, k, v)`` with the view's score_mod and mask_mod, every tensor they close over written
into the file (a few numbers) or loaded from an ``.npy`` beside it, and a ``__main__`` that loads
the view's q, k, v, runs it and saves ``output.npy``.

The mods' sources are printed as ``relpos_core`` holds them (``Mod.source``): the function the
tests check is the one in the file, character for character.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
import torch

from explorer.stories.family.flex_choice import FLEX_DEFAULT_BLOCK, FlexChoice
from explorer.stories.family.flex_views import FlexInputs
from relpos_core.mods import Mod

EAGER_WARNING = "flex_attention called without torch.compile"  # eager on a CPU: unfused, exact

PROGRAM = "flex_attention.py"
INLINE_MAX = 16  # a closed-over tensor of at most this many numbers is written into the file
INPUTS = ("q", "k", "v")
RESERVED = {*INPUTS, "output", "HERE", "BLOCK_SIZE", "SCALE", "attention", "np", "torch"}


@dataclass(frozen=True)
class Closed:
    """One tensor a mod closes over: its name in the source, shape, dtype and where it lives."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    where: str  # "in the file" or its .npy's name


def closed_tensors(inputs: FlexInputs) -> dict[str, torch.Tensor]:
    """Every tensor the score_mod and the mask_mod read, by name, detached (one name, one
    tensor: both mods live in one file)."""
    found: dict[str, torch.Tensor] = {}
    for mod in (inputs.score, inputs.mask):
        for name, tensor in (mod.closes_over if mod else {}).items():
            if name in found and not torch.equal(found[name], tensor):
                raise ValueError(f"the score_mod and the mask_mod both close over {name!r}")
            if name in RESERVED:
                raise ValueError(f"a mod closes over {name!r}, a name flex_attention.py uses")
            found[name] = tensor.detach().cpu()
    return found


def closed_list(inputs: FlexInputs) -> list[Closed]:
    return [
        Closed(
            name,
            tuple(t.shape),
            str(t.dtype).removeprefix("torch."),
            "in the file" if t.numel() <= INLINE_MAX else f"{name}.npy",
        )
        for name, t in closed_tensors(inputs).items()
    ]


def _literal(t: torch.Tensor) -> str:
    """A tensor as exact Python source (a float32's repr as a Python float reads back exactly)."""
    dtype = str(t.dtype)
    return f"torch.tensor({t.tolist()!r}, dtype={dtype})"


def _call(mod: Mod | None) -> str:
    return "None" if mod is None else mod.name


def program(inputs: FlexInputs, choice: FlexChoice, about: str) -> str:
    """The text of flex_attention.py for the view (``about``: one line on what it computes)."""
    scale = "None" if inputs.scale is None else repr(float(inputs.scale))
    scale_note = "FlexAttention's default, 1/sqrt(d)" if inputs.scale is None else "the scheme's"
    lines = [
        f'"""{about}',
        "",
        "attention(q, k, v) runs torch's flex_attention with the score_mod and mask_mod below.",
        "The tensors they close over were computed from this view's q and k: they hold for q.npy",
        "and k.npy, (1, heads, n, d) float32, which sit beside this file with v.npy."
        + (
            " q.npy and k.npy are already rotated by RoPE (no score_mod can rotate them)."
            if inputs.rotated
            else ""
        ),  # fmt: skip
        "Run it with torch and numpy installed: python flex_attention.py",
        "It saves the output, (1, heads, n, d), as output.npy and prints its shape.",
        '"""',
        "",
        "import warnings",
        "from pathlib import Path",
        "",
        "import numpy as np",
        "import torch",
        "from torch.nn.attention.flex_attention import create_block_mask, flex_attention",
        "",
        "HERE = Path(__file__).resolve().parent",
    ]
    tensors = closed_tensors(inputs)
    if tensors:
        lines += ["", "# what the mods close over"]
    for item in closed_list(inputs):
        t = tensors[item.name]
        shape = f"{item.shape} {item.dtype}"
        if item.where == "in the file":
            lines.append(f"{item.name} = {_literal(t)}  # {shape}")
        else:
            lines.append(
                f'{item.name} = torch.from_numpy(np.load(HERE / "{item.where}"))  # {shape}'
            )
    for mod in (inputs.score, inputs.mask):
        if mod is not None:
            lines += ["", "", mod.source.rstrip()]
    default = " (FlexAttention's default)" if choice.block == FLEX_DEFAULT_BLOCK else ""
    lines += [
        "",
        "",
        f"BLOCK_SIZE = {choice.block}  # the BlockMask's tiles{default}",
        f"SCALE = {scale}  # the softmax scale: {scale_note}",
        "",
        "",
        "def attention(q, k, v):",
        '    """q, k (1, h, n_q, d), (1, h, n_k, d), v (1, h, n_k, d_v) -> (1, h, n_q, d_v)."""',
    ]
    if inputs.mask is not None:
        lines += [
            "    block_mask = create_block_mask(",
            f"        {inputs.mask.name}, None, None, q.shape[-2], k.shape[-2],",
            "        device=q.device.type, BLOCK_SIZE=BLOCK_SIZE,",
            "    )",
        ]
    block = "block_mask" if inputs.mask is not None else "None"
    lines += [
        "    return flex_attention(",
        f"        q, k, v, score_mod={_call(inputs.score)}, block_mask={block}, scale=SCALE",
        "    )",
        "",
        "",
        'if __name__ == "__main__":',
        '    q, k, v = (torch.from_numpy(np.load(HERE / f"{name}.npy")) for name in "qkv")',
        "    with warnings.catch_warnings():  # eager, exact; torch.compile(flex_attention) fuses",
        f'        warnings.filterwarnings("ignore", "{EAGER_WARNING}")',
        "        out = attention(q, k, v)",
        '    np.save(HERE / "output.npy", out.numpy())',
        '    print(f"output {tuple(out.shape)} saved to output.npy; first row of head 0:")',
        "    print(out[0, 0, 0])",
    ]
    return "\n".join(lines) + "\n"


def npy_bytes(t: torch.Tensor) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, t.detach().cpu().numpy(), allow_pickle=False)
    return buffer.getvalue()


def program_files(inputs: FlexInputs, choice: FlexChoice, about: str) -> dict[str, bytes]:
    """flex_attention.py, the .npy of every closed-over tensor too large to write into it, and
    the view's q, k, v: file name -> bytes, for the view's zip."""
    files = {PROGRAM: program(inputs, choice, about).encode()}
    tensors = closed_tensors(inputs)
    for item in closed_list(inputs):
        if item.where != "in the file":
            files[item.where] = npy_bytes(tensors[item.name])
    for name, t in zip(INPUTS, (inputs.q, inputs.k, inputs.v), strict=True):
        files[f"{name}.npy"] = npy_bytes(t.float())
    return files
