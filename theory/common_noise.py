r"""Common noise on the sphere: every token driven by the same matrix-valued Brownian motion.

The SDE (Stratonovich, as in Engel and Shalova, arXiv 2603.06187, equation (1)):

.. math::

    dx_i = v_i(X)\, dt - P_{x_i} \circ dQ_t\, x_i, \qquad P_x = I - x x^T,

the same increment :math:`dQ_t` for every token :math:`i`. Two laws of the matrix Brownian motion are covered
(:math:`\sigma \ge 0`):

- ``goe``: :math:`Q_t` symmetric,
  :math:`E[dQ_{ab}\, dQ_{ce}] = \sigma^2 (\delta_{ac} \delta_{be} + \delta_{ae} \delta_{bc})\, dt`, i.e.
  :math:`Q_t = \sigma (B_t + B_t^T)/\sqrt{2}` with :math:`B_t` a :math:`d \times d` matrix of independent
  standard Brownian motions (the GOE normalisation: diagonal variance :math:`2 \sigma^2 t`, off-diagonal
  :math:`\sigma^2 t`). Engel-Shalova's :math:`Q_t = (B_t + B_t^T)/2` is :math:`\sigma = 1/\sqrt{2}`.
- ``values``: :math:`Q_t = \sigma W_t / \sqrt{d}` with :math:`W_t` a :math:`d \times d` matrix of independent
  standard Brownian motions (no symmetry): the Gaussian value-matrix increments of Fedorov et al.
  (arXiv 2601.21942) with the RMS normalisation
  :math:`E \lVert dQ\, x\rVert^2 = \sigma^2 \lVert x\rVert^2 dt` that keeps the size of a token's update
  independent of :math:`d`. (Here the matrix acts on the token itself; the paper's matrix acts on the attention
  output, see ``proofs_notes/noise-common-noise-orders.md`` for what was read and what is encoded.)

Derived here (each identity is a polynomial identity on the sphere, proved by reduction modulo
:math:`\lVert x\rVert^2 - 1`):

- the Ito-Stratonovich correction :math:`\tfrac{1}{2} \sum_a DV_a V_a = -c (d-1) x`, purely normal
  (:func:`ito_correction_derivation`);
- the one-point generator :math:`\tfrac{1}{2} \sum_a V_a V_a = c \Delta_S`, a Brownian motion on
  :math:`\mathbb{S}^{d-1}`, with :math:`c = \sigma^2/2` (goe) and :math:`c = \sigma^2/(2d)` (values)
  (:func:`one_point_generator_derivation`);
- the two-point motion of :math:`\rho = \langle x, y\rangle` has generator :math:`A(\rho) g'' + B(\rho) g'` with
  :math:`A = a (1 - \rho^2)^2` and :math:`B = -a \rho (1 - \rho^2)`, :math:`a = 2 \sigma^2` (goe) and
  :math:`a = \sigma^2/d` (values) (:func:`two_point_generator_derivation`); in the angle
  :math:`\theta = \arccos \rho` it is :math:`a \sin^2(\theta)\, d^2/d\theta^2`: :math:`\theta` is a martingale
  (no drift), so without attention the pair merges (:math:`\theta \to 0`) with probability
  :math:`1 - \theta_0/\pi` and becomes antipodal (:math:`\theta \to \pi`) with probability :math:`\theta_0/\pi`;
- the top Lyapunov exponent (rate of synchronisation of two nearby tokens) :math:`\lambda = -a`
  (:func:`lyapunov_derivation`): :math:`\log \theta` has drift :math:`-a` near :math:`\theta = 0`.

The constants :math:`a` and :math:`c` are the author's derivations (this module); the papers' abstracts state only
that the one-point motion is Brownian and the two-point motion synchronises.

Verified by: tests/theory/test_common_noise_theory.py (symbolic identities, finite differences of the flows);
numerics.noise.claims_common (the integrator against these closed forms).
"""
from __future__ import annotations

import sympy as sp

from .derivation import Derivation, Step, sphere_point_sampler

