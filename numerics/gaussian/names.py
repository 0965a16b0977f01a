"""Names of the attention kinds with Gaussian solutions, without heavy imports (read by the CLI parser)."""
ATTENTIONS = ("softmax", "l2", "sinkhorn")
