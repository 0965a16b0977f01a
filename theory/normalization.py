r"""Normalisation schemes as dynamics: radius and direction equations derived from each layer's definition.

A token is :math:`x = r \theta` with :math:`r > 0` and :math:`\theta` on :math:`\mathbb{S}^{d-1}`. Every scheme
applies the same attention output :math:`A(\theta)` (the softmax or unnormalised attention of the *directions*,
heads and MLP included; Karagodin, Ge, Polyanskiy, Rigollet, "Normalization in attention dynamics", arXiv
2510.22026, restated in the survey arXiv 2512.01868, section "The impact of normalization"), and differs only in
where the normalisation :math:`N(y) = y/\lVert y\rVert` sits. One layer with step :math:`h` (the residual branch
multiplied by :math:`c`, 1 for the plain schemes):

.. math::

    \begin{aligned}
    \texttt{post}:&\quad x \leftarrow N(x + h c A) && \text{(the input is already on the sphere: } r = 1) \\
    \texttt{pre}:&\quad x \leftarrow x + h c A(N(x)) \\
    \texttt{peri}:&\quad x \leftarrow x + h c N(A(N(x))) \\
    \texttt{ngpt}:&\quad x \leftarrow N\big(x + h \alpha (N(A(x)) - x)\big)
        && \text{(nGPT, Loshchilov et al.; } r = 1) \\
    \texttt{mix}:&\quad \texttt{post} \text{ while } t < T \text{ (the first layers), } \texttt{pre} \text{ from }
        t = T \text{ on } (r(T) = 1) \\
    \texttt{sqrt}:&\quad \texttt{pre} \text{ with } c = c(t) = (1 + t/\tau)^{-1/2}
        && \text{(residual branch scaled by the square root of depth)} \\
    \texttt{lnscale}:&\quad x \leftarrow x + h A\big(N(x) / \sqrt{l}\big), \quad l = 1 + t/\tau
        && \text{(LayerNorm Scaling, Sun et al. arXiv 2502.05795)}
    \end{aligned}

LayerNorm Scaling scales the *input* of attention, not its output: with linear query, key and value maps the
logits :math:`\langle Q y_i, K y_j\rangle` of :math:`y = \theta / \sqrt{l}` are those of :math:`\theta` divided by
:math:`l` and the values are divided by :math:`\sqrt{l}`, so
:math:`A_\beta(\theta / \sqrt{l}) = A_{\beta / l}(\theta) / \sqrt{l}` (:func:`lnscale_attention_derivation` proves it
with symbolic :math:`Q, K, V`). The scheme is pre-LN with the branch factor :math:`c(t)` of ``sqrt`` AND the
depth-dependent inverse temperature :math:`\beta(t) = \beta / (1 + t/\tau)` (:func:`depth_beta`): :math:`a` and
:math:`m` below are those of :math:`A` at :math:`\beta(t)`. Depth map: layer :math:`l` sits at
:math:`t = \tau (l - 1)` (:math:`\tau = 1`: one unit of time per layer).

Derivation (:func:`scheme_derivation`). Write :math:`A = a \theta + w e` with :math:`a = \langle\theta, A\rangle`,
:math:`e` a unit vector orthogonal to :math:`\theta` and :math:`w = \lVert P_\theta A\rVert \ge 0` (so
:math:`\lVert A\rVert = m = \sqrt{a^2 + w^2}`). Every map above sends :math:`x` into the plane spanned by
:math:`(\theta, e)`: :math:`x' = P(h) \theta + Q(h) e` with scalar :math:`P, Q` (:data:`SCHEMES` gives them), and a
map that ends with :math:`N` puts the new radius back to 1. Then, as :math:`h \to 0`,

.. math::

    \begin{aligned}
    r' &= \lVert x'\rVert, \qquad \text{angle of } x' \text{ from } \theta = \arctan(Q / P), \\
    \frac{dr}{dt} &= \lim \frac{\lVert x'\rVert - r}{h}, \qquad
    \frac{d\theta}{dt} = \Big(\lim \frac{\arctan(Q/P)}{h}\Big) e = g P_\theta A, \qquad
    g = \lim \frac{\arctan(Q/P)}{h w},
    \end{aligned}

both limits taken by SymPy (``sympy.limit``), so the speed factor :math:`g` (the survey's :math:`1/s_i`) and the
radial law come out of the layer definitions, never typed in. Results (:math:`m = \lVert A\rVert`):

.. math::

    \begin{aligned}
    \texttt{post}:&\quad \frac{dr}{dt} = 0, \quad g = c, &\qquad
    \texttt{pre}:&\quad \frac{dr}{dt} = c a, \quad g = c / r, \\
    \texttt{peri}:&\quad \frac{dr}{dt} = c a / m, \quad g = c / (r m), &\qquad
    \texttt{ngpt}:&\quad \frac{dr}{dt} = 0, \quad g = \alpha / m, \\
    \texttt{lnscale}:&\quad \frac{dr}{dt} = c(t) a, \quad g = c(t) / r \quad (a, m \text{ at } \beta(t)).
    \end{aligned}

Centring (LayerNorm) against RMSNorm: LayerNorm first subtracts the mean of the coordinates, :math:`y \to C y` with
:math:`C = I - \mathbf{1} \mathbf{1}^\top / d` (the orthogonal projector onto the hyperplane :math:`\mathbf{1}^\perp`),
then divides by the norm. For every scheme above, the tracked part :math:`C x` then obeys the same equations with
:math:`A` replaced by :math:`C A` and :math:`\theta` on the unit sphere of :math:`\mathbf{1}^\perp` (a copy of
:math:`\mathbb{S}^{d-2}`); the mean component :math:`(I - C) x` of the schemes without a final :math:`N` receives
:math:`(I - C) A` and is never read again (it is passive). So LayerNorm = RMSNorm on :math:`\mathbf{1}^\perp` with
the value output projected by :math:`C`; with :math:`V = I` (and heads whose value maps preserve
:math:`\mathbf{1}^\perp`) and tokens in :math:`\mathbf{1}^\perp`, centring changes nothing after the first layer.
The gain :math:`\sqrt{d}` of an RMSNorm is absorbed in :math:`\beta` (attnflow's tokens have unit norm; a network
whose LN output has norm :math:`\sqrt{d}` has :math:`\beta_{\text{eff}} = \beta d` with unscaled scores).

Equiangular reduction (:func:`equiangular_system`): if the directions are equiangular
(:math:`\langle\theta_i, \theta_j\rangle = s` for :math:`i \ne j`) and all radii equal :math:`r`, the symmetry of
theory.reductions persists (the speed factor and the radial law are the same function of :math:`(r, a, m)` for
every token), so :math:`s` and :math:`r` obey a closed 2-D system

.. math::

    \frac{ds}{dt} = g(r, a(s), m(s), t) F(s), \qquad \frac{dr}{dt} = \dot r(r, a(s), m(s), t),

with :math:`F` the equiangular rate of the post-LN flow (:func:`theory.reductions.equiangular_rate`) and
:math:`a(s), m(s)` derived from the equiangular coefficients. Near :math:`s = 1` (:math:`\epsilon = 1 - s`) the
linearised system solves in closed form (:func:`linearized_closed_form`): ``post`` :math:`\epsilon_0 e^{-\lambda t}`;
``pre`` and ``peri`` :math:`\epsilon_0 (r_0 / r(t))^2` with :math:`r(t) = r_0 + a_1 t` (``sa``: :math:`a_1 = 1`; the
survey's :math:`1/t^2`); ``ngpt`` :math:`\epsilon_0 e^{-\lambda \alpha t / m_1}`; ``sqrt``
:math:`\epsilon_0 (r_0 / r(t))^2` with :math:`r(t) = r_0 + 2 \tau a_1 (\sqrt{1 + t/\tau} - 1)`, hence :math:`1/t`.
``lnscale`` (``sa``): the same as ``sqrt``, because the softmax's :math:`\lambda = 2` and :math:`a_1 = m_1 = 1` do
not depend on :math:`\beta` (the depth-dependent :math:`\beta` acts at second order in :math:`\epsilon` only);
``lnscale`` (``usa``): :math:`\lambda = 2 a_1 = 2 e^{\beta(t)}` still gives
:math:`\epsilon = \epsilon_0 (r_0 / r(t))^2`, but :math:`r(t) = r_0 + \int_0^t c\, e^{\beta(u)}\, du` has no
elementary closed form (the reduced ODE is the reference there).

Verified by: architectures.norm-post-exact, architectures.norm-derivation, architectures.norm-equiangular,
architectures.norm-rates (numerics/architectures/norm_claims.py); tests/theory/test_normalization.py.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import sympy as sp

from . import symbols as sym
from .derivation import Derivation, Step
from .kernels import PairKernel, exponential_kernel
from .reductions import equiangular_coefficients, equiangular_rate

#: the schemes, in the order of the CLI's choices
SCHEMES = ("post", "pre", "peri", "mix", "ngpt", "sqrt", "lnscale")
#: schemes whose layer ends with the normalisation N (the radius is reset to 1 by every layer)
UNIT_RADIUS = ("post", "ngpt")
MODELS = ("sa", "usa")

h = sp.Symbol("h", positive=True)


def depth_beta(name: str) -> sp.Expr:
    r"""The inverse temperature the attention of scheme ``name`` sees at time :math:`t`:
    :math:`\beta / (1 + t/\tau)` for ``lnscale`` (the LN output scaled by :math:`1/\sqrt{l}` divides the logits by
    :math:`l`), :math:`\beta` for every other scheme.
    """
    return sym.beta / (1 + sym.t / sym.tau) if name == "lnscale" else sym.beta


def _depth_factor() -> sp.Expr:
    """c(t) = (1 + t/tau)^(-1/2): the value factor of ``lnscale`` (the same as the branch factor of ``sqrt``)."""
    return 1 / sp.sqrt(1 + sym.t / sym.tau)


@dataclass(frozen=True)
class LayerMap:
    r"""One layer in the plane of :math:`(\theta, e)`: :math:`x' = P \theta + Q e`, then :math:`N` if
    ``normalised``.
    """

    P: sp.Expr
    Q: sp.Expr
    normalised: bool
    definition: str


def _layer_map(name: str) -> LayerMap:
    """The plane coordinates of each scheme's layer (module docstring), in the symbols of theory.symbols."""
    r, a, w, c, alpha = sym.radius, sym.radial, sym.tangential, sym.branch_scale, sym.alpha
    m = sp.sqrt(a**2 + w**2)
    if name == "post":   # N(theta + h c A): the input of a post-LN layer is on the sphere
        return LayerMap(1 + h * c * a, h * c * w, True, "x <- N(x + h c A(x)), x on the sphere")
    if name == "pre":    # r theta + h c A(theta)
        return LayerMap(r + h * c * a, h * c * w, False, "x <- x + h c A(N(x))")
    if name == "peri":   # r theta + h c A/|A|
        return LayerMap(r + h * c * a / m, h * c * w / m, False, "x <- x + h c N(A(N(x)))")
    if name == "ngpt":   # N(theta + h alpha (A/|A| - theta))
        return LayerMap(1 + h * alpha * (a / m - 1), h * alpha * w / m, True,
                        "x <- N(x + h alpha (N(A(x)) - x)), x on the sphere")
    if name == "lnscale":  # r theta + h A_beta(theta / sqrt(l)) = r theta + h c(t) A_{beta(t)}(theta)
        c_t = _depth_factor()
        return LayerMap(r + h * c_t * a, h * c_t * w, False,
                        "x <- x + h A(N(x) / sqrt(1 + t/tau)) (a, w of A at beta(t))")
    raise ValueError(f"no single layer map for scheme {name!r} (mix and sqrt are built from post and pre)")


