r"""Exact reductions of the particle dynamics: the equiangular ODE and weighted clusters (sympy).

Both are derived from the fields of docs/conventions.md (GLPR arXiv 2312.10794) for any pair kernel :math:`\phi`
(attention weight :math:`\phi'(s)`, the exponential kernel giving :math:`e^{\beta s}`):

.. math::

    \texttt{usa}:\ v_i = P_{x_i}\Big(\frac{1}{n} \sum_j \phi'(s_{ij}) x_j\Big), \qquad
    \texttt{sa}:\ v_i = P_{x_i}\Big(\sum_j \phi'(s_{ij}) x_j / Z_i\Big), \qquad
    Z_i = \sum_k \phi'(s_{ik}).

Equiangular reduction (survey arXiv 2512.01868 / GLPR, "equiangular model"). Every velocity is a combination
of the particles, :math:`v_i = \sum_j c_{ij} x_j`, so the Gram matrix :math:`G = X X^\top` obeys
:math:`dG/dt = C G + G C^\top`. If :math:`G = (1 - \rho) I + \rho \mathbf{1}\mathbf{1}^\top` then
:math:`C = a I + b \mathbf{1}\mathbf{1}^\top` by symmetry, hence :math:`dG/dt` has the same form: equal inner
products stay equal, the diagonal stays 1, and the common value :math:`\rho = s` obeys :math:`ds/dt = F(s)` with

.. math::

    \begin{aligned}
    \texttt{usa}:\quad F(s) &= \frac{2}{n} \phi'(s) (1 - s)(1 + (n - 1) s),\\
    \texttt{sa}:\quad F(s) &= \frac{2 \phi'(s) (1 - s)(1 + (n - 1) s)}{\phi'(1) + (n - 1) \phi'(s)}
    \end{aligned}

(derived below with symbolic :math:`n`, not typed in: :func:`equiangular_rate`; cross-checked against explicit
symbolic particles by :func:`equiangular_derivation`). The symbol ``s`` stands for :math:`\rho` (it is an inner
product).

Cluster reduction: if particles coincide in :math:`K` groups with masses :math:`m_c = n_c / n` at points
:math:`y_c`, they stay coincident (uniqueness: the velocity of a particle depends only on its position and the
empirical measure), and each group moves as one weighted particle:

.. math::

    \begin{aligned}
    \texttt{usa}:\quad dy_c/dt &= P_{y_c}\Big(\sum_e m_e \phi'(\langle y_c, y_e\rangle) y_e\Big),\\
    \texttt{sa}:\quad dy_c/dt &= P_{y_c}\Big(\sum_e m_e \phi'(\langle y_c, y_e\rangle) y_e
    \Big/ \sum_e m_e \phi'(\langle y_c, y_e\rangle)\Big),\\
    E &= \frac{1}{2} \sum_{c,e} m_c m_e \phi(\langle y_c, y_e\rangle).
    \end{aligned}

Verified by: conjecture.equiangular-ode (numerics) and tests/theory/test_conjecture_reductions.py.
"""
from __future__ import annotations

import random
from collections.abc import Sequence
from fractions import Fraction

import sympy as sp

from . import symbols as sym
from .derivation import Derivation, Step
from .hessian import _sampler
from .kernels import PairKernel, exponential_kernel
from .sphere import tangent_projection

MODELS = ("sa", "usa")


def _check_model(model: str) -> str:
    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}, got {model!r}")
    return model


def _weight(kernel: PairKernel, value) -> sp.Expr:
    return kernel.weight().subs(sym.s, value)


def equiangular_coefficients(kernel: PairKernel, model: str, n=sym.n) -> tuple[sp.Expr, sp.Expr]:
    r"""``(c_same, c_other)``: :math:`v_i = c_{\text{same}} x_i + c_{\text{other}} \sum_{j \ne i} x_j` on an
    equiangular configuration.

    From :math:`v_i = P_{x_i}(u_i)`, :math:`u_i = w (\phi'(1) x_i + \phi'(s) \sum_{j \ne i} x_j)` with
    :math:`w = 1/n` (``usa``) or :math:`1/Z` (``sa``), :math:`Z = \phi'(1) + (n - 1) \phi'(s)`, and
    :math:`\langle x_i, u_i\rangle = w (\phi'(1) + (n - 1) s \phi'(s))`.
    """
    _check_model(model)
    s = sym.s
    w1, ws = _weight(kernel, 1), _weight(kernel, s)
    scale = 1 / n if model == "usa" else 1 / (w1 + (n - 1) * ws)
    inner = scale * (w1 + (n - 1) * s * ws)  # <x_i, u_i>
    return scale * w1 - inner, scale * ws


