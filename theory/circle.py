r"""The circle :math:`\mathbb{S}^1`: angle equations, the Kuramoto correspondence and the Bessel-Fourier form of the
dynamics.

Conventions (docs/conventions.md; GLPR arXiv 2312.10794): :math:`x_i = (\cos\theta_i, \sin\theta_i)`,
:math:`\tau_i = (-\sin\theta_i, \cos\theta_i)` the unit tangent, :math:`Q = K = V = I`, the self-interaction
:math:`j = i` included.

- Angle equations (:func:`angle_equation_derivation`): the sphere field :math:`v_i` of ``sa``/``usa`` at
  :math:`d = 2` has normal component :math:`\langle x_i, v_i\rangle = 0` and tangential component
  :math:`\langle \tau_i, v_i\rangle = d\theta_i/dt =`

  .. math::

      \begin{aligned}
      \texttt{usa}:&\quad \frac{1}{n} \sum_j e^{\beta\cos(\theta_j - \theta_i)} \sin(\theta_j - \theta_i),\\
      \texttt{sa}:&\quad \frac{\sum_j e^{\beta\cos(\theta_j - \theta_i)} \sin(\theta_j - \theta_i)}
      {\sum_j e^{\beta\cos(\theta_j - \theta_i)}}.
      \end{aligned}

- Kuramoto (:func:`kuramoto_derivation`): at :math:`\beta = 0` both are
  :math:`d\theta_i/dt = \omega + (K/n) \sum_j \sin(\theta_j - \theta_i)` with identical natural frequencies
  :math:`\omega = 0` and coupling :math:`K = 1` (the :math:`K/n` mean-field normalisation).
- Fourier (:func:`fourier_series_derivations`): from
  :math:`e^{(\beta/2)(z + 1/z)} = \sum_k I_k(\beta) z^k` at :math:`z = e^{iu}`,
  :math:`e^{\beta\cos u} = I_0 + 2 \sum_{k\ge1} I_k \cos(ku)` and, differentiating in :math:`u`,

  .. math::

      e^{\beta\cos u} \sin u = \frac{2}{\beta} \sum_{k\ge1} k I_k \sin(ku) = \sum_{k\ge1} (I_{k-1} - I_{k+1}) \sin(ku).

- Order parameters :math:`r_k = \frac{1}{n} \sum_j e^{ik\theta_j}` (:func:`order_parameter_derivations`):

  .. math::

      \begin{aligned}
      E_\beta &= \frac{I_0(\beta) - 1}{2\beta} + \sum_{k\ge1} \frac{I_k(\beta)}{\beta} \lvert r_k\rvert^2
      \quad \text{(our } E_\beta\text{, GLPR's minus } 1/(2\beta)\text{)},\\
      \texttt{usa}:\quad \omega_i &= \sum_k b_k \operatorname{Im}(r_k e^{-ik\theta_i})
      = n\, \partial E_\beta/\partial\theta_i,\\
      \texttt{sa}:\quad \omega_i &= \omega_i^{\texttt{usa}}
      \Big/ \Big(I_0 + 2 \sum_k I_k \operatorname{Re}(r_k e^{-ik\theta_i})\Big).
      \end{aligned}

- Truncation (:func:`harmonics_for_tolerance_mp`): the reference (mpmath) version of the tail criterion used by
  :func:`numerics.circle.fourier.harmonics_for_tolerance`.

sympy and mpmath only.
"""
from __future__ import annotations


import mpmath as mp
import sympy as sp

from . import codegen
from . import symbols as sym
from .derivation import Derivation, Step
from .spec import ModelSpec
from .sphere import tangent_projection
from .symbols import beta, k, theta, u

SOURCE = "GLPR (arXiv 2312.10794), the circle S^1 and the Kuramoto model"


# -- sphere field at d = 2 and the angle equations ----------------------------------------------------------------
def circle_point(angle: sp.Expr) -> sp.Matrix:
    r""":math:`x = (\cos a, \sin a)` as a column vector, :math:`a` = ``angle``."""
    return sp.Matrix([sp.cos(angle), sp.sin(angle)])


def circle_tangent(angle: sp.Expr) -> sp.Matrix:
    r"""The unit tangent :math:`\tau = dx/da = (-\sin a, \cos a)`, :math:`a` = ``angle``."""
    return sp.Matrix([-sp.sin(angle), sp.cos(angle)])


