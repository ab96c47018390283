"""Its FlexAttention ``score_mod``: not written yet.

A ``score_mod(score, b, h, q_idx, kv_idx)`` returns the logit with this scheme's position term
added, so that FlexAttention's fused kernel can run the scheme. It is filled in later; until then
``SCORE_MOD`` is None and the scheme runs through its own ``PositionScheme`` methods only.
"""

SCORE_MOD = None
