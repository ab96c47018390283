"""One visible dispatch: ``relative_attention`` admits the call, then runs exactly the object
``methods.pick_method`` chose, which is what ``which_method`` reports.

For every method a caller may ask for and every combination of what a call keeps (a trace,
the weights, gradients, dropout, a mask, a causal mask), the object whose ``run`` executes is
recorded: it is the admitted call's method, its name is ``which_method``'s, it is a kernel
exactly when the call keeps no step (no trace, and no weights under autograd) and the method
has one, and its output equals the plain definition in float64, computed here by loops.
"""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from relpos_core import relative_attention
from relpos_core.admission import admit_call, which_method
from relpos_core.attention import ATTENTION_METHODS
from relpos_core.methods import BANDED, METHODS, Kernel, Method, pick_method

FLAGS = ("trace", "return_weights", "grad", "masked", "causal")


def definition(q, k, v, tk, tv, mask, causal):
    """Shaw et al. (2018), eqs. 2-4, one (i, j) pair at a time."""
    n, kk = q.shape[2], (tk.shape[0] - 1) // 2
    out = torch.zeros_like(q)
    weights = torch.zeros(*q.shape[:3], n, dtype=q.dtype)
    for b, h, i in itertools.product(*map(range, q.shape[:3])):
        logits = {}
        for j in range(n):
            if (causal and j > i) or (mask is not None and not mask[j]):
                continue
            a_k = tk[max(-kk, min(kk, j - i)) + kk]
            logits[j] = float(q[b, h, i] @ (k[b, h, j] + a_k)) / math.sqrt(q.shape[-1])
        top = max(logits.values())
        total = sum(math.exp(x - top) for x in logits.values())
        for j, x in logits.items():
            w = math.exp(x - top) / total
            weights[b, h, i, j] = w
            out[b, h, i] += w * (v[b, h, j] + tv[max(-kk, min(kk, j - i)) + kk])
    return out, weights


def inputs(grad: bool):
    gen = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(1, 2, 5, 4, generator=gen, dtype=torch.float64) for _ in range(3))
    tk, tv = (torch.randn(5, 4, generator=gen, dtype=torch.float64) for _ in range(2))
    return [t.requires_grad_(grad) for t in (q, k, v, tk, tv)]


@pytest.fixture
def ran(monkeypatch):
    """The objects whose ``run`` executed, in order."""
    seen: list[object] = []
    for cls in {type(m) for m in (*METHODS.values(), BANDED)} | {Method}:
        if "run" in vars(cls):
            original = vars(cls)["run"]

            def record(self, *args, _original=original, **kwargs):
                seen.append(self)
                return _original(self, *args, **kwargs)

            monkeypatch.setattr(cls, "run", record)
    return seen


CASES = [
    (method, dict(zip(FLAGS, values, strict=True)))
    for method in ATTENTION_METHODS
    for values in itertools.product((False, True), repeat=len(FLAGS))
    if not (values[0] and values[1])  # a trace holds the weights; asking both is refused
]


@pytest.mark.parametrize(
    ("method", "flags"), CASES, ids=lambda c: c if isinstance(c, str) else "-".join(
        name for name, on in c.items() if on) or "plain"
)  # fmt: skip
def test_the_chosen_object_is_what_runs(ran, method, flags):
    q, k, v, tk, tv = inputs(flags["grad"])
    mask = torch.tensor([True, True, False, True, True]) if flags["masked"] else None
    kwargs = dict(mask=mask, causal=flags["causal"], method=method, trace=flags["trace"])
    kwargs["return_weights"] = flags["return_weights"]
    call = admit_call(
        q, k, v, tk, tv, query_offset=0, dropout_p=0.0, generator=None, max_bytes=None, **kwargs
    )
    name, why = which_method(q, k, v, tk, tv, **kwargs)
    result = relative_attention(q, k, v, tk, tv, **kwargs)

    assert ran == [call.method]  # one run, of the admitted call's object
    assert call.method.name == name and call.why == why
    keeps_step = flags["trace"] or (flags["grad"] and flags["return_weights"])
    has_kernel = isinstance(call.method, Method) and call.method.kernel is not None
    assert isinstance(call.method, Kernel) == (not keeps_step and method in ("auto", "banded"))
    assert not has_kernel or keeps_step  # a method with a kernel runs it unless a step is kept
    if method != "auto":
        assert name == method

    want_out, want_weights = definition(*(t.detach() for t in (q, k, v, tk, tv)), mask,
                                        flags["causal"])  # fmt: skip
    if flags["trace"]:
        out, weights = result.output, result.weights
    elif flags["return_weights"]:
        out, weights = result
    else:
        out, weights = result, None
    torch.testing.assert_close(out, want_out, rtol=1e-10, atol=1e-10)
    if weights is not None:
        torch.testing.assert_close(weights, want_weights, rtol=1e-10, atol=1e-10)


def test_pick_method_is_the_one_decision():
    """``which_method`` reports ``pick_method``'s answer for the same call, and an unknown name
    is refused naming every choice, "triton" included."""
    q, k, v, tk, tv = inputs(False)
    for method in ATTENTION_METHODS:
        chosen, why = pick_method(
            method, q, v, 0, grad=False, masked=False, trace=False, weights=False, dropout=False
        )
        assert which_method(q, k, v, tk, tv, method=method) == (chosen.name, why)
    with pytest.raises(ValueError, match=r"auto, loop, einsum, matmul, skew, bucket, banded, "
                       r"triton; got 'fast'"):  # fmt: skip
        relative_attention(q, k, v, tk, tv, method="fast")
