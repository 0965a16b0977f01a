"""``attnflow frank-wolfe``: hardmax (and fixed-temperature) attention layers as Frank-Wolfe steps
(Alcalde, Geshkovski, Ruiz-Balet, arXiv 2508.09628): cells, contraction, persistence."""
from __future__ import annotations

import math

import numpy as np

from numerics.common.errors import InputError, require_int, require_real
from numerics.common.readers import comma_list, json_array
from numerics.common.render import emit, key_values, table

NAME = "frank-wolfe"
ORDER = 63
HELP = "hardmax attention layers as Frank-Wolfe steps (arXiv 2508.09628): Voronoi cells, NSD contraction, persistence"
DESCRIPTION = (HELP + ". Layers z_i <- z_i + step (m_beta(z_i) - z_i), m_inf = the token maximising z_j^T A z_i "
               "(A = K^T Q). Tokens: --polygon K (K vertices on the unit A-sphere, d = 2, plus --n interior tokens), "
               "--n (N(0, I_d)) or --init FILE.npy.")


def _beta(text: str) -> float:
    """'inf' (hardmax, the default) or a non-negative number."""
    if str(text).strip().lower() in ("inf", "infinity", "hardmax"):
        return math.inf
    return require_real(text, "--beta", minimum=0.0)


def _betas(text: str) -> list[float]:
    values = comma_list(text, "--persistence")
    if len(values) > 12:
        raise InputError("--persistence takes 1 to 12 inverse temperatures")
    return [require_real(v, "--persistence value", minimum=1.0, maximum=60.0) for v in values]


#: the largest |score| z_j^T A z_i allowed: far below the float64 maximum (1.8e308), so sums of scores, the
#: symmetric part (A + A^T) / 2 and its eigenvalues stay finite
MAX_SCORE = 1e300


def _check_scale(A: np.ndarray, Z: np.ndarray) -> None:
    """Refuse an ``A`` and tokens whose scores overflow float64, before any layer: |z_j^T A z_i| <= d max|A_kl|
    max|z|^2, and (A + A^T) / 2 needs 2 max|A_kl| finite; overflowing scores turn into inf - inf = NaN, i.e.
    ``null`` eigenvalues and a definiteness of "zero" in the output."""
    a = float(np.max(np.abs(A)))
    z = float(np.max(np.abs(Z))) if Z.size else 0.0
    bound = 2.0 * A.shape[0] * a * max(1.0, A.shape[0] * z * z)
    if not bound <= MAX_SCORE:
        raise InputError(f"--A (largest entry {a:.3g}) with tokens up to {z:.3g} in size gives scores z^T A z "
                         f"beyond float64's range (about {bound:.3g} > {MAX_SCORE:g}): scale A or the tokens down")


def add_arguments(p):
    p.add_argument("--A", required=True, help="JSON d x d matrix A = K^T Q (symmetric for the Frank-Wolfe statements)")
    p.add_argument("--d", type=int, default=None, help="dimension (default: from --A)")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--polygon", type=int, help="d = 2: this many vertices on the unit A-sphere at jittered equally "
                                                 "spaced angles, plus --n interior tokens at cell margin 0.1 "
                                                 "(default: not used)")
    src.add_argument("--init", help="initial tokens: an (n, d) array in a .npy file")
    p.add_argument("--n", type=int, default=None, help="tokens from N(0, I_d) (default 20; with --polygon: interior "
                                                       "tokens)")
    p.add_argument("--seed", type=int, default=0, help="seed of the tokens (default 0)")
    p.add_argument("--beta", default="inf", help="inverse temperature; 'inf' is hardmax (default inf)")
    p.add_argument("--step", type=float, default=0.2, help="layer step in (0, 1] (default 0.2)")
    p.add_argument("--layers", type=int, default=50, help="number of layers (default 50)")
    p.add_argument("--persistence", metavar="BETAS", help="comma-separated betas: escape times of the vertex "
                                                          "clusters of the continuous flow (with --polygon; "
                                                          "default: not run)")
    p.add_argument("--out", help="write layers and tokens to FILE.npz (default: not written)")
    p.add_argument("--json", action="store_true", help="print one JSON object (default: a table)")
    p.add_argument("--plot", metavar="FILE.png", help="draw the tokens' paths and the cells (d = 2; default: none)")


