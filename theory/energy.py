r"""The interaction energy :math:`E_\beta`, its gradient structure and the energy identities of ``usa`` and ``sa``.

Convention (attnflow, :mod:`theory.kernels`): with :math:`\phi_\beta(s) = (e^{\beta s} - 1)/\beta`,

.. math::

    \begin{aligned}
    \text{empirical:}\quad E_\beta(X) &= \frac{1}{2n^2} \sum_{i,j} \phi_\beta(\langle x_i, x_j\rangle)
    &&(j = i \text{ included}),\\
    \text{mean field:}\quad E_\beta(\mu) &= \frac{1}{2} \iint \phi_\beta(\langle x, y\rangle)\, d\mu(x)\, d\mu(y)
    &&(\mu \text{ a probability measure}).
    \end{aligned}

GLPR (arXiv 2312.10794) write
:math:`E_\beta(\mu) = \frac{1}{2\beta} \iint e^{\beta\langle x, y\rangle}\, d\mu\, d\mu`. For a probability
measure the double integral of the constant :math:`1/\beta` is :math:`1/\beta`, so ours = GLPR's
:math:`- 1/(2\beta)`: the same gradient, the same dynamics, and a genuine limit at :math:`\beta = 0`,
:math:`\phi_0(s) = s`, :math:`E_0(X) = \lvert\operatorname{mean}(X)\rvert^2 / 2`. The empirical form is the
mean-field form at :math:`\mu = \frac{1}{n} \sum_i \delta_{x_i}` (:func:`empirical_measure_derivation`).

Identities proved here (:math:`Q = K = V = I`; :math:`\operatorname{grad}_i` is the Riemannian gradient on the
:math:`i`-th sphere, :math:`v_i` the velocity):

- (a) gradient structure: :math:`v_i^{\texttt{usa}} = n \operatorname{grad}_i E_\beta`
  (:func:`gradient_structure_derivation`)
- (b) ``usa`` energy identity:
  :math:`dE/dt = \sum_i \langle \operatorname{grad}_i E, v_i\rangle = \frac{1}{n} \sum_i \lvert v_i\rvert^2`
- (c) ``sa``: :math:`\operatorname{grad}_i E = (Z_i / n^2) v_i` with :math:`Z_i = \sum_j e^{\beta s_{ij}}`, hence
  :math:`dE/dt = \sum_i (Z_i / n^2) \lvert v_i\rvert^2`, i.e. ``sa`` is the gradient ascent of the same
  :math:`E_\beta` in the metric :math:`(Z_i / n^2) \langle\cdot, \cdot\rangle` on the :math:`i`-th sphere.

Both :math:`dE/dt` are sums of squares with positive weights, so :math:`E_\beta` never decreases (for any real
:math:`\beta`: :math:`Z_i > 0`). Each identity is proved per particle / per pair with a symbolic :math:`n` (so
for every :math:`n`), and re-checked on an explicit small-:math:`n` system
(:func:`explicit_energy_identity_derivation`, :func:`explicit_gradient_structure_derivation`).

Verified by: core.gradient-structure, core.energy-identity.
"""
from __future__ import annotations

import dataclasses

import sympy as sp

from . import symbols as sym
from .derivation import Derivation, Step, sphere_point_sampler
from .fields import attention_weight, explicit_field, field_from_sums
from .hessian import closed_form_euclidean_gradient
from .kernels import PairKernel, exponential_kernel, kernel_at_beta_zero, pair_energy
from .spec import ModelSpec
from .sphere import euclidean_gradient, tangent_projection

#: the mean-field measure, as an undefined function (a density against the surface measure :math:`\sigma`)
mu = sp.Function("mu")


def energy_kernel() -> PairKernel:
    r""":math:`\phi_\beta(s) = (e^{\beta s} - 1)/\beta` (GLPR's kernel :math:`e^{\beta s}/\beta` minus the constant
    :math:`1/\beta`).
    """
    return exponential_kernel()


def empirical_energy(points, kernel: PairKernel | None = None) -> sp.Expr:
    r""":math:`E(X) = \frac{1}{2n^2} \sum_{i,j} \phi(\langle x_i, x_j\rangle)` for explicit symbolic or exact points
    (small-:math:`n` path).
    """
    return pair_energy(kernel or energy_kernel(), points)


