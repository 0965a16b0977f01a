r"""The transformer block on the sphere, symbolically: several heads, an MLP, depth schedules, causal masks.

Single-particle field (GLPR arXiv 2312.10794, the continuous-time transformer with :math:`H` heads and an MLP, in
the head layout of a trained network; conventions of :mod:`numerics.core.blocks`):

.. math::

    \begin{aligned}
    v_i &= P_{x_i}\Big(\sum_h W_h^\top V_h a_i^h\Big) &&\text{without an MLP},\\
    v_i &= P_{x_i}\Big(\frac{1}{H} \sum_h \mathrm{MLP}^h(H W_h^\top V_h a_i^h)\Big)
    &&\text{with } \mathrm{MLP}^h(y) = W_2^h \operatorname{act}(W_1^h y + b_1^h) + b_2^h,\\
    \texttt{sa}:\ a_i^h &= \sum_{j\in J(i)} w_{ij}^h x_j \Big/ \sum_{k\in J(i)} w_{ik}^h,
    &&\texttt{usa}:\ a_i^h = \frac{1}{n} \sum_{j\in J(i)} w_{ij}^h x_j,\\
    w_{ij}^h &= \phi'(s_{ij}^h), &&s_{ij}^h = c \langle Q_h x_i, K_h x_j\rangle,
    \end{aligned}

:math:`\phi'` the pair-kernel weight (:math:`e^{\beta s}` for attention, any :math:`\phi'(s)` for a user kernel),
:math:`c` the score scale (:math:`1/\sqrt{k}` for a trained head), :math:`J(i) = \{1, \dots, n\}` or
:math:`\{1, \dots, i\}` with a causal mask. The notes' form
:math:`\frac{1}{H} \sum_h P(\mathrm{MLP}^{[h]}(V^{[h]} a^h))` is :math:`W_h^\top V_h = V^{[h]}/H`;
:math:`\mathrm{MLP}^h` is one MLP per head or one shared MLP.

Derivations here (each a :class:`theory.derivation.Derivation` that verifies itself):

- :func:`one_head_derivation`: :math:`H = 1`, :math:`W = I`, :math:`c = 1`, identity MLP gives
  :func:`theory.fields.particle_field`.
- :func:`identical_heads_derivation`: :math:`H` identical heads with :math:`W_h = I/H` give the one-head field.
- :func:`per_head_mlp_derivation`: per-head MLPs with :math:`W_h = I/H` are the notes' form written head by head
  (:func:`notes_form_particle_field`); :func:`identical_heads_mlp_derivation`: identical heads and MLPs = one head.
- :func:`causal_first_token_derivation`, :func:`causal_two_token_derivation`: with :math:`V = I` the first token
  is a fixed point for any :math:`Q, K`, and
  :math:`d\cos(\theta_{12})/dt = \sigma(s_{21} - s_{22}) \sin^2(\theta_{12})` (KPR arXiv 2411.04990).
- :func:`causal_meanfield_derivation`: the masked mean-field velocity with position label :math:`s \in [0, 1]`
  (arXiv 2501.18322 / 2411.04990) evaluated on the empirical measure of :math:`(x_j, j/n)` is the causal particle
  field.
- :func:`multihead_gaussian_derivation`: Gaussian moment ODEs for :math:`H` softmax heads (derived from the summed
  affine velocity; the covariance ODE is a sum over heads because it is linear in the slope :math:`J`; the layer
  map is not: its :math:`h^2 J \Sigma J^\top` term mixes heads).
- :func:`multihead_gradient_derivation`: ``usa`` heads with symmetric score maps :math:`B_h` and value maps
  :math:`c_h B_h` are :math:`n \operatorname{grad} E` for
  :math:`E = \sum_h \frac{c_h}{2\beta n^2} \sum_{ij} e^{\beta x_i^\top B_h x_j}`; :func:`gradient_obstruction`
  shows that with :math:`V = I` and :math:`B \ne bI` the Jacobian is not symmetric (no Euclidean gradient).
- :func:`angle_curl`, :func:`gradient_curl_derivation`, :func:`curl_at`: the curl of the velocity 1-form
  :math:`\sum_i m_i \langle v_i, dx_i\rangle` on :math:`(\mathbb{S}^1)^n`: zero for the gradient cases, nonzero
  for :math:`V = I` with :math:`B \ne bI` and for two ``sa`` heads with the head-normaliser metrics.

:func:`block_velocity_function` emits the field as NumPy code through :mod:`theory.codegen`.
"""
from __future__ import annotations

import random
from collections.abc import Sequence

import sympy as sp

from . import symbols as sym
from .derivation import Derivation, Step, random_rational, sphere_point_sampler
from .sphere import tangent_projection

SOURCE = "GLPR arXiv 2312.10794, multi-head transformer with MLP (continuous-time form)"
SOURCE_KPR = "Karagodin, Polyanskiy, Rigollet arXiv 2411.04990, causal self-attention"
ACTIVATIONS = ("identity", "relu", "tanh", "gelu")


def activation(name: str, z: sp.Expr) -> sp.Expr:
    r"""The MLP activation as a sympy expression (``gelu`` is the exact :math:`z \Phi(z)`)."""
    if name == "identity":
        return z
    if name == "relu":
        return sp.Max(z, 0)
    if name == "tanh":
        return sp.tanh(z)
    if name == "gelu":
        return z * (1 + sp.erf(z / sp.sqrt(2))) / 2
    raise ValueError(f"activation must be one of {ACTIVATIONS}, got {name!r}")


def head_matrices(h: int, k: int, d: int) -> tuple[sp.Matrix, ...]:
    r"""Symbolic blocks :math:`(Q_h, K_h, V_h, W_h)`, each :math:`k \times d`, entries ``Qh_ab`` etc."""
    return tuple(sp.Matrix(k, d, lambda a, b, n=name: sp.Symbol(f"{n}{h}_{a + 1}{b + 1}", real=True))
                 for name in ("Q", "K", "V", "W"))


def _col(x) -> sp.Matrix:
    m = sp.Matrix(x)
    return m if m.shape[1] == 1 else m.reshape(len(m), 1)


def mlp_apply(mlp, y: sp.Matrix) -> sp.Matrix:
    r""":math:`\mathrm{MLP}(y) = W_2 \operatorname{act}(W_1 y + b_1) + b_2` for
    ``mlp = (W1, b1, W2, b2, activation name)``."""
    W1, b1, W2, b2, act = mlp
    z = sp.Matrix(W1) * y + _col(b1)
    return sp.Matrix(W2) * z.applyfunc(lambda e: activation(act, e)) + _col(b2)