def _tokens(args, A: np.ndarray, d: int) -> np.ndarray:
    from numerics.common.limits import check_array
    from numerics.rd.commands.rd import load_tokens
    from numerics.rd.frank_wolfe import polygon_tokens

    if args.init is not None:
        return load_tokens(args.init, d)
    n = require_int(20 if args.n is None else args.n, "--n", minimum=1 if args.polygon else 2, maximum=100_000)
    seed = require_int(args.seed, "--seed", minimum=0)
    if args.polygon is not None:
        k = require_int(args.polygon, "--polygon", minimum=3, maximum=64)
        if d != 2:
            raise InputError(f"--polygon places vertices in the plane: --A must be 2 x 2, got d = {d}")
        if not np.all(np.linalg.eigvalsh(0.5 * (A + A.T)) > 0):
            raise InputError("--polygon needs A positive definite (vertices on the unit A-sphere)")
        # K roughly equally spaced angles (each moved by up to 0.3 of the spacing), turned by a seeded angle
        rng = np.random.default_rng(seed)
        angles = 2 * np.pi * (np.arange(k) + rng.uniform(-0.3, 0.3, k)) / k + rng.uniform(0, 2 * np.pi)
        return polygon_tokens(angles, n, seed, A=0.5 * (A + A.T), margin=0.1)
    check_array((n, d), f"{n} tokens in R^{d}", copies=4)
    return np.random.default_rng(seed).standard_normal((n, d))


