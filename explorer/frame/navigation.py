"""Every page of the explorer in the navigation's order, with the line the Overview gives it,
grouped in sections by story: the one list that app.py, the Overview's links, the tests and the
scripts read."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Page:
    """A page: its file stem in pages/ (its URL path), title, icon and what it shows."""

    stem: str
    title: str
    icon: str
    what: str

    @property
    def file(self) -> str:
        return f"{self.stem}.py"


@dataclass(frozen=True)
class Section:
    """A part of the story: its label in the sidebar and its pages, in order."""

    label: str
    pages: tuple[Page, ...]


SECTIONS = (  # the story a learner follows, in order, one section per part of it
    Section("Start here", (
        Page("overview", "Overview", ":material/home:",
             "what relative position is, and every page"),
    )),
    Section("Attention, then position", (
        Page("basics", "Attention basics", ":material/lightbulb:",
             "attention before position: additive and dot-product scores on the same states, "
             "the worked example to edit, cross-attention, the alignment of a small copy model, "
             "and why the dot product is divided by √d"),
        Page("multihead", "Multi-head and masks", ":material/view_column:",
             "the split into heads, attention per head, the concatenation and $W^O$ with every "
             "shape; padding and look-ahead masks, and what softmax does with them"),
        Page("absolute", "Absolute vs relative", ":material/compare:",
             "why position matters: what trained models lose without it and how far each kind "
             "reaches, then the sinusoidal encoding, whose similarity depends on $j - i$ only"),
    )),
    Section("Shaw's relative attention", (
        Page("lookup", "Lookup table", ":material/table:",
             "$j - i$, clipped to $\\pm k$, the index table, the tables $w^K$ and $w^V$, and "
             "$a^K_{ij}$ gathered from them"),
        Page("logits", "Relative logits", ":material/functions:",
             "the content term and the relative term of $e_{ij}$ for every head, the definition "
             "and five faster methods that equal it, and tensor2tensor's steps as the tensors "
             "they are"),
        Page("attention", "Attention", ":material/visibility:",
             "logits $e_{ij}$, masks and weights $\\alpha_{ij}$ of every head side by side, and "
             "the output $z_i$ split into its content and relative parts"),
        Page("trained", "Length generalization", ":material/school:",
             "generalization: a small model that needs relative position, at lengths it never "
             "saw, and its learned tables"),
    )),
    Section("Skew, shift and speed", (
        Page("skew", "Skew", ":material/swap_horiz:",
             "the efficient way: Huang et al.'s pad, reshape and slice of $Q E_r^\\top$, step by "
             "step, with the distance in every cell"),
        Page("rel_shift", "Transformer-XL shift", ":material/keyboard_tab:",
             "Transformer-XL's rel_shift, the same trick with memory, step by step, and the "
             "cells it gets wrong outside the causal region"),
        Page("speed", "Speed & memory", ":material/speed:",
             "what each method builds as $n$ grows, and a benchmark run on this server"),
    )),
    Section("The family of schemes", (
        Page("family", "Position schemes", ":material/category:",
             "the family: Shaw, Music Transformer, Transformer-XL, T5, ALiBi and RoPE on the same "
             "inputs: which are functions of $j - i$, and their terms against the distance and "
             "beyond the trained length"),
        Page("compare", "Compare schemes", ":material/difference:",
             "any two schemes on the same $q, k, v$: their weights side by side and the "
             "difference"),
        Page("predict", "Predict", ":material/keyboard:",
             "a trained model of each scheme at work: its next character with every layer's "
             "attention, text it writes, and the bits it spends along a passage 16 times longer "
             "than its training windows"),
        Page("long_context", "Long context", ":material/straighten:",
             "RoPE's rotary wavelengths and long-term decay against the training length; position "
             "interpolation, NTK-aware scaling, YaRN and Llama 3's rule on the trained RoPE model, "
             "measured zero-shot; and whether any model sinks attention on the first characters"),
        Page("flex", "Masks and biases", ":material/grid_on:",
             "a scheme's bias as FlexAttention's score_mod and masks as mask_mods (causal, "
             "window, sinks, prefix, documents, padding) combined with and / or: the mask, bias, "
             "logits and weights of one head, the BlockMask block by block, and the code that "
             "runs the view"),
    )),
    Section("Your own work", (
        Page("check", "Check your implementation", ":material/fact_check:",
             "your own relative attention, skew, shift, ALiBi, T5 buckets or RoPE, run on this "
             "page's inputs: its output beside the definition, the differing cells outlined and "
             "the known bug they match"),
        Page("your_model", "Your model", ":material/upload_file:",
             "your own checkpoint's position parameters, head by head: T5's bias per bucket, "
             "Shaw's tables, ALiBi's slopes and RoPE's frequencies, from an upload, the Hub or "
             "the command line"),
    )),
)  # fmt: skip
PAGES = tuple(page for section in SECTIONS for page in section.pages)
DEFAULT = PAGES[0]  # served at /


def url_path(page: Page) -> str:
    """Where Streamlit serves ``page``: / for the default page, else /<file stem>.

    >>> url_path(PAGES[0]), url_path(PAGES[1])
    ('/', '/basics')
    """
    return "/" if page == DEFAULT else f"/{page.stem}"


def neighbours(stem: str) -> tuple[Page | None, Page | None]:
    """(previous, next) page of the story around page ``stem`` (None at either end).

    >>> [p.stem if p else None for p in neighbours("overview")]
    [None, 'basics']
    """
    at = [page.stem for page in PAGES].index(stem)
    return (PAGES[at - 1] if at > 0 else None, PAGES[at + 1] if at + 1 < len(PAGES) else None)
