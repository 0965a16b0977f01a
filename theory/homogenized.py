r"""The homogenized Gaussian random transformer: zero drift, common-noise covariance, two-point drift, collapse ratio.

The discrete network (attnflow's definition; Koubbi, Geshkovski and Rigollet, arXiv 2604.01978, were read in the
abstract only: weights resampled across layers and heads, joint scalings of depth, step and heads giving a
deterministic or a common-noise limit, zero drift in the Gaussian case). Layer :math:`l` moves the :math:`n` unit
tokens by

.. math::

    x_i \leftarrow \frac{x_i + (\eta/H) \sum_h \sum_j A^h_{ij} V^h x_j}{\lVert \cdots \rVert}, \qquad
    A^h_{ij} = \operatorname{softmax}_j(\beta \langle Q^h x_i, K^h x_j\rangle),

with :math:`Q^h, K^h, V^h` :math:`d \times d` matrices of independent :math:`N(0, 1/d)` entries, drawn afresh for
every layer :math:`l` and head :math:`h`.

Derived here (the author's own algebra):

- the drift vanishes: :math:`E_V[V a] = 0`, so the mean update of a layer is 0 before the normalisation
  (:func:`value_moments_derivation`, first part);
- the common-noise covariance: :math:`E_V[(V a)(V b)^T] = (a \cdot b)/d\, I` (second part), hence the kicks
  :math:`u_i` of one head have :math:`E[u_i u_k^T] = (C_{ik}/d)\, I` with
  :math:`C_{ik} = E_{Q,K} \langle y_i, y_k\rangle`, :math:`y_i = \sum_j A_{ij} x_j` the attention-averaged
  token; the heads are independent, so a layer's kick has covariance :math:`(\eta^2/H) (C_{ik}/d)\, I`;
- the scalings: a layer's mean displacement is :math:`\eta E[V]` (0 here) and its variance :math:`\eta^2/H`; over
  depth :math:`L` the limit is deterministic when :math:`L \eta \to T` with :math:`\eta/H \to 0` (noise
  :math:`L \eta^2/H \to 0`; with Gaussian weights the tokens then do not move at all) and a common-noise SDE in
  the time :math:`t = L \eta^2/H` when that product stays finite (:func:`homogenized_time`);
- the two-point drift of :math:`\rho = \langle x, y\rangle` under a projected step with kick covariances
  :math:`s_{xx} I, s_{yy} I, s_{xy} I`:
  :math:`E\, d\rho = [(d - 2 + \rho^2) s_{xy} - (d - 1) \rho (s_{xx} + s_{yy})/2]\, dt`
  (:func:`two_point_drift_derivation`); a token's own squared displacement grows as :math:`(d - 1) s_{xx}\, dt`;
- the collapse ratio at orthonormal tokens: :math:`R = (d - 2) C_{ik} / ((d - 1) C_{ii})`, the growth of the mean
  pairwise cosine per unit of a token's own squared displacement (:func:`collapse_ratio`). With orthonormal
  tokens the scores are the entries of :math:`U W^T / \sqrt{d}` ... precisely
  :math:`\beta \langle u_i, w_j\rangle` with :math:`u_i, w_j` independent :math:`N(0, I/d)`, and for large
  :math:`n` and :math:`d`, :math:`C_{ik} \to 1/n`, :math:`C_{ii} \to e^{\beta^2/d}/n`, so
  :math:`R \to \frac{d - 2}{d - 1} e^{-\beta^2/d}` (:func:`large_n_collapse_ratio`): the trade-off
  :math:`\beta_c(R^*) = \sqrt{d \log((d - 2)/((d - 1) R^*))}`; at finite :math:`n` the softmax condenses once
  :math:`\beta^2/d` is of order :math:`2 \log n` and :math:`R` falls to its floor :math:`(d - 2)/((d - 1) n)`.

Verified by: tests/theory/test_homogenized_theory.py; numerics.noise.claims_homogenized (the network against these).
"""
from __future__ import annotations

import sympy as sp

from .derivation import Derivation, Step

