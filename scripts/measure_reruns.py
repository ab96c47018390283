"""Time one rerun of every explorer page on the server side (AppTest, no browser).

    python scripts/measure_reruns.py [--n 8 512 1024 2048 4096] [--d-model 16] [--heads 2]
                                     [--weights trained|random] [--pages lookup skew]
                                     [--repeats 5] [--json out.json]

For each n and page: "warm" is the median of reruns with nothing changed (the cache hits);
"cold" the median of reruns after a control moved to a value not drawn before: with random
weights the seed (every view misses), with trained weights (the visitor's default, where the
seed does not apply) the clip distance k (every view that reads k misses; the trained model's
own pass is kept). Times include Streamlit's own script-run overhead and the serialisation of
every figure. Above 512 positions the pages draw a 512-position window. Prints a table and JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

if __package__:  # imported as scripts.measure_reruns (the tests)
    from .measure_browser import discover_pages
else:  # run as python scripts/measure_reruns.py
    from measure_browser import discover_pages

REPO = Path(__file__).resolve().parents[1]
ENTRY = REPO / "tests" / "app" / "harness" / "entry.py"
# every page but the trained model's (its view does not depend on n)
PAGES = tuple(stem for stem in discover_pages() if stem != "trained")


def timed(at: AppTest) -> float:
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    if at.exception:
        raise RuntimeError(f"page raised: {[e.value for e in at.exception]}")
    return elapsed


def measure(
    n: int, page: str, repeats: int, d_model: int, heads: int, weights: str = "trained"
) -> dict:
    at = AppTest.from_file(str(ENTRY), default_timeout=120)
    at.query_params["n"] = str(n)
    at.query_params["d_model"] = str(d_model)
    at.query_params["heads"] = str(heads)
    at.query_params["weights"] = weights
    if page != "overview":
        at.switch_page(f"../../../pages/{page}.py")
    from explorer.frame.memory import COMPUTED  # the repository is on sys.path by now

    timed(at)
    before = sum(COMPUTED.values())
    warm = [timed(at) for _ in range(repeats)]
    warm_computed = sum(COMPUTED.values()) - before
    before = sum(COMPUTED.values())
    cold = []
    k_first = at.slider(key="k").value
    for step in range(1, repeats + 1):
        if weights == "random":
            at.number_input(key="seed").set_value(1000 + step)
        else:  # the seed is disabled: k, through values not drawn yet
            k = at.slider(key="k")
            k.set_value((k_first + step) % (k.max + 1))
        cold.append(timed(at))
    cold_computed = sum(COMPUTED.values()) - before
    return {
        "n": n,
        "d_model": d_model,
        "heads": heads,
        "weights": weights,
        "page": page,
        "warm_ms": round(1000 * statistics.median(warm), 1),
        "cold_ms": round(1000 * statistics.median(cold), 1),
        # values the cached functions computed (misses) over all the warm / cold reruns
        "warm_computed": warm_computed,
        "cold_computed": cold_computed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[8, 512, 1024, 2048, 4096])
    parser.add_argument("--d-model", type=int, default=16)
    parser.add_argument("--heads", type=int, default=2)
    parser.add_argument("--weights", choices=("trained", "random"), default="trained")
    parser.add_argument("--pages", nargs="+", metavar="STEM", default=list(PAGES))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    rows = [
        measure(n, page, args.repeats, args.d_model, args.heads, args.weights)
        for n in args.n
        for page in args.pages
    ]
    print(f"weights: {args.weights}; computed: values the cached functions computed (misses)")
    print(f"{'n':>5} {'page':<10} {'warm ms':>9} {'computed':>8} {'cold ms':>9} {'computed':>8}")
    for row in rows:
        print(
            f"{row['n']:>5} {row['page']:<10} {row['warm_ms']:>9} {row['warm_computed']:>8} "
            f"{row['cold_ms']:>9} {row['cold_computed']:>8}"
        )
    text = json.dumps(rows, indent=1)
    if args.json:
        args.json.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