def energy_at_beta_zero(points) -> sp.Expr:
    r"""The :math:`\beta \to 0` limit of the empirical energy:
    :math:`\frac{1}{2n^2} \sum_{i,j} \langle x_i, x_j\rangle = \lvert\operatorname{mean}(X)\rvert^2 / 2`.
    """
    limit_kernel = PairKernel(kernel_at_beta_zero(energy_kernel()), name="phi_0")
    return pair_energy(limit_kernel, points)


def glpr_energy(points) -> sp.Expr:
    r"""GLPR's normalisation :math:`\frac{1}{2\beta n^2} \sum_{i,j} e^{\beta\langle x_i, x_j\rangle}`
    (= ours :math:`+ 1/(2\beta)`).
    """
    pts = [sp.Matrix(p) for p in points]
    n = len(pts)
    return sum(sp.exp(sym.beta * (a.T * b)[0, 0]) for a in pts for b in pts) / (2 * sym.beta * n**2)


def mean_field_energy(d: int) -> sp.Expr:
    r"""The mean-field energy
    :math:`\frac{1}{2} \iint \phi_\beta(\langle x, y\rangle) \mu(x) \mu(y)\, d\sigma(x)\, d\sigma(y)` (unevaluated).

    ``mu`` is a probability density on :math:`\mathbb{S}^{d-1}` against the surface measure :math:`\sigma`; the
    integral is a sympy ``Integral`` over the coordinates of :math:`x` and :math:`y` (displayed, not evaluated). At
    :math:`\mu = \frac{1}{n} \sum_i \delta_{x_i}` it is the empirical energy (:func:`empirical_measure_derivation`).
    """
    x, y = sym.vector("x", d), sym.vector("y", d)
    s_xy = (x.T * y)[0, 0]
    integrand = energy_kernel().expr.subs(sym.s, s_xy) * mu(*x) * mu(*y)
    return sp.Rational(1, 2) * sp.Integral(integrand, *list(x), *list(y))


def _sphere_sampler(names_of_points, d, extra=()):
    return sphere_point_sampler(names_of_points, d, sym.beta, extra)


def empirical_measure_derivation(n: int = 3, d: int = 2) -> Derivation:
    r"""Derivation: the mean-field energy at the empirical measure is the empirical energy; GLPR's form differs by
    the constant :math:`1/(2\beta)`; the :math:`\beta \to 0` limit is :math:`\lvert\operatorname{mean}(X)\rvert^2 / 2`.

    The double integral against :math:`\mu = \frac{1}{n} \sum_i \delta_{x_i}` is the double sum
    :math:`\frac{1}{n^2} \sum_{i,j}`; the identity checked is
    :math:`E_{\text{ours}}(X) = E_{\text{GLPR}}(X) - 1/(2\beta)` at ``n`` explicit particles, plus the limit as a
    step.
    """
    pts = [sym.particle(i + 1, d) for i in range(n)]
    ours = empirical_energy(pts)
    glpr = glpr_energy(pts)
    limit = sp.limit(sp.Rational(1, 2) * energy_kernel().expr, sym.beta, 0)
    return Derivation(
        title=f"E_beta at the empirical measure of {n} particles; GLPR's E_beta - 1/(2 beta); beta -> 0 limit",
        source="GLPR arXiv 2312.10794, interaction energy E_beta",
        lhs=ours, rhs=glpr - 1 / (2 * sym.beta),
        steps=(Step("mean-field form (mu a probability density on the sphere)", mean_field_energy(d)),
               Step("at mu = (1/n) sum_i delta_{x_i}: 1/(2 n^2) sum_{i,j} phi_beta(<x_i,x_j>)", ours),
               Step("pair term as beta -> 0: phi_beta(s)/2 -> s/2", limit),
               Step("beta = 0 energy: 1/(2 n^2) sum_{i,j} <x_i,x_j> = |mean X|^2 / 2", energy_at_beta_zero(pts))),
        sampler=_sphere_sampler([list(p) for p in pts], d),
        notes="ours = GLPR - 1/(2 beta) for probability measures: same gradient, finite limit at beta = 0",
    )


