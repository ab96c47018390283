"""How published checkpoints store Shaw et al.'s tables, as data (the lab's extractor reads the
bytes): (2k + 1, d) each, under the names of the layer as widely copied (and as
``relpos_core.layer`` writes it) and of this library's scheme."""

ORDER = 1  # its lines' place in what the extractor looks for
LOOKED_FOR = (
    "Shaw's relative_position_k / relative_position_v.embeddings_table",
    "this library's scheme.table_k / scheme.table_v (or scheme.bias of its T5)",
)
TABLES = (  # a tensor name's ending, and which table it is
    ("relative_position_k.embeddings_table", "key"),
    ("relative_position_v.embeddings_table", "value"),
    ("scheme.table_k", "key"),
    ("scheme.table_v", "value"),
)
EXTRACTED = "shaw"  # the extractor's own file: shaw/<layer>/<key|value>
