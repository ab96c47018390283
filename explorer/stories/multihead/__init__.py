"""The Multi-head and masks story: its cached views and its figure sizes."""
