"""App-side glue of the explorer: sidebar controls, cached calls into relpos_core, drawing.

Its sub-packages form layers, each importing only its own and lower ones: frame (parameters, URL,
sidebar, widgets, downloads, memory) < weights (random or trained tensors) < pair (the picked
(i, j)) < figures < stories (one sub-package per story; no story imports another). Pages sit
above them all. tests/test_explorer_layout.py holds the layering.

Nothing in the explorer imports pandas (tables are markdown, charts plotly.graph_objects): it
and pyarrow would add about 65 MB to a server that must fit in 690 MB. plotly only reads pandas
when something else has imported it, so no half-imported pandas can reach a figure either.
"""
