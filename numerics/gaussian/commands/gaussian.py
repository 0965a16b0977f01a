"""``attnflow gaussian``: solve the Gaussian moment ODE (softmax, L2, Sinkhorn attention in R^d), optionally
against a particle simulation, and plot covariance ellipses."""
from __future__ import annotations


import numpy as np

from numerics.common.plots import save_figure
from numerics.common.errors import InputError, require_int, require_real
from numerics.common.readers import json_array
from numerics.gaussian.names import ATTENTIONS
from numerics.common.provenance import StderrProgress, package_versions
from numerics.common.render import emit, fmt, key_values

NAME = "gaussian"
ORDER = 60
HELP = "Gaussian solutions in R^d: mean and covariance ODEs for softmax, L2 and Sinkhorn attention"
DESCRIPTION = (HELP + ". Conventions (arXiv 2501.18322): w = exp(y^T A x) (softmax, Sinkhorn), "
               "w = exp(-|Qx - Ky|^2/2) (L2), time = depth. Matrices are JSON arrays.")
#: RK4 steps per unit time for --particles (error O(h^4), far below the sampling error)
PARTICLE_STEPS_PER_UNIT_TIME = 8


def add_arguments(p):
    p.add_argument("--attention", required=True, choices=ATTENTIONS)
    p.add_argument("--d", required=True, type=int, help="dimension of the token space R^d")
    p.add_argument("--A", help="JSON d x d matrix A = K^T Q (softmax, sinkhorn), used as given (no 1/sqrt(d); "
                   "--heads divides by sqrt(k): docs/conventions.md, section 11)")
    p.add_argument("--V", help="JSON d x d value matrix (required unless --heads)")
    p.add_argument("--heads", metavar="FILE.npz", help="softmax only: several heads, arrays Q, K, V, W each "
                   "(H, k, d); head h has A_h = K_h^T Q_h / sqrt(k) and value map W_h^T V_h, velocities summed")
    p.add_argument("--Q", help="JSON d x d query matrix (l2)")
    p.add_argument("--K", help="JSON d x d key matrix (l2)")
    p.add_argument("--mean", required=True, help="JSON vector alpha_0")
    p.add_argument("--cov", required=True, help="JSON symmetric positive-definite d x d matrix Sigma_0")
    p.add_argument("--t-end", required=True, type=float, help="final time (depth)")
    p.add_argument("--particles", type=int, help="also simulate N tokens drawn from N(mean, cov) (RK4)")
    p.add_argument("--seed", type=int, default=0, help="seed of the particle sample (default 0)")
    p.add_argument("--W", help="softmax only: JSON d x d matrix of an affine feed-forward layer W x + c added to the "
                   "field (arXiv 2606.07600); prints the constant-parameter regime when V is a multiple of I")
    p.add_argument("--c", help="with --W: JSON bias vector c of the feed-forward layer (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--plot", help="write covariance ellipses over time (and the particle cloud) to FILE.png")