@functools.lru_cache(maxsize=None)
def scheme_laws(name: str) -> tuple[sp.Expr, sp.Expr]:
    r"""(:math:`dr/dt`, :math:`g`) of a scheme as expressions in :math:`r`, :math:`a`, :math:`m` (:math:`= |A|`),
    :math:`c`, :math:`\alpha` and :math:`t`: :math:`d\theta/dt = g P_\theta A`.

    ``mix`` and ``sqrt`` are the post/pre laws with the time-dependent switch or branch scale substituted
    (``mix``: a ``Piecewise`` in :math:`t` and the switch time :math:`T`; ``sqrt``:
    :math:`c = (1 + t/\tau)^{-1/2}`).
    """
    if name not in SCHEMES:
        raise ValueError(f"unknown normalisation scheme {name!r}; choose one of {', '.join(SCHEMES)}")
    if name == "mix":
        post, pre = scheme_laws("post"), scheme_laws("pre")
        before = sym.t < sym.switch_time
        return (sp.Piecewise((post[0], before), (pre[0], True)), sp.Piecewise((post[1], before), (pre[1], True)))
    if name == "sqrt":
        c_t = 1 / sp.sqrt(1 + sym.t / sym.tau)
        return tuple(e.subs(sym.branch_scale, c_t) for e in scheme_laws("pre"))
    return _limits(name)


