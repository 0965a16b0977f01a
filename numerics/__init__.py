"""attnflow.numerics: simulations, solvers and checks (NumPy, SciPy, NetworkX; no symbolic derivation here)."""
from .errors import InputError
from .field import attention_field, interaction_energy, make_field
from .integrators import METHODS, integrate_adaptive, integrate_fixed, observed_order, renormalize, step_layer, step_rk4
from .taylor import fitted_slope, tangent_direction, taylor_remainders
from .trajectory import (
    BACKENDS,
    Trajectory,
    load_attention_matrices,
    load_initial,
    resume,
    select_field,
    simulate,
    uniform_sphere,
)
from .verification import CheckResult, all_claims, claim

__all__ = [
    "CheckResult",
    "InputError",
    "METHODS",
    "Trajectory",
    "all_claims",
    "attention_field",
    "BACKENDS",
    "fitted_slope",
    "integrate_adaptive",
    "integrate_fixed",
    "load_attention_matrices",
    "observed_order",
    "resume",
    "select_field",
    "tangent_direction",
    "taylor_remainders",
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

# --- critical points (issue 3) ---
from .configurations import build_configuration, circle_clusters, orthoplex, regular_polygon, simplex, synchronized
from .critical import (
    CriticalPointReport,
    closed_form_spectrum,
    critical_point_report,
    linearized_jacobian,
    orbit_tangent_basis,
)
from .hessian import hessian_spectrum, relative_residual, riemannian_hessian_tangent, tangent_basis
from .riemannian_newton import find_critical_points, gram_signature, riemannian_newton

__all__ += [
    "CriticalPointReport",
    "build_configuration",
    "circle_clusters",
    "closed_form_spectrum",
    "critical_point_report",
    "find_critical_points",
    "gram_signature",
    "hessian_spectrum",
    "linearized_jacobian",
    "orbit_tangent_basis",
    "orthoplex",
    "regular_polygon",
    "relative_residual",
    "riemannian_hessian_tangent",
    "riemannian_newton",
    "simplex",
    "synchronized",
    "tangent_basis",
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

# --- conjecture lab (issue 8) ---
from .conjectures import Conjecture, ConjectureResult, Verdict, load_counterexample, replay, save_counterexample
from .kernel_field import compile_kernel, kernel_energy, kernel_field, kernel_riemannian_gradient, make_kernel_field

__all__ += [
    "Conjecture",
    "ConjectureResult",
    "Verdict",
    "compile_kernel",
    "kernel_energy",
    "kernel_field",
    "kernel_riemannian_gradient",
    "load_counterexample",
    "make_kernel_field",
    "replay",
    "save_counterexample",
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

# --- clusters, merge trees and the metastable staircase (issue 7) ---
from .clusters import Clusters, find_clusters, geodesic_distance, single_linkage_labels
from .merge_tree import MergeEvent, MergeHistory, Violation, merge_history, reintegrator, reintegrator_from_meta
from .reduced import (MergePrediction, closest_pair_order, compare_merges, expand_reduced, make_reduced_field,
                      predict_merges, reduce_configuration, two_cluster_laplace, two_cluster_merge_time)
from .staircase import Plateau, detect_plateaus, energy_staircase, normalized_energies

__all__ += ["Clusters", "find_clusters", "geodesic_distance", "single_linkage_labels", "MergeEvent",
            "MergeHistory", "Violation", "merge_history", "reintegrator", "reintegrator_from_meta",
            "MergePrediction", "closest_pair_order", "compare_merges", "expand_reduced", "make_reduced_field",
            "predict_merges", "reduce_configuration", "two_cluster_laplace", "two_cluster_merge_time", "Plateau",
            "detect_plateaus", "energy_staircase", "normalized_energies"]