def run(args) -> int:
    from numerics.gaussian.solutions import (compare_particles_to_ode, gaussian_attention, simulate_particles,
                                             solve_moment_ode)
    from numerics.gaussian.verdict import particle_verdict

    d = require_int(args.d, "--d", minimum=1)
    t_end = require_real(args.t_end, "--t-end", minimum=0.0)
    if args.W is not None or args.c is not None:
        return _feed_forward(args, d, t_end)
    mats = {k: json_array(getattr(args, k), k) for k in ("A", "V", "Q", "K")}
    if args.heads:
        given = [f"--{k}" for k, v in mats.items() if v is not None]
        if args.attention != "softmax" or given:
            raise InputError("--heads needs --attention softmax and replaces "
                             + (", ".join(given) if given else "--A and --V"))
        model = _heads_model(args.heads, d)
    else:
        if mats["V"] is None:
            raise InputError("--V is required (or --heads FILE.npz with --attention softmax)")
        model = gaussian_attention(args.attention, d, **mats)
    mean, cov = json_array(args.mean, "mean"), json_array(args.cov, "cov")
    sol = solve_moment_ode(model, mean, cov, t_end)
    payload = {"attention": args.attention, "d": d, "t_end": t_end, "status": sol.status,
               "time": float(sol.times[-1]), "mean": sol.final_mean, "cov": sol.final_cov,
               "blowup_time": sol.blowup_time, "conventions": "arXiv 2501.18322; time = depth",
               "parameters": model.to_dict(), "solver": sol.meta, "versions": package_versions()}
    pairs = [("attention", args.attention), ("status", sol.status), ("time", float(sol.times[-1])),
             ("mean", sol.final_mean), ("cov", sol.final_cov.ravel()),
             ("blowup_time", "none" if sol.blowup_time is None else fmt(sol.blowup_time))]
    run_ = None
    if args.particles is not None:
        n = require_int(args.particles, "--particles", minimum=2)
        seed = require_int(args.seed, "--seed", minimum=0)
        t_sim = float(sol.times[-1])
        steps = max(1, int(np.ceil(PARTICLE_STEPS_PER_UNIT_TIME * t_sim)))
        run_ = simulate_particles(model, mean, cov, t_sim, n=n, steps=steps, seed=seed, method="rk4",
                                  progress=StderrProgress("gaussian particles"))
        cmp = compare_particles_to_ode(model, run_, mean, cov)
        verdict, why = particle_verdict(cmp, args.attention)
        payload["particles"] = {"n": n, "seed": seed, "steps": steps, "t": t_sim, "mean": cmp["mean"],
                                "cov": cmp["cov"],
                                "max_deviation_in_standard_errors": cmp["max_deviation_in_standard_errors"],
                                "motion_in_standard_errors": cmp["motion_in_standard_errors"],
                                "k": cmp["k"], "standard_error_method": cmp["standard_error_method"],
                                "verdict": verdict, "reasoning": why}
        pairs += [("particles", n), ("particle mean", cmp["mean"]), ("particle cov", cmp["cov"].ravel()),
                  ("max deviation (SE)", cmp["max_deviation_in_standard_errors"]),
                  ("prediction moved (SE)", cmp["motion_in_standard_errors"]), ("verdict", verdict),
                  ("why", why)]
    if args.plot:
        _plot(args.plot, sol, run_)
        payload["plot"] = args.plot
    emit(args, payload, key_values(pairs))
    return 0


def _feed_forward(args, d: int, t_end: float) -> int:
    """Softmax attention plus W x + c: the moment ODE (numerics.gaussian.ffn) and, for V = v I, the regime."""
    from numerics.gaussian.ffn import blowup_time, ffn_regime, solve_ffn_moments
    from numerics.gaussian.solutions import gaussian_attention, require_covariance, require_mean

    if args.W is None:
        raise InputError("--c needs --W (the feed-forward layer is W x + c)")
    if args.attention != "softmax" or args.heads or args.particles is not None or args.Q or args.K:
        raise InputError("--W takes --attention softmax with --A and --V (no --heads, --particles, --Q, --K)")
    if args.A is None or args.V is None:
        raise InputError("--W needs --A and --V")
    model = gaussian_attention("softmax", d, A=json_array(args.A, "A"), V=json_array(args.V, "V"))
    W = json_array(args.W, "W")
    if W.shape != (d, d) or not np.all(np.isfinite(W)):
        raise InputError(f"--W must be a finite {d}x{d} matrix, got shape {W.shape}")
    c = np.zeros(d) if args.c is None else require_mean(json_array(args.c, "c"), d, "c")
    mean = require_mean(json_array(args.mean, "mean"), d)
    cov = require_covariance(json_array(args.cov, "cov"), d)
    sol = solve_ffn_moments(model.A, model.V, W, c, mean, cov, t_end, blowup_norm=1e12)
    v = float(model.V[0, 0])
    scalar_v = bool(np.array_equal(model.V, v * np.eye(d)))
    regime = ffn_regime(model.A, v, W) if scalar_v else None
    t_star = blowup_time(cov, model.A, v, W, t_max=t_end) if scalar_v and sol.status == "blow-up" else None
    payload = {"attention": "softmax", "feed_forward": {"W": W.tolist(), "c": c.tolist()}, "d": d, "t_end": t_end,
               "status": sol.status, "time": float(sol.times[-1]), "mean": sol.means[-1], "cov": sol.covs[-1],
               "blowup_time": t_star, "regime": None if regime is None else regime.kind,
               "Sigma_star": None if regime is None or regime.Sigma_star is None else regime.Sigma_star.tolist(),
               "conventions": "arXiv 2501.18322 + feed-forward W x + c (arXiv 2606.07600); time = depth",
               "parameters": model.to_dict(), "versions": package_versions()}
    pairs = [("attention", "softmax + feed-forward W x + c"), ("status", sol.status),
             ("time", float(sol.times[-1])), ("mean", sol.means[-1]), ("cov", sol.covs[-1].ravel()),
             ("blowup_time", "none" if t_star is None else fmt(t_star)),
             ("covariance regime (V = v I)", "- (V is not a multiple of I)" if regime is None else regime.kind)]
    if regime is not None and regime.Sigma_star is not None:
        pairs.append(("Sigma* = P*^-1", regime.Sigma_star.ravel()))
    if args.plot:
        _plot(args.plot, sol, None)
        payload["plot"] = args.plot
    emit(args, payload, key_values(pairs))
    return 0


