r"""Is a configuration a fixed point of the attention dynamics, and is it stable? Residual, spectrum, classification.

Conventions (docs/conventions.md): :math:`E(X) = \frac{1}{2n^2} \sum_{i,j} \phi(\langle x_i, x_j\rangle)` with
:math:`\phi_\beta(s) = (e^{\beta s} - 1)/\beta` by default; ``usa`` is the ascent
:math:`\dot x_i = n \operatorname{grad}_i E`, ``sa`` is :math:`v_i = (n^2 / Z_i) \operatorname{grad}_i E` with
:math:`Z_i = \sum_j \phi'(s_{ij})` (:mod:`theory.jacobian`). Fixed points of both are the critical points of
:math:`E`. The ascent dynamics are unstable along POSITIVE Hessian eigenvalues; the synchronised state is a local
maximum.

Symmetry accounting. :math:`E` is invariant under :math:`X \mapsto X R^\top`, :math:`R \in SO(d)`, so at a
critical point the tangent space of the orbit, spanned by :math:`(\Omega x_i)_i` for the :math:`d(d-1)/2`
generators :math:`\Omega = e_a e_b^\top - e_b e_a^\top`, lies in the kernel of the Hessian. Its dimension is
computed numerically (rank of those vectors): :math:`d(d-1)/2` for a generic configuration, fewer when part of
:math:`SO(d)` fixes :math:`X` (:math:`d-1` at the synchronised state, :math:`2d-3` for points spanning a great
circle). These modes are projected out EXACTLY (not by a threshold); the remaining Hessian :math:`H_\perp`
decides:

- ``local maximum``: every eigenvalue of :math:`H_\perp` is negative (stable for the ascent dynamics; Morse-Bott
  maximum);
- ``local minimum``: every eigenvalue of :math:`H_\perp` is positive;
- ``strict saddle``: :math:`H_\perp` has a positive and a negative eigenvalue;
- ``degenerate``: :math:`H_\perp` has eigenvalues within the zero tolerance (extra zero modes not forced by
  rotations, e.g. the critical manifold :math:`\{\operatorname{mean}(X) = 0\}` at :math:`\beta = 0`); the reason
  says which sign information remains.

``unstable`` is True when :math:`H_\perp` has a positive eigenvalue, i.e. the ascent dynamics leave the critical
point along a strict ascent direction (the strict-saddle property of CRMB, arXiv 2405.18273, for maximisation).

Zero tolerance: eigenvalues with :math:`\lvert\mu\rvert \le \mathrm{tol}` count as zero,
:math:`\mathrm{tol} = \lVert H\rVert_2 \max(10^{-10}, 10 r)` with :math:`r` the relative residual. The first term
is :math:`\sim 10^3` times the backward error of a symmetric eigensolver on matrices of the sizes used here
(:math:`N \epsilon \lVert H\rVert` with :math:`N \le 4000`); the second covers the first-order shift of
eigenvalues when :math:`X` is a critical point only to relative accuracy :math:`r` (off critical points, where no
classification is made, the counts use the first term only). Eigenvalues smaller than
:math:`10^{-10} \lVert H\rVert` (e.g. metastable rates :math:`e^{-2\beta}` relative to :math:`e^{\beta}` at
:math:`\beta > 11`) cannot be resolved in float64 and are reported as degenerate, never as a sign. An absolute
floor completes it: :math:`\mathrm{tol} \ge 10^{-13} K` with
:math:`K = \max_{s \in [-1, 1]} (\lvert\phi'(s)\rvert + \lvert\phi''(s)\rvert) / n`, the scale of the kernel
itself, so that a Hessian that is (nearly) identically zero, e.g. :math:`\phi(s) = e^{\beta s} - 0.8 s^4` at
:math:`\beta = 0` at two orthogonal points (:math:`\phi' = \phi'' = 0` there), is degenerate rather than classified
by the sign of its rounding noise. :func:`zero_tolerance` and :func:`classify_eigenvalues` are the one routine that
``attnflow critical`` and the conjecture lab share.

Verified by: critical.hessian-formula, critical.strict-saddles-d3, critical.circle-polygons,
critical.unstable-rate-decay.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from theory.kernels import PairKernel

from numerics.common.limits import check_array, check_work
from numerics.common.errors import InputError, require_choice, require_points, require_real
from numerics.core.field import MODELS
from numerics.critical.hessian import (
    energy,
    kernel_derivatives,
    pair_weights,
    relative_residual,
    require_tangent_basis,
    riemannian_hessian_tangent,
    tangent_basis,
)

#: relative residual below which a configuration counts as a critical point (inputs built from cos/sin, or
#: polished by Newton, reach ~1e-15; 1e-8 leaves room for user files written with ~9 significant digits)
CRITICAL_TOLERANCE = 1e-8
#: relative eigenvalue floor of the zero tolerance (see module docstring)
ZERO_RELATIVE = 1e-10
#: absolute zero floor, relative to the kernel's own scale K = max_{s in [-1, 1]} (|phi'(s)| + |phi''(s)|) / n
#: (the size of a Hessian entry when pairs sit where the kernel is steepest): eigenvalues below 1e-13 K are
#: at the rounding level of the weights and cannot decide a second-order test, even when the whole Hessian is
#: that small (a relative tolerance alone calls an identically zero Hessian's rounding noise "negative")
ZERO_ABSOLUTE = 1e-13
#: singular values of the orbit generators below this fraction of the largest are treated as zero: exact
#: symmetries give ~1e-16, genuine orbit directions O(1); anything within 1e-7 of a symmetry counts as one
ORBIT_RANK_TOLERANCE = 1e-7
#: two particles closer than this (Euclidean) belong to the same cluster
CLUSTER_TOLERANCE = 1e-6

CLASSES = ("local maximum", "local minimum", "strict saddle", "degenerate", "not critical")


def rotation_generators(d: int) -> np.ndarray:
    """The d(d-1)/2 generators e_a e_b^T - e_b e_a^T (a < b) of so(d), shape (d(d-1)/2, d, d)."""
    out = []
    for a in range(d):
        for b in range(a + 1, d):
            O = np.zeros((d, d))
            O[a, b], O[b, a] = 1.0, -1.0
            out.append(O)
    return np.array(out).reshape(-1, d, d)


def orbit_tangent_basis(X, U: np.ndarray | None = None) -> np.ndarray:
    """Orthonormal basis (columns) of the tangent space at X of its SO(d) orbit, in the tangent coordinates U.

    The dimension (number of columns) is the number of rotation zero modes: d(d-1)/2 minus the dimension of
    the stabiliser of X.
    """
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    U = tangent_basis(X) if U is None else U
    gens = rotation_generators(d)
    if len(gens) == 0:
        return np.zeros((n * (d - 1), 0))
    V = np.einsum("gde,ie->gid", gens, X)             # (Omega_g x_i)_i, tangent at x_i
    T = np.einsum("ida,gid->iag", U, V).reshape(n * (d - 1), len(gens))
    Ul, sv, _ = np.linalg.svd(T, full_matrices=False)
    if sv.size == 0 or sv[0] == 0:
        return np.zeros((n * (d - 1), 0))
    rank = int(np.sum(sv > ORBIT_RANK_TOLERANCE * sv[0]))
    return Ul[:, :rank]


def orthogonal_complement(B: np.ndarray, N: int) -> np.ndarray:
    """Orthonormal basis of the orthogonal complement of the orthonormal columns B in R^N."""
    if B.shape[1] == 0:
        return np.eye(N)
    full, _, _ = np.linalg.svd(B, full_matrices=True)
    return full[:, B.shape[1]:]


def cluster_sizes(X, tol: float = CLUSTER_TOLERANCE) -> list[int]:
    """Sizes (descending) of the groups of coincident particles (|x_i - x_j| <= tol, transitively)."""
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    label = -np.ones(n, dtype=int)
    current = 0
    for i in range(n):
        if label[i] >= 0:
            continue
        stack = [i]
        label[i] = current
        while stack:
            k = stack.pop()
            near = np.flatnonzero((np.linalg.norm(X - X[k], axis=1) <= tol) & (label < 0))
            label[near] = current
            stack.extend(near.tolist())
        current += 1
    return sorted(np.bincount(label).tolist(), reverse=True)


def metric_weights(X, beta: float, model: str, kernel: PairKernel | None = None) -> np.ndarray:
    """Per-particle factor D_i with v_i = D_i grad_i E: n for ``usa``, n^2 / Z_i for ``sa`` (natural time unit)."""
    n = X.shape[0]
    if model == "usa":
        return np.full(n, float(n))
    _, W1, _ = pair_weights(X, beta, kernel)
    Z = W1.sum(axis=1)
    if np.any(Z <= 0):
        raise InputError("the sa model needs positive attention weights phi'(s) (sum_j phi'(s_ij) <= 0 here)")
    return n**2 / Z


def linearized_jacobian(X, beta, model: str = "usa", kernel: PairKernel | None = None,
                        U: np.ndarray | None = None) -> np.ndarray:
    r"""Jacobian of the ``model`` field at a fixed point X in the tangent basis U: :math:`J = DH`,
    :math:`D = \operatorname{diag}(D_i) \otimes I_{d-1}`.

    Valid at critical points only (elsewhere the derivative of :math:`D_i` times :math:`\operatorname{grad} E` adds
    a term). Its eigenvalues are real: :math:`J` is similar to :math:`D^{1/2} H D^{1/2}`, congruent to :math:`H`
    (Sylvester), see :mod:`theory.jacobian`.

    Verified by: critical.hessian-formula (finite differences of numerics.core.field.attention_field).
    """
    model = require_choice(model, "model", MODELS)
    beta = require_real(beta, "beta")
    X = require_points(X, "X")
    U = tangent_basis(X) if U is None else U
    H = riemannian_hessian_tangent(X, beta, kernel, U)
    D = np.repeat(metric_weights(X, beta, model, kernel), X.shape[1] - 1)
    return D[:, None] * H


@dataclass
class CriticalPointReport:
    """Result of :func:`critical_point_report`. ``eigenvalues`` are those of the Riemannian Hessian of E
    (docs/conventions.md normalisation), ascending; rates are in the model's natural time unit."""

    n: int
    d: int
    beta: float
    model: str
    kernel: str
    residual: float
    critical: bool
    critical_tolerance: float
    energy: float
    eigenvalues: np.ndarray
    zero_tolerance: float
    counts: dict
    symmetry_zero_modes: int
    extra_zero_modes: int
    orbit_residual: float
    classification: str
    reason: str
    unstable: bool | None
    unstable_rate: float | None
    cluster_sizes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["eigenvalues"] = np.asarray(self.eigenvalues).tolist()
        return out


