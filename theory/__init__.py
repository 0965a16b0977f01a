"""attnflow.theory: the symbolic layer (sympy and mpmath only, no simulation code).

Derivations of energies, Riemannian gradients and Hessians on the sphere, linearised operators and covariance
ODEs; :mod:`theory.codegen` turns them into vectorised NumPy callables.
"""
from .derivation import Derivation, Step, Verification, rational_sphere_point
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