def sphere_field(spec: ModelSpec, points) -> list[sp.Matrix]:
    r"""The ``sa``/``usa`` field :math:`v_i = P_{x_i}(\sum_j w_{ij} V x_j / N_i)` for explicit symbolic points
    (small :math:`n` only).

    :math:`w_{ij} = e^{\beta \langle Q x_i, K x_j\rangle}` (``spec.pair_kernel()``), :math:`N_i = \sum_j w_{ij}`
    (``sa``) or :math:`n` (``usa``).
    """
    pts = [sp.Matrix(p) for p in points]
    n = len(pts)
    out = []
    for x in pts:
        weights = [spec.pair_kernel().xreplace({sym.s: ((spec.Q * x).T * (spec.K * y))[0, 0]}) for y in pts]
        total = sum((w * (spec.V * y) for w, y in zip(weights, pts)), sp.zeros(spec.d, 1))
        norm = sum(weights) if spec.model == "sa" else sp.Integer(n)
        out.append(tangent_projection(x, total / norm))
    return out


def pair_angle_kernel(angle_difference: sp.Expr = u) -> tuple[sp.Expr, sp.Expr]:
    r""":math:`(e^{\beta\cos u} \sin u,\ e^{\beta\cos u})`: the numerator and normaliser kernels of the angle
    equations."""
    w = sp.exp(beta * sp.cos(angle_difference))
    return w * sp.sin(angle_difference), w


def angle_velocity(model: str, angles, i: int) -> sp.Expr:
    r""":math:`d\theta_i/dt` from the angle equations (explicit angles, 0-based ``i``)."""
    n = len(angles)
    num = sum(pair_angle_kernel(a - angles[i])[0] for a in angles)
    den = sum(pair_angle_kernel(a - angles[i])[1] for a in angles) if model == "sa" else sp.Integer(n)
    return num / den


def _trig_expanded(expr: sp.Expr) -> sp.Expr:
    return sp.expand_trig(expr)


def _on_circle(expr: sp.Expr, angles) -> sp.Expr:
    """Expand and reduce every power sin(a)^m, m >= 2, with sin^2 = 1 - cos^2 (|x|^2 = 1 on the circle)."""
    expr = sp.expand(expr)
    for a in angles:
        sa, ca = sp.sin(a), sp.cos(a)
        while True:
            new = sp.expand(expr.replace(lambda e: e.is_Pow and e.base == sa and e.exp.is_Integer and e.exp >= 2,
                                         lambda e: (1 - ca ** 2) * sa ** (e.exp - 2)))
            if new == expr:
                break
            expr = new
    return expr


def _row_weights_as_symbols(spec: ModelSpec, angles, i: int):
    """Row i: map e^{beta<Qx_i,Kx_j>} (as built by :func:`sphere_field`) to symbols W_ij, and W_ij back to
    e^{beta cos(theta_j - theta_i)}. Per row, because e^{beta<x_i,x_j>} = e^{beta<x_j,x_i>} when Q = K."""
    pts = [circle_point(a) for a in angles]
    to_symbol, to_angle = {}, {}
    for j, y in enumerate(pts):
        W = sp.Symbol(f"W_{i + 1}{j + 1}", positive=True)
        to_symbol[spec.pair_kernel().xreplace({sym.s: ((spec.Q * pts[i]).T * (spec.K * y))[0, 0]})] = W
        to_angle[W] = pair_angle_kernel(angles[j] - angles[i])[1]
    return to_symbol, to_angle


