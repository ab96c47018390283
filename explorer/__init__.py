"""App-side glue of the explorer: sidebar controls, cached calls into relpos_core, drawing."""

# plotly checks sys.modules for pandas while it validates a figure; if another session's thread
# is importing pandas at that moment (st.dataframe does, lazily), plotly gets the half-imported
# module and raises "partially initialized module 'pandas' has no attribute 'Series'". app.py
# imports this package before any page draws, so pandas is imported whole, once, up front.
import pandas  # noqa: F401
