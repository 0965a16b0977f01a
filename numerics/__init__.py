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
# --- circle (issue 4) ---
from .circle import (  # noqa: E402
    CircleTrajectory,
    circle_energy,
    kuramoto_order_parameter,
    make_angle_field,
    order_parameters,
    simulate_circle,
)
from .fourier import (  # noqa: E402
    fourier_angle_velocity,
    fourier_is_faster,
    harmonics_for_tolerance,
    make_fourier_field,
)

__all__ += [
    "CircleTrajectory",
    "circle_energy",
    "fourier_angle_velocity",
    "fourier_is_faster",
    "harmonics_for_tolerance",
    "kuramoto_order_parameter",
    "make_angle_field",
    "make_fourier_field",
    "order_parameters",
    "simulate_circle",
]

# --- meanfield (issue 5) ---
from .growth import (  # noqa: E402
    degree_power_spectrum,
    particle_growth_rates_circle,
    particle_growth_rates_sphere,
    pde_growth_rates,
)
from .metastable import count_clusters_by_gaps, metastable_experiment  # noqa: E402
from .pde import solve_continuity_circle  # noqa: E402

__all__ += [
    "count_clusters_by_gaps",
    "degree_power_spectrum",
    "metastable_experiment",
    "particle_growth_rates_circle",
    "particle_growth_rates_sphere",
    "pde_growth_rates",
    "solve_continuity_circle",
]