def pair_angle_derivation(model: str) -> Derivation:
    r"""Pair level: the tangential and normal components of
    :math:`P_{x_i}(e^{\beta\langle x_i, x_j\rangle} x_j)` at :math:`d = 2`.

    With :math:`x_i = (\cos\theta_i, \sin\theta_i)`:
    :math:`\langle \tau_i, P_{x_i}(w x_j)\rangle = w \sin(\theta_j - \theta_i)` and
    :math:`\langle x_i, P_{x_i}(w x_j)\rangle = 0`, :math:`w = e^{\beta\cos(\theta_j - \theta_i)}`; by linearity
    (and the scalar normaliser of ``sa``) this gives the angle equations for any :math:`n`. ``model`` only changes
    the title.

    Verified by: circle.angle-equations.
    """
    ti, tj = theta, sp.Symbol("theta_j", real=True)
    xi, xj = circle_point(ti), circle_point(tj)
    spec = ModelSpec(model, 2)
    w = spec.pair_kernel().xreplace({sym.s: (xi.T * xj)[0, 0]})
    pv = tangent_projection(xi, w * xj)
    tangential, normal = (circle_tangent(ti).T * pv)[0, 0], (xi.T * pv)[0, 0]
    num, _ = pair_angle_kernel(tj - ti)
    lhs = sp.Matrix([_on_circle(tangential, [ti, tj]), _on_circle(normal, [ti, tj])])
    rhs = sp.Matrix([_on_circle(_trig_expanded(num), [ti, tj]), 0])
    steps = (
        Step("x_i = (cos theta_i, sin theta_i), tau_i = (-sin theta_i, cos theta_i); <x_i, x_j> =", sp.cos(tj - ti)),
        Step("pair term of the field P_{x_i}(e^{beta<x_i,x_j>} x_j)", pv),
        Step("tangential component <tau_i, .> (tau_i . x_j = sin(theta_j - theta_i))", tangential),
        Step("normal component <x_i, .> (P_{x_i} is the orthogonal projection onto tau_i)", normal),
    )
    return Derivation(f"{model}: pair term of the d = 2 sphere field in angle form", SOURCE, lhs, rhs, steps,
                      notes="tangential component = e^{beta cos(theta_j - theta_i)} sin(theta_j - theta_i); "
                            "normal component = 0")


def angle_equation_derivation(model: str, n: int = 3) -> Derivation:
    r"""Explicit small-:math:`n` cross-check: the full sphere field :math:`v_i` equals :math:`\omega_i \tau_i`
    (normal part 0), all :math:`i`.

    The field is built by :func:`sphere_field` from the model spec; its weights
    :math:`e^{\beta\langle x_i, x_j\rangle}` are renamed :math:`W_{ij}` (positive symbols) so that the identity
    becomes polynomial: lhs stacks :math:`(N_i \langle \tau_i, v_i\rangle, \langle x_i, v_i\rangle)` and rhs
    :math:`(\sum_j W_{ij} \sin(\theta_j - \theta_i), 0)`, :math:`N_i = \sum_j W_{ij}` (``sa``) or :math:`n`
    (``usa``). The weights are then identified with :math:`e^{\beta\cos(\theta_j - \theta_i)}` (the inner product
    :math:`\langle x_i, x_j\rangle = \cos(\theta_j - \theta_i)`, step 2), which turns rhs :math:`/ N_i` into
    :func:`angle_velocity`.

    Verified by: circle.angle-equations.
    """
    angles = [sp.Symbol(f"theta_{i + 1}", real=True) for i in range(n)]
    spec = ModelSpec(model, 2)
    field = sphere_field(spec, [circle_point(a) for a in angles])
    lhs, rhs, to_angle = [], [], {}
    for i, (a, v) in enumerate(zip(angles, field)):
        to_symbol, row_to_angle = _row_weights_as_symbols(spec, angles, i)
        to_angle.update(row_to_angle)
        v = v.xreplace(to_symbol)
        W = [sp.Symbol(f"W_{i + 1}{j + 1}", positive=True) for j in range(n)]
        N = sum(W) if model == "sa" else sp.Integer(n)
        x = circle_point(a)
        lhs += [_on_circle(sp.cancel((circle_tangent(a).T * v)[0, 0] * N), angles),
                _on_circle(sp.cancel((x.T * v)[0, 0] * N), angles)]
        rhs += [_on_circle(sum(Wj * _trig_expanded(sp.sin(b - a)) for Wj, b in zip(W, angles)), angles),
                sp.Integer(0)]
    omega = [angle_velocity(model, angles, i) for i in range(n)]
    steps = (Step("normalised tangential components (rhs / N_i) with W_ij = e^{beta cos(theta_j - theta_i)}",
                  sp.Matrix([(rhs[2 * i] / (sum(sp.Symbol(f'W_{i + 1}{j + 1}', positive=True) for j in range(n))
                                             if model == 'sa' else n)) for i in range(n)]).xreplace(to_angle)),
             Step("angle equations d theta_i/dt", sp.Matrix(omega)))
    return Derivation(f"{model}: sphere field at d = 2 equals omega_i tau_i (n = {n})", SOURCE,
                      sp.Matrix(lhs), sp.Matrix(rhs), steps,
                      notes="rows scaled by the normaliser N_i > 0 (Z_i for sa, n for usa); weights renamed W_ij; "
                            "self-interaction j = i included (it contributes sin 0 = 0)")