def kernel_scale(beta: float, n: int, kernel: PairKernel | None = None) -> float:
    """K = max over 65 points s in [-1, 1] of (|phi'(s)| + |phi''(s)|), divided by n (see ZERO_ABSOLUTE)."""
    s = np.linspace(-1.0, 1.0, 65)
    with np.errstate(over="ignore", invalid="ignore"):
        W1, W2 = kernel_derivatives(kernel)(s, beta)
    total = np.abs(np.broadcast_to(np.asarray(W1, float), s.shape)) + np.abs(np.broadcast_to(np.asarray(W2, float), s.shape))
    total = total[np.isfinite(total)]
    return float(total.max()) / n if total.size else 0.0


def zero_tolerance(eigenvalues: np.ndarray, residual: float, critical: bool, beta: float, n: int,
                   kernel: PairKernel | None = None) -> float:
    """The one zero tolerance of every classification (``attnflow critical``, the conjecture lab):
    max(||H|| max(ZERO_RELATIVE, 10 residual), ZERO_ABSOLUTE * kernel_scale) (module docstring)."""
    scale = float(np.max(np.abs(eigenvalues))) if eigenvalues.size else 0.0
    shift = 10.0 * residual if critical else 0.0
    return max(scale * max(ZERO_RELATIVE, shift), ZERO_ABSOLUTE * kernel_scale(beta, n, kernel))


