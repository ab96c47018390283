"""The skew and Transformer-XL's rel_shift, step by step: their stories and figures."""
