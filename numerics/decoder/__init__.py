"""A pretrained decoder language model next to the theory: NumPy forward pass (GGUF or safetensors), heads as
attnflow parameters, token geometry by layer, attnflow's causal flow with the model's weights, long contexts."""