def classify_eigenvalues(mu: np.ndarray, tol: float) -> tuple[str, str, dict]:
    """Classification of a critical point from the Hessian eigenvalues ``mu`` off the rotation orbit and the
    zero tolerance ``tol`` (from :func:`zero_tolerance`): local maximum / minimum, strict saddle, degenerate."""
    return _classify(mu, tol)


def _classify(mu: np.ndarray, tol: float) -> tuple[str, str, dict]:
    pos, neg = int(np.sum(mu > tol)), int(np.sum(mu < -tol))
    extra = int(mu.size - pos - neg)
    if extra == 0:
        if pos == 0:
            return "local maximum", "all non-rotational Hessian eigenvalues are negative", dict(p=pos, m=neg, z=extra)
        if neg == 0:
            return "local minimum", "all non-rotational Hessian eigenvalues are positive", dict(p=pos, m=neg, z=extra)
        return "strict saddle", f"{pos} positive and {neg} negative Hessian eigenvalues", dict(p=pos, m=neg, z=extra)
    if pos > 0 and neg > 0:
        return ("strict saddle", f"{pos} positive and {neg} negative eigenvalues; {extra} extra zero modes beyond "
                "the rotation orbit", dict(p=pos, m=neg, z=extra))
    if pos == 0:
        why = (f"{extra} zero eigenvalues beyond the rotation orbit and no positive one: second-order test "
               "inconclusive (local maximum or degenerate saddle)")
    else:
        why = (f"{pos} positive eigenvalues (unstable for the ascent dynamics) but {extra} zero eigenvalues beyond "
               "the rotation orbit and no negative one: degenerate local minimum or saddle")
    return "degenerate", why, dict(p=pos, m=neg, z=extra)