def head_mlp(mlp, h: int):
    """The MLP of head ``h``: ``mlp`` itself when it is one shared tuple ``(W1, b1, W2, b2, activation name)``, else
    ``mlp[h]`` (a sequence of such tuples, one per head); ``None`` stays ``None``.
    """
    if mlp is None:
        return None
    return mlp if isinstance(mlp[-1], str) else mlp[h]


def block_particle_field(kind: str, points: Sequence, i: int, heads: Sequence, *, beta=sym.beta, scale=1,
                         weight: sp.Expr | None = None, mlp=None, causal: bool = False, alibi=None, rope=None,
                         labels: Sequence | None = None) -> sp.Matrix:
    r"""The velocity of particle ``i`` (0-based) among ``points`` (module docstring).

    ``heads``: sequence of ``(Q_h, K_h, V_h, W_h)``, each :math:`k \times d` (sympy or numbers). ``weight``:
    :math:`\phi'(s)` as an expression in :data:`theory.symbols.s` (default :math:`e^{\beta s}`). ``mlp``:
    ``(W1, b1, W2, b2, activation name)`` shared by the heads, or a sequence of :math:`H` such tuples
    (:math:`\mathrm{MLP}^{[h]}` in head :math:`h`'s term):
    :math:`v_i = P_{x_i}(\frac{1}{H} \sum_h \mathrm{MLP}^{[h]}(H W_h^\top V_h a_i^h))`.

    Positions (:func:`position_weight`): ``alibi`` (one slope, or one per head) multiplies :math:`w_{ij}^h` by
    :math:`e^{-\lambda_h \lvert p_i - p_j\rvert}`; ``rope`` (a base) puts :math:`R(p_i)` and :math:`R(p_j)` of
    :func:`rope_rotation` on the query and key sides,
    :math:`s_{ij} = c \langle R(p_i) Q_h x_i, R(p_j) K_h x_j\rangle`; ``labels`` are the :math:`p_i` (default
    :math:`0, 1, \dots, n - 1`).
    """
    if kind not in ("sa", "usa"):
        raise ValueError(f"kind must be sa or usa, got {kind!r}")
    pts = [_col(p) for p in points]
    n = len(pts)
    x = pts[i]
    J = pts[: i + 1] if causal else pts
    w_expr = sp.exp(beta * sym.s) if weight is None else weight
    H = len(heads)
    total = sp.zeros(x.rows, 1)
    if mlp is not None and not isinstance(mlp[-1], str) and len(mlp) != H:
        raise ValueError(f"{len(mlp)} per-head MLPs for {H} heads")
    p = list(range(n)) if labels is None else list(labels)
    for h, (Q, K, V, W) in enumerate(heads):
        Q, K, V, W = (sp.Matrix(M) for M in (Q, K, V, W))
        weights = [w_expr.subs(sym.s, scale * _rotated_score(Q * x, K * y, p[i], p[j], rope))
                   * position_weight(alibi, h, H, p[i], p[j]) for j, y in enumerate(J)]
        a = sum((w * y for w, y in zip(weights, J)), sp.zeros(x.rows, 1))
        a = a / (sum(weights) if kind == "sa" else n)
        y_h = W.T * V * a
        total += y_h if mlp is None else mlp_apply(head_mlp(mlp, h), H * y_h) / H
    return tangent_projection(x, total)


def rope_rotation(p, k: int, base) -> sp.Matrix:
    r""":math:`R(p)` on :math:`\mathbb{R}^k`: the pairs :math:`(2m, 2m + 1)` rotated by :math:`p\,\theta_m`,
    :math:`\theta_m = \mathrm{base}^{-2m/k'}`, :math:`k' = 2 \lfloor k/2\rfloor` (odd :math:`k`: the last
    coordinate is fixed). Convention of :mod:`numerics.core.positions`.
    """
    R = sp.eye(k)
    half = k // 2
    for m in range(half):
        ang = p * sp.Pow(base, -sp.Rational(2 * m, 2 * half))
        c, s_ = sp.cos(ang), sp.sin(ang)
        R[2 * m, 2 * m], R[2 * m, 2 * m + 1], R[2 * m + 1, 2 * m], R[2 * m + 1, 2 * m + 1] = c, -s_, s_, c
    return R


def _rotated_score(q: sp.Matrix, k: sp.Matrix, p_i, p_j, rope) -> sp.Expr:
    """<R(p_i) q, R(p_j) k> (RoPE) or <q, k> (``rope`` None)."""
    if rope is None:
        return (q.T * k)[0, 0]
    return ((rope_rotation(p_i, q.rows, rope) * q).T * (rope_rotation(p_j, k.rows, rope) * k))[0, 0]


def position_weight(alibi, h: int, H: int, p_i, p_j) -> sp.Expr:
    r""":math:`e^{-\lambda_h \lvert p_i - p_j\rvert}` (ALiBi) or 1: ``alibi`` a sequence of per-head slopes, or one
    slope :math:`\lambda` giving head :math:`h` (0-based) of :math:`H` the geometric slope
    :math:`\lambda\, 2^{-8h/H}` (the convention of :mod:`numerics.core.positions`).
    """
    if alibi is None:
        return sp.Integer(1)
    lam = alibi[h] if isinstance(alibi, (list, tuple)) else alibi * sp.Integer(2) ** (-sp.Rational(8 * h, H))
    return sp.exp(-lam * sp.Abs(p_i - p_j))


def scheduled_particle_field(kind: str, points: Sequence, i: int, layers: Sequence, times: Sequence, *,
                             t=sym.t, **options) -> sp.Matrix:
    r"""Time-dependent weights as a depth schedule: layer :math:`l` = ``(heads_l, mlp_l)`` acts on
    ``[times[l], times[l+1])``.

    Returns the velocity as a vector of ``sympy.Piecewise`` in ``t`` (the last layer acts on
    :math:`[\mathtt{times[-1]}, \infty)`; ``times[0]`` must be 0). Weight sharing (ALBERT) is one repeated layer; a
    callable schedule is the general case ``block_particle_field`` with matrix entries that are expressions in
    :math:`t`. ``options`` are passed to :func:`block_particle_field` (``beta``, ``scale``, ``weight``, ``causal``).
    """
    if len(layers) != len(times) or not times or times[0] != 0:
        raise ValueError("give one layer per start time, starting at t = 0")
    fields = [block_particle_field(kind, points, i, heads, mlp=mlp, **options) for heads, mlp in layers]
    bounds = list(times[1:]) + [sp.oo]
    return sp.Matrix([sp.Piecewise(*[(f[a], t < b) for f, b in zip(fields, bounds)]) for a in range(fields[0].rows)])


