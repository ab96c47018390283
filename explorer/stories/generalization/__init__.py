"""The trained generalization encoders: their cached views and figures."""
