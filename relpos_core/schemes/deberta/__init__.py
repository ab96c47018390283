"""He et al. 2021 (DeBERTa): disentangled attention, content-to-position and position-to-content.

Everything the project knows of this scheme is in this folder (see ``relpos_core.schemes.folders``
for what each module holds); its maths module's names are this package's, imported when asked.
"""

from relpos_core.schemes.folders import maths_attribute

__getattr__ = maths_attribute(__name__)