def schedule_derivation(kind: str = "sa", d: int = 2, n: int = 2) -> Derivation:
    r"""A schedule whose two layers are equal is the time-independent field (weight sharing; checked at
    :math:`t = 1/2` in the first layer and :math:`t = 5/2` in the second), and inside :math:`[t_1, \infty)` a
    two-layer schedule is the second layer's field (:math:`t = 3/2`; the first layer has :math:`Q` and :math:`K`
    swapped, so a wrong interval would show).
    """
    Q, K, V, W = head_matrices(1, d, d)
    pts, sampler = _sphere_points(d, n)
    layer = ([(Q, K, V, W)], None)
    other = ([(K, Q, V, W)], None)
    shared = scheduled_particle_field(kind, pts, 0, [layer, layer], [0, 1])
    mixed = scheduled_particle_field(kind, pts, 0, [other, layer], [0, 1]).subs(sym.t, sp.Rational(3, 2))
    fixed = block_particle_field(kind, pts, 0, [(Q, K, V, W)])
    return Derivation(title=f"{kind}: constant schedule = time-independent field; layer 2 acts on [1, oo) (d = {d})",
                      source=SOURCE + "; depth-dependent weights",
                      lhs=sp.Matrix.vstack(shared.subs(sym.t, sp.Rational(1, 2)), shared.subs(sym.t, sp.Rational(5, 2)),
                                           mixed),
                      rhs=sp.Matrix.vstack(fixed, fixed, fixed),
                      steps=(Step("scheduled field (Piecewise in t)", shared),))


def _rational_matrix(rng: random.Random, rows: int, cols: int) -> sp.Matrix:
    return sp.Matrix(rows, cols, lambda a, b: random_rational(rng, -2, 2, 5))


def _sphere_points(d: int, n: int):
    pts = [sym.particle(j + 1, d) for j in range(n)]
    return pts, sphere_point_sampler([list(p) for p in pts], d, sym.beta)


def one_head_derivation(kind: str, d: int = 2, n: int = 2, seed: int = 14) -> Derivation:
    """:math:`H = 1`, :math:`W = I`, :math:`c = 1` and the identity MLP give the one-head field of
    :func:`theory.fields.particle_field`.

    :math:`Q, K, V` are exact random rationals (``seed``); the identity holds at rational points of the sphere.
    Verified by: tests/theory/test_architectures.py (and architectures.heads-reduce numerically).
    """
    from .fields import particle_field
    from .spec import ModelSpec

    rng = random.Random(seed)
    Q, K, V = (_rational_matrix(rng, d, d) for _ in range(3))
    pts, sampler = _sphere_points(d, n)
    ident = (sp.eye(d), sp.zeros(d, 1), sp.eye(d), sp.zeros(d, 1), "identity")
    lhs = block_particle_field(kind, pts, 0, [(Q, K, V, sp.eye(d))], mlp=ident)
    rhs = particle_field(ModelSpec(kind, d, Q=Q, K=K, V=V), 0, pts)
    return Derivation(
        title=f"{kind}: the block field with one head, W = I, scale 1 and the identity MLP is the one-head field "
              f"(d = {d}, n = {n})",
        source=SOURCE, lhs=lhs, rhs=rhs,
        steps=(Step("block field of particle 1", lhs), Step("one-head field (theory.fields)", rhs)),
        sampler=sampler, notes="MLP(y) = I (I y + 0) + 0 with the identity activation; (1/H) MLP(H y) = y at H = 1")


def identical_heads_derivation(kind: str, d: int = 2, n: int = 2, H: int = 3) -> Derivation:
    """:math:`H` identical heads (:math:`Q, K, V` symbolic, :math:`W_h = I/H`, :math:`c = 1`) give the one-head field
    (sum of :math:`H` equal terms :math:`/ H`).
    """
    Q, K, V, _ = head_matrices(1, d, d)
    pts, _ = _sphere_points(d, n)
    lhs = block_particle_field(kind, pts, 0, [(Q, K, V, sp.eye(d) / H)] * H)
    rhs = block_particle_field(kind, pts, 0, [(Q, K, V, sp.eye(d))])
    return Derivation(title=f"{kind}: {H} identical heads with W_h = I/{H} equal one head (d = {d}, n = {n})",
                      source=SOURCE, lhs=lhs, rhs=rhs,
                      steps=(Step("head contribution W_h^T V_h a^h = V a / H", V * pts[0] / H),))


def _mlp_symbols(h: int, m: int, d: int, act: str):
    """Symbolic MLP weights of head ``h``: (W1 (m x d), b1 (m), W2 (d x m), b2 (d), activation)."""
    mk = (lambda name, r, c: sp.Matrix(r, c, lambda a, b: sp.Symbol(f"{name}{h}_{a + 1}{b + 1}", real=True)))
    return (mk("Wa", m, d), mk("ba", m, 1), mk("Wb", d, m), mk("bb", d, 1), act)


def notes_form_particle_field(kind: str, points: Sequence, i: int, heads: Sequence, mlps: Sequence, *,
                              beta=sym.beta) -> sp.Matrix:
    r"""The notes' form written directly, head by head:
    :math:`\frac{1}{H} \sum_h P_{x_i}(\mathrm{MLP}^{[h]}(V^{[h]} a_i^{[h]}))` with ``heads`` =
    :math:`[(Q^{[h]}, K^{[h]}, V^{[h]})]` (:math:`d \times d`), scores
    :math:`\beta \langle Q^{[h]} x_i, K^{[h]} x_j\rangle` and the projection applied to every head's term (not to
    the average). Independent of :func:`block_particle_field`.
    """
    pts = [_col(p) for p in points]
    x, n, H = pts[i], len(pts), len(heads)
    out = sp.zeros(x.rows, 1)
    for (Q, K, V), (W1, b1, W2, b2, act) in zip(heads, mlps):
        Q, K, V = sp.Matrix(Q), sp.Matrix(K), sp.Matrix(V)
        e = [sp.exp(beta * ((Q * x).T * (K * y))[0, 0]) for y in pts]
        a = sum((w * y for w, y in zip(e, pts)), sp.zeros(x.rows, 1)) / (sum(e) if kind == "sa" else n)
        z = (sp.Matrix(W1) * V * a + _col(b1)).applyfunc(lambda u: activation(act, u))
        out += tangent_projection(x, sp.Matrix(W2) * z + _col(b2)) / H
    return out