def gradient_structure_derivation(d: int = 3, kernel: PairKernel | None = None) -> Derivation:
    r"""Derivation (kernel level, every :math:`n`): :math:`v_i^{\texttt{usa}} = n \operatorname{grad}_i E_\beta`, pair
    term by pair term.

    :math:`E = \frac{1}{2n^2} \sum_{i,j} \phi(s_{ij})`. The terms that involve :math:`x = x_i` are, for each
    :math:`j \ne i`, the two terms :math:`\phi(\langle x, y\rangle) + \phi(\langle y, x\rangle)` with
    :math:`y = x_j`, and the self term :math:`\phi(\langle x, x\rangle)`. Their Euclidean gradients are
    :math:`\frac{1}{n^2} \phi'(\langle x, y\rangle) y` and :math:`\frac{1}{n^2} \phi'(\lvert x\rvert^2) x` (the
    kernel-level gradient of :mod:`theory.hessian`), so
    :math:`n P_x \nabla_x E = \sum_j P_x(\frac{1}{n} \phi'(s_{ij}) x_j)`, which is the ``usa`` field term by term.
    The identity below is the stack [pair term; self term] with :math:`n` a free symbol; it holds exactly (off the
    sphere too).
    """
    user_kernel = kernel is not None
    kernel = kernel or energy_kernel()
    spec = ModelSpec("usa", d)
    x, y = sym.vector("x", d), sym.vector("y", d)
    n = sym.n
    phi = kernel.expr
    s_xy, s_yx, s_xx = (x.T * y)[0, 0], (y.T * x)[0, 0], (x.T * x)[0, 0]
    pair_terms = (phi.subs(sym.s, s_xy) + phi.subs(sym.s, s_yx)) / (2 * n**2)
    self_term = phi.subs(sym.s, s_xx) / (2 * n**2)
    # lhs without the shared projection helper (the rhs uses it through field_from_sums): n (g - <x, g> x) with g
    # the Euclidean gradient; with both sides from one helper, a reflection in its place also "proved" this
    lhs = sp.Matrix.vstack(n * _project_written_out(x, euclidean_gradient(pair_terms, x)),
                           n * _project_written_out(x, euclidean_gradient(self_term, x)))
    # usa field of the kernel, term by term: P_x((1/n) phi'(<x, y>) y). For phi_beta the weight phi' is the
    # attention weight e^{beta <x, y>} of the usa model (checked by the last step being zero).
    weight = kernel.weight()
    rhs = sp.Matrix.vstack(field_from_sums(spec, x, weight.subs(sym.s, s_xy) * y, n),
                           field_from_sums(spec, x, weight.subs(sym.s, s_xx) * x, n))
    steps = (Step("kernel phi(s)" if user_kernel else "kernel phi_beta", phi),
             Step("terms of E containing x = x_i and y = x_j (j != i)", pair_terms),
             Step("their Euclidean gradient (1/n^2) phi'(<x,y>) y", sp.simplify(euclidean_gradient(pair_terms, x))),
             Step("self term phi(|x|^2)/(2 n^2)", self_term),
             Step("n P_x of the pair gradient", lhs[:d, :]))
    field_line = ("field", "v_i = P_{x_i}( (1/n) sum_j phi'(<x_i, x_j>) x_j ) = n grad_i E",
                  r"v_i = P_{x_i}\Big(\frac{1}{n}\sum_j \phi'(\langle x_i, x_j\rangle)\, x_j\Big) = n\,"
                  r"\operatorname{grad}_i E")
    d1 = kernel.derivative(1)
    weight_line = ("weight", f"phi'(s) = {sp.sstr(d1)}", rf"\phi'(s) = {sp.latex(d1)}")
    energy_line = ("energy", "E = 1/(2 n^2) sum_{i,j} phi(<x_i, x_j>)",
                   r"E = \frac{1}{2n^2}\sum_{i,j}\phi(\langle x_i, x_j\rangle)")
    if user_kernel:
        return Derivation(
            title=(f"kernel field = n * Riemannian gradient of E = 1/(2n^2) sum phi(<x_i,x_j>) on "
                   f"(S^{d - 1})^n, every n (pair-term level)"),
            source="gradient-flow structure of pair energies on spheres (as GLPR arXiv 2312.10794 for phi_beta)",
            lhs=lhs, rhs=rhs, steps=steps,
            notes=f"phi(s) = {sp.sstr(phi)}; summing the pair identity over j != i and adding the self term gives "
                  "v_i = n grad_i E, where v_i = P_{x_i}((1/n) sum_j phi'(s_ij) x_j) is the field of the kernel",
            structured=(("kernel", f"phi(s) = {sp.sstr(phi)}", rf"\phi(s) = {sp.latex(phi)}"), weight_line,
                        energy_line, field_line))
    attention_check = sp.simplify(weight.subs(sym.s, s_xy) - attention_weight(spec, x, y))
    return Derivation(
        title=f"usa field = n * Riemannian gradient of E_beta on (S^{d - 1})^n, every n (pair-term level)",
        source="GLPR arXiv 2312.10794, gradient-flow structure of USA",
        lhs=lhs, rhs=rhs,
        steps=steps + (Step("phi'(<x,y>) minus the usa attention weight e^{beta <x,y>} (zero for phi_beta)",
                            attention_check),),
        notes="summing the pair identity over j != i and adding the self term gives v_i^usa = n grad_i E_beta; "
              "the kernel weight phi_beta'(s) = e^{beta s} is the usa attention weight",
        structured=(("kernel", f"phi_beta(s) = {sp.sstr(phi)}", rf"\phi_\beta(s) = {sp.latex(phi)}"),
                    ("weight", f"phi_beta'(s) = {sp.sstr(d1)} (the usa attention weight)",
                     rf"\phi_\beta'(s) = {sp.latex(d1)}"), energy_line,
                    ("field", "v_i^usa = P_{x_i}( (1/n) sum_j e^{beta <x_i, x_j>} x_j ) = n grad_i E_beta",
                     field_line[2])),
    )


