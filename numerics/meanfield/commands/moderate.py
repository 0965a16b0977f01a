"""``attnflow moderate``: the three phases of the moderate interaction regime (arXiv 2509.25040): alignment along
the Oja flow of V, clustering at the l_max mode, pairing of the closest clusters."""
from __future__ import annotations

import math

import numpy as np

from numerics.common.errors import InputError, require_int, require_real
from numerics.common.readers import json_array
from numerics.common.render import emit, key_values, table

NAME = "moderate"
ORDER = 56
HELP = "moderate interaction regime (arXiv 2509.25040): alignment, clustering and pairing phases with time scales"
DESCRIPTION = (HELP + ". --phase alignment: sa on S^{d-1} with value matrix --V against the Oja flow; clustering: "
               "n uniform tokens on S^1, formation time against the linear prediction; pairing: prepared clusters "
               "on S^1, merge time and speeds against the two-cluster formulas.")


def add_arguments(p):
    p.add_argument("--phase", required=True, choices=("alignment", "clustering", "pairing"),
                   help="which phase to run (required)")
    p.add_argument("--beta", type=float, default=16.0, help="inverse temperature (default 16)")
    p.add_argument("--n", type=int, default=None, help="tokens (default: 20 beta for alignment, 4000 for "
                                                       "clustering)")
    p.add_argument("--seed", type=int, default=0, help="seed of the tokens (default 0)")
    p.add_argument("--V", default="[[1,0,0],[0,1,0],[0,0,-1]]",
                   help="alignment: JSON symmetric d x d value matrix (default diag(1, 1, -1))")
    p.add_argument("--t-end", type=float, default=None, help="alignment: final time (default 2)")
    p.add_argument("--centres", default="[0, 1.0, 2.6]", help="pairing: JSON cluster angles (default [0, 1.0, 2.6])")
    p.add_argument("--sizes", default="[50, 30, 20]", help="pairing: JSON particles per cluster (default [50, 30, 20])")
    p.add_argument("--json", action="store_true", help="print one JSON object (default: a table)")
    p.add_argument("--plot", metavar="FILE.png", help="pairing: cluster angles over time (default: none)")