def _limits(name: str, by_limit: bool = False) -> tuple[sp.Expr, sp.Expr]:
    """(dr/dt, g) of a single-map scheme as h -> 0, with w eliminated in favour of m = |A|.

    The maps are smooth in h with radius r and angle 0 at h = 0, so lim (f(h) - f(0))/h is the derivative at
    h = 0 (computed that way, fast); ``by_limit`` takes ``sympy.limit`` of the difference quotient instead
    (slower; the tests compare the two).
    """
    lm = _layer_map(name)
    r, a, w, m = sym.radius, sym.radial, sym.tangential, sym.attention_norm

    def rate(f, f0):
        return sp.limit((f - f0) / h, h, 0) if by_limit else sp.diff(f, h).subs(h, 0)

    rdot = sp.Integer(0) if lm.normalised else rate(sp.sqrt(lm.P**2 + lm.Q**2), r)
    angle = rate(sp.atan(lm.Q / lm.P), 0)  # the angle turned towards e, per unit step
    to_m = {w: sp.sqrt(m**2 - a**2)}
    return sp.simplify(rdot.subs(to_m)), sp.simplify(sp.cancel(angle / w).subs(to_m))


def scheme_derivation(name: str) -> Derivation:
    """Derivation: the layer map's h -> 0 limits equal the stated laws (:func:`scheme_laws`).

    The identity checked is (dr/dt, g) from the limits against the table of the module docstring, written out
    independently here; ``verify()`` proves it symbolically.
    """
    expected = _EXPECTED[name]
    r, a, m, c, alpha = sym.radius, sym.radial, sym.attention_norm, sym.branch_scale, sym.alpha
    c_t = (1 + sym.t / sym.tau) ** sp.Rational(-1, 2)  # written out again (not _depth_factor): the table is the reference
    table = {"post": (0, c), "pre": (c * a, c / r), "peri": (c * a / m, c / (r * m)), "ngpt": (0, alpha / m),
             "lnscale": (c_t * a, c_t / r)}
    rdot, g = scheme_laws(name)
    lm = _layer_map(name)
    return Derivation(
        title=f"{name}: continuous-time radius and direction laws from the layer {lm.definition}",
        source="Karagodin, Ge, Polyanskiy, Rigollet arXiv 2510.22026 (schemes); limits h -> 0 derived here",
        lhs=sp.Matrix([rdot, g]), rhs=sp.Matrix([sp.sympify(v) for v in table[name]]),
        steps=(Step("plane coordinates (P, Q) of one layer", sp.Matrix([lm.P, lm.Q])),
               Step("dr/dt = lim (|x'| - r)/h", rdot),
               Step("g = lim atan(Q/P)/(h w)", g)),
        notes=f"A = a theta + w e, m = |A| = sqrt(a^2 + w^2); {expected}",
    )