def equiangular_rate(kernel: PairKernel | None = None, model: str = "sa", n=sym.n) -> sp.Expr:
    r""":math:`F(s)` with :math:`ds/dt = F(s)` for the common inner product :math:`s` of an equiangular configuration.

    Derived from :math:`dG/dt = C G + G C^\top` with
    :math:`C = c_{\text{same}} I + c_{\text{other}} (\mathbf{1}\mathbf{1}^\top - I)` and
    :math:`G = (1 - s) I + s \mathbf{1}\mathbf{1}^\top`: for :math:`i \ne k`,
    :math:`(C G)_{ik} = c_{\text{same}} s + c_{\text{other}} (1 + (n - 2) s)`, and the two terms of
    :math:`dG_{ik}/dt` are equal.

    Verified by: conjecture.equiangular-ode; tests/theory/test_conjecture_reductions.py.
    """
    kernel = kernel or exponential_kernel()
    c_same, c_other = equiangular_coefficients(kernel, model, n)
    s = sym.s
    cg = c_same * s + c_other * (1 + (n - 2) * s)  # (C G)_ik, i != k
    return sp.factor(sp.simplify(2 * cg))


def equiangular_diagonal_rate(kernel: PairKernel | None = None, model: str = "sa", n=sym.n) -> sp.Expr:
    """:math:`dG_{ii}/dt = 2 (C G)_{ii}` on an equiangular configuration (zero: the particles stay on the sphere)."""
    kernel = kernel or exponential_kernel()
    c_same, c_other = equiangular_coefficients(kernel, model, n)
    return sp.simplify(2 * (c_same + c_other * (n - 1) * sym.s))


def rational_equiangular_points(rng: random.Random, n: int, d: int | None = None) -> tuple[list[list[sp.Rational]], sp.Rational]:
    r""":math:`n` exact rational unit vectors of :math:`\mathbb{Q}^d` (:math:`d \ge n`) with all pairwise inner products
    equal to :math:`\rho`.

    :math:`x_i = a e_i + b \mathbf{1}` (padded with zeros) has :math:`\lvert x_i\rvert^2 = a^2 + 2ab + n b^2` and
    :math:`\langle x_i, x_j\rangle = 2ab + n b^2`, so :math:`\lvert x_i\rvert = 1` and :math:`\rho = 1 - a^2` when
    :math:`n b^2 + 2ab + a^2 - 1 = 0`, i.e. :math:`b = (q - a)/n` with :math:`(n-1) a^2 + q^2 = n`. Rational points
    of that conic come from the lines through :math:`(1, 1)` with rational slope :math:`m`.
    """
    d = n if d is None else d
    if d < n:
        raise ValueError(f"rational equiangular points need d >= n, got n={n}, d={d}")
    while True:
        m = sp.Rational(Fraction(rng.randint(-40, 40), rng.randint(1, 13)))
        a = (m**2 - 2 * m - n + 1) / (m**2 + n - 1)
        if a != 0 and abs(a) != 1:
            break
    q = 1 + m * (a - 1)
    b = (q - a) / n
    pts = [[(a if c == i else 0) + (b if c < n else 0) for c in range(d)] for i in range(n)]
    return pts, 1 - a**2


def _explicit_velocity(kernel: PairKernel, model: str, points: Sequence[sp.Matrix], i: int) -> sp.Matrix:
    """The field of particle i from explicit symbolic particles (small-n path, independent of the reduction)."""
    n = len(points)
    xi = points[i]
    weights = [_weight(kernel, (xi.T * xj)[0, 0]) for xj in points]
    u = sum((w * xj for w, xj in zip(weights, points)), sp.zeros(*xi.shape))
    u = u / n if model == "usa" else u / sum(weights)
    return tangent_projection(xi, u)