def run(args) -> int:
    from numerics.common.provenance import StderrProgress, package_versions

    if args.plot and not args.plot.lower().endswith(".png"):
        raise InputError(f"--plot must name a .png file, got {args.plot!r}")
    beta = require_real(args.beta, "--beta", minimum=0.0, strict_minimum=True, maximum=200.0)
    seed = require_int(args.seed, "--seed", minimum=0)
    progress = StderrProgress(f"moderate {args.phase}")
    payload = {"phase": args.phase, "beta": beta, "seed": seed, "versions": package_versions()}
    if args.phase == "alignment":
        from numerics.common.limits import check_work
        from numerics.meanfield.moderate import alignment_run

        V = json_array(args.V, "V")
        if V.ndim != 2 or V.shape[0] != V.shape[1] or V.shape[0] < 2:
            raise InputError(f"--V must be a square matrix of size >= 2, got shape {V.shape}")
        d = V.shape[0]
        n = require_int(args.n if args.n is not None else int(20 * beta), "--n", minimum=2, maximum=10**6)
        t_end = require_real(2.0 if args.t_end is None else args.t_end, "--t-end", minimum=0.0, strict_minimum=True,
                             maximum=1e4)
        check_work(4.0 * (t_end / 0.05 + 1) * (6.0 * n * n * d + 1e5), f"sa with n = {n} on S^{d - 1} to t = {t_end:g}")
        r = alignment_run(n, d, beta, V, t_end, seed=seed, saves=11, progress=progress)
        payload.update(n=n, d=d, V=V.tolist(), times=r["times"].tolist(), rms_distance=r["distance"].tolist(),
                       oja_rms_distance=r["oja_distance"].tolist(), rms_oja_deviation=r["oja_deviation"].tolist(),
                       gap=r["gap"])
        text = key_values([("n, d", f"{n}, {d}"), ("spectral gap of V", r["gap"])]) + "\n\n" + table(
            list(zip(r["times"], r["distance"], r["oja_distance"], r["oja_deviation"])),
            ["t", "rms distance (sa)", "rms distance (Oja)", "rms deviation from Oja"])
    elif args.phase == "clustering":
        from numerics.meanfield.moderate import clustering_run

        n = require_int(args.n if args.n is not None else 4000, "--n", minimum=10, maximum=10**7)
        r = clustering_run(n, beta, seed=seed, threshold=0.1, progress=progress)
        # the formation time's accuracy (issue 43): the same run with step and frames halved. The time interpolates
        # between frames (second order) after RK4 (fourth), so the error of the printed value f(h) is
        # |f(h) - f(h/2)| 2^p/(2^p - 1) <= 2 |f(h) - f(h/2)| for any order p >= 1
        fine = clustering_run(n, beta, seed=seed, threshold=0.1, refine=2, progress=progress)
        r["t_formed_fine"] = fine["t_formed"]
        r["t_formed_error"] = 2.0 * abs(fine["t_formed"] - r["t_formed"])
        r["accuracy"] = ("t_formed_error = 2 |f(h) - f(h/2)|: the run repeated with RK4 step and frames halved "
                         "(bounds the error of f(h) for a method of order >= 1)")
        theta0 = np.random.default_rng(seed).uniform(0, 2 * np.pi, n)
        amp = abs(np.exp(1j * r["l_max"] * theta0).mean())
        r["t_linear"] = math.log(0.1 / amp) / r["lambda_max"]
        payload.update(r)
        same = "same" if (fine["dominant_mode"], fine["clusters"]) == (r["dominant_mode"], r["clusters"]) else \
            f"NOT the same: {fine['dominant_mode']}, {fine['clusters']}"
        text = key_values([("n, beta", f"{n}, {beta:g}"), ("l_max (lambda_max)", f"{r['l_max']} ({r['lambda_max']:.4g})"),
                           ("formation time (max |r_k| = 0.1)", f"{r['t_formed']:.6g} +- {r['t_formed_error']:.1g}"),
                           ("linear prediction log(0.1/|r_lmax(0)|)/lambda_max", r["t_linear"]),
                           ("dominant mode then", r["dominant_mode"]), ("clusters at the end", r["clusters"]),
                           ("accuracy", f"2 x change with step and frames halved ({same} mode and clusters)")])
    else:
        from numerics.common.limits import check_work
        from numerics.meanfield.moderate import pair_merge_time, pairing_run

        centres = json_array(args.centres, "centres").ravel()
        raw = json_array(args.sizes, "sizes").ravel()
        if not np.all(np.isfinite(raw)) or np.any(raw != np.round(raw)):
            raise InputError(f"--sizes must be whole numbers, got {args.sizes!r}")
        sizes = [require_int(int(s), "--sizes entry", minimum=1, maximum=10**6) for s in raw]
        if len(sizes) != centres.size or centres.size < 2:
            raise InputError("--centres and --sizes need the same length, at least 2")
        c = np.sort(np.mod(centres, 2 * np.pi))
        gaps = np.diff(np.r_[c, c[0] + 2 * np.pi])
        j = int(np.argmin(gaps))
        order = np.argsort(np.mod(centres, 2 * np.pi))
        a, b = order[j], order[(j + 1) % len(order)]
        masses = np.array(sizes, float) / sum(sizes)
        pred = pair_merge_time(float(gaps[j]), beta, (masses[a], masses[b]))
        t_end = 1.3 * pred["time"]
        check_work(4.0 * (t_end / 0.1) * (40.0 * sum(sizes) * (beta + 10) + 1e5),
                   f"the pairing run ({sum(sizes)} particles to t = {t_end:.3g})")
        run_ = pairing_run(centres, sizes, beta, t_end, seed=seed, saves=401, progress=progress)
        C = run_["centres"]
        sep = np.abs(C[:, b] - C[:, a])
        hit = np.nonzero(sep <= pred["end_angle"])[0]
        t_merge = float(run_["times"][hit[0]]) if hit.size else math.inf
        # read off the saved frames: the crossing lies in the frame interval before t_merge (one-sided, at most this)
        frame = float(run_["times"][1] - run_["times"][0])
        early = run_["times"] <= 0.3 * pred["time"]
        moved = np.abs(C[early][-1] - C[0])
        payload.update(centres=centres.tolist(), sizes=sizes, closest_pair=[int(a), int(b)],
                       merge_time=t_merge, merge_time_resolution=frame, two_cluster_quadrature=pred["time"],
                       leading_order=pred["leading_order"],
                       displacement_early=moved.tolist(), predicted_speed_ratio=float((masses[a] / masses[b]) ** 2))
        text = key_values([("closest pair", f"{a}, {b} (angle {gaps[j]:.4g})"),
                           ("merge time (particles, to angle/10)",
                            f"{t_merge:.6g} (saved frames: the crossing is in [{t_merge - frame:.6g}, {t_merge:.6g}])"),
                           ("two-cluster quadrature", pred["time"]), ("leading Laplace order", pred["leading_order"]),
                           (f"speed ratio {b}/{a} (measured)", float(moved[b] / moved[a]) if moved[a] > 0 else math.inf),
                           (f"speed ratio {b}/{a} (a_{a}/a_{b})^2", payload["predicted_speed_ratio"]),
                           ("largest displacement of the others", float(np.max(np.delete(moved, [a, b])))
                            if len(sizes) > 2 else 0.0)])
        if args.plot:
            import matplotlib.pyplot as plt

            from numerics.common.plots import save_figure

            fig, ax = plt.subplots(figsize=(6.5, 4))
            for k in range(len(sizes)):
                ax.plot(run_["times"], C[:, k], label=f"cluster {k} (mass {masses[k]:.2f})")
            ax.set_xlabel("t")
            ax.set_ylabel("angle")
            ax.legend(fontsize=8)
            fig.tight_layout()
            save_figure(fig, args.plot, dpi=110)
            payload["plot"] = args.plot
    emit(args, payload, text)
    return 0
