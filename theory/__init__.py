"""attnflow.theory: the symbolic layer (sympy and mpmath only, no simulation code).

Derivations of energies, Riemannian gradients and Hessians on the sphere, linearised operators and covariance
ODEs; :mod:`theory.codegen` turns them into vectorised NumPy callables.

The names below are re-exported lazily (PEP 562): ``import theory`` is cheap, and SymPy is imported by the
first name that needs it, not by ``import theory.files`` or the CLI's ``--help``.
"""
from __future__ import annotations

import importlib

#: module -> the public names it provides
_EXPORTS: dict[str, tuple[str, ...]] = {
    "theory.circle": ("angle_equation_derivation", "energy_in_order_parameters", "fourier_series_derivations", "generating_function_derivation", "harmonics_for_tolerance_mp", "kuramoto_derivation", "order_parameter_derivations", "pair_angle_derivation",),
    "theory.codegen": ("generate_model", "GeneratedModel", "model_module_source", "write_model_module",),
    "theory.derivation": ("Derivation", "rational_sphere_point", "Step", "Verification",),
    "theory.energy": ("empirical_energy", "energy_identity_derivation", "explicit_energy_identity_derivation", "explicit_gradient_structure_derivation", "gradient_structure_derivation", "mean_field_energy",),
    "theory.expression_parser": ("parse_expression", "parse_kernel", "parse_parameter_assignment",),
    "theory.architectures": ("angle_curl", "block_particle_field", "block_velocity_function", "causal_meanfield_derivation", "causal_two_token_derivation", "curl_at", "gradient_curl_derivation", "gradient_obstruction", "identical_heads_mlp_derivation", "multihead_gaussian_derivation", "multihead_gradient_derivation", "notes_form_particle_field", "one_head_derivation", "per_head_mlp_derivation",),
    "theory.fields": ("attention_weight", "explicit_field", "field_derivation", "particle_field", "tangency_derivation",),
    "theory.gaussian": ("affine_transport_derivation", "gaussian_derivations", "l2_tilting_derivation", "moment_ode_derivation", "moment_rhs_function", "sinkhorn_conditional_covariance_function", "sinkhorn_plan_derivation", "softmax_closed_form_derivation", "softmax_tilting_derivation",),
    "theory.hessian": ("closed_form_riemannian_hessian", "gradient_derivation", "hessian_derivation", "hessian_from_pair_blocks", "pair_hessian_blocks",),
    "theory.jacobian": ("jacobian_derivation", "sa_gradient_identity",),
    "theory.kernels": ("exponential_kernel", "pair_energy", "PairKernel",),
    "theory.meanfield": ("circle_linearization_derivation", "denominator_derivation", "dominant_degree", "funk_hecke_closed_form", "funk_hecke_quadrature", "funk_hecke_series_derivation", "growth_rate", "growth_rate_expr", "growth_rate_function", "growth_rates", "growth_rates_module_source", "linearization_derivation", "stationarity_derivation", "switch_point", "switch_points",),
    "theory.rd": ("rescaled_equation_derivation", "rescaled_logit_derivation",),
    "theory.noise": ("bifurcation", "critical_noise", "discontinuity_threshold", "free_energy_derivation", "ito_correction_derivation", "kuramoto_order_parameter", "landau_derivation", "linear_stability_derivation", "linear_stability_threshold", "von_mises_order_parameter", "zonal_taylor_derivation",),
    "theory.noise_global": ("coupling_conversion_derivation", "coupling_of_noise", "doi_onsager_derivation", "first_order_noise_mp", "mode_bifurcation", "mode_landau_derivation", "mun_rosenzweig_threshold_expr",),
    "theory.reductions": ("beta_zero_closed_form", "cluster_derivation", "cluster_energy", "cluster_velocity", "equiangular_derivation", "equiangular_rate", "initial_speed", "synchronisation_rate",),
    "theory.spec": ("MODELS", "ModelSpec",),
    "theory.sphere": ("euclidean_gradient", "euclidean_hessian", "product_riemannian_gradient", "product_riemannian_hessian_matrix", "projection_matrix", "riemannian_gradient", "riemannian_hessian", "riemannian_hessian_matrix", "tangent_projection",),
    "theory.structured": ("circle_cluster_spectrum", "circle_pair_coefficients", "orthoplex_spectrum", "simplex_spectrum", "SpectralBranch", "structured_spectrum_derivation",),
}

_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_WHERE, key=str.lower)


def __getattr__(name: str):
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module 'theory' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