_SOURCE = ("Koubbi-Geshkovski-Rigollet arXiv 2604.01978 (abstract only: random weights resampled across layers and "
           "heads, homogenized limit, zero drift in the Gaussian case); the formulas are attnflow's derivation")


def _check_d(d) -> int:
    if isinstance(d, bool) or not isinstance(d, int) or d < 2:
        raise ValueError(f"d must be an integer >= 2, got {d!r}")
    return d


def value_moments_derivation(d: int) -> Derivation:
    r""":math:`E_V[V a] = 0` and :math:`E_V[(V a)(V b)^T] = (a \cdot b)/d\, I` for :math:`V` with independent
    :math:`N(0, 1/d)` entries (exact in :math:`d`).

    The moments are taken with Isserlis' rule :math:`E[V_{pq} V_{rs}] = \delta_{pr} \delta_{qs} / d`, written as a
    formal expectation: a polynomial in the entries is linear (first moment 0) or a sum of pairs (second moment).
    """
    d = _check_d(d)
    V = sp.Matrix(d, d, lambda p, q: sp.Symbol(f"V{p}{q}"))
    a = sp.Matrix(sp.symbols(f"a1:{d + 1}", real=True))
    b = sp.Matrix(sp.symbols(f"b1:{d + 1}", real=True))
    entries = list(V)

    def expect(poly: sp.Expr) -> sp.Expr:
        # Gaussian moments up to order 2: E[1] = 1, E[V_pq] = 0, E[V_pq V_rs] = delta / d
        poly = sp.Poly(sp.expand(poly), *entries)
        out = 0
        for monom, coeff in poly.terms():
            degree = sum(monom)
            if degree == 0:
                out += coeff
            elif degree == 2 and max(monom) == 2:
                out += coeff / d
            elif degree > 2:
                raise ValueError("only moments up to order 2 are used")
        return sp.expand(out)

    Va, Vb = V * a, V * b
    first = sp.Matrix([expect(c) for c in Va])
    second = sp.Matrix(d, d, lambda i, k: expect(Va[i] * Vb[k]))
    lhs = sp.Matrix.vstack(first, second.reshape(d * d, 1))
    rhs = sp.Matrix.vstack(sp.zeros(d, 1), ((a.T * b)[0, 0] / d * sp.eye(d)).reshape(d * d, 1))
    return Derivation(
        title=f"Gaussian value matrix in d = {d}: E[V a] = 0 (no drift) and E[(V a)(V b)^T] = (a.b)/d I",
        source=_SOURCE, lhs=lhs, rhs=rhs,
        steps=(Step("E[V a] (the layer's mean update before normalisation)", first),
               Step("E[(V a)(V b)^T]", second)),
        notes="with a = y_i, b = y_k (attention-averaged tokens, independent of V) the kick covariance of one head "
              "is E_{Q,K}<y_i, y_k>/d times the identity")


def homogenized_time(depth, eta, heads):
    r""":math:`t = L \eta^2 / H`: the time of the common-noise limit (a layer's kick variance is :math:`\eta^2/H`
    times :math:`C/d`)."""
    return depth * eta ** 2 / heads


def two_point_drift(d, rho, s_xx, s_yy, s_xy):
    r""":math:`E\, d\rho / dt = (d - 2 + \rho^2) s_{xy} - (d - 1) \rho (s_{xx} + s_{yy})/2`
    (:func:`two_point_drift_derivation`)."""
    return (d - 2 + rho ** 2) * s_xy - (d - 1) * rho * (s_xx + s_yy) / 2


