"""attnflow: the mathematics of transformers as interacting particle systems, derived, simulated and checked.

The public API is re-exported here once, lazily (a name's module is imported on first use, so that
import attnflow stays fast and does not import SymPy)::

    import attnflow as af
    model = af.Model("sa", beta=4.0)
    traj = af.simulate(model, af.uniform_sphere(64, 3, seed=0), 10.0, solver=af.Solver("rk4", dt=0.05))

af.theory is the symbolic layer (SymPy derivations, code generation); af.numerics the numerical one.
"""
from __future__ import annotations

import importlib
from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("attnflow")
except _metadata.PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0+unknown"

#: module -> the public names it provides
_EXPORTS: dict[str, tuple[str, ...]] = {
    "numerics.core.model": ("BACKENDS", "Model", "SaveAt", "Solver",),
    "numerics.core.ensemble": ("ensemble_energies",),
    "numerics.core.members": ("Members", "member",),
    "numerics.architectures.causal": ("two_token_merge_time",),
    "numerics.architectures.deep": ("dense_block_velocity", "discrete_transformer",),
    "numerics.architectures.gradient": ("angle_circulation", "fd_riemannian_gradient", "heads_energy", "symmetric_energy_terms",),
    "numerics.architectures.masked_meanfield": ("causal_particles", "integration_matrix", "MaskedSolution", "solve_masked_meanfield",),
    "numerics.critical.stationary": ("field_jacobian", "stationary_report",),
    "numerics.core.blocks": ("MLP", "MultiHead", "Schedule", "block_velocity", "make_block_field",),
    "numerics.core.positions": ("PositionEncoding", "alibi_slopes", "paper_slopes", "rope_frequencies",),
    "numerics.architectures.positions_checks": ("alibi_energy", "rope_energy",),
    "numerics.architectures.lost_in_the_middle": ("lost_in_the_middle_threshold", "particle_profile", "retrieval_profile",),
    "numerics.circle.angles": ("circle_energy", "CircleTrajectory", "kuramoto_order_parameter", "make_angle_field", "order_parameters", "simulate_circle",),
    "numerics.circle.fourier": ("fourier_angle_velocity", "fourier_is_faster", "harmonics_for_tolerance", "make_fourier_field",),
    "numerics.harmonic.field": ("HarmonicField", "harmonic_energy", "field_degree", "supported_matrices",),
    "numerics.harmonic.transforms": ("point_moments", "point_synthesis",),
    "numerics.clusters.detection": ("Clusters", "find_clusters", "geodesic_distance", "single_linkage_labels",),
    "numerics.clusters.merge_tree": ("merge_history", "MergeEvent", "MergeHistory", "reintegrator", "reintegrator_from_meta", "Violation",),
    "numerics.clusters.reduced": ("closest_pair_order", "compare_merges", "expand_reduced", "make_reduced_field", "MergePrediction", "predict_merges", "reduce_configuration", "two_cluster_laplace", "two_cluster_merge_time",),
    "numerics.clusters.staircase": ("detect_plateaus", "energy_staircase", "normalized_energies", "Plateau",),
    "numerics.common.errors": ("InputError",),
    "numerics.common.verification": ("all_claims", "CheckResult", "claim",),
    "numerics.conjectures.framework": ("Conjecture", "ConjectureResult", "load_conjectures", "load_counterexample", "save_counterexample", "Verdict",),
    "numerics.conjectures.catalogue": ("replay",),
    "numerics.core.field": ("attention_field", "interaction_energy", "make_field",),
    "numerics.core.integrators": ("integrate_adaptive", "integrate_dop853", "integrate_fixed", "METHODS", "observed_order", "renormalize", "step_layer", "step_rk4",),
    "numerics.core.kernel_field": ("compile_kernel", "kernel_energy", "kernel_field", "kernel_riemannian_gradient", "make_kernel_field",),
    "numerics.core.taylor": ("fitted_slope", "tangent_direction", "taylor_remainders",),
    "numerics.critical.configurations": ("build_configuration", "circle_clusters", "orthoplex", "regular_polygon", "simplex", "synchronized",),
    "numerics.critical.hessian": ("hessian_spectrum", "relative_residual", "riemannian_hessian_tangent", "tangent_basis",),
    "numerics.critical.newton": ("find_critical_points", "gram_signature", "riemannian_newton",),
    "numerics.critical.report": ("closed_form_spectrum", "critical_point_report", "CriticalPointReport", "linearized_jacobian", "orbit_tangent_basis",),
    "numerics.rd.model": ("RdModel",),
    "numerics.rd.dynamics": ("RdRun", "simulate_rd",),
    "numerics.rd.geometry": ("boolean_limit", "hull_vertices", "hyperplane_coordinates", "limit_codimension", "predicted_limit",),
    "numerics.rd.stability": ("adversarial_search", "log_stability_constant", "stability_ratios", "wasserstein",),
    "numerics.gaussian.solutions": ("attention_matrix", "compare_particles_to_ode", "gaussian_attention", "gaussian_heads", "GaussianHeads", "layer_gaussian_map", "moment_rhs", "particle_velocity", "simulate_particles", "sinkhorn_conditional_covariance", "softmax_blowup_time", "softmax_identity_value_closed_form", "softmax_low_rank_limit", "solve_moment_ode", "velocity_by_quadrature",),
    "numerics.meanfield.growth": ("degree_power_spectrum", "particle_growth_rates_circle", "particle_growth_rates_sphere", "pde_growth_rates",),
    "numerics.meanfield.metastable": ("count_clusters_by_gaps", "metastable_experiment",),
    "numerics.meanfield.pde": ("solve_continuity_circle",),
    "numerics.rd.consensus": ("attention_mean", "consensus_velocity", "frank_wolfe_layer", "integrate_flow", "iterate_layers",),
    "numerics.rd.frank_wolfe": ("collapse_point", "hull_oracle", "nsd_contraction_factor", "persistence_run", "polygon_tokens", "voronoi_cells", "voronoi_prediction",),
    "numerics.meanfield.quantitative": ("lagrangian_circle", "ott_antonsen_w2", "sharp_w2_rate", "wrapped_cauchy_density",),
    "numerics.meanfield.low_temperature": ("consensus_gaussian_moments", "radial_flow", "ring_particles",),
    "numerics.meanfield.moderate": ("alignment_run", "clustering_run", "oja_flow", "pair_merge_time", "pairing_run",),
    "numerics.noise.phase": ("phase_diagram", "plot_phase_diagram",),
    "numerics.noise.transitions": ("mode_transition",),
    "numerics.noise.diagram": ("beta_noise_diagram", "plot_beta_noise_diagram",),
    "numerics.noise.sde": ("brownian_correlation_mc", "integrate_sde", "SDE_METHODS",),
    "numerics.noise.sphere": ("solve_sphere", "SphereFokkerPlanck", "SphereGrid", "initial_coefficients",),
    "numerics.noise.stationary": ("order_parameter_at", "stationary_branch", "stationary_moments",),
    "numerics.noise.zonal": ("solve_zonal", "ZonalFokkerPlanck",),
    "numerics.trained.checkpoint": ("Checkpoint", "load_checkpoint",),
    "numerics.trained.encoder": ("EncoderTrace", "run_encoder", "sentence_embeddings",),
    "numerics.trained.geometry": ("layer_geometry", "pair_cosines",),
    "numerics.trained.heads": ("head_reports", "HeadReport",),
    "numerics.trained.flows": ("depth_study", "iterate_layer", "trained_schedule",),
    "numerics.trained.comparison": ("compare_iterated",),
    "numerics.decoder.weights": ("Decoder", "DecoderConfig",),
    "numerics.decoder.checkpoint": ("load_decoder",),
    "numerics.decoder.forward": ("DecoderTrace", "run_decoder",),
    "numerics.decoder.generation": ("greedy_generate",),
    "numerics.decoder.heads": ("layer_heads", "DecoderHeadReport",),
    "numerics.decoder.context": ("context_study",),
    "numerics.sweeps.runner": ("resume_sweep", "run_sweep",),
    "numerics.sweeps.spec": ("SweepSpec",),
    "numerics.sweeps.observables": ("observable", "Output",),
    "numerics.core.beta_scaling": ("BETA_SCALINGS",),
    "numerics.longcontext.simplex": ("particle_layer", "self_weight", "simplex_layer", "simplex_tokens",
                                     "transition_table"),
    "numerics.longcontext.almost_simplex": ("annealed_gamma", "crossing_gammas"),
    "numerics.longcontext.flow": ("collapse_time", "flow_speed", "reduced_trajectory"),
    "numerics.longcontext.fixed_query": ("finite_n_half_constant", "poisson_half_constant",
                                         "poisson_half_constant_quadrature", "poisson_top_weight"),
    "numerics.longcontext.gaps": ("gumbel_half_constant", "measure_family", "ScoreFamily"),
    "numerics.core.record": ("load_attention_matrices", "load_initial", "Trajectory",),
    "numerics.core.sampling": ("uniform_sphere",),
    "numerics.core.simulate": ("initial_state", "resume", "simulate", "simulate_keywords", "with_provenance",),
}

_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_WHERE, key=str.lower) + ["numerics", "theory", "__version__"]


def __getattr__(name: str):
    if name in ("theory", "numerics"):
        return importlib.import_module(name)
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module 'attnflow' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # cache: the next access is a plain attribute
    return value


def __dir__():
    return __all__
