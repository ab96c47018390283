"""The Attention basics story: the copy model, the worked example, the sqrt(d) scale, with
their notes, words, figures and download."""
