"""The frame every page shares: view parameters, URL binding, sidebar, widgets, downloads."""
