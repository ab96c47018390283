"""Length generalization (Shaw et al. 2018, section 4): a tiny relative-attention encoder and the
same architecture with sinusoidal absolute encoding, trained on a synthetic task and evaluated at
lengths longer than any they saw.

    tasks.py      the synthetic tasks and the fixed evaluation set
    models.py     the encoder in its two position flavours
    train.py      training, evaluation, the command line
    encoders.py   the shipped encoders (``load_encoder``) and what to look at in them
    checkpoints/  relative.pt, absolute.pt, generalization.json

    python -m relpos_lab.generalization          # both models, writes checkpoints/
    python -m relpos_lab.generalization --help
"""