def per_head_mlp_derivation(kind: str, d: int = 2, n: int = 2, H: int = 2, m: int = 2,
                            act: str = "tanh") -> Derivation:
    r"""The block field with per-head MLPs, :math:`W_h = I/H`, :math:`V_h = V^{[h]}` (so
    :math:`H W_h^\top V_h = V^{[h]}`) is the notes' form
    :math:`\frac{1}{H} \sum_h P(\mathrm{MLP}^{[h]}(V^{[h]} a^{[h]}))` (:func:`notes_form_particle_field`): the
    projection commutes with the average because it is linear. :math:`Q, K, V` and the MLP weights symbolic; checked
    at exact rational points.
    """
    pts, sampler0 = _sphere_points(d, n)
    heads = [head_matrices(h, d, d)[:3] for h in range(H)]
    mlps = [_mlp_symbols(h, m, d, act) for h in range(H)]
    lhs = block_particle_field(kind, pts, 0, [(Q, K, V, sp.eye(d) / H) for Q, K, V in heads], mlp=mlps)
    rhs = notes_form_particle_field(kind, pts, 0, heads, mlps)
    extra = sorted({e for M in heads for X in M for e in X} | {e for ml in mlps for X in ml[:4] for e in X},
                   key=str)

    def sampler(rng):
        subs = sampler0(rng)
        subs.update({e: random_rational(rng, -1, 1, 3) for e in extra})
        return subs

    return Derivation(title=f"{kind}: {H} heads with one MLP each (W_h = I/{H}) = the notes' form "
                            f"(1/H) sum_h P(MLP^[h](V^[h] a^[h])) (d = {d}, n = {n}, {act})",
                      source=SOURCE, lhs=lhs, rhs=rhs,
                      steps=(Step("H W_h^T V_h = V^[h] inside MLP^[h]", heads[0][2]),), sampler=sampler,
                      notes="P_x is linear, so P applied to the average = average of the projected head terms")


def identical_heads_mlp_derivation(kind: str, d: int = 2, n: int = 2, H: int = 3, m: int = 2,
                                   act: str = "tanh") -> Derivation:
    """:math:`H` identical heads (:math:`W_h = I/H`) with :math:`H` identical per-head MLPs equal one head
    (:math:`W = I`) with that MLP.
    """
    Q, K, V, _ = head_matrices(1, d, d)
    pts, sampler0 = _sphere_points(d, n)
    mlp = _mlp_symbols(1, m, d, act)
    lhs = block_particle_field(kind, pts, 0, [(Q, K, V, sp.eye(d) / H)] * H, mlp=[mlp] * H)
    rhs = block_particle_field(kind, pts, 0, [(Q, K, V, sp.eye(d))], mlp=mlp)
    extra = sorted({e for X in (Q, K, V) for e in X} | {e for X in mlp[:4] for e in X}, key=str)

    def sampler(rng):
        subs = sampler0(rng)
        subs.update({e: random_rational(rng, -1, 1, 3) for e in extra})
        return subs

    return Derivation(title=f"{kind}: {H} identical heads with identical per-head MLPs = one head with that MLP",
                      source=SOURCE, lhs=lhs, rhs=rhs, sampler=sampler,
                      steps=(Step("each head: MLP(H (V/H) a) / H = MLP(V a) / H", V * pts[0]),))


def causal_first_token_derivation(d: int = 3, n: int = 3) -> Derivation:
    """With a causal mask and :math:`V = I` the first token's velocity is :math:`P_{x_1} x_1 = 0`, for any :math:`Q, K`
    (symbolic).
    """
    Q, K, _, _ = head_matrices(1, d, d)
    pts, sampler = _sphere_points(d, n)
    lhs = block_particle_field("sa", pts, 0, [(Q, K, sp.eye(d), sp.eye(d))], causal=True)
    return Derivation(title=f"causal sa, V = I: the first token does not move (any Q, K; d = {d})",
                      source=SOURCE_KPR, lhs=lhs, rhs=sp.zeros(d, 1),
                      steps=(Step("a_1 = x_1 (only j = 1 is visible)", pts[0]),
                             Step("v_1 = P_{x_1} x_1 = (1 - |x_1|^2) x_1", (1 - (pts[0].T * pts[0])[0, 0]) * pts[0])),
                      sampler=sampler, notes="holds on the sphere |x_1| = 1")


def causal_two_token_derivation(d: int = 3) -> Derivation:
    r"""Causal ``sa``, :math:`V = I`, two tokens:
    :math:`d\langle x_1, x_2\rangle/dt = \sigma(\beta (s_{21} - s_{22}))\, (1 - \langle x_1, x_2\rangle^2)`.

    With :math:`\theta` the angle: :math:`d\theta/dt = -\sigma(\beta g) \sin\theta`, the basis of the merge-time
    integral of :mod:`numerics.architectures.causal`. :math:`Q, K` symbolic; checked at rational points.
    """
    Q, K, _, _ = head_matrices(1, d, d)
    pts, sampler0 = _sphere_points(d, 2)
    x1, x2 = pts
    v2 = block_particle_field("sa", pts, 1, [(Q, K, sp.eye(d), sp.eye(d))], causal=True)
    lhs = (x1.T * v2)[0, 0]
    s21 = ((Q * x2).T * (K * x1))[0, 0]
    s22 = ((Q * x2).T * (K * x2))[0, 0]
    c = (x1.T * x2)[0, 0]
    rhs = (1 - c**2) / (1 + sp.exp(-sym.beta * (s21 - s22)))
    entries = list(Q) + list(K)

    def sampler(rng):
        subs = sampler0(rng)
        subs.update({e: random_rational(rng, -2, 2, 5) for e in entries})
        return subs

    return Derivation(title=f"causal sa, V = I: d cos(theta_12)/dt = sigma(beta (s_21 - s_22)) sin^2(theta_12) "
                            f"(d = {d})", source=SOURCE_KPR, lhs=lhs, rhs=rhs,
                      steps=(Step("v_2 = p_21 P_{x_2} x_1 (P_{x_2} x_2 = 0)", v2),
                             Step("p_21 = sigma(beta (s_21 - s_22))", 1 / (1 + sp.exp(-sym.beta * (s21 - s22))))),
                      sampler=sampler)


def causal_meanfield_velocity(x, s, atoms, kind: str = "sa", beta=sym.beta) -> sp.Matrix:
    r"""The masked mean-field velocity with position labels (:math:`V = I`, :math:`Q = K = I`):

    .. math::

        v(x, s) = P_x\left(\frac{\int 1\{\tau \le s\}\, e^{\beta \langle x, y\rangle} y\, d\mu(y, \tau)}
        {\int 1\{\tau \le s\}\, e^{\beta \langle x, y\rangle}\, d\mu(y, \tau)}\right)

    (``usa``: the numerator alone) for the discrete measure
    :math:`\mu = \frac{1}{n} \sum_j \delta_{(y_j, \tau_j)}` given as ``atoms`` = ``[(y_j, tau_j)]``. The indicator
    is :math:`\operatorname{Heaviside}(s - \tau)` with :math:`\operatorname{Heaviside}(0) = 1`.
    """
    x = _col(x)
    n = len(atoms)
    ind = [sp.Heaviside(s - tau, 1) for _, tau in atoms]
    wts = [sp.exp(beta * (x.T * _col(y))[0, 0]) for y, _ in atoms]
    num = sum((c * w * _col(y) / n for c, w, (y, _) in zip(ind, wts, atoms)), sp.zeros(x.rows, 1))
    if kind == "sa":
        num = num / sum(c * w / n for c, w in zip(ind, wts))
    return tangent_projection(x, num)


