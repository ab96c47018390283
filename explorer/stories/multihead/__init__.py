"""The Multi-head and masks story: its cached views (multi-head attention, the masks), its
notes, words, figures and download."""
