"""Test helper: each public call's estimate against its measured peak, in a child process.

    python -m tests.call_peaks    # prints {call: [estimate, peak]} as JSON

The estimate is what the call's guard compares with the memory limit, read by replacing the
limit the guard asks for (``device_memory_bytes``) with one that records it; where a call
passes several guards, the largest. The peak is measured as ``scripts.measure_memory`` does
(the allocator's events, exact), after a warm-up call.
Sizes are moderate (peaks of tens of MiB): the estimates are formulas in the sizes, so what
holds here holds at n = 10^5 unless a term is missing, which shows at any size.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ADDRESS_SPACE = 6 * 2**30


def run() -> dict[str, tuple[int | None, int]]:
    """{call: (estimate, peak)} for every call of ``calls()``, measured in a child process;
    the estimate is None for a call that no guard looked at."""

    def limit() -> None:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = ADDRESS_SPACE if hard == resource.RLIM_INFINITY else min(hard, ADDRESS_SPACE)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    done = subprocess.run(
        [sys.executable, "-m", "tests.call_peaks"], cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300, preexec_fn=limit,
    )  # fmt: skip
    if done.returncode:
        raise RuntimeError(done.stderr[-3000:])
    return {name: tuple(pair) for name, pair in json.loads(done.stdout).items()}


def calls() -> dict[str, Callable[[], object]]:
    """The public calls that allocate with their sizes, on inputs made beforehand."""
    import torch

    import relpos_core as rc
    from relpos_core.schemes import make_scheme

    gen = torch.Generator().manual_seed(0)

    def draw(*shape, dtype=torch.float32, grad=False):
        return torch.randn(*shape, generator=gen).to(dtype).requires_grad_(grad)

    def one(*shape, dtype=torch.float32):  # a stride-0 view of a single value
        return torch.ones((), dtype=dtype).expand(*shape)

    b, h, n, d, k = 1, 4, 1024, 16, 8
    q, v = draw(b, h, n, d), draw(b, h, n, d)
    heads = draw(b, n, h, d).transpose(1, 2)  # a layer's head view
    table = draw(2 * k + 1, d)
    weights = torch.softmax(draw(b, h, n, n), -1)
    logits = draw(b, h, n, n)
    key_mask = torch.rand(n, generator=gen) < 0.9
    skew_x, skew_wide = draw(b, h, n, n), draw(b, h, n, 2 * n - 1)
    train = [draw(b, h, n, d, grad=True) for _ in range(3)]
    train_tables = [draw(2 * k + 1, d, grad=True) for _ in range(2)]
    grad_out = draw(b, h, n, d)
    index = rc.relative_index(n, n, k)
    q_half, table_half, logits_half = q.bfloat16(), table.bfloat16(), logits.bfloat16()
    float_mask = key_mask.float()

    def attention_train(**options):
        def call():
            out = rc.relative_attention(*train, *train_tables, **options)
            out.backward(grad_out)

        return call

    found = {}
    for method in ("bucket", "banded", "skew", "einsum", "matmul"):
        found[f"relative_logits {method}"] = lambda m=method: rc.relative_logits(q, table, method=m)
        found[f"relative_values {method}"] = lambda m=method: rc.relative_values(
            weights, table, method=m
        )
        found[f"relative_attention {method}"] = lambda m=method: rc.relative_attention(
            q, q, v, table, table, method=m, causal=True
        )
        found[f"relative_attention {method} train"] = attention_train(method=method)
    found.update(
        {
            "relative_logits head view": lambda: rc.relative_logits(heads, table),
            "relative_logits n_k 16n": lambda: rc.relative_logits(q[:, :, :64], table, n_k=16 * n),
            "relative_logits bfloat16": lambda: rc.relative_logits(
                q_half, table_half, method="banded"
            ),
            "relative_values expanded": lambda: rc.relative_values(one(b, h, n, n), table),
            "trace_matmul_logits": lambda: rc.trace_matmul_logits(q, table),
            "relative_attention head views": lambda: rc.relative_attention(
                heads, heads, heads, table, table, causal=True
            ),
            "relative_attention key mask trace": lambda: rc.relative_attention(
                q, q, v, table, table, mask=float_mask, causal=True, trace=True
            ),
            "relative_attention expanded k": lambda: rc.relative_attention(
                q, one(b, h, 4 * n, d), one(b, h, 4 * n, d), table, table
            ),
            "relative_attention causal train": attention_train(causal=True),
            "relative_attention dropout train": attention_train(causal=True, dropout_p=0.1),
            "masked_softmax": lambda: rc.masked_softmax(logits, key_mask),
            "masked_softmax bfloat16": lambda: rc.masked_softmax(logits_half, key_mask),
            "combine_masks causal": lambda: rc.combine_masks(float_mask, True, (b, h, n, n)),
            "combine_masks expanded": lambda: rc.combine_masks(one(b, h, n, n), True, (b, h, n, n)),
            "skew_masked": lambda: rc.skew_masked(skew_x),
            "skew_unmasked": lambda: rc.skew_unmasked(skew_wide),
            "trace_skew_unmasked": lambda: rc.trace_skew_unmasked(skew_wide),
            "absolute_to_relative_masked": lambda: rc.absolute_to_relative_masked(skew_x),
            "absolute_to_relative_unmasked": lambda: rc.absolute_to_relative_unmasked(skew_x),
            "padding_mask": lambda: rc.padding_mask(one(64, 2**16, dtype=torch.int64)),
            "causal_mask": lambda: rc.causal_mask(4 * n),
            "relative_index": lambda: rc.relative_index(n, 2 * n, k),
            "gather_relative": lambda: rc.gather_relative(table, index),
            "encoding_similarity": lambda: rc.encoding_similarity(draw(4 * n, d)),
        }
    )
    for name in ("shaw", "t5", "music", "xl", "alibi", "rope"):
        scheme = make_scheme(name, h, d)
        found[f"scheme {name}"] = lambda s=scheme: s(q, q, v, causal=True)
    return found


class Recorder:
    """A memory limit that lets every call run and records what each guard compares with it:
    ``check_fits`` asks ``need <= limit``, which Python answers with ``limit >= need``."""

    def __init__(self) -> None:
        self.needs: list[int] = []

    def __ge__(self, need: int) -> bool:
        self.needs.append(need)
        return True


def main() -> None:
    import torch

    import relpos_core.guard as guard
    from scripts.measure_memory import peak_bytes

    torch.set_num_threads(1)
    unguarded = guard.device_memory_bytes
    results = {}
    for name, call in calls().items():
        guard.device_memory_bytes = unguarded
        call()  # warm-up: lazy initialisation is not the call's memory
        recorder = Recorder()
        guard.device_memory_bytes = lambda device=None, limit=recorder: limit
        peak = peak_bytes(call)
        need = max(recorder.needs, default=None)  # the largest of its guards' estimates
        results[name] = (need, peak)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
