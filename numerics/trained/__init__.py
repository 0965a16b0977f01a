"""A pretrained transformer next to the theory: NumPy BERT encoder, token geometry by layer, heads, iterated layers."""
