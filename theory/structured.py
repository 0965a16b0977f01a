r"""Hessian spectra of :math:`E = \frac{1}{2n^2} \sum \phi(\langle x_i, x_j\rangle)` at structured critical
configurations, in closed form.

Everything is reduced from the kernel-level pair blocks of :func:`theory.hessian.pair_hessian_blocks` (never
retyped); the kernel enters only through :math:`\phi'(s)` and :math:`\phi''(s)` at the few inner products the
configuration has. Pass ``derivatives=placeholder_derivatives()`` to keep them as undefined functions ``dphi(s)``,
``ddphi(s)`` (exact identity checks), or a :class:`theory.kernels.PairKernel` (default :math:`\phi_\beta`) to get
expressions in :math:`\beta`.

1. :math:`k` clusters of :math:`m` coincident particles equally spaced on a great circle (:math:`n = km`;
   :math:`m = 1` is the regular :math:`n`-gon, :math:`k = 2` two antipodal clusters), in
   :math:`\mathbb{S}^{d-1}`. Evaluating the pair blocks at :math:`x_i = e_1`,
   :math:`x_j = \cos(u) e_1 + \sin(u) e_2` in the frames :math:`(e_\theta, e_3, \dots, e_d)` gives four scalars:
   the in-plane and out-of-plane off-diagonal entries :math:`o_{\text{in}}(u)`, :math:`o_{\text{out}}(u)` and
   diagonal contributions :math:`g_{\text{in}}(u)`, :math:`g_{\text{out}}(u)` (the cross terms vanish). The
   Hessian is then block-circulant over the clusters: cluster Fourier mode :math:`p` has

   .. math::

       \frac{1}{n^2} \Big[(m-1)(g(0) + o(0)) + m \sum_{c=1}^{k-1} \big(g(a_c) + o(a_c) \cos(p a_c)\big)\Big],
       \qquad a_c = 2\pi c/k,

   and the :math:`k(m-1)` intra-cluster (zero-sum) modes have
   :math:`\frac{1}{n^2}[(m-1) g(0) + m \sum_c g(a_c) - o(0)]`, once for the in-plane direction and :math:`d-2`
   times for the out-of-plane ones. Rotation modes: in-plane :math:`p = 0` and out-of-plane
   :math:`p = \pm 1 \pmod k`: :math:`1 + 2(d-2)` of them (:math:`d-1` when :math:`k \le 2`).
2. Regular simplex (:math:`n = d+1`, :math:`c = \langle x_a, x_b\rangle = -1/d`). Writing a tangent vector
   through :math:`w_{ab} = \langle u_a, x_b\rangle` (zero diagonal and row sums) and using
   :math:`\sum_b x_b x_b^\top = (n/d) I`,
   :math:`n^2 \operatorname{Hess}[u, u] = \phi'(c)(d/n) \lvert W^\top 1\rvert^2
   + \phi''(c)(\langle W, W^\top\rangle + \lvert W\rvert^2)`: antisymmetric :math:`W` are the :math:`d(d-1)/2`
   rotations; symmetric :math:`W` with zero row sums give :math:`2 \phi''(c)/(nd)` (:math:`(d+1)(d-2)/2` times);
   the remaining :math:`d` modes give :math:`\phi'(c)(d-1)/(d(d+1)) + \phi''(c)/d^2`.
3. Cross-polytope (:math:`\pm e_a`, :math:`n = 2d`): with :math:`p_a = u_{a+} + u_{a-}`,
   :math:`q_a = u_{a+} - u_{a-}`: symmetric part of :math:`q` gives :math:`\phi''(0)/d^2` (:math:`d(d-1)/2`
   times), antisymmetric part the :math:`d(d-1)/2` rotations, and :math:`p` gives
   :math:`2(\phi'(-1) + \phi''(0) - \phi'(0))/n^2` (:math:`d(d-2)` times) and
   :math:`2(\phi'(-1) + \phi''(0) + (d-2) \phi'(0))/n^2` (:math:`d` times).

Families 2 and 3 are reductions by invariant subspaces worked by hand (proofs_notes/critical-hessian-formula.md);
:func:`structured_spectrum_derivation` proves each list, with multiplicities, against the assembled kernel-level
Hessian: the matrix polynomial :math:`H \prod_k (H - \lambda_k)` vanishes and
:math:`\operatorname{tr}(H^p) = \sum_k \mathrm{mult}_k \lambda_k^p`.

Verified by: critical.hessian-formula, critical.circle-polygons, critical.unstable-rate-decay.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sympy as sp

from . import symbols as sym
from .derivation import Derivation, Step
from .hessian import hessian_from_pair_blocks, pair_hessian_blocks
from .kernels import PairKernel, exponential_kernel

Derivatives = Callable[[sp.Expr], tuple[sp.Expr, sp.Expr]]

#: undefined functions standing for :math:`\phi'` and :math:`\phi''` in kernel-free identities
dphi = sp.Function("dphi")
ddphi = sp.Function("ddphi")


@dataclass(frozen=True)
class SpectralBranch:
    """One eigenvalue (sympy expression) of the Riemannian Hessian with its multiplicity."""

    label: str
    value: sp.Expr
    multiplicity: int
    rotation: bool = False


def placeholder_derivatives() -> Derivatives:
    r""":math:`s \mapsto` ``(dphi(s), ddphi(s))``: keep the kernel abstract."""
    return lambda s_value: (dphi(s_value), ddphi(s_value))


def kernel_derivatives(kernel: PairKernel | None = None) -> Derivatives:
    r""":math:`s \mapsto (\phi'(s), \phi''(s))` for ``kernel`` (default :math:`\phi_\beta`), declared parameters
    substituted.
    """
    kernel = kernel or exponential_kernel()
    d1 = sp.simplify(sp.diff(kernel.substituted(), sym.s))
    d2 = sp.simplify(sp.diff(d1, sym.s))
    return lambda s_value: (d1.subs(sym.s, s_value), d2.subs(sym.s, s_value))


def _derivatives(kernel_or_derivatives) -> Derivatives:
    if kernel_or_derivatives is None or isinstance(kernel_or_derivatives, PairKernel):
        return kernel_derivatives(kernel_or_derivatives)
    return kernel_or_derivatives


def circle_pair_coefficients(kernel=None) -> dict[str, sp.Expr]:
    r""":math:`o_{\text{in}}(u)`, :math:`g_{\text{in}}(u)`, :math:`o_{\text{out}}(u)`,
    :math:`g_{\text{out}}(u)` from the pair blocks at :math:`e_1` and :math:`\cos(u) e_1 + \sin(u) e_2` (module doc).

    ``kernel``: a PairKernel (default :math:`\phi_\beta`) or a derivatives function (e.g.
    :func:`placeholder_derivatives`). Expressions in :data:`theory.symbols.u`, without the :math:`1/n^2` factor.
    Raises if a cross term is nonzero.
    """
    derivatives = _derivatives(kernel)
    u = sym.u
    xi = sp.Matrix([1, 0, 0])
    xj = sp.Matrix([sp.cos(u), sp.sin(u), 0])
    d1, d2 = derivatives(sp.cos(u))
    off, diag = pair_hessian_blocks(xi, xj, d1, d2)
    t_i, t_j, e3 = sp.Matrix([0, 1, 0]), sp.Matrix([-sp.sin(u), sp.cos(u), 0]), sp.Matrix([0, 0, 1])
    coeff = {
        "o_in": (t_i.T * off * t_j)[0, 0], "o_out": (e3.T * off * e3)[0, 0],
        "g_in": (t_i.T * diag * t_i)[0, 0], "g_out": (e3.T * diag * e3)[0, 0],
    }
    cross = [(t_i.T * off * e3)[0, 0], (e3.T * off * t_j)[0, 0], (t_i.T * diag * e3)[0, 0]]
    if any(_tidy_trig(c) != 0 for c in cross):
        raise ArithmeticError("in-plane and out-of-plane directions do not decouple")
    return {k: _tidy_trig(v) for k, v in coeff.items()}


def _tidy_trig(expr: sp.Expr) -> sp.Expr:
    """Expand, use cos^2 = 1 - sin^2, factor: cheap and enough for the pair-block scalars."""
    return sp.factor(sp.expand(expr).subs(sp.cos(sym.u) ** 2, 1 - sp.sin(sym.u) ** 2))


def circle_cluster_spectrum(k: int, m: int, d: int, kernel=None) -> list[SpectralBranch]:
    r"""Hessian spectrum of :math:`k` equally spaced clusters of :math:`m` particles on a great circle of
    :math:`\mathbb{S}^{d-1}` (module doc).

    Multiplicities add up to :math:`n(d-1)`, :math:`n = km`. Verified by: critical.circle-polygons.
    """
    if k < 1 or m < 1 or d < 2:
        raise ValueError(f"need k, m >= 1 and d >= 2, got k={k}, m={m}, d={d}")
    coeff = circle_pair_coefficients(kernel)
    n = k * m
    angles = [2 * sp.pi * c / k for c in range(1, k)]
    out: list[SpectralBranch] = []
    for plane, mult in (("in", 1), ("out", d - 2)):
        if mult == 0:
            continue
        o = sp.Lambda(sym.u, coeff[f"o_{plane}"])
        g = sp.Lambda(sym.u, coeff[f"g_{plane}"])
        diag = (m - 1) * g(0) + m * sum((g(a) for a in angles), sp.Integer(0))
        modes: dict[int, int] = {}
        for p in range(k):
            key = min(p, (k - p) % k)                 # modes p and k-p coincide
            modes[key] = modes.get(key, 0) + 1
        for p, count in sorted(modes.items()):
            value = (diag + (m - 1) * o(0) + m * sum((o(a) * sp.cos(p * a) for a in angles), sp.Integer(0))) / n**2
            rotation = (p == 0) if plane == "in" else (p == 1 % k)
            out.append(SpectralBranch(f"{plane}-plane cluster mode p={p}", sp.factor(sp.expand(value)), count * mult,
                                      rotation))
        if m > 1:
            out.append(SpectralBranch(f"{plane}-plane intra-cluster", sp.factor(sp.expand((diag - o(0)) / n**2)),
                                      k * (m - 1) * mult))
    return out


def simplex_spectrum(d: int, kernel=None) -> list[SpectralBranch]:
    r"""Hessian spectrum of the regular simplex (:math:`n = d+1`) in :math:`\mathbb{S}^{d-1}` (module doc, family 2)."""
    if d < 2:
        raise ValueError(f"need d >= 2, got {d}")
    a, b = _derivatives(kernel)(sp.Rational(-1, d))
    n = d + 1
    branches = [SpectralBranch("rotations (antisymmetric W)", sp.Integer(0), d * (d - 1) // 2, True),
                SpectralBranch("symmetric W, zero row sums", 2 * b / (n * d), (d + 1) * (d - 2) // 2),
                SpectralBranch("W_ab = g_b + g_a/d", a * (d - 1) / (d * (d + 1)) + b / d**2, d)]
    return [br for br in branches if br.multiplicity > 0]


def orthoplex_spectrum(d: int, kernel=None) -> list[SpectralBranch]:
    r"""Hessian spectrum of the cross-polytope :math:`\pm e_a` (:math:`n = 2d`) in :math:`\mathbb{S}^{d-1}` (module doc,
    family 3).
    """
    if d < 2:
        raise ValueError(f"need d >= 2, got {d}")
    der = _derivatives(kernel)
    a0, b0 = der(sp.Integer(0))
    a1, _ = der(sp.Integer(-1))
    n = 2 * d
    branches = [SpectralBranch("rotations (antisymmetric q)", sp.Integer(0), d * (d - 1) // 2, True),
                SpectralBranch("symmetric q", b0 / d**2, d * (d - 1) // 2),
                SpectralBranch("p, zero sum per axis", 2 * (a1 + b0 - a0) / n**2, d * (d - 2)),
                SpectralBranch("p, constant per axis", 2 * (a1 + b0 + (d - 2) * a0) / n**2, d)]
    return [br for br in branches if br.multiplicity > 0]


def circle_cluster_points(k: int, m: int, d: int) -> list[sp.Matrix]:
    r"""Exact points: :math:`m` copies of :math:`(\cos 2\pi c/k, \sin 2\pi c/k, 0, \dots)` for
    :math:`c = 0, \dots, k-1`.
    """
    pts = []
    for c in range(k):
        v = [sp.cos(2 * sp.pi * c / k), sp.sin(2 * sp.pi * c / k)] + [0] * (d - 2)
        pts += [sp.Matrix(v)] * m
    return pts


def simplex_points(d: int) -> list[sp.Matrix]:
    """Exact regular simplex vertices for :math:`d = 2` (triangle) and :math:`d = 3` (tetrahedron in the cube)."""
    if d == 2:
        return [sp.Matrix([sp.cos(2 * sp.pi * c / 3), sp.sin(2 * sp.pi * c / 3)]) for c in range(3)]
    if d == 3:
        signs = [(1, 1, 1), (1, -1, -1), (-1, 1, -1), (-1, -1, 1)]
        return [sp.Matrix(s) / sp.sqrt(3) for s in signs]
    raise ValueError(f"exact simplex points are provided for d in (2, 3), got {d}")


def orthoplex_points(d: int) -> list[sp.Matrix]:
    r""":math:`\pm e_a`, ordered :math:`e_1, -e_1, e_2, -e_2, \dots`"""
    pts = []
    for a in range(d):
        e = sp.zeros(d, 1)
        e[a] = 1
        pts += [e, -e]
    return pts


def structured_spectrum_derivation(family: str, d: int, k: int = 3, m: int = 1) -> Derivation:
    r"""Exact check of a structured spectrum (with multiplicities) against the kernel-level Hessian.

    With :math:`H` the :math:`nd \times nd` ambient Hessian assembled from :func:`theory.hessian.pair_hessian_blocks`
    at exact points (:math:`\phi'`, :math:`\phi''` kept abstract), whose spectrum is the tangent spectrum plus
    :math:`n` zeros (normal directions): lhs :math:`= [\operatorname{tr}(H^p)]_{p=1..K}` and
    :math:`H \prod_k (H - \lambda_k I)` (flattened), rhs :math:`= [\sum_k \mathrm{mult}_k \lambda_k^p]` and 0. Since
    :math:`H` is symmetric, the vanishing polynomial confines the spectrum to :math:`\{0, \lambda_k\}` and the
    :math:`K` power sums fix the multiplicities of the :math:`K` distinct nonzero branches (Vandermonde).
    """
    der = placeholder_derivatives()
    if family == "clusters":
        pts, branches = circle_cluster_points(k, m, d), circle_cluster_spectrum(k, m, d, der)
        title = f"{k} equally spaced clusters of {m} on a great circle of S^{d - 1}"
    elif family == "simplex":
        pts, branches = simplex_points(d), simplex_spectrum(d, der)
        title = f"regular simplex in S^{d - 1}"
    elif family == "orthoplex":
        pts, branches = orthoplex_points(d), orthoplex_spectrum(d, der)
        title = f"cross-polytope in S^{d - 1}"
    else:
        raise ValueError(f"family must be clusters, simplex or orthoplex, got {family!r}")
    H = hessian_from_pair_blocks(pts, der).applyfunc(sp.expand)
    values: dict[sp.Expr, int] = {}
    for br in branches:
        key = sp.expand(br.value)
        values[key] = values.get(key, 0) + br.multiplicity
    distinct = [v for v in values if v != 0]
    size = H.shape[0]
    power, traces, expected = sp.eye(size), [], []
    for p in range(1, len(distinct) + 1):
        power = (power * H).applyfunc(sp.expand)
        traces.append(power.trace())
        expected.append(sum(mult * v**p for v, mult in values.items()))
    poly = H
    for v in distinct:
        poly = (poly * (H - v * sp.eye(size))).applyfunc(sp.expand)
    lhs = sp.Matrix([*traces, *poly])
    rhs = sp.Matrix([*expected, *([0] * len(poly))])
    return Derivation(
        title=f"Hessian spectrum of E at the {title}: closed form vs kernel-level blocks",
        source="GLPR arXiv 2312.10794 (energy); CRMB arXiv 2405.18273 (critical configurations)",
        lhs=lhs, rhs=rhs,
        steps=tuple(Step(f"{br.label} (x{br.multiplicity})", br.value) for br in branches),
        notes="phi', phi'' kept abstract as dphi(s), ddphi(s); the ambient matrix adds n zero eigenvalues",
    )


def reduce_angles(expr: sp.Expr) -> sp.Expr:
    r"""cos/sin of rational multiples of :math:`\pi` brought into :math:`[0, 2\pi)`
    (:math:`\cos(16\pi/7) \to \cos(2\pi/7)`).
    """
    def reduced(f):
        q = (f.args[0] / sp.pi) % 2
        if isinstance(f, sp.cos) and q > 1:
            q = 2 - q
        return type(f)(q * sp.pi)

    return expr.replace(lambda e: isinstance(e, (sp.cos, sp.sin)) and (e.args[0] / sp.pi).is_Rational, reduced)


def readable_branch(value: sp.Expr) -> str:
    r"""A branch for a reader: angles reduced, exponentials merged, and, when the kernel is kept abstract
    (:func:`placeholder_derivatives`), collected as a combination of :math:`\phi'(\cdot)` and :math:`\phi''(\cdot)`
    with factored coefficients. Returns text with ``phi'`` and ``phi''`` for ``dphi`` and ``ddphi``.
    """
    expr = sp.expand(reduce_angles(sp.expand(value)))
    calls = sorted(expr.atoms(sp.core.function.AppliedUndef), key=sp.default_sort_key)
    if calls:
        parts = sp.collect(expr, calls, evaluate=False)
        terms = [f"({sp.sstr(sp.factor(coef))})*{sp.sstr(call)}" if coef != 1 else sp.sstr(call)
                 for call, coef in sorted(parts.items(), key=lambda kv: sp.default_sort_key(kv[0]))
                 if call != 1 and coef != 0]
        if parts.get(sp.Integer(1), 0) != 0:
            terms.append(sp.sstr(sp.factor(parts[sp.Integer(1)])))
        text = " + ".join(terms) or "0"
    else:
        text = sp.sstr(sp.powsimp(expr, combine="exp"))
    return text.replace("ddphi(", "phi''(").replace("dphi(", "phi'(")


def branch_values(branches: list[SpectralBranch], beta_value) -> list[tuple[float, int]]:
    r"""(float value at :math:`\beta` = ``beta_value``, multiplicity) for each branch (mpmath evaluation)."""
    out = []
    for br in branches:
        val = br.value.subs(sym.beta, beta_value)
        out.append((float(sp.N(val, 30)), br.multiplicity))
    return out


def cluster_attention_normaliser(k: int, m: int, kernel: PairKernel | None = None) -> sp.Expr:
    r""":math:`Z = \sum_j \phi'(s_{ij})` at every particle of :math:`k` equally spaced clusters of :math:`m` (the ``sa``
    metric is :math:`n^2/Z`).
    """
    der = kernel_derivatives(kernel)
    return sp.simplify(m * sum(der(sp.cos(2 * sp.pi * c / k))[0] for c in range(k)))


__all__ = [
    "SpectralBranch",
    "branch_values",
    "circle_cluster_points",
    "circle_cluster_spectrum",
    "circle_pair_coefficients",
    "cluster_attention_normaliser",
    "kernel_derivatives",
    "orthoplex_points",
    "orthoplex_spectrum",
    "placeholder_derivatives",
    "simplex_points",
    "simplex_spectrum",
    "structured_spectrum_derivation",
]