def check_hessian_cost(n: int, d: int, times: float = 1.0, what: str | None = None) -> None:
    """Refuse a Riemannian Hessian of n(d - 1) x n(d - 1) entries (a few dense copies, an O(m^3) spectrum,
    ``times`` over) that does not fit the memory or work limits (:mod:`numerics.common.limits`)."""
    m = float(n) * (d - 1)
    what = what or f"the Riemannian Hessian of n={n} points on S^{d - 1} ({m:.3g} x {m:.3g})"
    check_array((m, m), what, copies=4)
    check_work(times * 10.0 * m**3, what)


_zero_tolerance = zero_tolerance


def critical_point_report(X, beta, model: str = "usa", kernel: PairKernel | None = None, *,
                          critical_tolerance: float = CRITICAL_TOLERANCE, zero_tolerance: float | None = None,
                          U: np.ndarray | None = None) -> CriticalPointReport:
    r"""Residual, Hessian spectrum, symmetry zero modes, classification and unstable rate of a configuration.

    Parameters
    ----------
    X : (n, d) array_like
        Unit rows.
    beta : float
        Inverse temperature (any real).
    model : {"usa", "sa"}
        Dynamics whose linearisation gives ``unstable_rate`` (natural time unit; for ``usa`` the rescaled unit
        :math:`t' = e^\beta t` divides rates by :math:`e^\beta`).
    kernel : PairKernel, optional
        Pair kernel :math:`\phi` (default :math:`\phi_\beta = (e^{\beta s} - 1)/\beta`).
    critical_tolerance : float
        Largest relative residual (:func:`numerics.critical.hessian.relative_residual`) accepted as critical.
    zero_tolerance : float, optional
        Absolute eigenvalue threshold; default :func:`zero_tolerance`:
        :math:`\max(\lVert H\rVert \max(10^{-10}, 10\, \mathrm{residual}), 10^{-13} K)` with the kernel scale
        :math:`K` of :func:`kernel_scale` (module docstring).
    U : (n, d, d-1) array, optional
        Tangent bases (default :func:`numerics.critical.hessian.tangent_basis`); results do not depend on it.

    Returns
    -------
    CriticalPointReport
        ``classification`` is "not critical" (no classification) when the residual exceeds the tolerance.
        ``unstable_rate`` is the largest eigenvalue of the linearised ``model`` dynamics off the rotation
        orbit (positive: unstable).

    Notes
    -----
    Sources: GLPR arXiv 2312.10794 (energy, gradient structure), CRMB arXiv 2405.18273 (strict saddles),
    PRY arXiv 2507.22857 (circle, negative :math:`\beta`). Verified by: critical.hessian-formula,
    critical.strict-saddles-d3, critical.circle-polygons, critical.unstable-rate-decay.
    """
    model = require_choice(model, "model", MODELS)
    beta = require_real(beta, "beta")
    critical_tolerance = require_real(critical_tolerance, "critical_tolerance", minimum=0.0)
    X = require_points(X, "X")
    n, d = X.shape
    check_hessian_cost(n, d)
    U = tangent_basis(X) if U is None else require_tangent_basis(U, X)
    residual = relative_residual(X, beta, kernel)
    H = riemannian_hessian_tangent(X, beta, kernel, U)
    eig = np.linalg.eigvalsh(H)
    scale = float(np.max(np.abs(eig))) if eig.size else 0.0
    critical = residual <= critical_tolerance
    # Off critical points the residual term would swamp the spectrum; counts there use the round-off floor only.
    tol = _zero_tolerance(eig, residual, critical, beta, n, kernel) if zero_tolerance is None else \
        require_real(zero_tolerance, "zero_tolerance", minimum=0.0)
    B = orbit_tangent_basis(X, U)
    r = B.shape[1]
    orbit_residual = float(np.linalg.norm(H @ B) / scale) if (r and scale) else 0.0
    kname = "phi_beta" if kernel is None else kernel.name
    base = dict(n=n, d=d, beta=beta, model=model, kernel=kname, residual=residual, critical=critical,
                critical_tolerance=critical_tolerance, energy=energy(X, beta, kernel), eigenvalues=eig,
                zero_tolerance=tol, symmetry_zero_modes=r, orbit_residual=orbit_residual,
                cluster_sizes=cluster_sizes(X))
    if not critical:
        counts = {"positive": int(np.sum(eig > tol)), "zero": int(np.sum(np.abs(eig) <= tol)),
                  "negative": int(np.sum(eig < -tol))}
        return CriticalPointReport(**base, counts=counts, extra_zero_modes=0, classification="not critical",
                                   reason=f"not a critical point: relative residual {residual:.3g} > "
                                          f"{critical_tolerance:.3g}", unstable=None, unstable_rate=None)
    C = orthogonal_complement(B, H.shape[0])
    mu = np.linalg.eigvalsh(C.T @ H @ C) if C.shape[1] else np.zeros(0)
    classification, reason, c = _classify(mu, tol)
    counts = {"positive": c["p"], "zero": c["z"] + r, "negative": c["m"]}
    # Linearised dynamics J = D H: same inertia as H; its rates are the eigenvalues of D^{1/2} H D^{1/2} off the
    # (D^{-1/2}-transformed) orbit directions.
    Dsq = np.sqrt(np.repeat(metric_weights(X, beta, model, kernel), d - 1))
    S = Dsq[:, None] * H * Dsq[None, :]
    if r:
        Bs, _ = np.linalg.qr(B / Dsq[:, None])
        Cs = orthogonal_complement(Bs, H.shape[0])
    else:
        Cs = np.eye(H.shape[0])
    rates = np.linalg.eigvalsh(Cs.T @ S @ Cs) if Cs.shape[1] else np.zeros(1)
    return CriticalPointReport(**base, counts=counts, extra_zero_modes=c["z"], classification=classification,
                               reason=reason, unstable=bool(c["p"] > 0), unstable_rate=float(rates.max()))


