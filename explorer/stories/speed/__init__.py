"""The Speed & memory story: memory curves and a bounded live benchmark."""
