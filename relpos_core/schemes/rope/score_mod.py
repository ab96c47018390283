"""RoPE is not a score modification: it rotates q and k before their product.

    e_ij = (R_i q_i) · (R_j k_j) / sqrt(d)

A ``score_mod`` receives the finished q_i · k_j and the indices; the rotation acts on the
vectors before the product and cannot be recovered from that number. FlexAttention runs RoPE
as plain attention over the rotated vectors, with no ``score_mod``.
"""

NOT_A_SCORE_MOD = (
    "RoPE rotates q and k before their product, so it is not a score_mod: a score_mod sees only "
    "the finished q_i · k_j. FlexAttention runs it as flex_attention(rotate(q), rotate(k), v) "
    "with no score_mod, the rotated pair from the scheme's rotate_queries_keys(q, k, "
    "query_offset) (queries at positions query_offset onwards, keys from 0, times the "
    "scaling's attention factor), under any mask's block_mask."
)
