r"""The :math:`O(nL^2)` spherical-harmonic field, attention output and energy of ``sa`` / ``usa`` on
:math:`\mathbb{S}^2`.

For :math:`Q^\top K = aI` and :math:`V = bI` the weights
:math:`e^{\beta\langle Q x_i, K x_j\rangle} = e^{\kappa\langle x_i, x_j\rangle}`, :math:`\kappa = a\beta`, depend on
:math:`\langle x_i, x_j\rangle` only. With the expansion of :mod:`numerics.harmonic.expansion` truncated at degree
:math:`L`,

.. math::

    \begin{aligned}
    Z_i / n &= \frac{1}{n} \sum_j e^{\kappa\langle x_i, x_j\rangle}
      \approx \sum_{l\le L} \lambda_l \sum_m M^1_{lm} Y_{lm}(x_i), \\
    N_i / n &= \frac{1}{n} \sum_j e^{\kappa\langle x_i, x_j\rangle} x_j
      \approx \sum_{l\le L} \lambda_l \sum_m M^x_{lm} Y_{lm}(x_i),
    \end{aligned}

with the weighted moments :math:`M^f_{lm} = \frac{1}{n} \sum_j f(x_j) Y_{lm}(x_j)` for :math:`f = 1, x_1, x_2, x_3`
(one pass over the tokens for the four moment sets, one pass for the evaluation: :math:`O(nL^2)` work, memory one
block). Then

.. math::

    \begin{aligned}
    &\text{attention output:} && \texttt{usa}\ \ b N_i / n, \qquad \texttt{sa}\ \ b N_i / Z_i, \\
    &\text{field:} && v_i = P_{x_i}(\text{attention output}), \qquad P_x y = y - \langle x, y\rangle x,
    \end{aligned}

and the energy (:math:`Q = K = V = I`, our :math:`E_\beta` = GLPR's minus :math:`1/(2\beta)`; docs/conventions.md)
is

.. math::

    E_\beta = \frac{\lambda_0 - 1}{2\beta} + \sum_{l=1}^L \frac{\lambda_l}{2\beta} \sum_m (M^1_{lm})^2.

Guarantees (kernel tail :math:`T_L` of :func:`numerics.harmonic.expansion.tail_bound`, in
:math:`e^{-\lvert\kappa\rvert}` units, and :math:`\delta` the transform error: rounding for the ``numpy`` engine,
ducc0's accuracy :math:`\varepsilon` for ``ducc0``):

- ``usa``: :math:`\lvert v_i - v_i^{\text{exact}}\rvert \le \lvert b\rvert (T_L + 2\delta) e^{\lvert\kappa\rvert}`
  (natural unit), and :math:`L` is the smallest degree with
  :math:`T_L \le \mathrm{tol}\, \lambda_0 e^{-\lvert\kappa\rvert} / 2`: the field is exact to ``tol`` relative to the
  mean kernel weight :math:`\lambda_0` (the scale of the ``usa`` field; the circle's Fourier field uses the same
  scale, :math:`I_0`).
- ``sa``: :math:`\lvert v_i - v_i^{\text{exact}}\rvert \le 2 \lvert b\rvert (T_L + 2\delta) / (Z_i^H / n)` (ratio of
  two sums, :math:`\lvert N_i / Z_i\rvert \le 1`), checked per row; rows where it exceeds ``tol`` (isolated tokens,
  :math:`Z_i / n` small) are recomputed directly in :math:`O(n)` each. :math:`L` is the smallest degree with
  :math:`T_L \le \mathrm{tol}\, \mathrm{SA\_GUARD}\, \lambda_0 e^{-\lvert\kappa\rvert} / 4`, so that every row with
  :math:`Z_i / n \ge \mathrm{SA\_GUARD}\, \lambda_0 / 2` passes: ``tol`` is absolute
  (:math:`\lvert v_i\rvert \le \lvert b\rvert`).
- energy: :math:`\lvert E^H - E\rvert \le T_L / (2 \lvert\beta\rvert)`, :math:`L` with
  :math:`T_L \le \mathrm{tol}\, \lambda_0 \min(1, \lvert\beta\rvert) e^{-\lvert\beta\rvert}`.

Points off the sphere (Runge-Kutta stages) are evaluated at :math:`x_i / \lvert x_i\rvert` and projected
tangentially at :math:`x_i`: :math:`\lvert x_i\rvert` is invariant, as for the direct field's extension.

Verified by: harmonic.field-agrees, harmonic.degree-too-low-fails, harmonic.bound-holds, harmonic.energy-agrees.
"""
from __future__ import annotations

