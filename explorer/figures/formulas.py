"""Every formula the explorer shows, in LaTeX, written once in the symbols of
:mod:`explorer.figures.glossary` (n the sequence length, d the head dimension, k the clip
distance, L only the Music Transformer's table length).

Pages draw these with :func:`latex` (``st.latex`` that a phone breaks only between a formula's
parts, see :mod:`explorer.frame.tex`; ``st.markdown("$...$")`` inline) so that one quantity has
one name and one formula on every page: x_i the input at position i, W^Q, W^K, W^V the
projections, w^K and w^V Shaw et al.'s (2018) (2k+1)-row tables. The relative part of a logit is
called the *relative term*; e_ij is the whole logit (eq. 4).
"""

from explorer.frame.tex import latex as latex  # pages draw every display formula with it

CLIP = r"\operatorname{clip}(x, k) = \max\bigl(-k, \min(k, x)\bigr)"
INDEX = r"\operatorname{clip}(j - i, k) + k \;\in\; \{0, \dots, 2k\}"
A_K = r"a^K_{ij} = w^K_{\operatorname{clip}(j - i,\, k)}"
A_V = r"a^V_{ij} = w^V_{\operatorname{clip}(j - i,\, k)}"
CONTENT_TERM = r"\frac{(x_i W^Q)(x_j W^K)^\top}{\sqrt{d}}"
RELATIVE_TERM = r"\frac{(x_i W^Q)\,(a^K_{ij})^\top}{\sqrt{d}}"
LOGIT = r"e_{ij} = \frac{x_i W^Q \bigl(x_j W^K + a^K_{ij}\bigr)^\top}{\sqrt{d}}"
WEIGHT = r"\alpha_{ij} = \frac{\exp e_{ij}}{\sum_{l \,\text{allowed}} \exp e_{il}}"
OUTPUT = r"z_i = \sum_j \alpha_{ij} \bigl(x_j W^V + a^V_{ij}\bigr)"
CONTENT_OUTPUT = r"\sum_j \alpha_{ij}\, x_j W^V"
RELATIVE_OUTPUT = r"\sum_j \alpha_{ij}\, a^V_{ij}"
SKEW = (  # n the sequence length (Huang et al. write L), d the head dimension
    r"S^{\mathrm{rel}} = \operatorname{skew}\Bigl(\frac{Q E_r^\top}{\sqrt{d}}\Bigr),\quad "
    r"S^{\mathrm{rel}}_{ij} = \frac{q_i \cdot (E_r)_{\,j - i + n - 1}}{\sqrt{d}}"
)
SINUSOID = (
    r"PE_{(p,\,2m)} = \sin\bigl(p / 10000^{2m/d_{\mathrm{model}}}\bigr),\quad "
    r"PE_{(p,\,2m+1)} = \cos\bigl(p / 10000^{2m/d_{\mathrm{model}}}\bigr)"
)

# The family's formulas (each scheme's logit and position term) are its catalogue entry's:
# relpos_core.schemes.catalogue.
# The distance profile: mean and spread of a position term p_ij along each diagonal j - i = r.
PROFILE = (
    r"\bar p(r) = \frac{1}{|D_r|} \sum_{(i,j) \in D_r} p_{ij},\quad "
    r"\sigma(r)^2 = \frac{1}{|D_r|} \sum_{(i,j) \in D_r} \bigl(p_{ij} - \bar p(r)\bigr)^2,"
    r"\quad D_r = \{(i, j) : j - i = r\}"
)

# ---- Transformer-XL (Dai et al. 2019, Sec. 3.3 and Appendix B) -----------------------------
# Symbols: n_q queries after M memory positions, n_k = n_q + M keys; query i and key j sit at
# positions i and j (the memory at -M..-1), key j in column M + j, and R is indexed by the
# paper's i - j (every page writes the distance j - i). R is the sinusoid of a distance, W_{k,R} its
# projection, u and v the global biases; every term is divided by sqrt(d) as in relpos_core.
XL_INPUT = (
    r"X_{ic} = \frac{(q_i + v)^\top\, W_{k,R} R_{n_k-1-c}}{\sqrt{d}}"
    r" \in \mathbb{R}^{n_q \times n_k},"
    r"\quad \text{column } c \text{ is the distance } j - i = c - (n_k - 1)"
)
XL_PADDED = r"\bigl[\,0 \;\big|\; X\,\bigr] \in \mathbb{R}^{n_q \times (n_k+1)}"
XL_RESHAPED = (
    r"\operatorname{reshape}_{(n_k+1) \times n_q}\bigl[\,0 \;\big|\; X\,\bigr]"
    r"\quad\text{(the same numbers, read in rows of } n_q\text{)}"
)
XL_SLICED = r"\text{reshaped}[1{:},\,:] \in \mathbb{R}^{n_k \times n_q}\quad\text{(drop row 0)}"
XL_SHIFT = (  # key j (position j; memory keys at -M..-1) is column M + j of the result
    r"\operatorname{rel\_shift}(X) = \operatorname{reshape}_{n_q \times n_k}(\text{sliced}),\quad "
    r"\operatorname{rel\_shift}(X)_{i,\,M + j} = X_{i,\; j - i + n_k - 1}\ \text{for}\ j \le i"
)
