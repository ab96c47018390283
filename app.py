"""Relative position attention explorer: shared sidebar controls, then the selected page.

Run with ``streamlit run app.py``. Pages live in ``pages/`` (one file each) and read the view
built here through ``explorer.frame.controls.current_params``; the frame around them (sidebar,
navigation, notes, download) is ``explorer.shell``.
"""

from explorer.frame.chart_code import fetch_chart_code

# Before the imports below load torch (1.5 s on a fresh server): the visitor's browser fetches
# and compiles the chart code meanwhile (explorer/frame/chart_code.py).
fetch_chart_code()

from explorer.shell import page_file, run_app

run_app(page_file)
