"""How published checkpoints store DeBERTa's positions, as data (the lab's extractor reads the
bytes): one table of relative embeddings P (2 span, hidden) and, per layer, the projections that
turn it into each head's position keys P^K (read by queries: c2p) and position queries P^Q (read
by keys: p2c).

transformers' DebertaV2 (DeBERTa-v2 and v3) keeps P once, under ``<ENCODER>.rel_embeddings``,
layer-normed by ``<ENCODER>.LayerNorm`` where the config's ``norm_rel_ebd`` says "layer_norm";
each layer projects it with ``pos_key_proj`` / ``pos_query_proj``, or with its content
``key_proj`` / ``query_proj`` when ``share_att_key`` (v3). This library's family checkpoint keeps
a table and both projections in every layer's scheme.
"""

ORDER = 4  # its line's place in what the extractor looks for
LOOKED_FOR = (
    "DeBERTa-v2/v3's encoder.rel_embeddings.weight with each layer's attention.self projections "
    "(and this library's scheme.rel_embeddings)",
)
READING = "deberta_rows_by_distance"  # relpos_core.by_distance: the row of P each distance reads
EXTRACTED = "deberta"  # the extractor's own file: deberta/<layer>/<key|query>

# ---- transformers' DebertaV2 --------------------------------------------------------------------
TABLE = "encoder.rel_embeddings.weight"  # (2 span, hidden), shared by every layer
TABLE_NORM = "encoder.LayerNorm"  # .weight and .bias (hidden,), applied to P itself
LAYERS = "encoder.layer"  # <LAYERS>.<L>.<ATTENTION>.<projection>.weight / .bias
ATTENTION = "attention.self"
# (term, its own projection, the content one shared under share_att_key, what it makes of P)
PROJECTIONS = (
    ("c2p", "pos_key_proj", "key_proj", "key"),
    ("p2c", "pos_query_proj", "query_proj", "query"),
)
CONFIG_ON = "relative_attention"  # false: no relative terms at all
CONFIG_BUCKETS = "position_buckets"  # <= 0: no buckets
CONFIG_MAX = "max_relative_positions"  # < 1: CONFIG_LONGEST stands for it
CONFIG_LONGEST = "max_position_embeddings"
CONFIG_TERMS = "pos_att_type"  # a list, or text joined by "|": which of c2p and p2c are added
CONFIG_SHARE = "share_att_key"
CONFIG_NORM, NORM_WORD = "norm_rel_ebd", "layer_norm"  # text joined by "|"
CONFIG_EPS, DEFAULT_EPS = "layer_norm_eps", 1e-7  # DebertaV2Config's default
CONFIG_HEADS, CONFIG_WIDTH = "num_attention_heads", "hidden_size"
DEFAULT_LONGEST = 512  # DebertaV2Config's max_position_embeddings

# ---- this library's family checkpoint (scheme_params holds the two settings) --------------------
FAMILY_TABLE = "scheme.rel_embeddings"  # (2 span, d_model), one per layer
FAMILY_PROJECTIONS = (("c2p", "scheme.pos_key_proj"), ("p2c", "scheme.pos_query_proj"))
FAMILY_HEADS, FAMILY_WIDTH = "heads", "d_model"
SETTINGS = ("position_buckets", "max_relative_positions")  # the reading's keywords
