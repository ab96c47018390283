"""The "Your model" story: a checkpoint's position parameters, head by head."""