def _project_written_out(x: sp.Matrix, u: sp.Matrix) -> sp.Matrix:
    """u - <x, u> x, written out here on purpose: identities whose other side uses
    :func:`theory.sphere.tangent_projection` are checked against a side that does not."""
    return u - (x.T * u)[0, 0] * x


def explicit_gradient_structure_derivation(n: int = 3, d: int = 2) -> Derivation:
    """Derivation (explicit small-:math:`n` check): :math:`n` times the product Riemannian gradient of the explicit
    :math:`E` equals the ``usa`` field of :func:`theory.fields.explicit_field`, and the Euclidean gradient equals the
    closed form of :func:`theory.hessian.closed_form_euclidean_gradient` (two independent code paths).
    """
    spec = ModelSpec("usa", d)
    pts = [sym.particle(i + 1, d) for i in range(n)]
    E = empirical_energy(pts)
    grads = [_project_written_out(x, euclidean_gradient(E, x)) for x in pts]  # not the shared helper (see above)
    lhs = sp.Matrix.vstack(*[n * g.T for g in grads])
    rhs = explicit_field(spec, pts)
    closed = closed_form_euclidean_gradient(energy_kernel(), pts)
    return Derivation(
        title=f"usa field = n grad E_beta, explicit n={n}, d={d}",
        source="GLPR arXiv 2312.10794, gradient-flow structure of USA",
        lhs=lhs, rhs=rhs,
        steps=(Step("explicit energy", E),
               Step("closed-form Euclidean gradient of particle 1 (theory.hessian)", closed[0]),
               Step("Riemannian gradient of particle 1", grads[0])),
        sampler=_sphere_sampler([list(p) for p in pts], d),
    )


