"""How published checkpoints say ALiBi, as data (the lab's extractor reads the config): no
tensor, a config field or model type that says so, and the head count the slopes follow from."""

ORDER = 2  # its line's place in what the extractor looks for
LOOKED_FOR = ("ALiBi in the config (alibi, attn_config.alibi, a BLOOM model type)",)
FLAG = "alibi"  # Falcon's config, and MPT's attn_config
MAX_BIAS = "alibi_bias_max"  # MPT's attn_config: the paper's 8
MODEL_TYPES = ("bloom",)
