"""The ``harmonic`` field backend of :meth:`numerics.core.model.Model.vector_field` (loaded by name by the core).

``model_field(model, n, d)`` builds the :class:`numerics.harmonic.field.HarmonicField` of a model or raises a
one-line :class:`InputError` that names the direct path; ``harmonic_is_faster(model, n, d)`` is the cost model
``auto`` consults (never raises: an ineligible model is simply not faster).

Cost model (seconds, one core; calibrated with ``attnflow bench --suite harmonic`` on the 2-core development
machine, noisy): direct field ~ DIRECT_OVERHEAD + DIRECT_PAIR_COST n^2 (d = 3, symmetric tiles); harmonic field
~ NUMPY_OVERHEAD + NUMPY_TERM_COST n (L+1)^2 with the numpy engine, ~ DUCC0_OVERHEAD + DUCC0_TOKEN_COST n with
ducc0 (nearly independent of L up to L ~ 100).
"""
from __future__ import annotations

from numerics.common.errors import InputError
from numerics.harmonic.field import DEFAULT_TOL, HarmonicField, choose_engine, field_degree, supported_matrices

DIRECT_PAIR_COST = 7e-9
DIRECT_OVERHEAD = 5e-5
NUMPY_TERM_COST = 1.2e-8
NUMPY_OVERHEAD = 1e-3
DUCC0_TOKEN_COST = 1.5e-6
DUCC0_OVERHEAD = 2e-3


def _eligible(model, d: int) -> tuple[float, float]:
    """(a, b) of a model the harmonic backend evaluates, else InputError naming the direct path."""
    if d != 3:
        raise InputError(f"the harmonic backend is implemented on S^2 (d = 3), got d={d}; use --backend direct")
    if model.kernel is not None:
        raise InputError("the harmonic backend is specific to the exponential kernel; use --backend direct")
    if model.has_architecture:
        raise InputError("the harmonic backend evaluates one attention head (Q^T K = a I, V = b I) without heads, "
                         "MLP, schedule or causal mask; use --backend direct")
    return supported_matrices(model.Q, model.K, model.V, d)


def model_field(model, n: int, d: int, tol: float = DEFAULT_TOL) -> HarmonicField:
    """The harmonic field of ``model`` (a :class:`numerics.core.model.Model`) for n tokens on S^{d-1}."""
    a, b = _eligible(model, d)
    return HarmonicField(model.beta, model.kind, a=a, b=b, tol=tol, time_unit=model.time_unit, n=n)


def predicted_seconds(n: int, kappa: float, model: str, tol: float = DEFAULT_TOL) -> dict:
    """Predicted seconds of one evaluation: ``direct`` and ``harmonic`` (the engine ``auto`` would use)."""
    L = field_degree(kappa, tol, model)
    engine = choose_engine("auto", n, kappa, tol, model)
    if engine == "ducc0":
        harmonic = DUCC0_OVERHEAD + DUCC0_TOKEN_COST * n
    else:
        harmonic = NUMPY_OVERHEAD + NUMPY_TERM_COST * n * (L + 1) ** 2
    return {"direct": DIRECT_OVERHEAD + DIRECT_PAIR_COST * n * n, "harmonic": harmonic, "degree": L,
            "engine": engine}


def harmonic_is_faster(model, n: int, d: int, tol: float = DEFAULT_TOL) -> bool:
    """Whether ``auto`` should use the harmonic field: the model is eligible and the cost model predicts it faster."""
    try:
        a, _ = _eligible(model, d)
        cost = predicted_seconds(int(n), a * model.beta, model.kind, tol)
    except InputError:
        return False
    return cost["harmonic"] < cost["direct"]
