"""attnflow.theory: the symbolic layer (sympy and mpmath only, no simulation code).

Derivations of energies, Riemannian gradients and Hessians on the sphere, linearised operators and covariance
ODEs; :mod:`theory.codegen` turns them into vectorised NumPy callables.
"""
from .codegen import GeneratedModel, generate_model, model_module_source, write_model_module
from .derivation import Derivation, Step, Verification, rational_sphere_point
from .energy import (
    empirical_energy,
    energy_identity_derivation,
    explicit_energy_identity_derivation,
    explicit_gradient_structure_derivation,
    gradient_structure_derivation,
    mean_field_energy,
)
from .fields import attention_weight, explicit_field, field_derivation, particle_field, tangency_derivation
from .hessian import closed_form_riemannian_hessian, gradient_derivation, hessian_derivation
from .kernels import PairKernel, exponential_kernel, pair_energy
from .spec import MODELS, ModelSpec
from .sphere import (
    euclidean_gradient,
    euclidean_hessian,
    product_riemannian_gradient,
    product_riemannian_hessian_matrix,
    projection_matrix,
    riemannian_gradient,
    riemannian_hessian,
    riemannian_hessian_matrix,
    tangent_projection,
)

__all__ = [
    "Derivation",
    "MODELS",
    "PairKernel",
    "closed_form_riemannian_hessian",
    "exponential_kernel",
    "gradient_derivation",
    "hessian_derivation",
    "pair_energy",
    "ModelSpec",
    "Step",
    "Verification",
    "GeneratedModel",
    "attention_weight",
    "empirical_energy",
    "energy_identity_derivation",
    "explicit_energy_identity_derivation",
    "explicit_field",
    "explicit_gradient_structure_derivation",
    "field_derivation",
    "generate_model",
    "gradient_structure_derivation",
    "mean_field_energy",
    "model_module_source",
    "particle_field",
    "tangency_derivation",
    "write_model_module",
    "euclidean_gradient",
    "euclidean_hessian",
    "product_riemannian_gradient",
    "product_riemannian_hessian_matrix",
    "projection_matrix",
    "rational_sphere_point",
    "riemannian_gradient",
    "riemannian_hessian",
    "riemannian_hessian_matrix",
    "tangent_projection",
]

# --- critical points (issue 3) ---
from .hessian import hessian_from_pair_blocks, pair_hessian_blocks
from .jacobian import jacobian_derivation, sa_gradient_identity
from .structured import (
    SpectralBranch,
    circle_cluster_spectrum,
    circle_pair_coefficients,
    orthoplex_spectrum,
    simplex_spectrum,
    structured_spectrum_derivation,
)

__all__ += [
    "SpectralBranch",
    "circle_cluster_spectrum",
    "circle_pair_coefficients",
    "hessian_from_pair_blocks",
    "jacobian_derivation",
    "orthoplex_spectrum",
    "pair_hessian_blocks",
    "sa_gradient_identity",
    "simplex_spectrum",
    "structured_spectrum_derivation",
]

# --- circle (issue 4) ---
from .circle import (  # noqa: E402
    angle_equation_derivation,
    energy_in_order_parameters,
    fourier_series_derivations,
    generating_function_derivation,
    harmonics_for_tolerance_mp,
    kuramoto_derivation,
    order_parameter_derivations,
    pair_angle_derivation,
)

__all__ += [
    "angle_equation_derivation",
    "energy_in_order_parameters",
    "fourier_series_derivations",
    "generating_function_derivation",
    "harmonics_for_tolerance_mp",
    "kuramoto_derivation",
    "order_parameter_derivations",
    "pair_angle_derivation",
]

# --- meanfield (issue 5) ---
from .meanfield import (  # noqa: E402
    circle_linearization_derivation,
    denominator_derivation,
    dominant_degree,
    funk_hecke_closed_form,
    funk_hecke_quadrature,
    funk_hecke_series_derivation,
    growth_rate,
    growth_rate_expr,
    growth_rate_function,
    growth_rates,
    growth_rates_module_source,
    linearization_derivation,
    stationarity_derivation,
    switch_point,
    switch_points,
)

__all__ += [
    "circle_linearization_derivation",
    "denominator_derivation",
    "dominant_degree",
    "funk_hecke_closed_form",
    "funk_hecke_quadrature",
    "funk_hecke_series_derivation",
    "growth_rate",
    "growth_rate_expr",
    "growth_rate_function",
    "growth_rates",
    "growth_rates_module_source",
    "linearization_derivation",
    "stationarity_derivation",
    "switch_point",
    "switch_points",
]

# --- conjecture lab (issue 8) ---
from .expression_parser import parse_expression, parse_kernel, parse_parameter_assignment
from .reductions import (
    beta_zero_closed_form,
    cluster_derivation,
    cluster_energy,
    cluster_velocity,
    equiangular_derivation,
    equiangular_rate,
    initial_speed,
    synchronisation_rate,
)

__all__ += [
    "beta_zero_closed_form",
    "cluster_derivation",
    "cluster_energy",
    "cluster_velocity",
    "equiangular_derivation",
    "equiangular_rate",
    "initial_speed",
    "parse_expression",
    "parse_kernel",
    "parse_parameter_assignment",
    "synchronisation_rate",
]

# --- gaussian (issue 6) ---
from .gaussian import (  # noqa: E402
    affine_transport_derivation,
    gaussian_derivations,
    l2_tilting_derivation,
    moment_ode_derivation,
    moment_rhs_function,
    sinkhorn_conditional_covariance_function,
    sinkhorn_plan_derivation,
    softmax_closed_form_derivation,
    softmax_tilting_derivation,
)

__all__ += [
    "affine_transport_derivation",
    "gaussian_derivations",
    "l2_tilting_derivation",
    "moment_ode_derivation",
    "moment_rhs_function",
    "sinkhorn_conditional_covariance_function",
    "sinkhorn_plan_derivation",
    "softmax_closed_form_derivation",
    "softmax_tilting_derivation",
]
