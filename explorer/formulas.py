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
