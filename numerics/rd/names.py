"""Names of the R^d area's choices, without heavy imports (read by the CLI parser)."""
OT_BACKENDS = ("pot", "assignment")
