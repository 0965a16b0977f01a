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