def causal_meanfield_derivation(d: int = 2, n: int = 3, i: int = 1, kind: str = "sa") -> Derivation:
    """On the empirical measure of :math:`(x_j, j/n)` the masked mean-field velocity at :math:`(x_i, i/n)` is the causal
    particle field of token :math:`i` (source of the mean-field form: arXiv 2411.04990, section on the causal
    continuity equation).
    """
    pts, sampler = _sphere_points(d, n)
    atoms = [(p, sp.Rational(j + 1, n)) for j, p in enumerate(pts)]
    lhs = causal_meanfield_velocity(pts[i], sp.Rational(i + 1, n), atoms, kind)
    rhs = block_particle_field(kind, pts, i, [(sp.eye(d), sp.eye(d), sp.eye(d), sp.eye(d))], causal=True)
    return Derivation(title=f"{kind}: masked mean-field velocity on the empirical measure = causal particle field "
                            f"(token {i + 1} of {n})", source=SOURCE_KPR, lhs=lhs, rhs=rhs,
                      steps=(Step("mean-field velocity with indicator 1{tau <= s}", lhs),),
                      sampler=sampler,
                      notes="usa: the mean-field normalisation 1/n is the particle system's 1/n (all n tokens "
                            "counted, the masked ones with weight 0)")


# -- Gaussian solutions with several softmax heads ---------------------------------------------------------------
def multihead_gaussian_derivation(d: int, H: int) -> Derivation:
    r""":math:`H` softmax heads on :math:`N(\alpha, \Sigma)`: :math:`\Gamma(x) = \sum_h V_h (\alpha + \Sigma A_h x)`
    (each head tilts the Gaussian separately, :func:`theory.gaussian.softmax_tilting_derivation`), an affine field
    with slope :math:`J = d\Gamma/dx = \sum_h V_h \Sigma A_h`; the moment ODE of an affine field,
    :math:`(b + J\alpha,\ J\Sigma + \Sigma J^\top)`, is then compared with the sum over heads of the one-head
    right-hand sides (lhs: from the summed field; rhs: sum of :func:`theory.gaussian.moment_ode_matrix_form` with
    head matrices substituted).

    Verified by: architectures.gaussian-heads.
    """
    from .gaussian import _sampler, gaussian_symbols, moment_ode_matrix_form, square_matrix

    g = gaussian_symbols(d)
    As = [square_matrix(f"A{h}", d) for h in range(H)]
    Vs = [square_matrix(f"V{h}", d) for h in range(H)]
    gamma = sum((V * (g.alpha + g.Sigma * A * g.x) for A, V in zip(As, Vs)), sp.zeros(d, 1))
    J = gamma.jacobian(g.x)
    if any(e.free_symbols & set(g.x) for e in J):
        raise RuntimeError("the multi-head velocity is not affine")
    b = gamma.subs({xi: 0 for xi in g.x})
    lhs = sp.Matrix.vstack(b + J * g.alpha, (J * g.Sigma + g.Sigma * J.T).reshape(d * d, 1))
    rhs_a, rhs_S = sp.zeros(d, 1), sp.zeros(d, d)
    for A, V in zip(As, Vs):
        one_a, one_S = moment_ode_matrix_form("softmax", d)
        sub = {**dict(zip(g.A, A)), **dict(zip(g.V, V))}
        rhs_a += one_a.xreplace(sub)
        rhs_S += one_S.xreplace(sub)
    rhs = sp.Matrix.vstack(rhs_a, rhs_S.reshape(d * d, 1))
    base = _sampler(g)
    extra = [e for M in As + Vs for e in M]

    def sampler(rng):
        subs = base(rng)
        subs.update({e: random_rational(rng) for e in extra})
        return subs

    return Derivation(
        title=f"{H} softmax heads: Gaussian moment ODE = sum of one-head moment ODEs (d = {d})",
        source="arXiv 2501.18322 (CACP), Gaussian solutions, several heads",
        lhs=lhs, rhs=rhs,
        steps=(Step("velocity Gamma(x) = sum_h V_h (alpha + Sigma A_h x)", gamma),
               Step("slope J = dGamma/dx = sum_h V_h Sigma A_h", J), Step("intercept b = sum_h V_h alpha", b)),
        sampler=sampler,
        notes="linear in J, hence a sum over heads; the exact layer map N(alpha + h(b + J alpha), "
              "(I + hJ) Sigma (I + hJ)^T) is not (cross terms h^2 J_g Sigma J_h^T)")


# -- gradient structure ---------------------------------------------------------------------------------------------
def multihead_gradient_derivation(d: int = 2, n: int = 2, H: int = 2) -> Derivation:
    r"""``usa`` with heads whose score maps :math:`B_h` are symmetric and value maps are :math:`c_h B_h`:
    :math:`v_i = n \operatorname{grad}_i E` (Riemannian),
    :math:`E = \sum_h \frac{c_h}{2\beta n^2} \sum_{i,j} e^{\beta x_i^\top B_h x_j}`. (Sander et al. / GLPR's
    gradient structure, one head per term.) Symbols: symmetric :math:`B_h`, scalars :math:`c_h`; checked at rational
    points of the sphere.
    """
    from .gaussian import symmetric_matrix

    pts, sampler0 = _sphere_points(d, n)
    Bs = [symmetric_matrix(f"B{h}", d) for h in range(H)]
    cs = [sp.Symbol(f"c{h}", real=True) for h in range(H)]
    heads = [(B, sp.eye(d), c * B, sp.eye(d)) for B, c in zip(Bs, cs)]
    lhs = block_particle_field("usa", pts, 0, heads)
    E = sum(c / (2 * sym.beta * n**2) * sum(sp.exp(sym.beta * (x.T * B * y)[0, 0]) for x in pts for y in pts)
            for B, c in zip(Bs, cs))
    grad = sp.Matrix([sp.diff(E, xi) for xi in pts[0]])
    rhs = n * tangent_projection(pts[0], grad)
    extra = [e for B in Bs for e in B] + cs

    def sampler(rng):
        subs = sampler0(rng)
        subs.update({e: random_rational(rng, -2, 2, 5) for e in set(extra)})
        return subs

    return Derivation(title=f"usa, {H} heads with symmetric B_h and value maps c_h B_h: v = n grad E (d = {d})",
                      source=SOURCE + "; gradient structure per head", lhs=lhs, rhs=rhs,
                      steps=(Step("energy E", E), Step("Euclidean gradient in x_1", grad)), sampler=sampler,
                      notes="sa with several heads has one normaliser Z_i^h per head: no common metric factor, so "
                            "GLPR's sa gradient structure does not survive H > 1 (see gradient_obstruction)")