#: the laws of the common matrix Brownian motion
LAWS = ("goe", "values")
#: the noise strength :math:`\sigma`
sigma = sp.Symbol("sigma", positive=True)
_SOURCE = {"goe": "Engel-Shalova arXiv 2603.06187 (random quadratic form on the sphere), GOE normalisation",
           "values": "Fedorov-Sander-Elie-Marion-Lauriere arXiv 2601.21942 (random value matrices, RMS normalisation)"}


def _check(law: str, d) -> tuple[str, int]:
    if law not in LAWS:
        raise ValueError(f"unknown common-noise law {law!r}; expected one of {', '.join(LAWS)}")
    if isinstance(d, bool) or not isinstance(d, int) or d < 2:
        raise ValueError(f"d must be an integer >= 2, got {d!r}")
    return law, d


def noise_basis(law: str, d: int, s: sp.Expr = sigma) -> list[sp.Matrix]:
    r"""Matrices :math:`E_a` with :math:`Q_t = \sum_a E_a W^a_t` (:math:`W^a` independent standard Brownian
    motions) for ``law``.

    goe: :math:`\sqrt{2}\, s\, e_i e_i^T` and :math:`s (e_i e_j^T + e_j e_i^T)`, :math:`i < j`; values:
    :math:`(s / \sqrt{d})\, e_i e_j^T`, all :math:`(i, j)`.
    """
    law, d = _check(law, d)
    basis = []
    for i in range(d):
        for j in range(d):
            E = sp.zeros(d, d)
            if law == "values":
                E[i, j] = s / sp.sqrt(d)
            elif i == j:
                E[i, i] = sp.sqrt(2) * s
            elif i < j:
                E[i, j] = E[j, i] = s
            else:
                continue
            basis.append(E)
    return basis


def diffusion_constant(law: str, d: int, s=sigma) -> sp.Expr:
    r""":math:`c` of the one-point generator :math:`c \Delta_S`: :math:`\sigma^2/2` (goe), :math:`\sigma^2/(2d)`
    (values)."""
    law, d = _check(law, d)
    return s ** 2 / 2 if law == "goe" else s ** 2 / (2 * d)


def angle_coefficient(law: str, d: int, s=sigma) -> sp.Expr:
    r""":math:`a` of the two-point generator :math:`a \sin^2(\theta)\, d^2/d\theta^2` (and of
    :math:`\lambda = -a`): :math:`2 \sigma^2`, :math:`\sigma^2/d`."""
    law, d = _check(law, d)
    return 2 * s ** 2 if law == "goe" else s ** 2 / d


def _field(E: sp.Matrix, x: sp.Matrix) -> sp.Matrix:
    """V_E(x) = -P_x E x with P_x = I - x x^T, extended off the sphere by the same formula."""
    Ex = E * x
    return -(Ex - (x.T * Ex)[0, 0] * x)


def _derivative(f: sp.Expr, V: sp.Matrix, coords) -> sp.Expr:
    """The Lie derivative V f = grad f . V."""
    return sp.expand(sum(sp.diff(f, c) * V[k] for k, c in enumerate(coords)))


def _reduce(expr: sp.Expr, points) -> sp.Expr:
    """Normal form of a polynomial modulo |p|^2 = 1 for each point p (the sphere constraints).

    The constraints are in disjoint variables, so their leading monomials are coprime and they form a Groebner
    basis: the remainder is unique, and a polynomial vanishes on the product of spheres iff it is 0.
    """
    gens = [c for p in points for c in p]
    relations = [sum(c ** 2 for c in p) - 1 for p in points]
    return sp.reduced(sp.expand(expr), relations, *gens, order="grevlex")[1]


