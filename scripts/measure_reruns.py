"""Time one rerun of every explorer page on the server side (AppTest, no browser).

    python scripts/measure_reruns.py [--n 8 512 1024 2048 4096] [--d-model 16] [--heads 2]
                                     [--repeats 5] [--json out.json]

For each n and page: "cold" is a rerun after the seed changed (every cached result missed),
"warm" the median of reruns with nothing changed (the cache hits). Times include Streamlit's
own script-run overhead and the serialisation of every figure. Above 512 positions the pages
draw a 512-position window. Prints a table and JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from measure_browser import discover_pages
from streamlit.testing.v1 import AppTest

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


def measure(n: int, page: str, repeats: int, d_model: int, heads: int) -> dict:
    at = AppTest.from_file(str(ENTRY), default_timeout=120)
    at.query_params["n"] = str(n)
    at.query_params["d_model"] = str(d_model)
    at.query_params["heads"] = str(heads)
    if page != "overview":
        at.switch_page(f"../../../pages/{page}.py")
    at.run()
    warm = [timed(at) for _ in range(repeats)]
    cold = []
    for seed in range(1, repeats + 1):
        at.number_input(key="seed").set_value(1000 + seed)
        cold.append(timed(at))
    return {
        "n": n,
        "d_model": d_model,
        "heads": heads,
        "page": page,
        "warm_ms": round(1000 * statistics.median(warm), 1),
        "cold_ms": round(1000 * statistics.median(cold), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[8, 512, 1024, 2048, 4096])
    parser.add_argument("--d-model", type=int, default=16)
    parser.add_argument("--heads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    rows = [
        measure(n, page, args.repeats, args.d_model, args.heads) for n in args.n for page in PAGES
    ]
    print(f"{'n':>5} {'page':<10} {'warm ms':>9} {'cold ms':>9}")
    for row in rows:
        print(f"{row['n']:>5} {row['page']:<10} {row['warm_ms']:>9} {row['cold_ms']:>9}")
    text = json.dumps(rows, indent=1)
    if args.json:
        args.json.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