def gradient_obstruction(d: int = 2) -> sp.Expr:
    r"""The asymmetry of the interaction Jacobian for ``usa`` with :math:`V = I` and a symmetric score map
    :math:`B` (two particles, in :math:`\mathbb{R}^d` before projection):

    .. math::

        \frac{\partial F_1}{\partial x_2} - \Big(\frac{\partial F_2}{\partial x_1}\Big)^\top
        = \beta e^{\beta x_1^\top B x_2} \big(x_2 (B x_1)^\top - (B x_2) x_1^\top\big)

    componentwise; zero for all :math:`x` iff :math:`B` is a multiple of :math:`I`. Returns the :math:`d \times d`
    matrix.
    """
    from .gaussian import symmetric_matrix

    B = symmetric_matrix("B", d)
    x1, x2 = sym.particle(1, d), sym.particle(2, d)
    F1 = sp.exp(sym.beta * (x1.T * B * x2)[0, 0]) * x2
    F2 = sp.exp(sym.beta * (x2.T * B * x1)[0, 0]) * x1
    return sp.simplify(F1.jacobian(x2) - F2.jacobian(x1).T)


# -- gradient structure on the circle: curl of the velocity 1-form -----------------------------------------------------
def _rotate_derivative(f: sp.Expr, x: sp.Matrix) -> sp.Expr:
    """d f / d theta along the circle through x: <x^perp, grad_x f>, x^perp = (-x_2, x_1) (any extension of f off
    the circle gives the same value on it)."""
    return -x[1] * sp.diff(f, x[0]) + x[0] * sp.diff(f, x[1])


def angle_one_form(kind: str, heads: Sequence, n: int = 3, metric=None, beta=sym.beta):
    r"""The velocity 1-form :math:`\omega = \sum_i m_i v_i^\theta\, d\theta_i` of :math:`n` tokens on
    :math:`\mathbb{S}^1` (angle coordinates).

    :math:`v_i^\theta = \langle v_i, x_i^\perp\rangle` is the angular velocity of the block field
    (:func:`block_particle_field`, score scale 1), :math:`m_i` the metric factor: ``None`` (round metric,
    :math:`m_i = 1`) or a sequence of head indices (:math:`m_i` = sum over those heads of
    :math:`Z_i^h = \sum_j e^{\beta \langle Q_h x_i, K_h x_j\rangle}`, the factor of GLPR's ``sa`` structure without
    its constant :math:`n^{-2}`). :math:`v_i = m_i^{-1} \partial F/\partial \theta_i` for a function :math:`F` on
    the torus iff :math:`\omega = dF`. Written in the Cartesian particle symbols of :func:`theory.symbols.particle`
    (exact at rational points of the circle). Returns ``(points, [a_i])`` with
    :math:`\omega = \sum_i a_i\, d\theta_i`.
    """
    pts = [sym.particle(j + 1, 2) for j in range(n)]
    out = []
    for i, x in enumerate(pts):
        v = block_particle_field(kind, pts, i, heads, beta=beta)
        ang = -x[1] * v[0] + x[0] * v[1]
        if metric is not None:
            m = 0
            for h in metric:
                Q, K = sp.Matrix(heads[h][0]), sp.Matrix(heads[h][1])
                m += sum(sp.exp(beta * ((Q * x).T * (K * y))[0, 0]) for y in pts)
            ang = m * ang
        out.append(ang)
    return pts, out


def _curl_entry(a: Sequence, pts: Sequence, p: int, q: int) -> sp.Expr:
    """C_pq = d a_q / d theta_p - d a_p / d theta_q of the 1-form sum_i a_i d theta_i (tokens ``pts`` on S^1)."""
    return _rotate_derivative(a[q], pts[p]) - _rotate_derivative(a[p], pts[q])


def angle_curl(kind: str, heads: Sequence, n: int = 3, metric=None, beta=sym.beta) -> tuple:
    r"""``(points, C)`` with :math:`C_{ab} = \partial a_b / \partial \theta_a - \partial a_a / \partial \theta_b`, the
    coefficients of :math:`d\omega` for the 1-form of :func:`angle_one_form`. :math:`C = 0` everywhere is necessary
    for :math:`v_i = m_i^{-1} \partial F/\partial \theta_i`, and sufficient once the periods of :math:`\omega` over
    the torus cycles vanish.
    """
    pts, a = angle_one_form(kind, heads, n, metric, beta)
    C = sp.Matrix(n, n, lambda p, q: _curl_entry(a, pts, p, q))
    return pts, C


def gradient_curl_derivation(case: str) -> Derivation:
    r""":math:`d\omega = 0` for the flows that are gradients (:math:`n = 3` tokens on :math:`\mathbb{S}^1`):

    - ``"usa-symmetric"``: ``usa``, two heads with symmetric score maps :math:`B_h` and value maps :math:`c_h B_h`,
      round metric (the energy of :func:`multihead_gradient_derivation`);
    - ``"sa-one-head"``: ``sa``, one head :math:`Q = K = V = I`, metric factor :math:`Z_i` (GLPR's ``sa``
      structure);
    - ``"usa-scaled-identity"``: ``usa``, heads :math:`Q_h^\top K_h = b_h I`, :math:`V_h = I/H` (mixed kernel), round
      metric.

    Checked at exact rational points of the circle, random rational entries and :math:`\beta`.
    """
    from .gaussian import symmetric_matrix

    I2 = sp.eye(2)
    extra = []
    if case == "usa-symmetric":
        Bs = [symmetric_matrix(f"B{h}", 2) for h in range(2)]
        cs = [sp.Symbol(f"c{h}", real=True) for h in range(2)]
        heads = [(B, I2, c * B, I2) for B, c in zip(Bs, cs)]
        kind, metric = "usa", None
        extra = sorted({e for B in Bs for e in B} | set(cs), key=str)
    elif case == "sa-one-head":
        heads, kind, metric = [(I2, I2, I2, I2)], "sa", [0]
    elif case == "usa-scaled-identity":
        bs = [sp.Symbol(f"b{h}", real=True) for h in range(2)]
        heads = [(b * I2, I2, I2, I2 / 2) for b in bs]
        kind, metric = "usa", None
        extra = bs
    else:
        raise ValueError(f"unknown case {case!r}")
    pts, C = angle_curl(kind, heads, 3, metric)
    base = sphere_point_sampler([list(p) for p in pts], 2, sym.beta)

    def sampler(rng):
        subs = base(rng)
        subs.update({e: random_rational(rng, -2, 2, 5) for e in extra})
        return subs

    return Derivation(title=f"{case}: the velocity 1-form is closed (d omega = 0), n = 3 on S^1",
                      source=SOURCE + "; gradient structure with several heads",
                      lhs=sp.Matrix([C[0, 1], C[0, 2], C[1, 2]]), rhs=sp.zeros(3, 1), sampler=sampler,
                      steps=(Step("C_ab = d a_b/d theta_a - d a_a/d theta_b, d/d theta_a = <x_a^perp, grad_{x_a}>",
                                  C[0, 1]),))