def ito_correction_derivation(law: str, d: int) -> Derivation:
    r""":math:`\tfrac{1}{2} \sum_a DV_a V_a = -c (d-1) x` on :math:`\mathbb{S}^{d-1}`,
    :math:`V_a(x) = -P_x E_a x` (:func:`noise_basis`)."""
    law, d = _check(law, d)
    x = sp.Matrix(sp.symbols(f"x1:{d + 1}", real=True))
    drift = sp.zeros(d, 1)
    for E in noise_basis(law, d):
        V = _field(E, x)
        drift += V.jacobian(list(x)) * V / 2
    lhs = sp.Matrix([_reduce(c, [list(x)]) for c in drift])
    c = diffusion_constant(law, d)
    return Derivation(
        title=f"Ito drift of the common noise -P_x o dQ x ({law}) on S^{d - 1}",
        source=_SOURCE[law], lhs=lhs, rhs=-c * (d - 1) * x,
        steps=(Step("V_a(x) = -P_x E_a x for the basis E_a of Q", sp.Matrix([len(noise_basis(law, d))])),
               Step("(1/2) sum_a DV_a V_a, reduced modulo |x|^2 = 1", lhs)),
        sampler=sphere_point_sampler([list(x)], d, extra=(sigma,)),
        notes="purely normal: the renormalisation of a projected Euler-Maruyama step supplies it, so that scheme "
              "must not add it again; the Ito form of the SDE is dx = v dt - P_x dQ x - c (d-1) x dt")


def _generic_polynomial(x, degree: int):
    """sum of c_m x^m over all monomials of degree <= ``degree`` with fresh coefficients c_m."""
    monomials = sorted(sp.itermonomials(list(x), degree), key=sp.default_sort_key)
    coeffs = sp.symbols(f"c0:{len(monomials)}")
    return sum(c * m for c, m in zip(coeffs, monomials))


def sphere_laplacian(f: sp.Expr, x) -> sp.Expr:
    r""":math:`\Delta_S` of the restriction of :math:`f` to :math:`\mathbb{S}^{d-1}`:
    :math:`\Delta f - x^T (\operatorname{Hess} f) x - (d-1)\, x \cdot \nabla f` at :math:`\lVert x\rVert = 1`."""
    d = len(x)
    H = sp.hessian(f, list(x))
    grad = sp.Matrix([sp.diff(f, c) for c in x])
    X = sp.Matrix(list(x))
    return sp.expand(H.trace() - (X.T * H * X)[0, 0] - (d - 1) * (X.T * grad)[0, 0])


def one_point_generator_derivation(law: str, d: int, degree: int = 3) -> Derivation:
    r""":math:`\tfrac{1}{2} \sum_a V_a V_a f = c \Delta_S f` on :math:`\mathbb{S}^{d-1}` for a generic polynomial
    :math:`f` of degree ``degree``.

    Degree 2 already identifies a second-order operator without constant term (its action on :math:`x_k` and
    :math:`x_k x_l` gives every coefficient); degree 3 is checked as well by default.
    """
    law, d = _check(law, d)
    x = sp.symbols(f"x1:{d + 1}", real=True)
    X = sp.Matrix(x)
    f = _generic_polynomial(x, degree)
    Lf = 0
    for E in noise_basis(law, d):
        V = _field(E, X)
        Lf += _derivative(_derivative(f, V, x), V, x) / 2
    c = diffusion_constant(law, d)
    return Derivation(
        title=f"one-point generator of the common noise ({law}) on S^{d - 1}: c Lap_S, c = {c}",
        source=_SOURCE[law], lhs=_reduce(Lf, [x]), rhs=_reduce(c * sphere_laplacian(f, x), [x]),
        steps=(Step("L f = (1/2) sum_a V_a(V_a f), f generic of degree " + str(degree), sp.Integer(degree)),
               Step("c (diffusion constant)", c)),
        notes="a Brownian motion on the sphere: E<e, x_t> = exp(-c (d-1) t) <e, x_0>")


def two_point_coefficients(law: str, d: int) -> tuple[sp.Expr, sp.Expr, sp.Symbol]:
    r""":math:`(A(\rho), B(\rho), \rho)` of the two-point generator :math:`A g'' + B g'` acting on
    :math:`g(\langle x, y\rangle)`."""
    a = angle_coefficient(law, d)
    rho = sp.Symbol("rho", real=True)
    return a * (1 - rho ** 2) ** 2, -a * rho * (1 - rho ** 2), rho


