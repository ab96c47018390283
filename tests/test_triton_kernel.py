"""The fused Triton kernel (``methods.triton_attention``) against the float64 definition.

On a CPU through Triton's interpreter (``TRITON_INTERPRET=1``, set below before triton is
imported): the kernel's own code, forward and the gradients of q, k, v, w^K and w^V, on shapes of
a few dozen with tiles of 16, so every case crosses several blocks of rows and keys. Skipped
where triton is not installed, and on a CUDA machine, whose suite runs the compiled kernel on the
device (``test_gpu.py``) and must not have triton switched to its interpreter.

Definition (Shaw et al. 2018, eqs. 2-4), query row i at position p_i = query_offset + i:
    e_ij  = (q_i · k_j + q_i · w^K_clip(j - p_i)) / sqrt(d)
    alpha = softmax_j(e_ij)                          over j <= p_i if causal
    z_i   = sum_j alpha_ij (v_j + w^V_clip(j - p_i))
"""

from __future__ import annotations

import importlib.util
import math
import os
import subprocess
import sys

import pytest
import torch

ON_CUDA = torch.cuda.is_available()
TRITON = importlib.util.find_spec("triton") is not None
# the interpreter binds triton's language when triton is first imported: too late after that
IMPORTED_BEFORE = "triton" in sys.modules and os.environ.get("TRITON_INTERPRET", "0") in ("", "0")
if TRITON and not (ON_CUDA or IMPORTED_BEFORE):
    os.environ["TRITON_INTERPRET"] = "1"

from relpos_core import relative_attention  # noqa: E402
from relpos_core.admission import which_method  # noqa: E402

SKIP = (
    "triton is not installed (requirements-dev.txt)" if not TRITON
    else "a CUDA machine tests the compiled kernel (test_gpu.py)" if ON_CUDA
    else "triton was imported before TRITON_INTERPRET was set" if IMPORTED_BEFORE
    else None
)  # fmt: skip
needs_interpreter = pytest.mark.skipif(SKIP is not None, reason=SKIP or "")
needs_triton = pytest.mark.skipif(not TRITON, reason="triton is not installed")
F64 = torch.float64
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAMES = ("q", "k", "v", "table_k", "table_v")


def definition(q, k, v, table_k, table_v, causal, offset):
    """Eqs. 2-4 with a^K_ij, a^V_ij gathered to (n_q, n_k, d): float64, differentiable."""
    n_q, n_k, kk = q.shape[2], k.shape[2], (table_k.shape[0] - 1) // 2
    rel = torch.arange(n_k)[None, :] - (offset + torch.arange(n_q)[:, None])  # j - p_i
    bucket = rel.clamp(-kk, kk) + kk
    a_k, a_v = table_k[bucket], table_v[bucket]  # (i,j,d)
    e = (q @ k.transpose(-2, -1) + torch.einsum("bhid,ijd->bhij", q, a_k)) / math.sqrt(q.shape[-1])
    if causal:
        e = e.masked_fill(rel > 0, float("-inf"))
    alpha = e.softmax(-1)
    return alpha @ v + torch.einsum("bhij,ijd->bhid", alpha, a_v)  # (b,h,i,d_v)


def check(n_q, n_k, k, offset, causal, d=16, d_v=16, dtype=torch.float32, seed=0):
    """The kernel's z and five gradients against the definition, on inputs rounded to dtype."""
    gen = torch.Generator().manual_seed(seed)
    shapes = [(1, 2, n_q, d), (1, 2, n_k, d), (1, 2, n_k, d_v), (2 * k + 1, d), (2 * k + 1, d_v)]
    tensors = [torch.randn(s, generator=gen, dtype=F64).to(dtype) for s in shapes]
    g = torch.randn(1, 2, n_q, d_v, generator=gen, dtype=F64).to(dtype)
    exact = [t.to(F64).requires_grad_(True) for t in tensors]
    want = definition(*exact, causal, offset)
    want_grads = torch.autograd.grad(want, exact, g.to(F64))
    xs = [t.clone().requires_grad_(True) for t in tensors]
    assert which_method(*xs, method="triton", causal=causal, query_offset=offset)[0] == "triton"
    got = relative_attention(*xs, method="triton", causal=causal, query_offset=offset)
    got_grads = torch.autograd.grad(got, xs, g)
    assert got.dtype == dtype and got.shape == want.shape
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == torch.float32 else {"rtol": 3e-2, "atol": 3e-2}
    torch.testing.assert_close(got.to(F64), want, **tol, msg="z")
    for name, x, y in zip(NAMES, got_grads, want_grads, strict=True):
        torch.testing.assert_close(x.to(F64), y, **tol, msg=name)


