"""Shaw et al.'s relative attention step by step: the lookup, logits and attention views."""