def two_point_generator_derivation(law: str, d: int) -> Derivation:
    r"""The two-point motion :math:`(x, y)` under the same noise, acting on :math:`g(\langle x, y\rangle)`:
    :math:`A g'' + B g'` (both sides).

    With :math:`W_a = V_a(x) \cdot \nabla_x + V_a(y) \cdot \nabla_y`,
    :math:`\tfrac{1}{2} \sum_a W_a W_a g(\rho) = g'' \tfrac{1}{2} \sum_a (W_a \rho)^2
    + g' \tfrac{1}{2} \sum_a W_a W_a \rho`; the identity proved is the pair :math:`(A, B)` on
    :math:`\mathbb{S}^{d-1} \times \mathbb{S}^{d-1}`.
    """
    law, d = _check(law, d)
    x = sp.symbols(f"x1:{d + 1}", real=True)
    y = sp.symbols(f"y1:{d + 1}", real=True)
    X, Y = sp.Matrix(x), sp.Matrix(y)
    rho_xy = sp.expand((X.T * Y)[0, 0])
    coords = list(x) + list(y)
    A = B = 0
    for E in noise_basis(law, d):
        W = sp.Matrix.vstack(_field(E, X), _field(E, Y))
        first = _derivative(rho_xy, W, coords)
        A += first ** 2 / 2
        B += _derivative(first, W, coords) / 2
    A_ref, B_ref, rho = two_point_coefficients(law, d)
    lhs = sp.Matrix([_reduce(A - A_ref.subs(rho, rho_xy), [x, y]), _reduce(B - B_ref.subs(rho, rho_xy), [x, y])])
    return Derivation(
        title=f"two-point generator of the common noise ({law}) in rho = <x, y> on S^{d - 1}",
        source=_SOURCE[law], lhs=lhs, rhs=sp.zeros(2, 1),
        steps=(Step("A(rho): coefficient of g''", A_ref), Step("B(rho): coefficient of g'", B_ref)),
        notes="independent of d for goe; the same A, B for every d up to the constant a")


def angle_generator(law: str, d: int) -> tuple[sp.Expr, sp.Expr]:
    r"""(coefficient of :math:`h''(\theta)`, coefficient of :math:`h'(\theta)`) of the two-point generator in
    :math:`\theta = \arccos \rho`."""
    A, B, rho = two_point_coefficients(law, d)
    theta = sp.Symbol("theta", positive=True)
    # g(rho) = h(arccos rho): g' = -h'/sqrt(1 - rho^2), g'' = h''/(1 - rho^2) - rho h'/(1 - rho^2)^(3/2)
    s = sp.sin(theta)
    on = {rho: sp.cos(theta)}
    second = sp.simplify((A / (1 - rho ** 2)).subs(on))
    first = sp.simplify((-A * rho / (1 - rho ** 2) ** sp.Rational(3, 2) - B / sp.sqrt(1 - rho ** 2)).subs(on)
                        .subs(sp.sqrt(1 - sp.cos(theta) ** 2), s))
    return second, first


def lyapunov_derivation(law: str, d: int) -> Derivation:
    r"""Top Lyapunov exponent :math:`\lambda = \lim_{\theta \to 0} L(\log \theta) = -a` of two tokens under the
    common noise."""
    law, d = _check(law, d)
    theta = sp.Symbol("theta", positive=True)
    second, first = angle_generator(law, d)
    L_log = second * (-1 / theta ** 2) + first / theta
    a = angle_coefficient(law, d)
    return Derivation(
        title=f"top Lyapunov exponent of the common noise ({law}) on S^{d - 1}",
        source=_SOURCE[law], lhs=sp.limit(L_log, theta, 0), rhs=-a,
        steps=(Step("generator in theta: coefficient of h''", second), Step("coefficient of h'", first),
               Step("L log theta", L_log)),
        notes="theta is a martingale (no first-order term), so the exponent is the Ito term of log: -a")