def energy_identity_derivation(model: str, d: int = 3, kernel: PairKernel | None = None) -> Derivation:
    r"""Derivation (every :math:`n`): the per-particle energy-rate identity of ``usa`` or ``sa``.

    With a user ``kernel`` :math:`\phi` the same algebra holds with :math:`g_i = \sum_j \phi'(s_{ij}) x_j` and
    :math:`Z_i = \sum_j \phi'(s_{ij})` (the kernel's field; that :math:`\operatorname{grad}_i E = P_i g_i / n^2` for
    :math:`E = \frac{1}{2n^2} \sum \phi(s_{ij})` is :func:`gradient_structure_derivation` with the kernel): only the
    titles and the weight step change. For ``sa`` the form :math:`(Z_i / n^2) \lvert v_i\rvert^2` is a sum of
    squares, so :math:`E` increases, where every :math:`Z_i > 0` (:math:`\phi' > 0`).

    With :math:`g_i = \sum_j e^{\beta s_{ij}} x_j` (free vector :math:`g`) and :math:`Z_i = \sum_j e^{\beta s_{ij}}`
    (free symbol :math:`Z > 0`), :math:`\operatorname{grad}_i E = P_i g / n^2`,
    :math:`v_i^{\texttt{usa}} = P_i g / n`, :math:`v_i^{\texttt{sa}} = P_i g / Z`. The chain rule gives
    :math:`dE/dt = \sum_i \langle \nabla_i E, v_i\rangle = \sum_i \langle \operatorname{grad}_i E, v_i\rangle`
    (:math:`v_i` is tangent), and per particle

    .. math::

        \texttt{usa}:\ \langle \operatorname{grad}_i E, v_i\rangle = \frac{1}{n} \lvert v_i\rvert^2, \qquad
        \texttt{sa}:\ \langle \operatorname{grad}_i E, v_i\rangle = \frac{Z_i}{n^2} \lvert v_i\rvert^2,

    so :math:`dE/dt = \frac{1}{n} \sum_i \lvert v_i\rvert^2` (``usa``) and
    :math:`\sum_i (Z_i/n^2) \lvert v_i\rvert^2` (``sa``). The identity also states
    :math:`\operatorname{grad}_i E = (Z_i / n^2) v_i^{\texttt{sa}}` (the metric form of the ``sa`` gradient
    structure) in its second block.
    """
    if model not in ("sa", "usa"):
        raise ValueError(f"model must be 'sa' or 'usa', got {model!r}")
    if kernel is not None:
        return _kernel_energy_identity(model, d, kernel)
    x, g = sym.vector("x", d), sym.vector("g", d)
    Z = sp.Symbol("Z", positive=True)
    n = sym.n
    grad = tangent_projection(x, g / n**2)
    if model == "usa":
        v = tangent_projection(x, g / n)
        weight = 1 / n
    else:
        v = tangent_projection(x, g / Z)
        weight = Z / n**2
    rate = (grad.T * v)[0, 0]
    # The right-hand side is built without the shared projection helper (with both sides from the same helper,
    # any linear map in its place, e.g. a reflection, would "prove" the identity): |P_x u|^2 written out as
    # |u|^2 - 2 <x,u>^2 + <x,u>^2 |x|^2 with u = g/n (usa) or g/Z (sa), and grad_i E = g/n^2 - <x, g> x / n^2.
    u = g / n if model == "usa" else g / Z
    xu, xx, uu = (x.T * u)[0, 0], (x.T * x)[0, 0], (u.T * u)[0, 0]
    squares = weight * (uu - 2 * xu**2 + xu**2 * xx)
    grad_independent = g / n**2 - (x.T * g)[0, 0] * x / n**2
    lhs = sp.Matrix([rate, *(grad_independent - weight * v)])
    rhs = sp.Matrix([squares, *([0] * d)])
    identity = "(1/n) |v_i|^2" if model == "usa" else "(Z_i/n^2) |v_i|^2"
    return Derivation(
        title=f"{model}: dE_beta/dt = sum_i {identity} (a sum of squares), every n",
        source="GLPR arXiv 2312.10794, energy monotonicity for SA and USA",
        lhs=lhs, rhs=rhs,
        steps=(Step("Riemannian gradient grad_i E = P_i g_i / n^2, g_i = sum_j e^{beta s_ij} x_j", grad),
               Step("velocity v_i", v),
               Step("rate contribution <grad_i E, v_i>", sp.simplify(rate)),
               Step("weight of |v_i|^2", weight)),
        notes=("first entry: <grad_i E, v_i> = weight |v_i|^2; remaining entries: grad_i E - weight v_i = 0. "
               + ("sa is the gradient ascent of E_beta in the metric (Z_i/n^2)<.,.> on the i-th sphere; "
                  "Z_i = sum_j e^{beta s_ij} > 0 for every real beta" if model == "sa" else
                  "usa is n times the Riemannian gradient ascent of E_beta")),
    )


def _kernel_energy_identity(model: str, d: int, kernel: PairKernel) -> Derivation:
    """:func:`energy_identity_derivation` for a user kernel: the identity of the attention kernel with free g and
    Z (it does not involve the kernel), titled and stepped with phi'."""
    base = energy_identity_derivation(model, d)
    weight = kernel.weight()
    grad_step = Step("Riemannian gradient grad_i E = P_i g_i / n^2, g_i = sum_j phi'(s_ij) x_j", base.steps[0].expr)
    steps = (Step("kernel phi(s)", kernel.expr), Step("weight phi'(s)", weight), grad_step, *base.steps[1:])
    identity = "(1/n) |v_i|^2" if model == "usa" else "(Z_i/n^2) |v_i|^2"
    sign = ("usa is n times the Riemannian gradient ascent of E" if model == "usa" else
            "sa (weights phi'(s_ij) / Z_i, Z_i = sum_j phi'(s_ij)) is the gradient ascent of E in the metric "
            "(Z_i/n^2)<.,.> where every Z_i > 0, which holds when phi' > 0; where some Z_i < 0 that particle's "
            "term lowers E")
    return dataclasses.replace(
        base, title=f"{model}, kernel phi(s) = {sp.sstr(kernel.expr)}: dE/dt = sum_i {identity}, every n",
        source="gradient-flow structure of pair energies on spheres (as GLPR arXiv 2312.10794 for phi_beta)",
        steps=steps,
        notes=("E = 1/(2 n^2) sum_{i,j} phi(<x_i, x_j>); first entry: <grad_i E, v_i> = weight |v_i|^2; remaining "
               "entries: grad_i E - weight v_i = 0. " + sign))