def curl_at(kind: str, heads: Sequence, angles: Sequence, beta_value, metric=None, pairs=((0, 1),),
            digits: int = 30) -> dict:
    r"""Entries :math:`C_{ab}` of the curl of :func:`angle_one_form` for the given ``pairs`` at tokens
    :math:`x_i = (\cos\theta_i, \sin\theta_i)` and the given :math:`\beta` (``digits`` significant digits): a nonzero
    entry shows that no :math:`F` has :math:`v_i = m_i^{-1} \partial F/\partial \theta_i`. Only the requested
    entries are differentiated (the others cost as much).
    """
    pts, a = angle_one_form(kind, heads, len(angles), metric)
    subs = {sym.beta: beta_value}
    for p, t in zip(pts, angles):
        subs[p[0]], subs[p[1]] = sp.cos(t), sp.sin(t)
    return {(p, q): _curl_entry(a, pts, p, q).subs(subs).evalf(digits) for p, q in pairs}


# -- positions: ALiBi and RoPE ----------------------------------------------------------------------------------------
SOURCE_POSITIONS = ("Press, Smith, Lewis arXiv 2108.12409 (ALiBi); Su et al. arXiv 2104.09864 (RoPE); energy of "
                    "GLPR arXiv 2312.10794 with position weights")


def alibi_energy(points: Sequence, labels: Sequence, lam, beta=sym.beta) -> sp.Expr:
    r""":math:`E = \frac{1}{2\beta n^2} \sum_{i,j} e^{\beta \langle x_i, x_j\rangle - \lambda \lvert p_i - p_j\rvert}`
    (the pair weight is symmetric in :math:`i, j`).
    """
    pts = [_col(p) for p in points]
    n = len(pts)
    return sum(sp.exp(beta * (x.T * y)[0, 0] - lam * sp.Abs(p - q)) for x, p in zip(pts, labels)
               for y, q in zip(pts, labels)) / (2 * beta * n**2)


def alibi_gradient_derivation(d: int = 2, labels=(0, 1, 3)) -> Derivation:
    r"""``usa`` with ALiBi and :math:`Q = K = V = I` (no mask) is :math:`v_i = n \operatorname{grad}_i E` (Riemannian)
    for :func:`alibi_energy`, :math:`\lambda` symbolic, labels exact: the ALiBi weight is symmetric in
    :math:`(i, j)`, so GLPR's gradient structure survives.
    """
    n = len(labels)
    lam = sp.Symbol("lambda", nonnegative=True)
    pts, sampler0 = _sphere_points(d, n)
    I = sp.eye(d)
    lhs = block_particle_field("usa", pts, 0, [(I, I, I, I)], alibi=lam, labels=list(labels))
    E = alibi_energy(pts, labels, lam)
    grad = sp.Matrix([sp.diff(E, xi) for xi in pts[0]])
    rhs = n * tangent_projection(pts[0], grad)

    def sampler(rng):
        subs = sampler0(rng)
        subs[lam] = random_rational(rng, 0, 2, 5)
        return subs

    return Derivation(title=f"usa with ALiBi (labels {tuple(labels)}): v_1 = n grad_1 E, "
                            f"E = sum e^(beta<x_i,x_j> - lambda|p_i - p_j|)/(2 beta n^2) (d = {d})",
                      source=SOURCE_POSITIONS, lhs=lhs, rhs=rhs, sampler=sampler,
                      steps=(Step("energy E", E), Step("Euclidean gradient in x_1", grad)),
                      notes="sa: Z_i v_i = n^2 grad_i E, a gradient flow in the metric with factors Z_i (GLPR); "
                            "a causal mask makes the weight asymmetric and breaks both")


def rope_relative_derivation(k: int = 4) -> Derivation:
    r""":math:`\langle R(p) q, R(r) k\rangle = \langle q, R(r - p) k\rangle`: RoPE scores depend on the positions
    through :math:`r - p` only (symbolic :math:`p`, :math:`r`, base; the rotation of :func:`rope_rotation`).
    """
    p, r = sp.symbols("p r", real=True)
    base = sp.Symbol("b", positive=True)
    q = sp.Matrix(sp.symbols(f"q1:{k + 1}", real=True))
    kk = sp.Matrix(sp.symbols(f"k1:{k + 1}", real=True))
    lhs = _rotated_score(q, kk, p, r, base)
    rhs = (q.T * rope_rotation(r - p, k, base) * kk)[0, 0]
    return Derivation(title=f"RoPE: <R(p) q, R(r) k> = <q, R(r - p) k> (k = {k})", source=SOURCE_POSITIONS,
                      lhs=sp.expand_trig(sp.expand(lhs)), rhs=sp.expand_trig(sp.expand(rhs)),
                      steps=(Step("R(p)^T R(r) = R(r - p) (commuting plane rotations)", rope_rotation(r - p, k, base)),))


def rope_energy(points: Sequence, labels: Sequence, beta=sym.beta) -> sp.Expr:
    r""":math:`E_R = \frac{1}{2\beta n^2} \sum_{i,j} e^{\beta \langle R(p_i) x_i, R(p_j) x_j\rangle}` (base 1 on
    :math:`d = 2`: :math:`R(p)` is the rotation by :math:`p`).
    """
    pts = [_col(x) for x in points]
    n = len(pts)
    return sum(sp.exp(beta * _rotated_score(x, y, p, q, 1)) for x, p in zip(pts, labels)
               for y, q in zip(pts, labels)) / (2 * beta * n**2)


