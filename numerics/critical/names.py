"""Names of the structured configurations, without heavy imports (read by the ``critical`` parser)."""
CONFIGS = ("sync", "antipodal", "polygon", "clusters", "simplex", "orthoplex", "file")
