"""Figures and words every page shares: heatmaps, lines, token view, formulas, notes."""