def two_point_drift_derivation(d: int) -> Derivation:
    r"""The :math:`O(h)` mean change of :math:`\rho = \langle x', y'\rangle` for
    :math:`x' = (x + D)/\lVert x + D\rVert`, :math:`y' = (y + G)/\lVert y + G\rVert`, with :math:`D, G` centred,
    :math:`E[D D^T] = s_{xx} h I`, :math:`E[G G^T] = s_{yy} h I`, :math:`E[D G^T] = s_{xy} h I`, :math:`x` and
    :math:`y` on :math:`\mathbb{S}^{d-1}`.

    :math:`D = e \xi`, :math:`G = e \zeta` with :math:`e = \sqrt{h}`; :math:`\rho'` is expanded to order
    :math:`e^2`, the first order has mean 0 and the second order's mean is its Hessian contracted with the
    covariance; the result is reduced modulo :math:`\lVert x\rVert^2 = \lVert y\rVert^2 = 1` and compared with
    :func:`two_point_drift`.
    """
    d = _check_d(d)
    x = sp.symbols(f"x1:{d + 1}", real=True)
    y = sp.symbols(f"y1:{d + 1}", real=True)
    xi = sp.symbols(f"xi1:{d + 1}", real=True)
    ze = sp.symbols(f"zeta1:{d + 1}", real=True)
    e = sp.Symbol("e", positive=True)
    sxx, syy, sxy = sp.symbols("s_xx s_yy s_xy", real=True)
    X, Y, XI, ZE = (sp.Matrix(v) for v in (x, y, xi, ze))
    P, Qv = X + e * XI, Y + e * ZE
    # on the sphere |x| = |y| = 1 is used inside the norms' expansions: |x + e xi|^2 = 1 + 2 e <x, xi> + e^2 |xi|^2
    nx = 1 + 2 * e * (X.T * XI)[0, 0] + e ** 2 * (XI.T * XI)[0, 0]
    ny = 1 + 2 * e * (Y.T * ZE)[0, 0] + e ** 2 * (ZE.T * ZE)[0, 0]
    rho_new = (P.T * Qv)[0, 0] * nx ** sp.Rational(-1, 2) * ny ** sp.Rational(-1, 2)
    second = sp.expand(sp.series(rho_new, e, 0, 3).removeO().coeff(e, 2))
    cov = {}
    for i in range(d):
        cov[(xi[i], xi[i])] = sxx
        cov[(ze[i], ze[i])] = syy
        cov[(xi[i], ze[i])] = cov[(ze[i], xi[i])] = sxy
    noise = list(xi) + list(ze)
    mean = 0
    for u in noise:
        for v in noise:
            if (u, v) in cov:
                mean += sp.diff(second, u, v) * cov[(u, v)] / 2
    rho = sp.expand((X.T * Y)[0, 0])
    relations = [sum(c ** 2 for c in x) - 1, sum(c ** 2 for c in y) - 1]
    residual = sp.reduced(sp.expand(mean - two_point_drift(d, rho, sxx, syy, sxy)), relations, *x, *y,
                          order="grevlex")[1]
    return Derivation(
        title=f"two-point drift of the projected common-noise step on S^{d - 1}",
        source=_SOURCE, lhs=residual, rhs=sp.Integer(0),
        steps=(Step("E d rho/dt (claimed)", two_point_drift(d, sp.Symbol("rho"), sxx, syy, sxy)),),
        notes="s_xy = s_xx = s_yy (a common translation) gives s (1 - rho)(d - 2 - rho) > 0: collapse; s_xy = 0 gives "
              "-(d - 1) rho s: independent Brownian decorrelation")


def collapse_ratio(d, c_cross, c_self):
    r""":math:`R = (d - 2) C_{ik} / ((d - 1) C_{ii})`: d(mean cosine) over d(mean squared displacement) at
    orthonormal tokens."""
    return (d - 2) * c_cross / ((d - 1) * c_self)


def large_n_collapse_ratio(d, beta):
    r""":math:`R` for :math:`n, d \to \infty`: :math:`C_{ik} \to 1/n`, :math:`C_{ii} \to e^{\beta^2/d}/n` (scores
    :math:`N(0, \beta^2/d)`, law of large numbers in the softmax denominator), so
    :math:`R \to \frac{d - 2}{d - 1} e^{-\beta^2/d}`."""
    return sp.Rational(1, 1) * (d - 2) / (d - 1) * sp.exp(-sp.sympify(beta) ** 2 / d)


def large_n_threshold(d, level):
    r""":math:`\beta` at which :func:`large_n_collapse_ratio` equals ``level``:
    :math:`\sqrt{d \log((d - 2)/((d - 1)\, \text{level}))}`."""
    return sp.sqrt(d * sp.log(sp.Rational(1, 1) * (d - 2) / ((d - 1) * sp.sympify(level))))