def equiangular_derivation(kernel: PairKernel | None = None, model: str = "sa", n: int = 3, d: int | None = None) -> Derivation:
    r"""Derivation: for explicit symbolic particles on an equiangular configuration,
    :math:`d\langle x_i, x_k\rangle/dt = F(\langle x_i, x_k\rangle)`.

    The left side is :math:`\langle v_i, x_k\rangle + \langle x_i, v_k\rangle` for every pair :math:`i < k` (and
    :math:`\frac{1}{2} d\lvert x_i\rvert^2/dt = \langle v_i, x_i\rangle` for every :math:`i`), with :math:`v` from
    the explicit field; the right side is :math:`F` of :func:`equiangular_rate` at the pair's inner product (and 0).
    The identity holds on equiangular configurations only, so it is verified exactly at rational equiangular points
    (:func:`rational_equiangular_points`); call ``verify(simplify=False)``.
    """
    kernel = kernel or exponential_kernel()
    d = n if d is None else d
    points = [sym.particle(i + 1, d) for i in range(n)]
    v = [_explicit_velocity(kernel, model, points, i) for i in range(n)]
    F = equiangular_rate(kernel, model, sp.Integer(n))
    lhs, rhs = [], []
    for i in range(n):
        for k in range(i + 1, n):
            lhs.append((v[i].T * points[k])[0, 0] + (points[i].T * v[k])[0, 0])
            rhs.append(F.subs(sym.s, (points[i].T * points[k])[0, 0]))
        lhs.append((v[i].T * points[i])[0, 0])
        rhs.append(sp.Integer(0))
    names = [list(p) for p in points]
    parameters = _sampler(0, d, kernel, [])  # random beta and kernel parameters, no sphere points

    def sampler(rng: random.Random):
        pts, _ = rational_equiangular_points(rng, n, d)
        subs = {names[i][c]: pts[i][c] for i in range(n) for c in range(d)}
        subs.update(parameters(rng))
        return subs

    return Derivation(
        title=f"Equiangular reduction ({model}, n={n}, d={d}): d<x_i,x_k>/dt = F(<x_i,x_k>) for every pair",
        source="GLPR arXiv 2312.10794 / survey arXiv 2512.01868, equiangular model",
        lhs=sp.Matrix(lhs), rhs=sp.Matrix(rhs),
        steps=(Step("kernel", kernel.expr),
               Step("coefficients (c_same, c_other) of v_i in the particles", sp.Matrix(equiangular_coefficients(kernel, model))),
               Step("reduced rate F(s) for general n", equiangular_rate(kernel, model))),
        sampler=sampler,
        notes="holds on equiangular configurations (all <x_i, x_j> equal, unit norms): checked there exactly",
    )


def beta_zero_closed_form(n=sym.n, rho0=None) -> sp.Expr:
    r""":math:`\rho(t)` at :math:`\beta = 0` (both models coincide there):
    :math:`(K e^{2t} - 1) / (K e^{2t} + n - 1)`.

    :math:`K = (1 + (n - 1) \rho_0) / (1 - \rho_0)`; from separating variables in
    :math:`ds/dt = (2/n)(1 - s)(1 + (n - 1) s)` with partial fractions
    :math:`\frac{1}{(1 - s)(1 + (n - 1) s)} = \frac{1}{n}\big(\frac{1}{1 - s} + \frac{n - 1}{1 + (n - 1) s}\big)`.
    """
    rho0 = sp.Symbol("rho_0", real=True) if rho0 is None else sp.sympify(rho0)
    K = (1 + (n - 1) * rho0) / (1 - rho0)
    e = K * sp.exp(2 * sym.t)
    return (e - 1) / (e + n - 1)


def beta_zero_derivation(model: str = "sa") -> Derivation:
    r"""Derivation: the closed form solves the :math:`\beta = 0` equiangular ODE with :math:`\rho(0) = \rho_0`
    (symbolic :math:`n`).
    """
    kernel = exponential_kernel()
    F0 = sp.limit(equiangular_rate(kernel, model), sym.beta, 0)
    rho = beta_zero_closed_form()
    rho0 = sp.Symbol("rho_0", real=True)
    return Derivation(
        title=f"Equiangular ODE at beta = 0 ({model}): closed-form solution",
        source="GLPR arXiv 2312.10794, equiangular model; beta = 0 is the Kuramoto case",
        lhs=sp.Matrix([sp.diff(rho, sym.t), rho.subs(sym.t, 0)]),
        rhs=sp.Matrix([F0.subs(sym.s, rho), rho0]),
        steps=(Step("F at beta = 0", F0), Step("solution", rho)),
    )


def synchronisation_rate(kernel: PairKernel | None = None, model: str = "sa") -> sp.Expr:
    r""":math:`-F'(1)`: near :math:`s = 1`, :math:`1 - s` decays like :math:`e^{-\text{rate}\, t}`. ``usa``:
    :math:`2 \phi'(1)` (:math:`2 e^\beta`); ``sa``: 2 (GLPR claim 2).
    """
    kernel = kernel or exponential_kernel()
    F = equiangular_rate(kernel, model)
    return sp.simplify(-sp.diff(F, sym.s).subs(sym.s, 1))


def initial_speed(kernel: PairKernel | None = None, model: str = "sa", n=sym.n) -> sp.Expr:
    r""":math:`F(0)`: the speed of :math:`s` from an orthogonal start (``sa``, exponential kernel:
    :math:`2/(e^\beta + n - 1)`).
    """
    kernel = kernel or exponential_kernel()
    return sp.simplify(equiangular_rate(kernel, model, n).subs(sym.s, 0))