def run(args) -> int:
    from numerics.common.provenance import StderrProgress, atomic_write, package_versions
    from numerics.rd.consensus import iterate_layers
    from numerics.rd.frank_wolfe import (
        b_diameter,
        definiteness,
        nsd_contraction_factor,
        persistence_run,
        voronoi_cells,
        voronoi_prediction,
    )

    if args.plot and not args.plot.lower().endswith(".png"):
        raise InputError(f"--plot must name a .png file, got {args.plot!r}")
    A = json_array(args.A, "A")
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] < 1:
        raise InputError(f"--A must be a square matrix, got shape {A.shape}")
    d = A.shape[0] if args.d is None else require_int(args.d, "--d", minimum=1)
    if A.shape != (d, d):
        raise InputError(f"--A must be {d} x {d}, got {A.shape}")
    beta = _beta(args.beta)
    step = require_real(args.step, "--step", minimum=0.0, maximum=1.0, strict_minimum=True)
    layers = require_int(args.layers, "--layers", minimum=1, maximum=10_000_000)
    if args.persistence and args.polygon is None:
        raise InputError("--persistence needs --polygon (vertex clusters to follow)")
    persistence_betas = _betas(args.persistence) if args.persistence else None  # checked before any layer runs
    Z0 = _tokens(args, A, d)
    _check_scale(A, Z0)
    n = len(Z0)
    kind = definiteness(A)
    k, frames = iterate_layers(Z0, A, beta, step, layers, every=max(1, layers // 200),
                               progress=StderrProgress("frank-wolfe", unit="layer "))
    ZT = frames[-1]
    spread0 = float(np.ptp(Z0, axis=0).max()) or 1.0
    payload = {"A": A.tolist(), "d": d, "n": n, "beta": "inf" if math.isinf(beta) else beta, "step": step,
               "layers": layers, "definiteness": kind["kind"], "symmetric": kind["symmetric"],
               "eigenvalues_sym_A": kind["eigenvalues"], "final_spread": float(np.ptp(ZT, axis=0).max()),
               "final_mean": ZT.mean(axis=0).tolist(), "versions": package_versions()}
    pairs = [("A definiteness", f"{kind['kind']} ({'symmetric' if kind['symmetric'] else 'not symmetric'})"),
             ("d, n", f"{d}, {n}"), ("beta", payload["beta"]), ("step, layers", f"{step:g}, {layers}")]
    cells = None
    if n > d:
        try:
            cells = voronoi_cells(Z0, A)
        except InputError:
            cells = None
    if cells is not None:
        payload.update(vertices=cells["vertices"], self_inclusive=cells["self_inclusive"],
                       all_self_inclusive=cells["all_self_inclusive"])
        pairs += [("hull vertices", cells["vertices"]), ("all self-inclusive", cells["all_self_inclusive"])]
        if kind["kind"] == "psd" and cells["all_self_inclusive"] and math.isinf(beta):
            dev = float(np.max(np.abs(frames - voronoi_prediction(Z0, A, step, k)))) / spread0
            payload["closed_form_deviation"] = dev
            pairs.append(("deviation from v + (1-step)^k (z - v)", dev))
    if kind["kind"] == "nsd" and kind["symmetric"]:
        B = -0.5 * (A + A.T)
        D = np.array([b_diameter(F, B) for F in frames])
        live = D[:-1] > 1e-10 * D[0]
        per_layer = (D[1:][live] / D[:-1][live]) ** (1.0 / np.diff(k)[live]) if live.any() else np.array([])
        payload.update(b_diameter_initial=float(D[0]), b_diameter_final=float(D[-1]),
                       worst_ratio_per_layer=float(per_layer.max()) if per_layer.size else None,
                       bound_per_layer=nsd_contraction_factor(step),
                       limit_distance_to_origin=float(np.linalg.norm(ZT.mean(axis=0))))
        pairs += [("B-diameter initial / final", f"{D[0]:.6g} / {D[-1]:.6g}"),
                  ("worst ratio per layer (bound)",
                   f"{payload['worst_ratio_per_layer']:.6g} ({payload['bound_per_layer']:.6g})"
                   if per_layer.size else "-"),
                  ("limit distance to origin", payload["limit_distance_to_origin"])]
    pairs += [("final spread", payload["final_spread"])]
    text = key_values(pairs)
    if args.persistence:
        betas = persistence_betas
        progress = StderrProgress("persistence", unit="beta ")
        rows = []
        for i, b in enumerate(betas):
            rows.append(persistence_run(b, Z0, A))
            progress(i + 1, len(betas))
        payload["persistence"] = rows
        show = lambda x: "not reached" if not math.isfinite(x) else x  # noqa: E731
        text += "\n\n" + table([(r["beta"], show(r["escape_full"]), show(r["escape_reduced"]), r["min_gap_at_centres"],
                                 r["gathered_width"], "yes" if r["gathered_width"] <= 0.05 else "no") for r in rows],
                               ["beta", "escape (particles)", "escape (clusters)", "min gap", "gathered width",
                                "gathered"])
        if len(rows) >= 2 and all(math.isfinite(r["escape_full"]) for r in rows):
            slope = float(np.polyfit(betas, np.log([r["escape_full"] for r in rows]), 1)[0])
            payload["log_escape_slope"] = slope
            text += f"\nlog(escape time) grows like {slope:.4g} beta (vertex logit gap " \
                    f"{float(np.min(_vertex_gap(Z0, A))):.4g})"
    if args.out:
        try:
            atomic_write(args.out, lambda tmp: np.savez_compressed(tmp, layers=k, Z=frames, Z0=Z0, A=A),
                         suffix=".npz")
        except OSError as exc:
            raise InputError(f"cannot write --out {args.out!r}: {exc}") from None
        payload["out"] = args.out
    if args.plot:
        if d != 2:
            raise InputError("--plot draws d = 2 tokens only")
        _plot(args.plot, frames, cells, A)
        payload["plot"] = args.plot
    emit(args, payload, text)
    return 0


def _vertex_gap(Z0, A):
    from numerics.rd.frank_wolfe import logit_gaps, voronoi_cells

    return logit_gaps(Z0[voronoi_cells(Z0, A)["vertices"]], A)


def _plot(path: str, frames: np.ndarray, cells: dict | None, A: np.ndarray) -> None:
    import matplotlib.pyplot as plt

    from numerics.common.plots import save_figure

    fig, ax = plt.subplots(figsize=(5.5, 5.5))
    Z0 = frames[0]
    if cells is not None:
        V = Z0[cells["vertices"]]
        lo, hi = Z0.min(axis=0) - 0.1, Z0.max(axis=0) + 0.1
        g = np.stack(np.meshgrid(np.linspace(lo[0], hi[0], 300), np.linspace(lo[1], hi[1], 300)), axis=-1)
        lab = np.argmax((g.reshape(-1, 2) @ A.T) @ V.T, axis=1).reshape(300, 300)
        ax.contourf(g[..., 0], g[..., 1], lab, levels=np.arange(len(V) + 1) - 0.5, cmap="Pastel1", alpha=0.6)
        from scipy.spatial import ConvexHull

        hv = V[ConvexHull(V).vertices] if len(V) > 2 else V
        ax.plot(*np.vstack([hv, hv[:1]]).T, "k-", lw=0.8)
        ax.scatter(*V.T, s=40, facecolors="none", edgecolors="k", label="hull vertices")
    for i in range(frames.shape[1]):
        ax.plot(frames[:, i, 0], frames[:, i, 1], "-", lw=0.7, color="tab:blue", alpha=0.7)
    ax.scatter(*frames[-1].T, s=8, color="tab:red", label="last layer", zorder=3)
    ax.set_aspect("equal")
    ax.legend(loc="best", fontsize=8)
    ax.set_title("hardmax layers (Frank-Wolfe steps) and the cells of the vertices")
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
