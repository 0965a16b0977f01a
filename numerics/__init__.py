"""The numerical layer of attnflow (NumPy, SciPy, NetworkX; no symbolic derivation at run time).

One subpackage per area, each a vertical slice holding its code, its claims (``claims.py``, registered with
``attnflow verify``) and its CLI commands (``commands/``, discovered by :mod:`numerics.cli`):

- :mod:`numerics.common`: input errors, provenance and atomic files, rendering, plots, the claim registry;
- :mod:`numerics.core`: the model object, fields, integrators, simulations and trajectories;
- :mod:`numerics.circle.angles`, :mod:`numerics.meanfield`, :mod:`numerics.critical.report`, :mod:`numerics.clusters.detection`,
  :mod:`numerics.gaussian.solutions`: the areas built on the core;
- :mod:`numerics.conjectures.framework`: the conjecture lab, on top of the areas.

The public API is re-exported once, from the :mod:`attnflow` package (``import attnflow as af``).
"""
from numerics.common.numba_cache import use_user_cache

# before any module imports Numba: its kernel cache goes to a user directory, not into this source tree
use_user_cache()
