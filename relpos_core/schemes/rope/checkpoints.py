"""How published checkpoints say RoPE, as data (the lab's extractor reads the config): no
tensor, a config field that names it or a model type that always rotates."""

ORDER = 3  # its line's place in what the extractor looks for
LOOKED_FOR = (
    "RoPE in the config (rope_theta, rotary_emb_base, rope_scaling, a Llama-family model type)",
)
FIELDS = ("rope_theta", "rotary_emb_base", "rope_scaling")  # any one says RoPE
BASE_FIELDS = ("rope_theta", "rotary_emb_base")
MODEL_TYPES = frozenset({  # model types that use RoPE with no key naming it in their config
    "llama", "mistral", "mixtral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text", "phi3",
    "gpt_neox", "olmo", "olmo2", "starcoder2", "cohere", "stablelm", "gptj", "deepseek_v3",
})  # fmt: skip