_EXPECTED = {"post": "post-LN: the sphere flow (speed factor 1)", "pre": "pre-LN: directions slowed by 1/r",
             "peri": "peri-LN: unit-norm update, directions at speed 1/(r |A|)",
             "ngpt": "nGPT: directions at speed alpha/|A|, radius fixed",
             "lnscale": "LayerNorm Scaling: pre-LN with branch factor (1 + t/tau)^(-1/2), a and m at beta(t)"}


def lnscale_attention_derivation(model: str = "sa", n: int = 2, d: int = 2) -> Derivation:
    r"""Derivation: :math:`A_\beta(Y / \sqrt{l}) = A_{\beta / l}(Y) / \sqrt{l}` for attention with symbolic
    :math:`Q, K, V` (:math:`d \times d`) on :math:`n` symbolic tokens, the identity that turns LayerNorm Scaling
    into a depth-dependent :math:`\beta`.

    :math:`A_\beta(Y)_i = \sum_j w_{ij} V y_j` with :math:`w_{ij} = e^{\beta \langle Q y_i, K y_j\rangle} / Z_i`
    (``sa``) or :math:`/\, n` (``usa``).
    """
    ell = sp.Symbol("l", positive=True)
    Qm, Km, Vm = (sp.Matrix(d, d, lambda i, j, name=name: sp.Symbol(f"{name}{i}{j}", real=True))
                  for name in "QKV")
    Y = [sym.particle(i + 1, d) for i in range(n)]

    def attention(tokens, beta):
        out = []
        for yi in tokens:
            weights = [sp.exp(beta * ((Qm * yi).T * (Km * yj))[0, 0]) for yj in tokens]
            total = sum(weights) if model == "sa" else n
            out.append(sum((wt * (Vm * yj) for wt, yj in zip(weights, tokens)), sp.zeros(d, 1)) / total)
        return sp.Matrix.vstack(*out)

    lhs = attention([y / sp.sqrt(ell) for y in Y], sym.beta)
    rhs = attention(Y, sym.beta / ell) / sp.sqrt(ell)
    return Derivation(
        title=f"LayerNorm Scaling ({model}, n={n}, d={d}): attention of y/sqrt(l) = attention at beta/l, divided by sqrt(l)",
        source="Sun et al., 'The curse of depth in large language models', arXiv 2502.05795 (LN output times "
               "1/sqrt(l)); as a depth-dependent beta: derived here",
        lhs=lhs, rhs=rhs, steps=(Step("A_beta(Y / sqrt(l))", lhs), Step("A_{beta/l}(Y) / sqrt(l)", rhs)),
        notes="linear Q, K, V: logits scale by 1/l, values by 1/sqrt(l); an MLP after the values would not commute")