def antipodal_exponent(law: str, d: int, s, beta, model: str = "usa", n: int = 2) -> sp.Expr:
    r"""Growth rate of :math:`\phi = \pi - \theta` near the antipodal pair: attention repulsion minus the noise's
    :math:`a`.

    Two tokens with identity :math:`Q, K, V`: :math:`d\theta/dt = -w(\theta) \sin(\theta)`,
    :math:`w = e^{\beta \cos \theta}` (``usa``, :math:`n = 2`: each token moves with
    :math:`\tfrac{1}{2} e^{\beta \rho} \sin \theta`) and :math:`w = 2 e^{\beta \rho}/(e^\beta + e^{\beta \rho})`
    (``sa``). Near :math:`\theta = \pi`, :math:`d \log \phi = (w(\pi) - a)\, dt + \text{martingale}`: the
    antipodal pair attracts with positive probability iff :math:`w(\pi) < a` (derived here, not read in the
    paper).
    """
    a = angle_coefficient(law, d, s)
    if model == "usa":
        w = 2 * sp.exp(-beta) / n
    else:
        w = 2 * sp.exp(-beta) / (sp.exp(beta) + sp.exp(-beta))
    return w - a


def two_token_threshold(law: str, d: int, s, model: str = "usa") -> sp.Expr:
    r"""The :math:`\beta` at which the antipodal pair turns attracting (:func:`antipodal_exponent` = 0), closed
    form.

    ``usa`` (:math:`n = 2`): :math:`e^{-\beta} = a`, :math:`\beta_c = \log(1/a)`; ``sa``:
    :math:`2/(e^{2 \beta} + 1) = a`, :math:`\beta_c = \log(2/a - 1)/2` (needs :math:`a < 2`; for :math:`a \ge 1`
    it is :math:`\le 0`). Above :math:`\beta_c` the pair ends antipodal with positive probability.
    """
    a = angle_coefficient(law, d, s)
    return sp.log(1 / a) if model == "usa" else sp.log(2 / a - 1) / 2


def dissipation_derivation(law: str, d: int) -> Derivation:
    r""":math:`L (\sin \theta)^p = -p (\sin \theta)^p \kappa(\theta)` for two tokens under attention
    (:math:`d\theta/dt = -w \sin \theta`, :math:`w` any function of :math:`\theta`) and the common noise:
    :math:`\kappa = a ((1-p) \cos^2 \theta + \sin^2 \theta) + w \cos \theta`.

    Hence :math:`E\, V(t) \le e^{-p \kappa_{\min} t} V(0)` for :math:`V = \sin^p \theta` whenever
    :math:`\kappa_{\min} = \min \kappa > 0` (the noise coercive relative to the attention drift; derived here, in
    the spirit of Agazzi et al. arXiv 2604.26898, whose own condition and energy were not read), and
    :math:`E\, V` grows at first from any :math:`\theta_0` with :math:`\kappa < 0`.
    """
    law, d = _check(law, d)
    theta = sp.Symbol("theta", positive=True)
    p = sp.Symbol("p", positive=True)
    w = sp.Function("w")(theta)
    second, first = angle_generator(law, d)
    V = sp.sin(theta) ** p
    LV = second * sp.diff(V, theta, 2) + first * sp.diff(V, theta) - w * sp.sin(theta) * sp.diff(V, theta)
    a = angle_coefficient(law, d)
    kappa = a * ((1 - p) * sp.cos(theta) ** 2 + sp.sin(theta) ** 2) + w * sp.cos(theta)
    return Derivation(
        title=f"mean dissipation of (sin theta)^p for two tokens under attention and common noise ({law})",
        source=_SOURCE[law], lhs=sp.simplify(LV / V), rhs=-p * kappa,
        steps=(Step("generator in theta: a sin^2 h'' - w sin h'", LV), Step("kappa(theta)", kappa)),
        notes="coercive iff min over theta of kappa > 0; at theta = pi this reads a (1 - p) > w(pi)")
