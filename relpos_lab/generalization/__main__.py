"""``python -m relpos_lab.generalization``: train both encoders and write their checkpoints."""

from relpos_lab.generalization.train import main

main()
