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
