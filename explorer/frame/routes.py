"""Routes through the pages: a short way for one question, the whole atlas for whoever roams.

A route is an ordered list of pages. The one picked is a URL-bound sidebar control (``route``),
so a shared link keeps it; the previous / next links follow it, and each page says where it is on
it ("step 3 of 6"). "Every page" is the navigation's own order. The words each route uses are
defined on it before they are used: ``explorer.figures.terms`` holds the glossary and
``tests/app/test_routes.py`` walks every route.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.frame.navigation import PAGES, Page

PAGE_BY_STEM = {page.stem: page for page in PAGES}


@dataclass(frozen=True)
class Route:
    label: str  # as the sidebar and the URL write it
    title: str  # as the Overview writes it
    stems: tuple[str, ...]  # its pages, in order; the first is the Overview
    question: str  # what a learner who follows it can answer at its end

    @property
    def pages(self) -> tuple[Page, ...]:
        return tuple(PAGE_BY_STEM[stem] for stem in self.stems)

    def step(self, stem: str) -> int | None:
        """1-based place of page ``stem`` on the route; None when it is not on it."""
        return self.stems.index(stem) + 1 if stem in self.stems else None

    def neighbours(self, stem: str) -> tuple[Page | None, Page | None]:
        """(previous, next) page on the route around ``stem``; (None, None) off the route.

        >>> [p.stem if p else None for p in SHAW.neighbours("logits")]
        ['lookup', 'attention']
        """
        at = self.step(stem)
        if at is None:
            return None, None
        before = self.pages[at - 2] if at > 1 else None
        after = self.pages[at] if at < len(self.stems) else None
        return before, after


EVERY_PAGE = Route(
    "Every page",
    "Every page, in the navigation's order",
    tuple(page.stem for page in PAGES),
    "the whole atlas: attention, Shaw's scheme, the skew, the family and your own work",
)
SHAW = Route(
    "Relative attention",
    "Shaw's relative attention, and why the skew saves memory",
    ("overview", "lookup", "logits", "attention", "skew", "speed"),
    "how a distance becomes a table row, what it adds to each logit and output, and how the "
    "skew computes the same logits without an (n, n, d) tensor",
)
FAMILY = Route(
    "The family",
    "The family of schemes, and how far each extrapolates",
    ("overview", "absolute", "lookup", "family", "compare", "predict", "long_context"),
    "what Shaw, Music Transformer, Transformer-XL, T5, ALiBi and RoPE each add, what the "
    "trained models learned, and which still work past their training length",
)
OWN = Route(
    "Your own work",
    "Your own work: check an implementation, read a checkpoint",
    ("overview", "lookup", "check", "your_model"),
    "whether your implementation equals the definition (and which known bug it has if not), "
    "and what your own model's position parameters hold",
)
ROUTES = (EVERY_PAGE, SHAW, FAMILY, OWN)
ROUTE_KEY = "route"  # the sidebar control's key and URL name


def route_named(label: str) -> Route:
    return next(route for route in ROUTES if route.label == label)
