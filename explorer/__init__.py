"""App-side glue of the explorer: sidebar controls, cached calls into relpos_core, drawing.

Nothing in the explorer imports pandas (tables are markdown, charts plotly.graph_objects): it
and pyarrow would add about 65 MB to a server that must fit in 690 MB. plotly only reads pandas
when something else has imported it, so no half-imported pandas can reach a figure either.
"""
