"""Every formula the explorer shows, in LaTeX with Shaw et al.'s (2018) symbols, written once.

Pages pass these to ``st.latex`` (or ``st.markdown("$...$")`` inline) so that one quantity has
one name and one formula on every page. Symbols: x_i the input at position i, W^Q, W^K, W^V the
projections, d_z the head dimension, k the clip distance, w^K and w^V the (2k+1)-row tables.
The relative part of a logit is called the *relative term*; e_ij is the whole logit (eq. 4).
"""

CLIP = r"\operatorname{clip}(x, k) = \max\bigl(-k, \min(k, x)\bigr)"
INDEX = r"\operatorname{clip}(j - i, k) + k \;\in\; \{0, \dots, 2k\}"
A_K = r"a^K_{ij} = w^K_{\operatorname{clip}(j - i,\, k)}"
A_V = r"a^V_{ij} = w^V_{\operatorname{clip}(j - i,\, k)}"
CONTENT_TERM = r"\frac{(x_i W^Q)(x_j W^K)^\top}{\sqrt{d_z}}"
RELATIVE_TERM = r"\frac{(x_i W^Q)\,(a^K_{ij})^\top}{\sqrt{d_z}}"
LOGIT = r"e_{ij} = \frac{x_i W^Q \bigl(x_j W^K + a^K_{ij}\bigr)^\top}{\sqrt{d_z}}"
WEIGHT = r"\alpha_{ij} = \frac{\exp e_{ij}}{\sum_{l \,\text{allowed}} \exp e_{il}}"
OUTPUT = r"z_i = \sum_j \alpha_{ij} \bigl(x_j W^V + a^V_{ij}\bigr)"
CONTENT_OUTPUT = r"\sum_j \alpha_{ij}\, x_j W^V"
RELATIVE_OUTPUT = r"\sum_j \alpha_{ij}\, a^V_{ij}"
SKEW = (
    r"S^{\mathrm{rel}} = \operatorname{skew}\bigl(Q E_r^\top\bigr),\quad "
    r"S^{\mathrm{rel}}_{ij} = q_i \cdot (E_r)_{\,j - i + L - 1}"
)
SINUSOID = (
    r"PE_{(p,\,2m)} = \sin\bigl(p / 10000^{2m/d}\bigr),\quad "
    r"PE_{(p,\,2m+1)} = \cos\bigl(p / 10000^{2m/d}\bigr)"
)

# ---- Transformer-XL (Dai et al. 2019, Sec. 3.3 and Appendix B) -----------------------------
# Symbols: Q queries after M memory positions, K = Q + M keys; query row i sits at position
# M + i, so its distance to key j is (M + i) - j. R is the sinusoid of a distance, W_R its
# projection, u and v the global biases; every term is divided by sqrt(d) as in relpos_core.
XL_LOGIT = (
    r"A^{\mathrm{rel}}_{ij} = \underbrace{q_i^\top k_j}_{(a)}"
    r" + \underbrace{q_i^\top W_R R_{i-j}}_{(b)}"
    r" + \underbrace{u^\top k_j}_{(c)}"
    r" + \underbrace{v^\top W_R R_{i-j}}_{(d)}"
)
XL_POSITION = r"(b) + (d) = \frac{(q_i + v)^\top\, W_R R_{i-j}}{\sqrt{d}}"
XL_INPUT = (
    r"X_{ic} = \frac{(q_i + v)^\top\, W_R R_{K-1-c}}{\sqrt{d}} \in \mathbb{R}^{Q \times K},"
    r"\quad \text{column } c \text{ is the distance } K - 1 - c"
)
XL_PADDED = r"\bigl[\,0 \;\big|\; X\,\bigr] \in \mathbb{R}^{Q \times (K+1)}"
XL_RESHAPED = (
    r"\operatorname{reshape}_{(K+1) \times Q}\bigl[\,0 \;\big|\; X\,\bigr]"
    r"\quad\text{(the same numbers, read in rows of } Q\text{)}"
)
XL_SLICED = r"\text{reshaped}[1{:},\,:] \in \mathbb{R}^{K \times Q}\quad\text{(drop row 0)}"
XL_SHIFT = (
    r"\operatorname{rel\_shift}(X) = \operatorname{reshape}_{Q \times K}(\text{sliced}),\quad "
    r"\operatorname{rel\_shift}(X)_{ij} = X_{i,\; j + Q - 1 - i}\ \text{for}\ j \le M + i"
)
