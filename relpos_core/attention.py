"""Relation-aware self-attention (Shaw et al. 2018, eqs. 2-4): the one attention call.

e_ij     = (q_i · k_j + q_i · a^K_ij) / sqrt(d)
alpha_ij = softmax_j(e_ij)        over the keys the mask allows
z_i      = sum_j alpha_ij v_j  +  sum_j alpha_ij a^V_ij

``relative_attention(..., trace=True)`` returns every step as a frozen ``AttentionTrace`` (for
the explorer); ``trace=False`` returns only the output (and the weights if asked), as fast as the
method allows, with gradients. The call is admitted (``admission``), then one line runs what
``methods.pick_method`` chose: a method step by step around its key and value terms
(``methods.definition``), or a kernel that keeps no step (``methods.kernels``).

float16 and bfloat16 inputs are computed in float32 and the results returned in their dtype
(``relpos_core.precision``); autocast is off inside.
"""

from __future__ import annotations

import torch

from relpos_core.admission import admit_call, check_attention_inputs
from relpos_core.methods import METHOD_NAMES
from relpos_core.methods.definition import AttentionTrace, check_finite_output
from relpos_core.precision import no_autocast

ATTENTION_METHODS = ("auto", *METHOD_NAMES)  # and "triton", a kernel asked for by name
__all__ = [
    "ATTENTION_METHODS",
    "AttentionTrace",
    "check_attention_inputs",
    "check_finite_output",
    "relative_attention",
]


def relative_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    table_k: torch.Tensor,
    table_v: torch.Tensor,
    *,
    mask: torch.Tensor | None = None,
    causal: bool = False,
    query_offset: int = 0,
    method: str = "auto",
    trace: bool = False,
    return_weights: bool = False,
    dropout_p: float = 0.0,
    generator: torch.Generator | None = None,
    max_bytes: int | None = None,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor] | AttentionTrace:
    """Relative attention: q (b,h,n_q,d), k (b,h,n_k,d), v (b,h,n_k,d_v), tables (2k+1, d) and
    (2k+1, d_v) with k = max_relative_position -> z (b, h, n_q, d_v).

    mask            bool, or 0/1 numbers, broadcastable to (b, h, n_q, n_k) from any rank 0-4
                    (a key mask (n_k,), a (n_q, n_k) pattern, ...); True = attend.
    causal          query i sees keys j <= i (positions, so with the offset below).
    query_offset    position of query row 0 among the keys: 0 for self-attention; n_k - n_q for
                    tensor2tensor's convention (queries at the last positions, as when decoding
                    with a key/value cache); any row block of a longer sequence.
    method          a registered method or "auto": all are exact. "triton": the fused Triton
                    kernel (``methods.triton_attention``; CUDA, or a CPU under
                    TRITON_INTERPRET=1), which "auto" takes on CUDA where it applies.
                    ``methods.pick_method`` decides what runs; ``admission.which_method``
                    says what and why.
    trace           True: an ``AttentionTrace`` of every step. False: z, or (z, alpha) with
                    ``return_weights``, holding no (b, h, n_q, n_k) tensor on the banded path
                    (with or without gradients) unless the weights are asked for.
    dropout_p       dropout on the weights (training); from ``generator`` or the global RNG.
    max_bytes       refuse (ValueError, with the estimate) a call whose estimated peak memory
                    (``memory.attention_bytes``, with the backward when q, k, v or a table
                    needs gradients) is above this int; None: the device's total memory. Pass
                    a larger number to run a method the estimate thinks too big for the machine.

    A query with no key to attend to gets zero weights and a zero output (not NaN). With
    ``trace=True`` a NaN or inf in q, k or v is refused; the fast path lets it propagate, as
    torch's own attention does, rather than pay a pass over the inputs. Finite inputs whose
    logits overflow the dtype are refused in words on both paths (on a CPU: a GPU is not
    waited for to look).

    >>> q = k = v = torch.zeros(1, 1, 2, 1)
    >>> w = torch.zeros(3, 1)
    >>> relative_attention(q, k, v, w, w, causal=True, trace=True).weights[0, 0]
    tensor([[1.0000, 0.0000],
            [0.5000, 0.5000]])
    >>> relative_attention(q[:, :, 1:], k, v, w, w, query_offset=1, causal=True).shape
    torch.Size([1, 1, 1, 1])
    """
    call = admit_call(
        q, k, v, table_k, table_v, mask=mask, causal=causal, query_offset=query_offset,
        method=method, trace=trace, return_weights=return_weights, dropout_p=dropout_p,
        generator=generator, max_bytes=max_bytes,
    )  # fmt: skip
    with no_autocast(q.device):  # float32 stays float32 inside, under torch.autocast too
        return call.method.run(call, q, k, v, table_k, table_v)  # a kernel, or eqs. 2-4 stepwise
