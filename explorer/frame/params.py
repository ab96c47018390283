"""The explorer's view parameters: limits and validation of one frozen :class:`ViewParams`.

Pure (no streamlit). Untrusted URL strings are parsed into a ViewParams by
:mod:`explorer.frame.url_query`; a URL can never make the app raise.
"""

from __future__ import annotations

from dataclasses import dataclass

N_MAX = 4096  # longest sequence the explorer computes (one named limit; raise it here)
N_DEFAULT = 8
DISPLAY_MAX = 512  # longest side of a matrix drawn whole; longer ones show a window this wide
WIN_MAX = N_MAX - DISPLAY_MAX  # last first position of a window
K_MAX = 64  # clip distance limit; k > n is allowed and clips nothing
K_DEFAULT = 2
D_MODEL_CHOICES = (8, 16, 32, 64, 128)
D_MODEL_DEFAULT = 16
HEADS_CHOICES = (1, 2, 4, 8)  # every choice divides every d_model choice
HEADS_DEFAULT = 2
SEED_MAX = 1_000_000
SEED_DEFAULT = 0
MASK_KINDS = ("none", "causal", "padding", "causal-padding")
MASK_DEFAULT = "none"
PAD_DEFAULT = 2
TEXT_MAX_CHARS = 4000
TEXT_DEFAULT = ""
# The weights switch: seeded random draws (every control free), or a trained Shaw model of the
# family (relpos_lab.family): a causal character model whose sizes are its own.
WEIGHTS_KINDS = ("trained", "random")
WEIGHTS_DEFAULT = "trained"  # what the app opens on (a ViewParams built in code is random)
TRAINED_CLIPS = (0, 1, 2, 4, 8, 16, 64)  # the clip distances a Shaw model was trained at
TRAINED_D_MODEL, TRAINED_HEADS, TRAINED_LAYERS = 128, 4, 3
TRAINED_MASK = "causal"

assert all(d % h == 0 for d in D_MODEL_CHOICES for h in HEADS_CHOICES)


def tokenize(text: str) -> tuple[str, ...]:
    """Whitespace tokens of ``text``, at most N_MAX of them.

    >>> tokenize("  the cat  sat ")
    ('the', 'cat', 'sat')
    """
    return tuple(text.split()[:N_MAX])


@dataclass(frozen=True)
class ViewParams:
    """Everything that defines one view of the explorer. Hashable: the cache key of every page.

    ``n`` is the slider's sequence length; with a non-empty ``text`` the token count wins (see
    :attr:`length`). ``pad`` trailing keys are padding when the mask includes padding.
    """

    n: int = N_DEFAULT
    k: int = K_DEFAULT
    d_model: int = D_MODEL_DEFAULT
    heads: int = HEADS_DEFAULT
    seed: int = SEED_DEFAULT
    mask: str = MASK_DEFAULT
    pad: int = PAD_DEFAULT
    text: str = TEXT_DEFAULT
    win: int = 0
    weights: str = "random"  # the app opens on WEIGHTS_DEFAULT: see explorer.frame.url_query
    layer: int = 0  # the trained model's layer drawn (trained weights only)

    def __post_init__(self) -> None:
        _check_range("n (sequence length)", self.n, 1, N_MAX)
        _check_range("k (clip distance)", self.k, 0, K_MAX)
        _check_choice("d_model", self.d_model, D_MODEL_CHOICES)
        _check_choice("heads", self.heads, HEADS_CHOICES)
        _check_range("seed", self.seed, 0, SEED_MAX)
        _check_choice("mask", self.mask, MASK_KINDS)
        _check_range("pad (padded positions)", self.pad, 0, N_MAX)
        if not isinstance(self.text, str) or len(self.text) > TEXT_MAX_CHARS:
            raise ValueError(f"text must be a string of at most {TEXT_MAX_CHARS} characters")
        _check_range("win (window start)", self.win, 0, WIN_MAX)
        _check_choice("weights", self.weights, WEIGHTS_KINDS)
        _check_range("layer", self.layer, 0, TRAINED_LAYERS - 1)
        if self.trained:  # the model's own sizes: say which control disagrees
            for name, value, fixed in (
                ("d_model", self.d_model, TRAINED_D_MODEL),
                ("heads", self.heads, TRAINED_HEADS),
                ("mask", self.mask, TRAINED_MASK),
            ):
                if value != fixed:
                    raise ValueError(
                        f"with trained weights {name} is the model's {fixed}, got {value!r}"
                    )
            _check_choice("k (clip distance) with trained weights", self.k, TRAINED_CLIPS)

    @property
    def trained(self) -> bool:
        return self.weights == "trained"

    @property
    def tokens(self) -> tuple[str, ...]:
        """The typed tokens (words; characters for the trained character models); empty when
        no text was typed."""
        return tuple(self.text[:N_MAX]) if self.trained else tokenize(self.text)

    @property
    def length(self) -> int:
        """Sequence length actually shown: the token count if text was typed, else ``n``."""
        return len(self.tokens) or self.n

    @property
    def window(self) -> tuple[int, int]:
        """Positions [start, stop) drawn on both axes of an (n, n) heatmap.

        The whole sequence up to DISPLAY_MAX; beyond, DISPLAY_MAX positions from ``win``
        (clamped so the window ends at the last position).

        >>> ViewParams(n=8).window, ViewParams(n=4096, win=100).window
        ((0, 8), (100, 612))
        >>> ViewParams(n=1000, win=3000).window
        (488, 1000)
        """
        size = min(self.length, DISPLAY_MAX)
        start = min(self.win, self.length - size)
        return start, start + size

    @property
    def windowed(self) -> bool:
        """True when the heatmaps show a window, not the whole sequence."""
        return self.length > DISPLAY_MAX

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads

    @property
    def causal(self) -> bool:
        return "causal" in self.mask

    @property
    def n_pad(self) -> int:
        """Trailing padded keys: ``pad`` clipped to the length, 0 unless the mask is padding."""
        return min(self.pad, self.length) if "padding" in self.mask else 0


def _check_range(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value!r}")


def _check_choice(name: str, value: object, choices: tuple[object, ...]) -> None:
    if value not in choices or isinstance(value, bool):
        allowed = ", ".join(str(c) for c in choices)
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


def trained_model_name(k: int) -> str:
    """The family's Shaw model trained at clip distance k (k = 8 is ``shaw`` itself).

    >>> trained_model_name(8), trained_model_name(2)
    ('shaw', 'shaw-k2')
    """
    return "shaw" if k == 8 else f"shaw-k{k}"


def nearest_trained_clip(k: int, towards: int | None = None) -> int:
    """The trained clip distance a k snaps to: the nearest, or with ``towards`` (the k before a
    move) the next one in the direction of the move, so that a slider can step past a gap.

    >>> nearest_trained_clip(3), nearest_trained_clip(5, towards=4), nearest_trained_clip(7, 8)
    (2, 8, 4)
    """
    if towards is not None and k > towards:
        return min((c for c in TRAINED_CLIPS if c >= k), default=TRAINED_CLIPS[-1])
    if towards is not None and k < towards:
        return max((c for c in TRAINED_CLIPS if c <= k), default=TRAINED_CLIPS[0])
    return min(TRAINED_CLIPS, key=lambda c: (abs(c - k), c))