# -- equiangular reduction ----------------------------------------------------------------------------------
def equiangular_attention(kernel: PairKernel | None = None, model: str = "sa", n=sym.n) -> tuple[sp.Expr, sp.Expr]:
    r""":math:`(a(s), m(s))`: :math:`\langle\theta_i, A_i\rangle` and :math:`\lVert A_i\rVert` on an equiangular
    configuration (all :math:`\langle\theta_i, \theta_j\rangle = s`).

    :math:`A_i = k \big(w_1 \theta_i + w_s \sum_{j \ne i} \theta_j\big)` with :math:`k = 1/n` (``usa``) or
    :math:`1/Z` (``sa``) (theory.reductions); its norm from the Gram matrix
    :math:`(1 - s) I + s \mathbf{1} \mathbf{1}^\top`:
    :math:`\lVert\sum_j c_j \theta_j\rVert^2 = (1 - s) \sum c_j^2 + s (\sum c_j)^2`. (The tangential part is
    theory.reductions' coefficient :math:`c_{\text{same}} = k w_1 - a`; tests/theory check it.)
    """
    kernel = kernel or exponential_kernel()
    s = sym.s
    w1 = kernel.weight().subs(s, 1)
    ws = kernel.weight()
    scale = 1 / n if model == "usa" else 1 / (w1 + (n - 1) * ws)
    coeff_self, coeff_other = scale * w1, scale * ws
    a = coeff_self + (n - 1) * s * coeff_other
    m2 = (1 - s) * (coeff_self**2 + (n - 1) * coeff_other**2) + s * (coeff_self + (n - 1) * coeff_other)**2
    return a, sp.sqrt(m2)


def shifted_kernel() -> PairKernel:
    r""":math:`\phi(s) = e^{\beta (s - 1)} / \beta`: the exponential kernel divided by :math:`e^{\beta}`. The
    softmax (``sa``) is a ratio of weights, so its equiangular system is the same with this kernel, and emitted code
    never forms :math:`e^{\beta}` (finite for every :math:`\beta \ge 0`).
    """
    return PairKernel(sp.exp(sym.beta * (sym.s - 1)) / sym.beta, name="shifted exponential")


def equiangular_system(name: str, kernel: PairKernel | None = None, model: str = "sa", n=sym.n
                       ) -> tuple[sp.Expr, sp.Expr]:
    """(ds/dt, dr/dt) of the equiangular reduction of scheme ``name`` (module docstring), in s, r, t."""
    kernel = kernel or exponential_kernel()
    rdot, g = scheme_laws(name)
    a, m = equiangular_attention(kernel, model, n)
    sub = {sym.radial: a, sym.attention_norm: m, sym.branch_scale: 1}
    F = equiangular_rate(kernel, model, n)
    at_depth = {sym.beta: depth_beta(name)}  # lnscale: the attention sees beta(t); the others: identity
    return (g.subs(sub) * F).subs(at_depth), rdot.subs(sub).subs(at_depth)