def kuramoto_derivation(model: str, n: int = 3) -> Derivation:
    r"""At :math:`\beta = 0` the angle equations are Kuramoto's with :math:`\omega_i = 0` and coupling
    :math:`K = 1` (:math:`K/n` normalisation).

    Kuramoto: :math:`d\theta_i/dt = \omega_i + (K/n) \sum_{j=1}^n \sin(\theta_j - \theta_i)`.

    Verified by: circle.angle-equations, circle.kuramoto-two-particles.
    """
    angles = [sp.Symbol(f"theta_{i + 1}", real=True) for i in range(n)]
    coupling, omega = sp.Integer(1), sp.Integer(0)
    lhs = sp.Matrix([angle_velocity(model, angles, i).subs(beta, 0) for i in range(n)])
    rhs = sp.Matrix([omega + coupling / n * sum(sp.sin(a - angles[i]) for a in angles) for i in range(n)])
    steps = (Step("beta = 0: every weight e^{beta cos} = 1, so Z_i = n (sa) and the usa prefactor is 1/n", lhs),
             Step("Kuramoto with natural frequencies omega_i = 0 and coupling K = 1, normalised K/n", rhs))
    return Derivation(f"{model}: beta = 0 is the homogeneous Kuramoto model (n = {n})", SOURCE, lhs, rhs, steps,
                      notes="coupling normalisation: d theta_i/dt = (K/n) sum_j sin(theta_j - theta_i), K = 1")


# -- Fourier series with modified Bessel coefficients ------------------------------------------------------------
def bessel_series(order: int, terms: int) -> sp.Expr:
    r"""Taylor polynomial of :math:`I_p(\beta)`, :math:`p` = ``order``:
    :math:`\sum_{m<\text{terms}} (\beta/2)^{2m+p} / (m!\,(m+p)!)`."""
    order = abs(order)
    return sum((beta / 2) ** (2 * m + order) / (sp.factorial(m) * sp.factorial(m + order)) for m in range(terms))


def _truncate_in_beta(expr: sp.Expr, order: int) -> sp.Expr:
    """The terms of a polynomial in beta (coefficients may involve other symbols) of degree <= order."""
    return sp.expand(sum(c * beta ** p for (p,), c in sp.Poly(sp.expand(expr), beta).terms() if p <= order))


