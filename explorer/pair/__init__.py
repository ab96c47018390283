"""The picked pair (i, j): what the definition says about it, its controls, marks and card."""