def equiangular_system_derivation(name: str, model: str = "sa", n: int = 3, d: int | None = None) -> Derivation:
    r"""Derivation: explicit symbolic tokens :math:`x_i = r \theta_i` (equiangular, equal radii) moving by the
    scheme's laws give :math:`d\langle\theta_i, \theta_k\rangle/dt` and :math:`dr_i/dt` equal to the reduced system,
    checked exactly at rational equiangular points (the small-:math:`n` path, independent of the Gram-matrix
    reduction).

    The norm :math:`m = \lVert A_i\rVert` enters both sides as the symbol :math:`m` (so every residual is a rational
    function of exponentials, decided exactly); further rows check :math:`\lVert A_i\rVert^2 = m^2` for every token,
    with the sampler's :math:`m` the reduced :math:`m(s)` at the point.
    """
    import random

    from .reductions import rational_equiangular_points

    kernel = exponential_kernel()
    d = n if d is None else d
    m_sym = sym.attention_norm
    points = [sym.particle(i + 1, d) for i in range(n)]
    rdot, g = scheme_laws(name)
    at_depth = {sym.beta: depth_beta(name)}  # lnscale: the attention sees beta(t), on both sides
    a_red, m_red = (e.subs(at_depth) for e in equiangular_attention(kernel, model, sp.Integer(n)))
    F = equiangular_rate(kernel, model, sp.Integer(n)).subs(at_depth)
    sub_red = {sym.radial: a_red, sym.branch_scale: 1}
    sdot_red, rdot_red = g.subs(sub_red) * F, rdot.subs(sub_red)
    lhs, rhs, outs = [], [], []
    for i in range(n):
        xi = points[i]
        weights = [kernel.weight().subs(at_depth).subs(sym.s, (xi.T * xj)[0, 0]) for xj in points]
        A = sum((wt * xj for wt, xj in zip(weights, points)), sp.zeros(d, 1))
        A = A / n if model == "usa" else A / sum(weights)
        a_i = (xi.T * A)[0, 0]
        sub = {sym.radial: a_i, sym.branch_scale: 1}
        outs.append((g.subs(sub) * (A - a_i * xi), rdot.subs(sub), (A.T * A)[0, 0]))
    for i in range(n):
        for k in range(i + 1, n):
            lhs.append((outs[i][0].T * points[k])[0, 0] + (points[i].T * outs[k][0])[0, 0])
            rhs.append(sdot_red.subs(sym.s, (points[i].T * points[k])[0, 0]))
        lhs += [outs[i][1], outs[i][2]]
        s_pair = (points[i].T * points[(i + 1) % n])[0, 0]
        rhs += [rdot_red.subs(sym.s, s_pair), m_sym**2]
    names = [list(p) for p in points]

    def sampler(rng: random.Random):
        pts, rho = rational_equiangular_points(rng, n, d)
        subs = {names[i][c]: pts[i][c] for i in range(n) for c in range(d)}
        subs.update({sym.beta: sp.Rational(rng.randint(-30, 30), 10), sym.radius: sp.Rational(rng.randint(5, 40), 10),
                     sym.t: sp.Rational(rng.randint(0, 40), 10), sym.switch_time: sp.Rational(rng.randint(0, 40), 10),
                     sym.tau: sp.Rational(rng.randint(1, 30), 10), sym.alpha: sp.Rational(rng.randint(1, 20), 10)})
        subs[m_sym] = m_red.subs(sym.s, rho).subs({sym.beta: subs[sym.beta], sym.t: subs[sym.t], sym.tau: subs[sym.tau]})
        return subs

    return Derivation(
        title=f"Equiangular reduction of {name} ({model}, n={n}, d={d}): pair products, radii and |A_i|",
        source="arXiv 2510.22026 (equiangular model with radii, restated in arXiv 2512.01868); derived here",
        lhs=sp.Matrix(lhs), rhs=sp.Matrix(rhs),
        steps=(Step("reduced ds/dt (m = |A| kept as a symbol)", sdot_red), Step("reduced dr/dt", rdot_red),
               Step("reduced |A|", m_red)),
        sampler=sampler,
        notes="holds on equiangular configurations with equal radii: checked there exactly (verify(simplify=False))",
    )