def explicit_energy_identity_derivation(model: str, n: int = 2, d: int = 2,
                                        kernel: PairKernel | None = None) -> Derivation:
    r"""Derivation (explicit small-:math:`n` check): :math:`\sum_i \langle \nabla_i E, v_i\rangle` equals the
    sum-of-squares form at :math:`n` particles.

    :math:`E`, :math:`\nabla_i E` and :math:`v_i` are built independently (explicit energy and its symbolic
    derivatives; :func:`theory.fields.explicit_field` for the velocities, or, for a user ``kernel`` :math:`\phi`, the
    kernel's field :math:`v_i = P_i(\sum_j \phi'(s_{ij}) x_j / n)` (``usa``) or :math:`/ Z_i` with
    :math:`Z_i = \sum_j \phi'(s_{ij})` (``sa``) written out here).
    """
    if kernel is not None:
        return _explicit_kernel_energy_identity(model, n, d, kernel)
    spec = ModelSpec(model, d)
    pts = [sym.particle(i + 1, d) for i in range(n)]
    E = empirical_energy(pts)
    V = explicit_field(spec, pts)
    rate = sum(((euclidean_gradient(E, x).T * V[i, :].T)[0, 0] for i, x in enumerate(pts)), sp.Integer(0))
    squares = sp.Integer(0)
    for i, x in enumerate(pts):
        speed2 = (V[i, :] * V[i, :].T)[0, 0]
        if model == "usa":
            squares += speed2 / n
        else:
            Zi = sum(sp.exp(sym.beta * (x.T * y)[0, 0]) for y in pts)
            squares += Zi * speed2 / n**2
    return Derivation(
        title=f"{model}: dE/dt = sum_i <nabla_i E, v_i> = sum of squares, explicit n={n}, d={d}",
        source="GLPR arXiv 2312.10794, energy monotonicity",
        lhs=rate, rhs=squares,
        steps=(Step("explicit energy", E), Step("velocity of particle 1", V[0, :])),
        sampler=_sphere_sampler([list(p) for p in pts], d),
        notes="holds on the sphere (|x_i| = 1): the sampler draws exact rational points of S^{d-1}",
    )


def _explicit_kernel_energy_identity(model: str, n: int, d: int, kernel: PairKernel) -> Derivation:
    if model not in ("sa", "usa"):
        raise ValueError(f"model must be 'sa' or 'usa', got {model!r}")
    pts = [sym.particle(i + 1, d) for i in range(n)]
    E = empirical_energy(pts, kernel)
    weight = kernel.weight()
    rate, squares, first = sp.Integer(0), sp.Integer(0), None
    for x in pts:
        w = [weight.subs(sym.s, (x.T * y)[0, 0]) for y in pts]
        Z = sum(w, sp.Integer(0))
        u = sum((wj * y for wj, y in zip(w, pts)), sp.zeros(d, 1)) / (n if model == "usa" else Z)
        v = u - (x.T * u)[0, 0] * x          # P_x u on the sphere, written out
        first = v if first is None else first
        rate += (euclidean_gradient(E, x).T * v)[0, 0]
        speed2 = (v.T * v)[0, 0]
        squares += speed2 / n if model == "usa" else Z * speed2 / n**2
    return Derivation(
        title=f"{model}, kernel phi(s) = {sp.sstr(kernel.expr)}: dE/dt = sum_i <nabla_i E, v_i> = sum of squares, "
              f"explicit n={n}, d={d}",
        source="gradient-flow structure of pair energies on spheres",
        lhs=rate, rhs=squares,
        steps=(Step("explicit energy 1/(2 n^2) sum phi(s_ij)", E), Step("velocity of particle 1", first.T)),
        sampler=_sphere_sampler([list(p) for p in pts], d, tuple(kernel.params)),
        notes="holds on the sphere (|x_i| = 1): the sampler draws exact rational points of S^{d-1}",
    )


__all__ = [
    "empirical_energy",
    "empirical_measure_derivation",
    "energy_at_beta_zero",
    "energy_identity_derivation",
    "energy_kernel",
    "explicit_energy_identity_derivation",
    "explicit_gradient_structure_derivation",
    "glpr_energy",
    "gradient_structure_derivation",
    "mean_field_energy",
    "mu",
]