import math

import numpy as np

from numerics.common.errors import InputError, require_choice, require_points, require_real
from numerics.harmonic.expansion import (TINY_BETA, check_degree, degree_for_tolerance, power_series_coefficients,
                                         scaled_coefficients, scaled_mean_weight, tail_bound)
from numerics.harmonic.transforms import (DUCC0_EPSILON, ENGINES, ducc0_available, point_moments,
                                          point_synthesis)

MODELS = ("sa", "usa")
TIME_UNITS = ("natural", "rescaled")
#: default tolerance of the backend, relative to the field's scale (module docstring)
DEFAULT_TOL = 1e-10
#: sa rows whose harmonic denominator Z_i/n falls below about SA_GUARD lambda_0 / 2 are recomputed directly
SA_GUARD = 1e-3
#: pointwise transform error relative to max_i Z_i^H / n: rounding (numpy) or 4 x ducc0's epsilon (measured
#: 0.9 epsilon on uniform and clustered states at beta = 1, 4, 9; proofs_notes/harmonic-field-agrees.md)
ENGINE_ERROR = {"numpy": 1e-14, "ducc0": 4 * DUCC0_EPSILON}
#: below this many tokens the numpy engine is used even with ducc0 installed (ducc0's fixed cost)
DUCC0_MIN_TOKENS = 1024
#: |kappa| beyond which e^{|kappa|} overflows float64
MAX_EXPONENT = 709.0


def supported_matrices(Q, K, V, d: int = 3) -> tuple[float, float]:
    r"""(a, b) with :math:`Q^\top K = aI` and :math:`V = bI`, or :class:`InputError` naming the direct path.

    ``None`` stands for the identity. The test is exact up to :math:`10^{-12}` of the largest entry (a matrix of the
    supported form read from a file is accepted; a perturbed one is refused, not approximated).
    """
    eye = np.eye(d)
    Qm = eye if Q is None else np.asarray(Q, float)
    Km = eye if K is None else np.asarray(K, float)
    Vm = eye if V is None else np.asarray(V, float)
    M = Qm.T @ Km
    a = float(np.trace(M)) / d
    b = float(np.trace(Vm)) / d
    scale_m = max(1.0, float(np.abs(M).max()))
    scale_v = max(1.0, float(np.abs(Vm).max()))
    if np.abs(M - a * eye).max() > 1e-12 * scale_m:
        raise InputError("the harmonic backend needs Q^T K = a I (a zonal kernel e^{a beta <x, y>}); these Q, K are "
                         "not of that form: use --backend direct")
    if np.abs(Vm - b * eye).max() > 1e-12 * scale_v:
        raise InputError("the harmonic backend needs V = b I; this V is not a multiple of the identity: use "
                         "--backend direct")
    return a, b


def choose_engine(engine: str, n: int | None, kappa: float, tol: float, model: str) -> str:
    """``numpy`` or ``ducc0`` for ``engine = "auto"``: ducc0 when it is installed, n >= DUCC0_MIN_TOKENS and its
    error allowance fits the tolerance (usa: 4 ENGINE_ERROR <= tol lambda_0 e^{-|kappa|}; sa: 8 ENGINE_ERROR <=
    tol, so that rows near the largest Z pass the per-row test)."""
    if engine != "auto":
        if engine == "ducc0" and not ducc0_available():
            raise InputError("engine 'ducc0' needs ducc0 (pip install 'attnflow[harmonic]'); use engine='numpy'")
        return require_choice(engine, "engine", ENGINES)
    if not ducc0_available() or (n is not None and n < DUCC0_MIN_TOKENS):
        return "numpy"
    err = ENGINE_ERROR["ducc0"]
    fits = (4 * err <= tol * scaled_mean_weight(kappa)) if model == "usa" else (8 * err <= tol)
    return "ducc0" if fits else "numpy"