def linearized_rates(name: str, kernel: PairKernel | None = None, model: str = "sa", n=sym.n) -> dict:
    r"""Coefficients of the system linearised at :math:`s = 1`: :math:`\lambda = -F'(1)`, :math:`a_1 = a(1)`,
    :math:`m_1 = m(1)` (for ``lnscale`` at :math:`\beta(t)`, so functions of :math:`t` when they depend on
    :math:`\beta`).
    """
    kernel = kernel or exponential_kernel()
    at_depth = {sym.beta: depth_beta(name)}
    a, m = (e.subs(at_depth) for e in equiangular_attention(kernel, model, n))
    F = equiangular_rate(kernel, model, n).subs(at_depth)
    return {"lambda": sp.simplify(-sp.diff(F, sym.s).subs(sym.s, 1)), "a1": sp.simplify(a.subs(sym.s, 1)),
            "m1": sp.simplify(m.subs(sym.s, 1))}


def linearized_closed_form(name: str, kernel: PairKernel | None = None, model: str = "sa", n=sym.n
                           ) -> tuple[sp.Expr, sp.Expr]:
    r""":math:`(\epsilon(t), r(t))` solving the system linearised at :math:`s = 1` (:math:`\epsilon = 1 - s`), from
    :math:`\epsilon_0` and :math:`r_0` at :math:`t = 0`.

    :math:`d\epsilon/dt = -\lambda g(r, a_1, m_1, t) \epsilon` and :math:`dr/dt = \dot r(r, a_1, m_1, t)`, solved by
    separation: :math:`r` first (it does not involve :math:`\epsilon`), then
    :math:`\epsilon = \epsilon_0 \exp\big(-\lambda \int_0^t g\big)`. For ``mix`` the solution is the post form up to
    :math:`T` and the pre form from :math:`T` on (radius 1 at :math:`T`).
    """
    coeffs = linearized_rates(name, kernel, model, n)
    lam, a1, m1 = coeffs["lambda"], coeffs["a1"], coeffs["m1"]
    eps0, r0, t, u = sym.epsilon0, sym.radius0, sym.t, sp.Symbol("u", positive=True)
    if name == "mix":
        post_eps, _ = linearized_closed_form("post", kernel, model, n)
        pre_eps, pre_r = linearized_closed_form("pre", kernel, model, n)
        T = sym.switch_time
        at_switch = post_eps.subs(t, T)
        late = pre_eps.subs({eps0: at_switch, r0: 1}).subs(t, t - T)
        return (sp.Piecewise((post_eps, t < T), (late, True)),
                sp.Piecewise((sp.Integer(1), t < T), (pre_r.subs(r0, 1).subs(t, t - T), True)))
    if any(e.has(t) for e in (lam, a1, m1)):  # lnscale with usa: a_1 = e^{beta(t)}
        raise ValueError(f"{name} ({model}): the linearised coefficients depend on t through beta(t); "
                         "epsilon = epsilon_0 (r_0/r)^2 holds but r(t) has no elementary closed form")
    rdot, g = scheme_laws(name)
    sub = {sym.radial: a1, sym.attention_norm: m1, sym.branch_scale: 1}
    rdot, g = rdot.subs(sub), g.subs(sub)
    r_t = sp.Integer(1) if name in UNIT_RADIUS else sp.simplify(r0 + sp.integrate(rdot.subs(t, u), (u, 0, t)))
    exponent = sp.integrate(sp.simplify(g.subs(sym.radius, r_t).subs(t, u)), (u, 0, t))
    eps_t = eps0 * sp.exp(-lam * sp.simplify(exponent))
    return sp.simplify(sp.powsimp(sp.expand_log(eps_t, force=True), force=True)), r_t


