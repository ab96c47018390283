"""The Long context story: RoPE's wavelengths and decay, context extension on the trained
model, and where attention sinks."""
