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
# --- gaussian (issue 6) ---
from .gaussian import (  # noqa: E402
    compare_particles_to_ode,
    gaussian_attention,
    layer_gaussian_map,
    moment_rhs,
    particle_velocity,
    simulate_particles,
    sinkhorn_conditional_covariance,
    softmax_blowup_time,
    softmax_identity_value_closed_form,
    softmax_low_rank_limit,
    solve_moment_ode,
    velocity_by_quadrature,
)

__all__ += [
    "compare_particles_to_ode",
    "gaussian_attention",
    "layer_gaussian_map",
    "moment_rhs",
    "particle_velocity",
    "simulate_particles",
    "sinkhorn_conditional_covariance",
    "softmax_blowup_time",
    "softmax_identity_value_closed_form",
    "softmax_low_rank_limit",
    "solve_moment_ode",
    "velocity_by_quadrature",
]
