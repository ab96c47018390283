"""One source of tensors for every view: seeded random or trained weights, resolved here."""