# (n_q, n_k, k, query_offset, causal): tiles of 16 rows and 16 keys
CASES = {
    # rows 32-39 against keys 0-15 lie wholly left of -k: one clipped column
    "causal, blocks past -k": (40, 40, 3, 0, True),
    # and keys 32-39 against rows 0-15 wholly right of +k
    "two-sided, blocks past both ends": (40, 40, 3, 0, False),
    "causal key cache (query_offset)": (20, 45, 5, 25, True),
    "two-sided, n_q != n_k, offset": (24, 33, 4, 3, False),
    "k larger than n: all band": (20, 20, 40, 0, False),
    "k = 0: one bucket": (18, 18, 0, 0, True),
}


@needs_interpreter
@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_kernel_equals_the_definition_forward_and_every_gradient(case):
    check(*case)


@needs_interpreter
def test_head_sizes_that_are_not_a_power_of_two():
    check(21, 21, 5, 0, False, d=24, d_v=40)


@needs_interpreter
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
def test_half_inputs_are_one_rounding_from_the_definition(dtype):
    check(20, 20, 3, 0, True, dtype=dtype)


def small(d=16, k=2, n=8):
    gen = torch.Generator().manual_seed(3)
    q = torch.randn(1, 1, n, d, generator=gen)
    table_k, table_v = (torch.randn(2 * k + 1, d, generator=gen) for _ in "kv")
    return q, q.clone(), q.clone(), table_k, table_v


@needs_triton
@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"mask": torch.ones(8, 8, dtype=torch.bool)}, "without a mask"),
        ({"trace": True}, "without a trace"),
        ({"return_weights": True}, "without returned weights"),
        ({"dropout_p": 0.1}, "without dropout"),
    ],
)
def test_triton_by_name_refuses_what_it_does_not_cover(kwargs, reason, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    with pytest.raises(ValueError, match=f"method 'triton' cannot run here: .*{reason}"):
        relative_attention(*small(), method="triton", **kwargs)


@needs_triton
def test_triton_by_name_refuses_float64_and_small_heads(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    with pytest.raises(ValueError, match="float16, bfloat16 or float32, got torch.float64"):
        relative_attention(*(t.double() for t in small()), method="triton")
    with pytest.raises(ValueError, match="head sizes 16-128, got d=8, d_v=8"):
        relative_attention(*small(d=8), method="triton")


def test_on_a_cpu_the_kernel_needs_the_interpreter_and_auto_says_why(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    want = "triton is not installed" if not TRITON else "only under TRITON_INTERPRET=1"
    with pytest.raises(ValueError, match=f"method 'triton' cannot run here: .*{want}"):
        relative_attention(*small(), method="triton")
    name, why = which_method(*small())
    assert name == "banded" and why.startswith("not the Triton kernel")
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # the interpreter is for tests: auto keeps off it
    assert which_method(*small())[0] == "banded"
    assert which_method(*small(), method="bucket") == ("bucket", "asked by name")


def test_the_core_imports_and_runs_without_triton():
    """triton is optional: with its import blocked, the core works and "triton" says why not."""
    code = (
        "import sys; sys.modules['triton'] = None\n"
        "import torch, relpos_core\n"
        "from relpos_core import relative_attention\n"
        "q = torch.randn(1, 1, 4, 16); w = torch.randn(5, 16)\n"
        "assert relative_attention(q, q, q, w, w).shape == (1, 1, 4, 16)\n"
        "try:\n"
        "    relative_attention(q, q, q, w, w, method='triton')\n"
        "except ValueError as e:\n"
        "    print(e)\n"
        "print(sorted(m for m in sys.modules if m.startswith('triton')))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout
    assert "triton is not installed" in out, out
    assert out.strip().endswith("['triton']"), out  # only the blocked entry: nothing loaded it
