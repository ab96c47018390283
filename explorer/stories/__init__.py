"""One sub-package per story: its cached views, its figures and its own controls."""