def _heads_model(path, d: int):
    """GaussianHeads from a heads file: A_h = scale K_h^T Q_h, V_h = W_h^T V_h (numerics.core.blocks.MultiHead)."""
    from numerics.core.blocks import MultiHead
    from numerics.gaussian.solutions import gaussian_heads

    heads = MultiHead.load(path)
    if heads.d != d:
        raise InputError(f"heads file {path} acts on R^{heads.d}, but --d is {d}")
    return gaussian_heads(np.transpose(heads.score_maps, (0, 2, 1)), heads.value_maps)


def _plot(path, sol, run_):
    """Two panels that stay readable when the mean drifts far away (e.g. to 1e20) or Sigma blows up.

    Left: the 2-sd covariance ellipses of (x_1, x_2) centred on the current mean (the shape of Sigma(t); the
    particle cloud, if any, is centred on its own mean). Right: the eigenvalues of Sigma(t) and |alpha(t)|
    against t on a log axis.
    """
    import matplotlib.pyplot as plt

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 5))
    if run_ is not None:
        Y = run_.X[:, :2] if run_.X.shape[1] >= 2 else np.column_stack([run_.X[:, 0], np.zeros(len(run_.X))])
        Y = Y - Y.mean(axis=0)
        ax.scatter(Y[:, 0], Y[:, 1], s=1, alpha=0.3, color="0.5", label=f"particles at t = {run_.times[-1]:.3g}")
    idx = np.unique(np.linspace(0, len(sol.times) - 1, 6).astype(int))
    colors = plt.cm.viridis(np.linspace(0, 1, len(idx)))
    theta = np.linspace(0, 2 * np.pi, 200)
    reach = 0.0
    for c, i in zip(colors, idx):
        S = sol.covs[i]
        if S.shape[0] == 1:
            S = np.diag([S[0, 0], 0.0])
        w, U = np.linalg.eigh(S[:2, :2])
        pts = U @ (2 * np.sqrt(np.clip(w, 0, None))[:, None] * np.vstack([np.cos(theta), np.sin(theta)]))
        ax.plot(pts[0], pts[1], color=c, label=f"t = {sol.times[i]:.3g} (2 sd)")
        reach = max(reach, float(np.max(np.abs(pts))) if np.all(np.isfinite(pts)) else reach)
    if reach > 0:  # the ellipses set the frame (a particle cloud far wider, e.g. from round-off, is cut)
        ax.set_xlim(-1.3 * reach, 1.3 * reach)
        ax.set_ylim(-1.3 * reach, 1.3 * reach)
    ax.set_xlabel("x_1 - alpha_1(t)")
    ax.set_ylabel("x_2 - alpha_2(t)")
    ax.set_aspect("equal", adjustable="box")
    ax.legend(fontsize=7)
    ax.set_title("covariance ellipses, centred on the mean", fontsize=10)
    eig = np.linalg.eigvalsh(sol.covs)  # (T, d), ascending
    for j in range(eig.shape[1]):
        ax2.plot(sol.times, np.abs(eig[:, j]), label=f"eigenvalue {j + 1} of Sigma(t)")
    ax2.plot(sol.times, np.linalg.norm(sol.means, axis=1), "k--", label="|alpha(t)| (mean)")
    ax2.set_yscale("log")
    ax2.set_xlabel("t (depth)")
    ax2.legend(fontsize=7)
    ax2.set_title("spectrum of Sigma(t) and size of the mean", fontsize=10)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