# -- clusters ------------------------------------------------------------------------------------------------
def _cluster_drift(kernel: PairKernel, model: str, centres: Sequence[sp.Matrix], masses: Sequence, c: int
                   ) -> tuple[sp.Matrix, sp.Matrix]:
    """(y_c, u_c) with u_c = sum_e m_e phi'(<y_c,y_e>) y_e (divided by sum_e m_e phi'(...) for sa), unprojected."""
    _check_model(model)
    yc = sp.Matrix(centres[c])
    weights = [m * _weight(kernel, (yc.T * sp.Matrix(y))[0, 0]) for m, y in zip(masses, centres)]
    u = sum((w * sp.Matrix(y) for w, y in zip(weights, centres)), sp.zeros(*yc.shape))
    if model == "sa":
        u = u / sum(weights)
    return yc, u


def cluster_velocity(kernel: PairKernel, model: str, centres: Sequence[sp.Matrix], masses: Sequence, c: int) -> sp.Matrix:
    r"""Velocity of cluster :math:`c`: :math:`P_{y_c}(\sum_e m_e \phi'(\langle y_c, y_e\rangle) y_e)`, normalised by
    :math:`\sum_e m_e \phi'(\cdot)` for ``sa``.
    """
    yc, u = _cluster_drift(kernel, model, centres, masses, c)
    return tangent_projection(yc, u)


def _cluster_velocity_written_out(kernel, model, centres, masses, c) -> sp.Matrix:
    """The same velocity with the projection written out, u - <y_c, u> y_c: the reduction identity compares it
    with particle velocities built by the shared helper (both sides from one helper let a reflection 'prove' it)."""
    yc, u = _cluster_drift(kernel, model, centres, masses, c)
    return u - (yc.T * u)[0, 0] * yc


def cluster_energy(kernel: PairKernel, centres: Sequence[sp.Matrix], masses: Sequence) -> sp.Expr:
    r""":math:`E = \frac{1}{2} \sum_{c,e} m_c m_e \phi(\langle y_c, y_e\rangle)` (the particle energy with coincident
    particles grouped).
    """
    ys = [sp.Matrix(y) for y in centres]
    return sum(mc * me * kernel.expr.subs(sym.s, (yc.T * ye)[0, 0])
               for mc, yc in zip(masses, ys) for me, ye in zip(masses, ys)) / 2


def cluster_derivation(kernel: PairKernel | None = None, model: str = "sa", sizes: Sequence[int] = (2, 1),
                       d: int = 3) -> Derivation:
    """Derivation: with particles coinciding in groups of ``sizes``, each particle's velocity (and the energy)
    equal the weighted-cluster formulas with masses :math:`m_c = n_c / n`. An exact identity in the cluster
    coordinates.
    """
    from .kernels import pair_energy

    kernel = kernel or exponential_kernel()
    n = sum(sizes)
    centres = [sym.vector(f"y{c + 1}", d) for c in range(len(sizes))]
    masses = [sp.Rational(m, n) for m in sizes]
    owner = [c for c, m in enumerate(sizes) for _ in range(m)]
    particles = [centres[c] for c in owner]
    lhs = [_explicit_velocity(kernel, model, particles, i) for i in range(n)]
    rhs = [_cluster_velocity_written_out(kernel, model, centres, masses, owner[i]) for i in range(n)]
    lhs.append(sp.Matrix([pair_energy(kernel, particles)]))
    rhs.append(sp.Matrix([cluster_energy(kernel, centres, masses)]))

    # exact rational points of the sphere for the centres, random beta and parameters (theory.hessian's sampler)
    sampler = _sampler(len(sizes), d, kernel, [list(y) for y in centres])

    return Derivation(
        title=f"Cluster reduction ({model}, sizes {tuple(sizes)}, d={d}): coincident particles move as weighted particles",
        source="GLPR arXiv 2312.10794 (empirical measure form of the dynamics)",
        lhs=sp.Matrix.vstack(*lhs), rhs=sp.Matrix.vstack(*rhs),
        steps=(Step("masses", sp.Matrix(masses)),),
        sampler=sampler,
        notes="identity in the cluster centres (particles of a cluster share the centre's coordinates)",
    )


__all__ = [
    "beta_zero_closed_form",
    "beta_zero_derivation",
    "cluster_derivation",
    "cluster_energy",
    "cluster_velocity",
    "equiangular_coefficients",
    "equiangular_derivation",
    "equiangular_diagonal_rate",
    "equiangular_rate",
    "initial_speed",
    "rational_equiangular_points",
    "synchronisation_rate",
]