def field_degree(kappa: float, tol: float, model: str) -> int:
    r"""The degree :math:`L` of the guarantees of the module docstring for the field of ``model`` at kernel exponent
    :math:`\kappa` (``kappa``)."""
    factor = 0.5 if model == "usa" else SA_GUARD / 4
    return degree_for_tolerance(kappa, tol * factor * scaled_mean_weight(kappa))


def energy_degree(beta: float, tol: float) -> int:
    """The degree L with T_L <= tol lambda_0 min(1, |beta|) (energy error <= tol lambda_0 / 2 for |beta| <= 1)."""
    if beta == 0.0:
        return 1
    return degree_for_tolerance(beta, tol * scaled_mean_weight(beta) * min(1.0, abs(beta)))


def _unit_rows(X: np.ndarray) -> np.ndarray:
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    return X / norms[:, None]


def direct_sums(U: np.ndarray, targets: np.ndarray, kappa: float, model: str, *,
                block_entries: int = 1 << 22) -> np.ndarray:
    """Exact attention sums of the measure (1/n) sum_j delta_{u_j} at the target points, blocked: N(y) / Z(y) for
    sa, (1/n) sum_j e^{kappa <y, u_j> - |kappa|} u_j for usa (the e^{-|kappa|}-scaled sum). O(n) per target,
    memory ``block_entries`` kernel entries. Unprojected.

    This is the direct path the harmonic field is checked against on subsamples of rows (benchmarks, claims);
    it is itself checked against :func:`numerics.core.field.make_field` (tests/numerics/test_harmonic_field.py).
    """
    n = U.shape[0]
    targets = np.asarray(targets, dtype=float)
    out = np.empty((targets.shape[0], 3))
    step = max(1, block_entries // max(n, 1))
    for start in range(0, targets.shape[0], step):
        logits = kappa * (targets[start:start + step] @ U.T)
        if model == "sa":
            logits -= logits.max(axis=1, keepdims=True)
            w = np.exp(logits)
            out[start:start + step] = (w @ U) / w.sum(axis=1, keepdims=True)
        else:
            logits -= abs(kappa)
            out[start:start + step] = (np.exp(logits) @ U) / n
    return out


class HarmonicField:
    r"""``field(X) -> (n, 3)``: the ``sa`` / ``usa`` field on :math:`\mathbb{S}^2` through spherical harmonics (module
    docstring).

    Parameters
    ----------
    beta : float
        Inverse temperature of the model.
    model : {"sa", "usa"}
    a, b : float
        :math:`Q^\top K = aI` (kernel :math:`e^{a\beta\langle x, y\rangle}`) and :math:`V = bI`; 1 and 1 for
        :math:`Q = K = V = I`.
    tol : float
        Tolerance relative to the field's scale (``usa``: the mean kernel weight; ``sa``: absolute), default
        :math:`10^{-10}`.
    degree : int, optional
        Force the degree :math:`L`: no truncation guarantee (the ``sa`` rows are then recomputed directly only where
        rounding, not truncation, could exceed ``tol``).
    time_unit : {"natural", "rescaled"}
        ``usa`` only: ``rescaled`` is the field in :math:`t' = e^{\beta} t` (weights
        :math:`e^{\beta\langle Qx, Ky\rangle - \beta}`).
    engine : {"auto", "numpy", "ducc0"}
        Transforms of :mod:`numerics.harmonic.transforms`; ``auto`` (:func:`choose_engine`) picks ducc0 where it
        is installed and accurate enough for ``tol``.
    n : int, optional
        Number of tokens, for ``engine="auto"``.

    Attributes
    ----------
    degree, engine, kappa, tail
        The degree :math:`L`, the engine, :math:`\kappa = a\beta` and the kernel tail bound :math:`T_L` (scaled).
    stats : dict
        Evaluations and ``sa`` rows recomputed directly.
    """

    def __init__(self, beta: float, model: str = "sa", *, a: float = 1.0, b: float = 1.0, tol: float = DEFAULT_TOL,
                 degree: int | None = None, time_unit: str = "natural", engine: str = "auto", n: int | None = None):
        self.model = require_choice(model, "model", MODELS)
        self.time_unit = require_choice(time_unit, "time_unit", TIME_UNITS)
        self.beta = require_real(beta, "beta")
        self.a = require_real(a, "a")
        self.b = require_real(b, "b")
        self.tol = require_real(tol, "tol", minimum=0.0, maximum=1.0, strict_minimum=True)
        self.kappa = self.a * self.beta
        if abs(self.kappa) > MAX_EXPONENT:
            raise InputError(f"the harmonic backend takes |a beta| <= {MAX_EXPONENT:g}, got {self.kappa:g}; "
                             "use --backend direct")
        #: with a forced degree there is no truncation guarantee: the sa row guard then counts rounding only
        self.guaranteed = degree is None
        self.degree = field_degree(self.kappa, self.tol, self.model) if degree is None else check_degree(degree)
        self.engine = choose_engine(require_choice(engine, "engine", ("auto",) + ENGINES), n, self.kappa, self.tol,
                                    self.model)
        self.coefficients = scaled_coefficients(self.kappa, self.degree)
        self.tail = tail_bound(self.degree, self.kappa)
        self.scale = self._usa_scale() if self.model == "usa" else 1.0
        self.stats = {"evaluations": 0, "direct_rows": 0}

    def _usa_scale(self) -> float:
        exponent = abs(self.kappa) - (self.beta if self.time_unit == "rescaled" else 0.0)
        if exponent > MAX_EXPONENT:
            hint = "use time_unit='rescaled' (t' = e^beta t)" if self.time_unit == "natural" else "use model='sa'"
            raise InputError(f"usa field overflows at beta={self.beta:g} in the {self.time_unit} time unit; {hint}")
        return math.exp(exponent)

    # -- the sums -------------------------------------------------------------------------------------------------
    def sums(self, U: np.ndarray, targets: np.ndarray | None = None) -> np.ndarray:
        """(k, 4): the e^{-|kappa|}-scaled harmonic Z/n and N/n of the measure (1/n) sum_j delta_{u_j} (unit rows
        U) at the targets (default U itself): moments in one pass over U, evaluation in one pass over the targets."""
        n = U.shape[0]
        weights = np.empty((n, 4))
        weights[:, 0] = 1.0
        weights[:, 1:] = U
        C = point_moments(U, weights, self.degree, engine=self.engine)
        C *= self.coefficients[None, None, :, None] / n
        return point_synthesis(C, U if targets is None else targets, engine=self.engine)

    def output(self, X: np.ndarray, targets: np.ndarray | None = None) -> np.ndarray:
        """The unprojected attention output b N / Z (sa) or b N / n (usa, in the time unit's scale) of the tokens X
        at their own positions, or at the unit vectors ``targets`` (the mean-field velocity of their empirical
        measure before projection)."""
        U = _unit_rows(np.asarray(X, dtype=float))
        T = U if targets is None else _unit_rows(np.asarray(targets, dtype=float))
        S = self.sums(U, None if targets is None else T)
        self.stats["evaluations"] += 1
        if self.model == "usa":
            return S[:, 1:] * (self.scale * self.b)
        Z = S[:, 0]
        delta = ENGINE_ERROR[self.engine] * max(float(Z.max()), 0.0)
        eps = (self.tail if self.guaranteed else 0.0) + 2.0 * delta
        with np.errstate(divide="ignore", invalid="ignore"):
            bound = 2.0 * eps / Z
        bad = np.flatnonzero(~(bound <= self.tol) | ~(Z > 0))
        out = np.empty((T.shape[0], 3))
        np.divide(S[:, 1:], Z[:, None], out=out, where=(Z > 0)[:, None])
        if bad.size:
            out[bad] = direct_sums(U, T[bad], self.kappa, "sa")
            self.stats["direct_rows"] += int(bad.size)
        return out * self.b

    def __call__(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        F = self.output(X)
        # P_{x_i} F = F - <x_i, F> x_i / |x_i|^2 (the exact tangent projection, also off the sphere)
        F -= (np.einsum("ij,ij->i", X, F) / np.einsum("ij,ij->i", X, X))[:, None] * X
        return F

    def at(self, X: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """The projected field of the empirical measure of X at the unit vectors ``targets`` (k, 3)."""
        T = _unit_rows(np.asarray(targets, dtype=float))
        F = self.output(X, T)
        F -= np.einsum("ij,ij->i", T, F)[:, None] * T
        return F

    # -- energy ---------------------------------------------------------------------------------------------------
    def energy(self, X: np.ndarray, normalization: str = "glpr-shifted") -> float:
        """The interaction energy at the model's beta (Q = K = V = I; :func:`harmonic_energy`)."""
        return harmonic_energy(X, self.beta, normalization=normalization, tol=self.tol,
                               engine="numpy" if self.engine == "numpy" else "auto")

    #: recorded in trajectory metadata (``energy_method``)
    energy_method = "spherical-harmonic moments, O(n L^2) per frame"

    @property
    def work(self) -> float:
        """Operations of one evaluation (for the work limits): about 20 (L+1)^2 per token and pass (numpy) or
        a few hundred per token (ducc0)."""
        per_token = 40.0 * (self.degree + 1) ** 2 if self.engine == "numpy" else 2000.0
        return per_token

    @property
    def details(self) -> dict:
        """What the trajectory metadata records about this backend."""
        return {"degree": self.degree, "tol": self.tol, "engine": self.engine, "kappa": self.kappa,
                "tail_bound_scaled": self.tail, **self.stats}


#: energies whose harmonic sum loses more than this relative accuracy to rounding (beta < 0) use the direct sum
ENERGY_RELATIVE_ACCURACY = 1e-12
ENERGY_DIRECT_MAX_N = 4096
GLPR_ENERGY_MAX_BETA = 600.0


def _half_mean_weight_minus_one_over_beta(beta: float) -> float:
    """(lambda_0(beta) - 1) / (2 beta) = (sinh(beta)/beta - 1) / (2 beta) without cancellation."""
    if beta == 0.0:
        return 0.0
    x = abs(beta)
    if x < 0.5:
        # sum_{k>=1} beta^{2k} / (2k+1)! / (2 beta): 12 terms, remainder below 1e-30 relative
        q, term, total = beta * beta, 1.0, 0.0
        for k in range(1, 13):
            term *= q / ((2 * k) * (2 * k + 1))
            total += term
        return total / (2.0 * beta)
    return (math.sinh(x) / x - 1.0) / (2.0 * beta)


def degree_powers(X: np.ndarray, L: int, engine: str = "numpy") -> np.ndarray:
    """R_l = sum_m (M_lm)^2 for l = 0..L, M_lm = (1/n) sum_j Y_lm(x_j) (rotation invariant; R_0 = 1,
    R_1 = 3 |mean x|^2, R_l = (1/n^2) sum_ij (2l+1) P_l(<x_i, x_j>) by the addition theorem)."""
    n = X.shape[0]
    C = point_moments(X, np.ones((n, 1)), L, engine=engine)[0] / n
    return np.einsum("clm,clm->l", C, C)


def harmonic_energy(X, beta: float, *, normalization: str = "glpr-shifted", tol: float = DEFAULT_TOL,
                    degree: int | None = None, engine: str = "auto") -> float:
    r"""Interaction energy of tokens on :math:`\mathbb{S}^2` from their harmonic moments, :math:`O(nL^2)`.

    ``glpr-shifted`` (alias ``glpr``):
    :math:`E_\beta = \frac{\lambda_0 - 1}{2\beta} + \sum_{l\ge1} \frac{\lambda_l}{2\beta} R_l`
    (:math:`= \frac{1}{2\beta n^2} \sum_{ij} (e^{\beta s_{ij}} - 1)`;
    :math:`\lvert \operatorname{mean} x\rvert^2 / 2` at :math:`\beta = 0`), :math:`R_l` of :func:`degree_powers`.
    ``gkpr``: :math:`\frac{1}{n^2} \sum_{ij} e^{\beta(s_{ij} - 1)} = \sum_l \lambda_l e^{-\beta} R_l`
    (:math:`\beta \ge 0`).
    ``log-mean-exp``: :math:`\frac{1}{\beta} \log\bigl(\frac{1}{n^2} \sum_{ij} e^{\beta s_{ij}}\bigr)` from the same sum
    (:math:`\beta > 0`).
    For :math:`\beta < 0` the weights alternate in sign; where rounding could exceed :math:`10^{-12} \lvert E\rvert` the
    blocked direct sum of :func:`numerics.core.field.interaction_energy` is used (:math:`n \le 4096`), else
    :class:`InputError`.

    Truncation: :math:`L` with :math:`T_L \le \mathrm{tol}\, \lambda_0 \min(1, \lvert\beta\rvert)`
    (:func:`energy_degree`), so :math:`\lvert E^H - E\rvert \le T_L / (2\lvert\beta\rvert)`.
    Verified by: harmonic.energy-agrees.
    """
    from numerics.core.field import ENERGY_ALIASES, interaction_energy

    beta = require_real(beta, "beta")
    normalization = require_choice(ENERGY_ALIASES.get(normalization, normalization), "normalization",
                                   ("glpr-shifted", "gkpr", "log-mean-exp"))
    X = _unit_rows(require_points(X, "X", d=3))
    L = energy_degree(beta, tol) if degree is None else check_degree(degree)
    eng = choose_engine(engine, X.shape[0], beta, tol, "usa")
    if normalization != "glpr-shifted" and beta < 0:
        if normalization == "gkpr":
            raise InputError(f"the gkpr normalisation needs beta >= 0, got {beta:g}")
        return interaction_energy(X, beta, normalization=normalization)
    R = degree_powers(X, L, eng)
    lam = scaled_coefficients(beta, L)
    if normalization == "gkpr":
        return float(np.dot(lam, R))
    if normalization == "log-mean-exp" and abs(beta) > 1.0:
        return (abs(beta) + math.log(float(np.dot(lam, R)))) / beta
    if beta == 0.0:
        return float(R[1] / 3.0) if normalization == "log-mean-exp" else float(R[1] / 6.0)
    if abs(beta) > GLPR_ENERGY_MAX_BETA:
        raise InputError(f"E_beta overflows at beta={beta:g}; use normalization='log-mean-exp' or 'gkpr'")
    weights = lam[1:] * (math.exp(abs(beta)) / (2.0 * beta))
    if abs(beta) < TINY_BETA:  # lambda_l / beta from its power series (finite down to subnormal beta)
        weights = power_series_coefficients(beta, L, divide_by_beta=True)[1:] / 2.0
    energy = _half_mean_weight_minus_one_over_beta(beta) + float(np.dot(weights, R[1:]))
    if normalization == "log-mean-exp":  # |beta| <= 1: (1/beta) log1p(2 beta E), no cancellation as beta -> 0
        return 2.0 * energy if beta == 0.0 else math.log1p(2.0 * beta * energy) / beta
    if beta < 0:
        rounding = 1e-16 * (L + 1) * (abs(_half_mean_weight_minus_one_over_beta(beta))
                                      + float(np.dot(np.abs(weights), R[1:])))
        if rounding > ENERGY_RELATIVE_ACCURACY * abs(energy):
            if X.shape[0] > ENERGY_DIRECT_MAX_N:
                raise InputError(f"E_beta from harmonic moments loses accuracy at beta={beta:g} for this state "
                                 f"(rounding ~{rounding:.1e} vs |E| = {abs(energy):.1e}) and n={X.shape[0]} > "
                                 f"{ENERGY_DIRECT_MAX_N} is too large for the direct sum")
            return interaction_energy(X, beta)
    return energy
