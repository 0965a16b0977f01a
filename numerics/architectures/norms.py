"""Experiments on the normalisation schemes (Karagodin, Ge, Polyanskiy, Rigollet, arXiv 2510.22026).

The schemes run in the core (``Model(norm=...)``, :mod:`numerics.core.norms`); this module measures what is
claimed about them, each by two routes:

- :func:`post_exact_rows`: ``Model(norm="post")`` is the existing flow bit for bit, and the (theta, r) code path
  pinned to the post-LN laws (block output + generated laws) integrates the same ODE as the sphere field;
- :func:`layer_order_rows`: each scheme's own layer map (its definition) converges at order 1 to the field
  derived from it by h -> 0 (the derivation checked numerically);
- :func:`equiangular_rows`: particles from an equiangular start against the reduced (s, r) ODE emitted from
  :mod:`theory.normalization`;
- :func:`closed_form_rows`: near the cluster, the linearised closed forms (e^{-2t}, (r_0/(r_0 + t))^2, ...)
  against the reduced ODE and the particles, and the decay exponents fitted on them;
- :func:`deep_collapse_rows`: iid uniform tokens at depth T: which schemes keep 1 - <theta_i, theta_j> away from 0;
- :func:`centering_rows`: the literal LayerNorm layer (mean subtraction, division by the norm) against the
  centred ODE.
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from numerics.core.model import Model, SaveAt, Solver
from numerics.core.norms import NormField, RadialRun
from numerics.core.trajectory import simulate, uniform_sphere

#: the schemes with the parameters the experiments use (nGPT's alpha and the Mix-LN switch chosen to show them)
SCHEME_PARAMETERS = {"post": {}, "pre": {"radius0": 1.5}, "peri": {"radius0": 1.5},
                     "mix": {"norm_switch": 1.0}, "ngpt": {"norm_alpha": 0.5}, "sqrt": {"norm_scale": 2.0},
                     "lnscale": {"radius0": 1.5, "norm_scale": 2.0}}
#: a tight adaptive solver for references
TIGHT = Solver("adaptive", rtol=1e-12, atol=1e-14, backend="direct")


def scheme_model(norm: str, kind: str = "sa", beta: float = 1.0, **extra) -> Model:
    """``Model(kind, beta, norm=norm, **SCHEME_PARAMETERS[norm], **extra)``."""
    return Model(kind, beta, norm=norm, **{**SCHEME_PARAMETERS[norm], **extra})


def equiangular_start(n: int, d: int, rho: float, seed: int = 0) -> np.ndarray:
    """n unit vectors of R^d (d >= n) with all pairwise inner products rho, randomly rotated.

    x_i = sqrt(1 - rho) e_i + (sqrt(1 - rho + n rho) - sqrt(1 - rho)) / n * 1 (the first n coordinates), so
    <x_i, x_j> = rho and |x_i| = 1 (the Gram matrix (1 - rho) I + rho 1 1^T); then a random orthogonal map.
    """
    if d < n:
        raise ValueError(f"an equiangular start needs d >= n, got n={n}, d={d}")
    a = np.sqrt(1.0 - rho)
    b = (np.sqrt(1.0 - rho + n * rho) - a) / n
    X = np.zeros((n, d))
    X[:, :n] = a * np.eye(n) + b
    Qm, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))
    return X @ Qm


def gram_spread(X: np.ndarray) -> tuple[float, float]:
    """(mean, max - min) of the off-diagonal inner products of the rows of X."""
    G = X @ X.T
    off = G[~np.eye(X.shape[0], dtype=bool)]
    return float(off.mean()), float(off.max() - off.min())


def mean_gap(X: np.ndarray) -> float:
    """Mean over pairs i != j of 1 - <x_i, x_j>, computed as |x_i - x_j|^2 / 2 (unit rows): relative precision
    down to the smallest gaps, where 1 - <x_i, x_j> would cancel to round-off below about 1e-16."""
    n = X.shape[0]
    D = X[:, None, :] - X[None, :, :]
    return float(np.einsum("ijk,ijk->", D, D) / (2.0 * n * (n - 1)))


# -- 1. post-LN is the existing flow ---------------------------------------------------------------------------
def post_exact_rows(seed: int = 3) -> list[dict]:
    """``Model(norm="post")`` vs ``Model()``: identical arrays for every method and for a block model; and the
    (theta, r) path with the post-LN laws (block output, generated laws, RK4) against the sphere field (RK4)."""
    rng = np.random.default_rng(seed)
    d, n = 3, 10
    Q, K, V = (np.eye(d) + 0.4 * rng.standard_normal((d, d)) for _ in range(3))
    X0 = uniform_sphere(n, d, rng)
    rows = []
    cases = [("sa Q,K,V", {"kind": "sa", "beta": 2.0, "Q": Q, "K": K, "V": V}),
             ("usa", {"kind": "usa", "beta": 1.5}), ("sa causal", {"kind": "sa", "beta": 1.0, "causal": True})]
    for label, kw in cases:
        for method in ("layer", "rk4", "adaptive"):
            solver = Solver(method, dt=None if method == "adaptive" else 0.05, backend="direct")
            plain = simulate(Model(**kw), X0, 2.0, solver=solver)
            post = simulate(Model(**kw, norm="post"), X0, 2.0, solver=solver)
            same = (np.array_equal(plain.X, post.X) and np.array_equal(plain.times, post.times)
                    and np.array_equal(plain.energy, post.energy) and post.radius is None)
            rows.append({"case": label, "method": method, "identical": bool(same)})
    for label, kw in cases:
        model = Model(**kw)
        sphere = simulate(model, X0, 2.0, solver=TIGHT, save=SaveAt(times=[0.0, 2.0]))
        run = RadialRun(model, X0)
        field = NormField(model, d, phase="post")
        _, states, _ = run.integrate(field, run.y0, 2.0, "adaptive", rtol=1e-12, atol=1e-14, save_times=[0.0, 2.0])
        rows.append({"case": label, "method": "adaptive rtol 1e-12: (theta, r) path with the post laws vs sphere field",
                     "max_difference": float(np.max(np.abs(states[-1, :, :d] - sphere.X[-1]))),
                     "radius_drift": float(np.max(np.abs(states[:, :, d] - 1.0)))})
    return rows


# -- 2. the layer maps converge to the derived field -----------------------------------------------------------
def layer_order_rows(schemes=("post", "pre", "peri", "mix", "ngpt", "sqrt"), dts=(0.02, 0.01, 0.005),
                     t_end: float = 1.5, seed: int = 5) -> list[dict]:
    """Each scheme's own layer (``method="layer"``, the definition) against a tight adaptive solution of the
    derived field: errors at ``dts`` and the observed order (least-squares slope of log error on log dt)."""
    rng = np.random.default_rng(seed)
    d, n = 4, 6
    Q, K, V = (np.eye(d) + 0.5 * rng.standard_normal((d, d)) for _ in range(3))
    X0 = uniform_sphere(n, d, rng)
    rows = []
    for norm in schemes:
        model = scheme_model(norm, "sa", 1.5, Q=Q, K=K, V=V) if norm != "mix" else \
            scheme_model(norm, "sa", 1.5, Q=Q, K=K, V=V, norm_switch=0.5)
        ref = simulate(model, X0, t_end, solver=TIGHT, save=SaveAt(times=[0.0, t_end]))
        errors = []
        for dt in dts:
            tr = simulate(model, X0, t_end, solver=Solver("layer", dt=dt), save=SaveAt(times=[0.0, t_end]))
            err = max(float(np.max(np.abs(tr.X[-1] - ref.X[-1]))),
                      float(np.max(np.abs(tr.radius[-1] - ref.radius[-1]))) if tr.radius is not None else 0.0)
            errors.append(err)
        order = float(np.polyfit(np.log(dts), np.log(errors), 1)[0])
        rows.append({"norm": norm, "dts": list(dts), "errors": errors, "observed_order": order,
                     "final_radius_range": None if ref.radius is None else
                     [float(ref.radius[-1].min()), float(ref.radius[-1].max())]})
    return rows


# -- 3. equiangular reduction ----------------------------------------------------------------------------------
def reduced_solution(norm: str, kind: str, beta: float, n: int, eps0: float, r0: float, times, model: Model):
    """The equiangular system of :func:`theory.normalization.equiangular_function` in epsilon = 1 - s (emitted
    code), DOP853 at rtol 1e-12 (SciPy; split at the Mix-LN switch, where the right side jumps):
    (epsilon(t), r(t)) at ``times``."""
    from theory.normalization import equiangular_function

    rhs_fn = equiangular_function(norm, kind, "epsilon")
    alpha, tau = model.norm_alpha, model.norm_scale
    switch = np.inf if model.norm_switch is None else model.norm_switch

    def rhs(t, y):
        de, dr = rhs_fn(y[0], y[1], beta, n, alpha, t, switch, tau)
        return [float(de), float(dr)]

    times = np.asarray(times, float)
    breaks = [times[0]] + ([switch] if times[0] < switch < times[-1] else []) + [times[-1]]
    y = [eps0, r0]
    e_out, r_out = np.empty(times.size), np.empty(times.size)
    for a, b in zip(breaks, breaks[1:]):
        mask = (times >= a) & (times <= b)
        sol = solve_ivp(rhs, (a, b), y, method="DOP853", rtol=1e-12, atol=1e-300, t_eval=times[mask])
        e_out[mask], r_out[mask] = sol.y
        y = sol.y[:, -1]
    return e_out, r_out


def equiangular_rows(schemes=("post", "pre", "peri", "mix", "ngpt", "sqrt"), kinds=("sa", "usa"), n: int = 5,
                     d: int = 6, rho0: float = 0.2, beta: float = 1.0, t_end: float = 4.0) -> list[dict]:
    """Particles from an equiangular start (adaptive, rtol 1e-12) against the reduced (s, r) ODE."""
    times = np.linspace(0.0, t_end, 9)
    rows = []
    for norm in schemes:
        for kind in kinds:
            model = scheme_model(norm, kind, beta)
            X0 = equiangular_start(n, d, rho0, seed=1)
            tr = simulate(model, X0, t_end, solver=TIGHT, save=SaveAt(times=times))
            e_red, r_red = reduced_solution(norm, kind, beta, n, 1.0 - rho0, model.radius0, times, model)
            s_red = 1.0 - e_red
            mean_s = np.array([gram_spread(Xk)[0] for Xk in tr.X])
            spread = max(gram_spread(Xk)[1] for Xk in tr.X)
            radius = np.ones((times.size, n)) if tr.radius is None else tr.radius  # post-LN: r = 1
            rows.append({"norm": norm, "kind": kind, "rho_error": float(np.max(np.abs(mean_s - s_red))),
                         "radius_error": float(np.max(np.abs(radius - r_red[:, None]))),
                         "equiangular_spread": spread, "radius_spread": float(np.max(np.ptp(radius, axis=1))),
                         "rho_final": float(s_red[-1]), "radius_final": float(r_red[-1])})
    return rows


# -- 4. closed forms near the cluster and the decay laws -------------------------------------------------------
def closed_form_rows(schemes=("post", "pre", "peri", "mix", "ngpt", "sqrt"), kind: str = "sa", n: int = 4,
                     d: int = 4, eps0: float = 1e-6, beta: float = 1.0, t_end: float = 8.0,
                     particles: bool = True, long_time: float = 1e4) -> list[dict]:
    """Start at epsilon = 1 - rho = eps0 (near the cluster). Route 1: the linearised closed form (emitted from
    :func:`theory.normalization.linearized_closed_form`); route 2: the reduced ODE; route 3: the particles.
    Reported: the largest relative deviations of epsilon between the routes over [0, t_end] (O(eps0) expected:
    the linearisation drops terms of relative size epsilon), and the decay laws measured on the reduced ODE
    up to ``long_time``: the rate of e^{-rate t} (post, ngpt), the exponent of epsilon in r (pre, peri, mix,
    sqrt: the closed form says epsilon proportional to r^{-2}) and the exponent in t over [long_time/10,
    long_time] (the survey's 1/t^2 for pre-LN; 1/t for sqrt)."""
    from theory.normalization import closed_form_function

    times = np.linspace(0.0, t_end, 17)
    rows = []
    for norm in schemes:
        model = scheme_model(norm, kind, beta)
        closed = closed_form_function(norm, kind)
        switch = np.inf if model.norm_switch is None else model.norm_switch
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # mix: numpy.select evaluates both
            values = closed(eps0, model.radius0, beta, n, model.norm_alpha, times, switch, model.norm_scale)
        eps_cf, r_cf = (np.broadcast_to(v, times.shape) for v in values)
        e_red, r_red = reduced_solution(norm, kind, beta, n, eps0, model.radius0, times, model)
        row = {"norm": norm, "kind": kind, "eps0": eps0, "t_end": t_end,
               "closed_vs_ode": float(np.max(np.abs(e_red / eps_cf - 1.0))),
               "radius_closed_vs_ode": float(np.max(np.abs(r_cf - r_red) / r_red))}
        if norm in ("post", "ngpt"):
            late = times >= t_end / 2
            row["law"] = "exp(-rate t)"
            row["fitted"] = float(-np.polyfit(times[late], np.log(e_red[late]), 1)[0])
        else:
            far = np.geomspace(long_time / 10, long_time, 9)
            e_far, r_far = reduced_solution(norm, kind, beta, n, eps0, model.radius0,
                                            np.concatenate([[0.0], far]), model)
            row["law"] = "r^p and t^q"
            row["fitted"] = float(np.polyfit(np.log(r_far[1:]), np.log(e_far[1:]), 1)[0])
            row["fitted_t"] = float(np.polyfit(np.log(far), np.log(e_far[1:]), 1)[0])
        if particles:
            X0 = equiangular_start(n, d, 1.0 - eps0, seed=2)
            tr = simulate(model, X0, t_end, solver=TIGHT, save=SaveAt(times=times))
            eps_p = np.array([mean_gap(Xk) for Xk in tr.X])
            row["particles_vs_closed"] = float(np.max(np.abs(eps_p / eps_cf - 1.0)))
            row["particles_vs_ode"] = float(np.max(np.abs(eps_p / e_red - 1.0)))
        rows.append(row)
    return rows


# -- 5. which schemes resist collapse in deep layers -----------------------------------------------------------
def deep_collapse_rows(schemes=("post", "pre", "peri", "mix", "ngpt", "sqrt"), n: int = 32, d: int = 16,
                       beta: float = 1.0, depth: float = 20.0, seed: int = 0) -> list[dict]:
    """iid uniform tokens, Q = K = V = I: mean 1 - <theta_i, theta_j> (:func:`mean_gap`) at depth/2 and depth,
    and the ratio epsilon(depth)/epsilon(depth/2) against the linearised prediction from the measured radii:
    e^{-2 depth/2} (post), e^{-2 alpha depth/2} (ngpt), (r(depth/2)/r(depth))^2 (pre, peri, mix, sqrt)."""
    X0 = uniform_sphere(n, d, seed)
    half = depth / 2
    rows = []
    for norm in schemes:
        model = scheme_model(norm, "sa", beta)
        tr = simulate(model, X0, depth, solver=Solver("adaptive", rtol=1e-11, atol=1e-14, backend="direct"),
                      save=SaveAt(times=[0.0, half, depth]))
        at = [int(np.argmin(np.abs(tr.times - t))) for t in (0.0, half, depth)]  # mix also saves its switch
        eps = [mean_gap(tr.X[k]) for k in at]
        if norm == "post":
            predicted = float(np.exp(-2.0 * half))
        elif norm == "ngpt":
            predicted = float(np.exp(-2.0 * model.norm_alpha * half))
        else:
            predicted = float((tr.radius[at[1]].mean() / tr.radius[at[2]].mean()) ** 2)
        rows.append({"norm": norm, "one_minus_rho": eps, "times": [0.0, half, depth],
                     "ratio": eps[2] / eps[1], "predicted_ratio": predicted,
                     "final_radius": None if tr.radius is None else float(tr.radius[-1].mean())})
    return rows


# -- 6. LayerNorm Scaling: the literal layer -----------------------------------------------------------------
def lnscale_literal_rows(seed: int = 11, n: int = 6, d: int = 4, steps: int = 5, h: float = 0.3) -> list[dict]:
    """The literal LayerNorm Scaling layer x <- x + h A_beta(N(x) / sqrt(l)) (attention fed the scaled LN output,
    logits and values computed from it by :func:`numerics.core.blocks.block_velocity`) against
    ``NormField.layer`` (attention at beta / l, branch factor 1/sqrt(l)), layer by layer from a random start
    with per-token radii, for one head (Q, K, V) and two heads, sa and usa, with and without causal mask."""
    from numerics.core.blocks import MultiHead, block_velocity

    rng = np.random.default_rng(seed)
    rows = []
    for kind in ("sa", "usa"):
        for heads_count, causal in ((1, False), (2, True)):
            k = d if heads_count == 1 else 2
            heads = MultiHead(*(np.eye(d)[None, :k, :] + 0.4 * rng.standard_normal((heads_count, k, d))
                                for _ in range(3)), rng.standard_normal((heads_count, k, d)) * 0.5 + np.eye(d)[None, :k])
            model = Model(kind, 1.3, heads=heads, causal=causal, norm="lnscale", norm_scale=1.5,
                          radius0=rng.uniform(0.5, 2.0, n))
            X0 = uniform_sphere(n, d, rng)
            run = RadialRun(model, X0)
            Y = run.y0
            start_ok = bool(np.array_equal(Y[:, d], model.radius0))  # the per-token radii, in token order
            X = Y[:, :d] * Y[:, d:]
            worst = 0.0
            for step in range(steps):
                t = step * h
                ell = 1.0 + t / model.norm_scale
                U = X / np.linalg.norm(X, axis=1, keepdims=True)
                X = X + h * block_velocity(U / np.sqrt(ell), model.block_heads(d), model.beta, kind, None, causal,
                                           project=False)
                Y = run.field.layer(Y, h, t)
                worst = max(worst, float(np.max(np.abs(Y[:, :d] * Y[:, d:] - X))))
            rows.append({"kind": kind, "heads": heads_count, "causal": causal, "max_difference": worst,
                         "start_radii_are_radius0": start_ok,
                         "final_radius_range": [float(Y[:, d].min()), float(Y[:, d].max())]})
    return rows


def literal_layer_rows(schemes=("post", "pre", "peri", "ngpt", "mix"), seed: int = 5, n: int = 6, d: int = 4,
                       steps: int = 4, h: float = 0.3) -> list[dict]:
    """Each scheme's layer written out from its definition, x the token (direction times radius) and A the
    attention output of :func:`numerics.core.blocks.block_velocity` (general Q, K, V; ``project=False``) at N(x):

    post x <- N(x + h A(x)), pre x <- x + h A(N(x)), peri x <- x + h N(A(N(x))), ngpt x <- N(x + h alpha (N(A) - x)),
    mix post for layers starting before the switch time (here 0.5: two layers of each), pre after

    (N the normalisation to the unit sphere), against ``NormField.layer`` layer by layer from a random start with
    per-token radii (pre, peri; post and nGPT keep unit tokens). A large step (h = 0.3) makes the second-order
    terms that distinguish a map from another with the same flow (e.g. N(x + h P_x A)) about 1e-2."""
    from numerics.core.blocks import block_velocity

    rng = np.random.default_rng(seed)
    Q, K, V = (np.eye(d) + 0.4 * rng.standard_normal((d, d)) for _ in range(3))
    X0 = uniform_sphere(n, d, rng)
    radii = rng.uniform(0.5, 2.0, n)
    rows = []
    for norm in schemes:
        extra = {"ngpt": {"norm_alpha": 0.5}, "mix": {"norm_switch": 0.5}}.get(norm, {})
        model = Model("sa", 1.3, Q=Q, K=K, V=V, norm=norm,
                      radius0=radii if norm in ("pre", "peri") else 1.0, **extra)
        run = RadialRun(model, X0)
        Y = run.y0
        start_ok = bool(np.array_equal(Y[:, d], radii if norm in ("pre", "peri") else np.ones(n)))
        X = Y[:, :d] * Y[:, d:]
        heads = model.block_heads(d)
        worst = 0.0
        for step in range(steps):
            U = X / np.linalg.norm(X, axis=1, keepdims=True)
            A = block_velocity(U, heads, model.beta, "sa", None, False, project=False)
            scheme = norm if norm != "mix" else ("post" if step * h < model.norm_switch else "pre")
            if scheme == "post":
                Z = X + h * A
                X = Z / np.linalg.norm(Z, axis=1, keepdims=True)
            elif scheme == "pre":
                X = X + h * A
            elif scheme == "peri":
                X = X + h * A / np.linalg.norm(A, axis=1, keepdims=True)
            else:  # ngpt
                Z = X + h * model.norm_alpha * (A / np.linalg.norm(A, axis=1, keepdims=True) - X)
                X = Z / np.linalg.norm(Z, axis=1, keepdims=True)
            Y = run.field.layer(Y, h, step * h)
            worst = max(worst, float(np.max(np.abs(Y[:, :d] * Y[:, d:] - X))))
        rows.append({"norm": norm, "steps": steps, "h": h, "max_difference": worst,
                     "start_radii_are_radius0": start_ok})
    return rows


def batch_member_rows(schemes=("pre", "lnscale"), betas=(2.0, -1.0, 0.5), n: int = 7, d: int = 4) -> list[dict]:
    """A batch of three members with their own beta (``Members(beta=...)``) and per-token initial radii
    (``radius0``, one radius per token, the same for every member) against each member's single run: directions
    and radii bit for bit, and the radii of the first frame equal to ``radius0`` in token order (batch and single)."""
    from numerics.core.ensemble import Members

    radii = np.linspace(0.5, 2.0, n)
    starts = np.stack([uniform_sphere(n, d, s) for s in range(1, len(betas) + 1)])
    solver = Solver("rk4", dt=0.05)
    rows = []
    for norm in schemes:
        extra = {"norm_scale": 2.0} if norm == "lnscale" else {}
        batch = simulate(Model("sa", 1.0, norm=norm, radius0=radii, **extra), starts, 0.3, solver=solver,
                         members=Members(beta=list(betas)))
        equal, first = [], [bool(np.array_equal(batch.radius[0, b], radii)) for b in range(len(betas))]
        for b, beta in enumerate(betas):
            single = simulate(Model("sa", beta, norm=norm, radius0=radii, **extra), starts[b], 0.3, solver=solver)
            equal.append(bool(np.array_equal(batch.X[:, b], single.X)
                              and np.array_equal(batch.radius[:, b], single.radius)))
            first.append(bool(np.array_equal(single.radius[0], radii)))
        rows.append({"norm": norm, "betas": list(betas), "members_equal_single_runs": equal,
                     "first_radii_are_radius0": all(first),
                     "radius_spread_at_end": float(np.ptp(batch.radius[-1]))})
    return rows


def lnscale_vs_sqrt(t_end: float = 4.0, seed: int = 4) -> dict:
    """How much the depth-dependent beta changes the trajectory: ``lnscale`` and ``sqrt`` (same branch factor,
    beta fixed) from the same iid start, n = 8, d = 4, beta = 2 (sa): max difference of the directions at t_end."""
    X0 = uniform_sphere(8, 4, seed)
    out = {}
    for norm in ("lnscale", "sqrt"):
        model = Model("sa", 2.0, norm=norm, norm_scale=2.0, radius0=1.5)
        out[norm] = simulate(model, X0, t_end, solver=TIGHT, save=SaveAt(times=[0.0, t_end])).X[-1]
    return {"t_end": t_end, "direction_difference": float(np.max(np.abs(out["lnscale"] - out["sqrt"])))}


# -- 7. LayerNorm with centring --------------------------------------------------------------------------------
def layernorm_pre_layer(X: np.ndarray, h: float, attention) -> np.ndarray:
    """One literal pre-LN layer with LayerNorm: x <- x + h A(LN(x)), LN(x) = (x - mean(x)) / |x - mean(x)|
    (the coordinate mean of each token; unit norm: attnflow's scale convention)."""
    C = X - X.mean(axis=1, keepdims=True)
    return X + h * attention(C / np.linalg.norm(C, axis=1, keepdims=True))


def centering_rows(dts=(0.01, 0.005, 0.0025), t_end: float = 1.0, seed: int = 7) -> list[dict]:
    """The literal LayerNorm pre-LN layer (tokens with a mean component) against ``Model(norm="pre",
    centering=True)``: the centred part's direction and norm converge at order 1; the mean component is passive
    (two starts differing only along (1, ..., 1) give the same centred trajectory); RMSNorm differs."""
    from numerics.core.blocks import MultiHead, block_velocity

    rng = np.random.default_rng(seed)
    d, n = 4, 5
    Q, K, V = (np.eye(d) + 0.5 * rng.standard_normal((d, d)) for _ in range(3))
    X0 = uniform_sphere(n, d, rng) * rng.uniform(1.0, 2.0, (n, 1))
    model = Model("sa", 1.0, Q=Q, K=K, V=V, norm="pre", centering=True)
    heads = MultiHead.from_single(Q, K, V, d=d)

    def attention(U):
        return block_velocity(U, heads, 1.0, "sa", project=False)

    C0 = X0 - X0.mean(axis=1, keepdims=True)
    radius0 = np.linalg.norm(C0, axis=1)
    run = RadialRun(model, X0, radius0)
    _, states, _ = run.integrate(run.field, run.y0, t_end, "adaptive", rtol=1e-12, atol=1e-14,
                                 save_times=[0.0, t_end])
    ref_dir, ref_r = states[-1, :, :d], states[-1, :, d]
    errors, passive = [], []
    for dt in dts:
        for shift in (0.0, 0.7):
            X = X0 + shift
            for _ in range(int(round(t_end / dt))):
                X = layernorm_pre_layer(X, dt, attention)
            C = X - X.mean(axis=1, keepdims=True)
            r = np.linalg.norm(C, axis=1)
            err = max(float(np.max(np.abs(C / r[:, None] - ref_dir))), float(np.max(np.abs(r - ref_r))))
            (errors if shift == 0.0 else passive).append(err)
    rms = Model("sa", 1.0, Q=Q, K=K, V=V, norm="pre")
    rms_run = RadialRun(rms, C0 / radius0[:, None], radius0)
    _, rms_states, _ = rms_run.integrate(rms_run.field, rms_run.y0, t_end, "adaptive", rtol=1e-12, atol=1e-14,
                                         save_times=[0.0, t_end])
    order = float(np.polyfit(np.log(dts), np.log(errors), 1)[0])
    return [{"dts": list(dts), "errors": errors, "observed_order": order,
             "shifted_start_errors": passive, "shift_effect": float(max(abs(a - b) for a, b in zip(errors, passive))),
             "rmsnorm_difference": float(np.max(np.abs(rms_states[-1, :, :d] - ref_dir)))}]