def rope_gradient_derivation(n: int = 3) -> Derivation:
    r"""``usa`` on :math:`\mathbb{S}^1` with RoPE and *rotated values*,
    :math:`v_i = P_{x_i}(R(p_i)^\top \frac{1}{n} \sum_j e^{\beta \langle R(p_i) x_i, R(p_j) x_j\rangle} R(p_j) x_j)`,
    is :math:`n \operatorname{grad}_i E_R` (:func:`rope_energy`; labels symbolic). With plain values
    (:math:`V x_j`, what RoPE does) the weight matrix :math:`R(p_j - p_i)` is not symmetric and the field is not
    this gradient.
    """
    pts, sampler0 = _sphere_points(2, n)
    ps = sp.symbols(f"p1:{n + 1}", real=True)
    x = pts[0]
    R = [rope_rotation(p, 2, 1) for p in ps]
    acc = sp.zeros(2, 1)
    for y, Rj in zip(pts, R):
        acc += sp.exp(sym.beta * ((R[0] * x).T * (Rj * y))[0, 0]) * (R[0].T * Rj * y) / n
    lhs = tangent_projection(x, acc)
    E = rope_energy(pts, ps)
    grad = sp.Matrix([sp.diff(E, xi) for xi in x])
    rhs = n * tangent_projection(x, grad)
    return Derivation(title=f"usa with RoPE and rotated values on S^1: v_1 = n grad_1 E_R (n = {n})",
                      source=SOURCE_POSITIONS, lhs=lhs, rhs=rhs, sampler=sampler0,
                      steps=(Step("energy E_R", E), Step("Euclidean gradient in x_1", grad)))


def causal_positions_first_token_derivation(d: int = 2, n: int = 3) -> Derivation:
    r"""Causal ``sa`` with :math:`V = I`, ALiBi (symbolic :math:`\lambda`) and RoPE (symbolic base, labels
    :math:`0, 1, \dots`): the first token attends to itself only, so :math:`v_1 = P_{x_1} x_1 = 0` for any
    :math:`Q, K`.
    """
    Q, K, _, _ = head_matrices(1, d, d)
    lam = sp.Symbol("lambda", nonnegative=True)
    base = sp.Symbol("b", positive=True)
    pts, sampler = _sphere_points(d, n)
    lhs = block_particle_field("sa", pts, 0, [(Q, K, sp.eye(d), sp.eye(d))], causal=True, alibi=lam, rope=base)
    return Derivation(title=f"causal sa with ALiBi and RoPE, V = I: the first token does not move (d = {d})",
                      source=SOURCE_KPR + "; " + SOURCE_POSITIONS, lhs=lhs, rhs=sp.zeros(d, 1), sampler=sampler,
                      steps=(Step("a_1 = x_1 (only j = 1 is visible, whatever its weight)", pts[0]),))


def causal_positions_two_token_derivation(d: int = 2) -> Derivation:
    r"""Causal ``sa``, :math:`V = I`, ALiBi and RoPE (labels :math:`0, p`):
    :math:`d\langle x_1, x_2\rangle/dt = \sigma(s_{21} - s_{22} - \lambda p)(1 - \langle x_1, x_2\rangle^2)` with
    the rotated scores :math:`s_{2j} = \beta \langle R(1) Q x_2, R(p_j) K x_j\rangle`: the weight stays in
    :math:`(0, 1)`, so the KPR merge of token 2 into token 1 survives both mechanisms.
    """
    Q, K, _, _ = head_matrices(1, d, d)
    lam = sp.Symbol("lambda", nonnegative=True)
    base = sp.Integer(1)
    p2 = sp.atan(sp.Rational(4, 3))  # R(p2) has the rational entries 3/5, 4/5: exact evaluation at rational points
    pts, sampler0 = _sphere_points(d, 2)
    x1, x2 = pts
    v2 = block_particle_field("sa", pts, 1, [(Q, K, sp.eye(d), sp.eye(d))], causal=True, alibi=lam, rope=base,
                              labels=[0, p2])
    lhs = (x1.T * v2)[0, 0]
    s21 = sym.beta * _rotated_score(Q * x2, K * x1, p2, 0, base)
    s22 = sym.beta * _rotated_score(Q * x2, K * x2, p2, p2, base)
    c = (x1.T * x2)[0, 0]
    rhs = (1 - c**2) / (1 + sp.exp(-(s21 - s22 - lam * p2)))
    entries = list(Q) + list(K)

    def sampler(rng):
        subs = sampler0(rng)
        subs.update({e: random_rational(rng, -2, 2, 5) for e in entries})
        subs[lam] = random_rational(rng, 0, 2, 5)
        return subs

    return Derivation(title=f"causal sa with ALiBi and RoPE, V = I: d<x_1,x_2>/dt = sigma(s_21 - s_22 - lambda p_2) "
                            f"(1 - <x_1,x_2>^2) (d = {d})", source=SOURCE_KPR + "; " + SOURCE_POSITIONS,
                      lhs=lhs, rhs=rhs, sampler=sampler)


# -- code generation -------------------------------------------------------------------------------------------------
def block_velocity_function(kind: str, n: int, heads_numeric, *, scale=1, mlp=None, causal: bool = False,
                            particle: int = 0, alibi=None, rope=None, labels=None):
    """Emit the velocity of particle ``particle`` as a compiled NumPy function (theory.codegen).

    Signature: ``f(x1_1, ..., x1_d, x2_1, ..., xn_d, beta) -> (v_1, ..., v_d)`` (coordinates of all :math:`n`
    particles, row by row, then ``beta``), elementwise over arrays. ``heads_numeric``: sequence of ``(Q, K, V, W)``
    as nested lists or arrays (numbers baked into the code); ``mlp`` likewise: one shared ``(W1, b1, W2, b2,
    activation name)``, or a sequence of :math:`H` such tuples (one MLP per head). The signature does not depend on
    :math:`H` or the MLP. ``alibi``, ``rope``, ``labels``: the position mechanism of :func:`block_particle_field`
    (numbers baked in).
    """
    from .codegen import compile_function

    exact = (lambda M: sp.Matrix(M).applyfunc(lambda e: e if isinstance(e, sp.Rational) else sp.Rational(float(e))))
    heads = [tuple(exact(M) for M in h) for h in heads_numeric]
    d = heads[0][0].shape[1]
    pts = [sym.particle(j + 1, d) for j in range(n)]
    one = (lambda m: (exact(m[0]), exact(m[1]), exact(m[2]), exact(m[3]), m[4]))
    mlp_s = None if mlp is None else (one(mlp) if isinstance(mlp[-1], str) else [one(m) for m in mlp])
    num = (lambda v: None if v is None else (sp.Rational(float(v)) if not isinstance(v, (list, tuple))
                                             else [sp.Rational(float(e)) for e in v]))
    v = block_particle_field(kind, pts, particle, heads, scale=scale, mlp=mlp_s, causal=causal, alibi=num(alibi),
                             rope=num(rope), labels=None if labels is None else num(list(labels)))
    args = [c for p in pts for c in p] + [sym.beta]
    names = [f"x{j + 1}_{a + 1}" for j in range(n) for a in range(d)] + ["beta"]
    return compile_function(f"block_velocity_{kind}", args, tuple(v), doc="velocity of one particle of the "
                            "transformer block (theory.architectures.block_particle_field)", arg_names=names)
