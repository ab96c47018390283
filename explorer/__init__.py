"""App-side glue of the explorer: sidebar controls, cached calls into relpos_core, drawing."""
