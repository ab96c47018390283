"""How published checkpoints store T5's bias, as data (the lab's extractor reads the bytes).

T5, mT5, LongT5 and UMT5 keep one table (num_buckets, heads) per stack, under
``<encoder|decoder>.block.<L>.[...].<name>.weight``, LongT5's global one beside it; the config
gives the bucketing. The encoder buckets both directions, the decoder one.
"""

ORDER = 0  # its line's place in what the extractor looks for
LOOKED_FOR = ("T5's relative_attention_bias.weight (T5, mT5, LongT5, UMT5)",)
BIAS_NAMES = ("relative_attention_bias", "global_relative_attention_bias")  # local, global
STACKS = ("encoder", "decoder")  # the encoder's bias is bidirectional
FAMILY_BIAS = "scheme.bias"  # this library's family checkpoint (a causal model)
CONFIG_BUCKETS = "relative_attention_num_buckets"
CONFIG_MAX_DISTANCE = "relative_attention_max_distance"
DEFAULT_BUCKETS, DEFAULT_MAX_DISTANCE = 32, 128  # T5's, without a config that says
