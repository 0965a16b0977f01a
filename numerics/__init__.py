"""attnflow.numerics: simulations, solvers and checks (NumPy, SciPy, NetworkX; no symbolic derivation here)."""
from .errors import InputError
from .field import attention_field, interaction_energy, make_field
from .integrators import METHODS, renormalize, step_layer, step_rk4
from .trajectory import Trajectory, load_initial, simulate, uniform_sphere
from .verification import CheckResult, all_claims, claim

__all__ = [
    "CheckResult",
    "InputError",
    "METHODS",
    "Trajectory",
    "all_claims",
    "attention_field",
    "claim",
    "interaction_energy",
    "load_initial",
    "make_field",
    "renormalize",
    "simulate",
    "step_layer",
    "step_rk4",
    "uniform_sphere",
]

# --- meanfield (issue 5) ---
from .growth import (
    degree_power_spectrum,
    particle_growth_rates_circle,
    particle_growth_rates_sphere,
    pde_growth_rates,
)
from .metastable import count_clusters_by_gaps, metastable_experiment
from .pde import solve_continuity_circle

__all__ += [
    "count_clusters_by_gaps",
    "degree_power_spectrum",
    "metastable_experiment",
    "particle_growth_rates_circle",
    "particle_growth_rates_sphere",
    "pde_growth_rates",
    "solve_continuity_circle",
]