def closed_form_spectrum(config: str, *, n: int, d: int, k: int | None = None, masses=None,
                         kernel: PairKernel | None = None):
    """Closed-form Hessian branches (:mod:`theory.structured`) for a structured family, or None if unavailable.

    Available for ``sync``, ``polygon``, ``antipodal`` and ``clusters`` with equal masses, ``simplex`` and
    ``orthoplex`` with one particle per vertex. Calls sympy once (setup, not a hot path).

    Verified by: critical.hessian-formula, critical.circle-polygons.
    """
    from theory import structured

    if masses is not None and len(set(masses)) > 1:
        return None
    if config == "sync":
        return structured.circle_cluster_spectrum(1, n, d, kernel)
    if config == "polygon":
        return structured.circle_cluster_spectrum(n, 1, d, kernel)
    if config in ("antipodal", "clusters"):
        k = 2 if config == "antipodal" else (len(masses) if masses is not None else k)
        return structured.circle_cluster_spectrum(k, n // k, d, kernel)
    if config == "simplex" and n == d + 1:
        return structured.simplex_spectrum(d, kernel)
    if config == "orthoplex" and n == 2 * d:
        return structured.orthoplex_spectrum(d, kernel)
    return None


def closed_form_comparison(branches, beta: float, eigenvalues: np.ndarray) -> dict:
    """Branches evaluated at beta, and the largest |closed form - numeric| over the sorted spectra."""
    from theory.structured import branch_values

    values = branch_values(branches, beta)
    merged = np.sort(np.concatenate([[v] * m for v, m in values]))
    return {"branches": [{"label": b.label, "expression": str(b.value), "multiplicity": b.multiplicity,
                          "value": v, "rotation": b.rotation} for b, (v, _) in zip(branches, values)],
            "max_abs_difference": float(np.max(np.abs(merged - np.sort(eigenvalues))))}


__all__ = [
    "CLASSES",
    "closed_form_comparison",
    "closed_form_spectrum",
    "CriticalPointReport",
    "cluster_sizes",
    "critical_point_report",
    "linearized_jacobian",
    "metric_weights",
    "orbit_tangent_basis",
    "rotation_generators",
]
