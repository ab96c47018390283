"""Figures and words every page shares: heatmaps, lines, token view, formulas, notes.

Every figure is built with the explorer's plotly template (:mod:`explorer.figures.template`),
set here, before any module of the package builds one.
"""

from explorer.figures.template import use_template

use_template()
