"""The family of position schemes: its settings, controls, cached views and figures."""
