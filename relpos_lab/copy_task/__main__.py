"""``python -m relpos_lab.copy_task``: train the copy model, write checkpoints/copy.pt and
copy.json beside this package."""

from relpos_lab.copy_task import main

main()