def linearized_closed_form_derivation(name: str, model: str = "sa") -> Derivation:
    """Derivation: the closed form solves the linearised system (d/dt of both sides) and starts at (eps_0, r_0)."""
    if name == "mix":
        raise ValueError("mix is piecewise: check post and pre separately")
    eps, r = linearized_closed_form(name, model=model)
    coeffs = linearized_rates(name, model=model)
    rdot, g = scheme_laws(name)
    sub = {sym.radial: coeffs["a1"], sym.attention_norm: coeffs["m1"], sym.branch_scale: 1}
    rhs_eps = -coeffs["lambda"] * g.subs(sub).subs(sym.radius, r) * eps
    rhs_r = rdot.subs(sub).subs(sym.radius, r)
    return Derivation(
        title=f"{name} ({model}): closed-form solution of the equiangular system linearised at s = 1",
        source="arXiv 2510.22026 (Post-LN e^{-2t}, Pre-LN 1/t^2 in the survey arXiv 2512.01868); derived here",
        lhs=sp.Matrix([sp.diff(eps, sym.t), sp.diff(r, sym.t), eps.subs(sym.t, 0), r.subs(sym.t, 0)]),
        rhs=sp.Matrix([rhs_eps, rhs_r, sym.epsilon0, 1 if name in UNIT_RADIUS else sym.radius0]),
        steps=(Step("epsilon(t)", eps), Step("r(t)", r)),
    )


# -- code generation ----------------------------------------------------------------------------------------
LAW_ARGS = ("r", "a", "m", "c", "alpha", "t", "switch", "tau")


def law_function(name: str):
    """Vectorised ``laws(r, a, m, c, alpha, t, switch, tau) -> (dr/dt, g)`` of a scheme, emitted by
    :mod:`theory.codegen` (cached). r, a, m are arrays over tokens; the others scalars."""
    from .codegen import compile_function

    rdot, g = scheme_laws(name)
    args = (sym.radius, sym.radial, sym.attention_norm, sym.branch_scale, sym.alpha, sym.t, sym.switch_time, sym.tau)
    return compile_function(f"norm_laws_{name}", args, (rdot, g), arg_names=LAW_ARGS,
                            doc=f"(dr/dt, g) of the {name} scheme: dtheta/dt = g P_theta A (theory.normalization).")


@functools.lru_cache(maxsize=None)
def equiangular_function(name: str, model: str = "sa", variable: str = "s"):
    r"""Vectorised ``rhs(y, r, beta, n, alpha, t, switch, tau) -> (dy/dt, dr/dt)`` of the equiangular reduction,
    with :math:`y = s` or, for ``variable="epsilon"``, :math:`y = \epsilon = 1 - s` (substituted symbolically, so
    that the distance to the cluster keeps its relative precision far below 1e-16). ``sa`` uses
    :func:`shifted_kernel` (no :math:`e^{\beta}` is formed)."""
    from .codegen import compile_function

    kernel = shifted_kernel() if model == "sa" else exponential_kernel()
    sdot, rdot = equiangular_system(name, kernel, model)
    y = sym.s
    if variable == "epsilon":
        y = sp.Symbol("epsilon", positive=True)
        sdot, rdot = -sdot.subs(sym.s, 1 - y), rdot.subs(sym.s, 1 - y)
    elif variable != "s":
        raise ValueError(f"variable must be 's' or 'epsilon', got {variable!r}")
    args = (y, sym.radius, sym.beta, sym.n, sym.alpha, sym.t, sym.switch_time, sym.tau)
    return compile_function(f"norm_equiangular_{name}_{model}_{variable}", args, (sdot, rdot),
                            arg_names=("y", "r", "beta", "n", "alpha", "t", "switch", "tau"),
                            doc=f"(d{variable}/dt, dr/dt) of the equiangular {name} system ({model}; "
                                "theory.normalization).")


@functools.lru_cache(maxsize=None)
def closed_form_function(name: str, model: str = "sa"):
    """Vectorised ``(eps0, r0, beta, n, alpha, t, switch, tau) -> (epsilon(t), r(t))`` of the linearised system."""
    from .codegen import compile_function

    eps, r = linearized_closed_form(name, model=model)
    args = (sym.epsilon0, sym.radius0, sym.beta, sym.n, sym.alpha, sym.t, sym.switch_time, sym.tau)
    return compile_function(f"norm_closed_form_{name}_{model}", args, (eps, r),
                            arg_names=("eps0", "r0", "beta", "n", "alpha", "t", "switch", "tau"),
                            doc=f"(1 - s, r) of the {name} equiangular system linearised at s = 1 ({model}).")


__all__ = ["SCHEMES", "UNIT_RADIUS", "closed_form_function", "depth_beta", "equiangular_attention", "equiangular_function",
           "lnscale_attention_derivation",
           "equiangular_system", "equiangular_system_derivation", "shifted_kernel", "law_function", "linearized_closed_form",
           "linearized_closed_form_derivation", "linearized_rates", "scheme_derivation", "scheme_laws"]
