"""Defaults of cluster detection, without heavy imports (read by the ``clusters``/``predict-merges`` parsers)."""
#: default cluster threshold in radians (numerics.clusters.detection)
DEFAULT_EPS = 1e-3