def generating_function_derivation(order: int = 8) -> Derivation:
    r""":math:`e^{(\beta/2)(z + 1/z)} = \sum_k I_k(\beta) z^k`, checked coefficient by coefficient up to
    :math:`\beta^p`, :math:`p` = ``order``.

    Both sides are expanded as polynomials in :math:`\beta` (Laurent in :math:`z`) through degree ``order``: the
    left side from the exponential series, the right from the Taylor series of :math:`I_k`
    (:math:`\lvert k\rvert \le p`). Exact identity of truncations, hence of every Taylor coefficient up to that
    degree.
    """
    z = sp.Symbol("z", nonzero=True)
    lhs = sp.expand(sum(((beta / 2) * (z + 1 / z)) ** m / sp.factorial(m) for m in range(order + 1)))
    rhs_full = sum(bessel_series(kk, order // 2 + 1) * z ** kk for kk in range(-order, order + 1))
    rhs = sp.expand(rhs_full)
    lhs_t, rhs_t = _truncate_in_beta(lhs, order), _truncate_in_beta(rhs, order)
    steps = (Step("exp series of (beta/2)(z + 1/z) through beta^order", lhs_t),
             Step("I_k(beta) = sum_m (beta/2)^{2m+|k|} / (m! (m+|k|)!), I_{-k} = I_k", rhs_t))
    return Derivation(f"generating function of I_k, Taylor coefficients through beta^{order}",
                      "Watson, Theory of Bessel functions, 2.22 (modified form); docs/conventions.md",
                      lhs_t, rhs_t, steps)


def fourier_series_derivations() -> list[Derivation]:
    r"""Symbolic steps from the generating function to the sin/cos series of the circle kernels.

    1. :math:`z = e^{iu}`: :math:`e^{\beta\cos u} = \sum_k I_k e^{iku} = I_0 + 2 \sum_{k\ge1} I_k \cos(ku)`
       (:math:`I_{-k} = I_k`).
    2. :math:`d/du`: :math:`-\beta \sin u\, e^{\beta\cos u} = -2 \sum_k k I_k \sin(ku)`, so
       :math:`e^{\beta\cos u} \sin u = (2/\beta) \sum_k k I_k \sin(ku)`.
    3. Recurrence :math:`I_{k-1} - I_{k+1} = (2k/\beta) I_k` (checked on Taylor series): coefficient
       :math:`b_k = I_{k-1} - I_{k+1}`, regular at :math:`\beta = 0` (:math:`b_1 = 1`, :math:`b_k = 0` for
       :math:`k \ge 2`: the Kuramoto :math:`\sin u`).

    Each derivation is an exact identity on truncated Taylor series in :math:`\beta` (degree 10).

    Verified by: circle.fourier-field (numerically), tests/theory/test_circle_derivations.py (symbolically).
    """
    order, terms = 10, 7
    # step 1 and 2 on the Fourier side: the k-th cosine coefficient of e^{beta cos u}, by the exponential series
    # and the binomial expansion of cos^m u = 2^{-m} sum_j C(m, j) cos((m - 2j) u), equals I_k (Taylor).
    out = []
    for kk in range(0, 4):
        cos_coef = sum(beta ** m / sp.factorial(m) * sp.binomial(m, (m - kk) // 2) / 2 ** m
                       for m in range(kk, order + 1) if (m - kk) % 2 == 0)
        factor = 1 if kk == 0 else 2
        lhs = sp.expand(cos_coef * factor)
        rhs = sp.expand(factor * bessel_series(kk, terms))
        out.append(Derivation(f"cos({kk}u) coefficient of e^beta cos u = {factor} I_{kk}(beta) (through beta^{order})",
                              "docs/conventions.md, Fourier form on S^1", _truncate_in_beta(lhs, order),
                              _truncate_in_beta(rhs, order),
                              (Step("coefficient from e^{beta cos u} = sum_m beta^m cos^m u / m!", lhs),)))
    for kk in range(1, 5):
        lhs = sp.expand(bessel_series(kk - 1, terms) - bessel_series(kk + 1, terms))
        rhs = sp.expand(2 * kk * bessel_series(kk, terms + 1) / beta)
        out.append(Derivation(f"recurrence I_{kk - 1} - I_{kk + 1} = (2 {kk}/beta) I_{kk} (Taylor)",
                              "DLMF 10.29.1", _truncate_in_beta(lhs, 2 * terms - 2),
                              _truncate_in_beta(rhs, 2 * terms - 2),
                              (Step("sin-series coefficient b_k = (2k/beta) I_k from d/du e^{beta cos u}", rhs),)))
    return out


def fourier_kernels(K: int | sp.Symbol | None = None):
    r"""The truncated series :math:`(\sum_{k=1}^K b_k \sin(ku),\ I_0 + 2 \sum_{k=1}^K I_k \cos(ku))` as sympy
    expressions."""
    K = 8 if K is None else K
    kk = sp.Dummy("k", integer=True, positive=True)
    sin_series = sp.Sum((sp.besseli(kk - 1, beta) - sp.besseli(kk + 1, beta)) * sp.sin(kk * u), (kk, 1, K))
    cos_series = sp.besseli(0, beta) + 2 * sp.Sum(sp.besseli(kk, beta) * sp.cos(kk * u), (kk, 1, K))
    return sin_series, cos_series


def fourier_coefficient_quadrature(kk: int, beta_value, dps: int = 30) -> tuple[mp.mpf, mp.mpf]:
    r"""mpmath check of the coefficients:
    :math:`(\frac{1}{\pi} \int_0^{2\pi} e^{\beta\cos u} \sin u \sin(ku)\, du,\quad
    \frac{1}{\pi} \int_0^{2\pi} e^{\beta\cos u} \cos(ku)\, du)`, to compare with
    :math:`(I_{k-1} - I_{k+1},\ 2 I_k)`."""
    with mp.workdps(dps):
        b = mp.mpf(beta_value)
        f_sin = mp.quad(lambda x: mp.exp(b * mp.cos(x)) * mp.sin(x) * mp.sin(kk * x), [0, mp.pi, 2 * mp.pi]) / mp.pi
        f_cos = mp.quad(lambda x: mp.exp(b * mp.cos(x)) * mp.cos(kk * x), [0, mp.pi, 2 * mp.pi]) / mp.pi
        return f_sin, f_cos


def scaled_fourier_coefficients():
    r""":math:`(a_k, b_k)` scaled by :math:`e^{-\lvert\beta\rvert}`: :math:`a_k = I_k(\beta) e^{-\lvert\beta\rvert}`
    (cos series), :math:`b_k = (I_{k-1}(\beta) - I_{k+1}(\beta)) e^{-\lvert\beta\rvert}` (sin series).
    Overflow-safe through :class:`theory.codegen.besselie`."""
    return codegen.besselie(k, beta), codegen.besselie(k - 1, beta) - codegen.besselie(k + 1, beta)


def scaled_fourier_coefficient_function():
    """Compiled ``coefficients(k, beta) -> (a_k, b_k)`` (NumPy, ``scipy.special.ive``), cached by codegen."""
    return codegen.compile_function(
        "circle_scaled_fourier_coefficients", (k, beta), scaled_fourier_coefficients(),
        doc="Scaled Bessel-Fourier coefficients of the circle kernels.\n\nArguments: k (harmonic, array), beta."
            "\nReturns (a_k, b_k) = (ive(k, beta), ive(k-1, beta) - ive(k+1, beta)).")


# -- order parameters: energy and fields -------------------------------------------------------------------------
def order_parameter(kk: int, angles) -> sp.Expr:
    r""":math:`r_k = \frac{1}{n} \sum_j e^{ik\theta_j}` (explicit angles)."""
    return sp.Add(*[sp.exp(sp.I * kk * a) for a in angles]) / len(angles)


def order_parameter_derivations(n: int = 3, K: int = 3) -> list[Derivation]:
    r"""Exact per-harmonic identities behind :math:`E_\beta` and the fields in terms of :math:`r_k` (explicit
    :math:`n` angles).

    1. :math:`\frac{1}{n^2} \sum_{i,j} \cos(k(\theta_i - \theta_j)) = \lvert r_k\rvert^2` (so
       :math:`E_\beta = (I_0 - 1)/(2\beta) + \sum_k (I_k/\beta) \lvert r_k\rvert^2` from the cos series, term by
       term).
    2. :math:`\frac{1}{n} \sum_j \sin(k(\theta_j - \theta_i)) = \operatorname{Im}(r_k e^{-ik\theta_i})` and
       :math:`\frac{1}{n} \sum_j \cos(k(\theta_j - \theta_i)) = \operatorname{Re}(r_k e^{-ik\theta_i})` (the
       ``usa`` numerator, ``sa`` denominator).
    3. Gradient structure on the circle: with
       :math:`E_K = (I_0 - 1)/(2\beta) + \sum_{k\le K} (I_k/\beta) \lvert r_k\rvert^2`,
       :math:`n\, \partial E_K/\partial\theta_i = \sum_{k\le K} (2k I_k/\beta) \operatorname{Im}(r_k e^{-ik\theta_i})`
       (``usa`` :math:`= n \operatorname{grad} E_\beta`, harmonic-wise).

    Verified by: circle.energy-order-parameters.
    """
    angles = [sp.Symbol(f"theta_{i + 1}", real=True) for i in range(n)]
    out = []
    for kk in range(1, K + 1):
        r = order_parameter(kk, angles)
        lhs = sp.Add(*[sp.cos(kk * (a - b)) for a in angles for b in angles]) / n ** 2
        rhs = sp.expand(r * sp.conjugate(r))
        out.append(Derivation(f"(1/n^2) sum_ij cos({kk}(theta_i - theta_j)) = |r_{kk}|^2 (n = {n})", SOURCE,
                              sp.expand(sp.expand_complex(sp.expand_trig(lhs))),
                              sp.expand(sp.expand_complex(rhs)),
                              (Step("r_k r_k^* = (1/n^2) sum_ij e^{ik(theta_i - theta_j)}", rhs),)))
        rot = sp.exp(-sp.I * kk * angles[0])
        lhs2 = sp.Matrix([sp.Add(*[sp.sin(kk * (a - angles[0])) for a in angles]) / n,
                          sp.Add(*[sp.cos(kk * (a - angles[0])) for a in angles]) / n])
        rhs2 = sp.Matrix([sp.im(sp.expand_complex(r * rot)), sp.re(sp.expand_complex(r * rot))])
        out.append(Derivation(f"mean of sin/cos({kk}(theta_j - theta_1)) = Im/Re(r_{kk} e^(-i{kk} theta_1))",
                              SOURCE, lhs2.applyfunc(lambda e: sp.expand(sp.expand_trig(e))),
                              rhs2.applyfunc(lambda e: sp.expand(sp.expand_trig(e))),
                              (Step("r_k e^{-ik theta_i} = (1/n) sum_j e^{ik(theta_j - theta_i)}", r * rot),)))
    # 3. gradient structure, with I_k as opaque symbols c_k = I_k(beta)
    c = [sp.Symbol(f"I_{kk}", positive=True) for kk in range(K + 1)]
    modsq = [sp.expand(sp.expand_complex(order_parameter(kk, angles) * sp.conjugate(order_parameter(kk, angles))))
             for kk in range(1, K + 1)]
    energy = (c[0] - 1) / (2 * beta) + sum(c[kk] / beta * modsq[kk - 1] for kk in range(1, K + 1))
    lhs3 = sp.expand(n * sp.diff(energy, angles[0]))
    rhs3 = sp.expand(sum(2 * kk * c[kk] / beta
                         * sp.im(sp.expand_complex(order_parameter(kk, angles) * sp.exp(-sp.I * kk * angles[0])))
                         for kk in range(1, K + 1)))
    out.append(Derivation(f"usa = n grad E_beta harmonic by harmonic (n = {n}, K = {K})", SOURCE,
                          sp.expand(sp.expand_trig(lhs3)), sp.expand(sp.expand_trig(rhs3)),
                          (Step("E_K in order parameters", energy),)))
    return out


def energy_in_order_parameters(K: int = 4) -> sp.Expr:
    r""":math:`E_\beta = (I_0(\beta) - 1)/(2\beta) + \sum_{k=1}^K (I_k(\beta)/\beta) R_k`,
    :math:`R_k = \lvert r_k\rvert^2` (symbols ``R_k``).

    The full series (:math:`K \to \infty`) is our :math:`E_\beta` (GLPR's minus :math:`1/(2\beta)`); at
    :math:`\beta = 0` it tends to :math:`R_1 / 2`. For :math:`\beta > 0` every coefficient is positive; for
    :math:`\beta < 0`, :math:`I_k(\beta)/\beta = (-1)^{k+1} I_k(\lvert\beta\rvert)/\lvert\beta\rvert` alternates in
    sign (even harmonics enter negatively).
    """
    R = [sp.Symbol(f"R_{kk}", nonnegative=True) for kk in range(1, K + 1)]
    return (sp.besseli(0, beta) - 1) / (2 * beta) + sum(sp.besseli(kk, beta) / beta * R[kk - 1]
                                                        for kk in range(1, K + 1))


# -- truncation bound (mpmath reference) -------------------------------------------------------------------------
def amos_ratio_bound(kk, x):
    r""":math:`q_k = x / (k + 1/2 + \sqrt{x^2 + (k + 1/2)^2}) \ge I_{k+1}(x)/I_k(x)`, :math:`x \ge 0`,
    :math:`k \ge 0` (Amos 1974, Math. Comp. 28, 239-251); :math:`q_k < 1` and :math:`q_k` decreases in :math:`k`."""
    h = mp.mpf(kk) + mp.mpf(1) / 2
    x = mp.mpf(x)
    return x / (h + mp.sqrt(x * x + h * h))


def tail_bound_mp(K: int, beta_value) -> mp.mpf:
    r"""Majorant of :math:`\sum_{k\ge K} I_k(\lvert\beta\rvert)` (unscaled): :math:`I_K / (1 - q_K)`, since
    :math:`I_{k+1} \le q_k I_k \le q_K I_k` for :math:`k \ge K`. It bounds both truncation errors:
    :math:`\sum_{k>K} \lvert b_k\rvert \le \sum_{k\ge K} I_k` (:math:`0 \le b_k \le I_{k-1}`) and
    :math:`2 \sum_{k>K} I_k \le 2 \sum_{k\ge K} I_k`."""
    x = abs(mp.mpf(beta_value))
    return mp.besseli(K, x) / (1 - amos_ratio_bound(K, x))


def harmonics_for_tolerance_mp(beta_value, tol, dps: int = 30, guard=1) -> int:
    r"""Smallest :math:`K \ge 1` with :math:`3\, T(K) \le g \cdot \mathrm{tol} \cdot I_0(\lvert\beta\rvert)`,
    :math:`T` the tail bound (:func:`tail_bound_mp`), :math:`g` = ``guard`` (reference, mpmath, unscaled).

    ``guard = 1`` is the ``usa`` criterion of :func:`numerics.circle.fourier.harmonics_for_tolerance`;
    ``guard = numerics.circle.fourier.SA_DENOMINATOR_GUARD`` (1e-4) the ``sa`` criterion (``sa`` error
    :math:`\le 3 T / (Z_i/n)` on the rows with :math:`Z_i/n \ge g I_0`; the other rows are computed directly)."""
    with mp.workdps(dps):
        x = abs(mp.mpf(beta_value))
        target = mp.mpf(guard) * mp.mpf(tol) * mp.besseli(0, x) / 3
        K = 1
        while tail_bound_mp(K, x) > target:
            K += 1
        return K


def truncation_error_bound_mp(K: int, beta_value, dps: int = 30) -> tuple[mp.mpf, mp.mpf]:
    r"""Exact sup-norm-bounding tails :math:`(\sum_{k>K} \lvert b_k\rvert,\ 2 \sum_{k>K} \lvert I_k\rvert)` by
    mpmath summation, to compare with the majorant."""
    with mp.workdps(dps):
        x = abs(mp.mpf(beta_value))
        sin_tail = mp.nsum(lambda j: mp.besseli(j - 1, x) - mp.besseli(j + 1, x), [K + 1, mp.inf])
        cos_tail = 2 * mp.nsum(lambda j: mp.besseli(j, x), [K + 1, mp.inf])
        return sin_tail, cos_tail


# -- generated reference code for the order-parameter form ---------------------------------------------------------
R_RE, R_IM, R_ABS2 = (sp.Symbol("r_re", real=True), sp.Symbol("r_im", real=True),
                      sp.Symbol("r_abs2", nonnegative=True))


def order_parameter_terms():
    r"""Per-harmonic terms of the fields and the energy in terms of :math:`r_k` = ``r_re + i r_im`` (all scaled by
    :math:`e^{-\lvert\beta\rvert}`).

    Returns ``(sin_term, cos_term, energy_term)``:
    ``sin_term`` :math:`= b_k \operatorname{Im}(r_k e^{-ik\theta})` (``usa`` numerator; the sum over
    :math:`k \ge 1` is :math:`e^{-\lvert\beta\rvert} \omega_i^{\texttt{usa}}`),
    ``cos_term`` :math:`= 2 a_k \operatorname{Re}(r_k e^{-ik\theta})` (``sa`` denominator minus :math:`a_0`),
    ``energy_term`` :math:`= 2 a_k \lvert r_k\rvert^2` (GKPR energy minus :math:`a_0` for :math:`\beta \ge 0`).
    """
    a_k, b_k = scaled_fourier_coefficients()
    rot = sp.expand_complex((R_RE + sp.I * R_IM) * sp.exp(-sp.I * k * theta))
    return b_k * sp.im(rot), 2 * a_k * sp.re(rot), 2 * a_k * R_ABS2


def order_parameter_term_function():
    """Compiled ``terms(k, beta, theta, r_re, r_im, r_abs2) -> (sin_term, cos_term, energy_term)`` (broadcasting).

    The reference implementation (generated through :mod:`theory.codegen`) against which the hand-written
    :math:`O(nK)` Horner evaluation in :mod:`numerics.circle.fourier` is tested.
    """
    return codegen.compile_function(
        "circle_order_parameter_terms", (k, beta, theta, R_RE, R_IM, R_ABS2), order_parameter_terms(),
        doc="Per-harmonic terms of the circle fields and energy (scaled by e^{-|beta|}).\n\n"
            "Arguments: k, beta, theta, r_re, r_im, r_abs2 (broadcasting). Returns (b_k Im(r_k e^{-ik theta}),\n"
            "2 a_k Re(r_k e^{-ik theta}), 2 a_k |r_k|^2) with a_k = ive(k, beta), b_k = ive(k-1, beta) - ive(k+1, beta).")


def circle_module_source() -> str:
    """A standalone NumPy/SciPy module with the generated circle functions (for ``theory.codegen.write_module``)."""
    chunks = [codegen.function_source("circle_scaled_fourier_coefficients", (k, beta),
                                      scaled_fourier_coefficients(),
                                      doc="Arguments: k, beta. Returns (ive(k, beta), ive(k-1, beta) - ive(k+1, beta)).").source,
              codegen.function_source("circle_order_parameter_terms", (k, beta, theta, R_RE, R_IM, R_ABS2),
                                      order_parameter_terms(),
                                      doc="Arguments: k, beta, theta, r_re, r_im, r_abs2.").source]
    return codegen.module_source("Bessel-Fourier form of self-attention dynamics on the circle (attnflow).",
                                 chunks)
