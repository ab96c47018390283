"""A model's position parameters out of its checkpoint: T5's bias, Shaw's tables, ALiBi's and
RoPE's configuration, as a small file (``python -m relpos_lab.extract PATH --out FILE``) and as
the object the explorer's "Your model" page draws.

Public: ``from_path`` (a file or a save_pretrained folder), ``from_upload`` (bytes),
``to_bytes`` (the extracted file), ``Positions`` and its parts, ``FileProblem`` (every refusal,
in words); a Hub model's position tensors by HTTP range reads: ``relpos_lab.extract.hub.from_hub``.
"""

from relpos_lab.extract.finders import LOOKED_FOR, looked_for
from relpos_lab.extract.positions import Alibi, Positions, Rope, ShawLayer, T5Stack, to_bytes
from relpos_lab.extract.safetensors_file import FileProblem
from relpos_lab.extract.sources import MAX_UPLOAD_MB, from_path, from_upload

__all__ = [
    "LOOKED_FOR", "MAX_UPLOAD_MB", "Alibi", "FileProblem", "Positions", "Rope", "ShawLayer",
    "T5Stack", "from_path", "from_upload", "looked_for", "to_bytes",
]  # fmt: skip
