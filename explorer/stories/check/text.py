"""The words of the Check your implementation page: what it does, the inputs drawn, the code
that runs a visitor's function on them, and what a verdict means."""

from __future__ import annotations

from explorer.stories.check.inputs import N_MAX, PageInputs
from explorer.stories.check.upload import FORMATS, LIMIT_TEXT
from explorer.weights.source import TensorSource
from relpos_core.check import KINDS

INTRO = (
    "Writing relative attention yourself? Run your code on this page's inputs, upload what it "
    "returns, and see it beside the definition, cell by cell, with the known bug its numbers "
    "match. **Nothing you upload runs here**: the page reads your numbers only, keeps them in "
    "your session alone, and forgets them when you leave."
)
COMMAND = (
    "To check the function itself, at every edge size (one position, the clip at and past n, "
    "head counts that are not powers of two, positions not starting at 0), run on your own "
    "machine `python -m relpos_lab.check {kind} my_file.py:my_function`: it prints the same "
    'verdict and exits 0, 1 or 2. From your tests: `assert check_implementation("{kind}", '
    "my_function).ok` (`from relpos_core.check import check_implementation`)."
)
NO_TENSORS = "this kind's inputs are sizes and distances, not a model's tensors"
UPLOAD_LABEL = f"your output (.{', .'.join(FORMATS[:-1])} or .{FORMATS[-1]})"
UPLOAD_HELP = (
    f"Your function's output on these inputs, one array: .{', .'.join(FORMATS)}, at most "
    f"{LIMIT_TEXT}. A .pt file is read with weights_only=True (tensors only), .npy and .npz "
    "from their header, without pickle: no file is ever run."
)


def inputs_caption(inputs: PageInputs, n: int, source_words: str) -> str:
    """What the downloadable inputs are, and where their numbers come from."""
    shapes = ", ".join(f"{name} {tuple(a.shape)} {a.dtype}" for name, a in inputs.arrays)
    capped = f"n = {n} (the sidebar's n, at most {N_MAX} here)" if n == N_MAX else f"n = {n}"
    if not shapes:
        return f"The inputs are {inputs.about}. The call: `{inputs.call}`."
    parts = [f"The inputs: {shapes}"]
    if inputs.from_view:
        parts.append(f"at {capped}; {source_words}")
    if inputs.about:
        parts.append(inputs.about)
    return "; ".join(parts) + f". The call: `{inputs.call}`."


def source_words(source: TensorSource) -> str:
    """Where the inputs' numbers come from (the sizes-only kinds have none to say)."""
    params = source.params
    if source.trained:
        return (
            "q, k, v and the tables are the trained Shaw model's own, on the view's characters "
            f"(layer {params.layer}, k = {params.k})"
        )
    return f"q, k, v and the tables are seeded random draws (seed {params.seed})"


def run_code(inputs: PageInputs, file_name: str) -> str:
    """A few lines that run the visitor's ``fn`` on the downloaded inputs and save its output."""
    names = [name for name, _ in inputs.arrays]
    lines = ["import numpy as np", "import torch", "", "from my_code import fn  # yours", ""]
    if names:
        lines.append(f'inputs = np.load("{file_name}")')
        lines += [f'{name} = torch.from_numpy(inputs["{name}"])' for name in names]
    lines += [f"out = {inputs.call}", 'np.save("output.npy", np.asarray(out))']
    return "\n".join(lines)


def reference_caption(convention: str, head: int, heads: int) -> str:
    """What the definition's figure draws before anything is uploaded."""
    which = f" Head {head} of {heads}." if heads > 1 else ""
    layout = (
        f" Drawn in the layout of {convention}; the other layout is as right, and a verdict "
        "names the one your output follows."
        if convention
        else ""
    )
    return f"What a right implementation returns on these inputs.{which}{layout}"


def verdict_note(text: str, page_title: str) -> str:
    """The verdict in words (``text`` already escaped for markdown), and where the explorer
    explains that step."""
    return f"**Verdict:** {text}. The step is drawn, value by value, on the {page_title} page."


def mask_note(kind: str, mask: str, causal: bool, padded: int) -> str:
    """What the page's inputs take of the sidebar's ``mask`` (``padded``: its padded keys), in
    words; '' without a mask."""
    if mask == "none":
        return ""
    # each kind says what its inputs take (its causal part, where the convention has one); no
    # convention here has a key-padding mask, so no kind's inputs have padded keys
    taken = KINDS[kind].mask_taken.format(causal=causal, bidirectional=not causal)
    text = f"The sidebar's mask is {mask}: {taken}."
    if padded:
        text += (
            f" Its {padded} padded key(s) are not in these inputs: this kind's calling "
            "convention has no padding mask, so every key here is a real one (the padding "
            "applies on the other pages)."
        )
    return text
