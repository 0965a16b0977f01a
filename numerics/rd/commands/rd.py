"""``attnflow rd``: self-attention in R^d without normalisation, integrated in z = e^{-tV} x; leaders,
Boolean limit of P(t), hyperplanes and the support radius against its bound."""
from __future__ import annotations

import numpy as np

from numerics.common.errors import InputError, require_int, require_real
from numerics.common.limits import check_array
from numerics.common.provenance import StderrProgress, atomic_write, package_versions
from numerics.common.render import emit, key_values
from numerics.common.readers import json_array, read_npy
from numerics.gaussian.names import ATTENTIONS

NAME = "rd"
ORDER = 61
HELP = "tokens in R^d without normalisation (GLPR 2305.05465): leaders, Boolean attention, hyperplanes, radius"
DESCRIPTION = (HELP + ". dx_i/dt = V sum_j P_ij x_j with softmax/L2/Sinkhorn attention (arXiv 2501.18322 "
               "conventions: <Qx, Ky> = y^T A x), integrated in the rescaled tokens z = e^{-tV} x. Matrices are "
               "JSON arrays.")
#: default number of saved frames
FRAMES = 101
#: what the printed codimension is (it is read from the last frame, not from the t -> infinity limit)
CODIMENSION_NOTE = ("finite-time measurement: the codimension of the tokens' configuration at the last frame "
                    "(clusters within a tolerance of the spread at t = 0); the limit t -> infinity may differ")


def add_model_arguments(p, attentions=ATTENTIONS, default: str | None = None) -> None:
    """--attention, --d, --A | --Q --K, --V and the initial tokens (--n --seed | --init): shared with rd-stability."""
    p.add_argument("--attention", required=default is None, default=default, choices=attentions,
                   help="attention of the tokens (arXiv 2501.18322 conventions)")
    p.add_argument("--d", required=True, type=int, help="dimension of the token space R^d")
    p.add_argument("--A", help="JSON d x d matrix A = K^T Q (softmax, sinkhorn), used as given (no 1/sqrt(d))")
    p.add_argument("--Q", help="JSON d x d query matrix (l2; or softmax/sinkhorn with --K)")
    p.add_argument("--K", help="JSON d x d key matrix")
    p.add_argument("--V", required=True, help="JSON d x d value matrix")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--n", type=int, help="number of tokens drawn from N(0, I_d) (with --seed)")
    src.add_argument("--init", help="initial tokens: an (n, d) array in a .npy file")
    p.add_argument("--seed", type=int, default=0, help="seed of the initial tokens (default 0)")


def add_arguments(p):
    add_model_arguments(p)
    p.add_argument("--t-end", required=True, type=float, help="final time (depth)")
    p.add_argument("--dt", type=float, default=0.025, help="RK4 step in the rescaled variables (default 0.025)")
    p.add_argument("--frames", type=int, default=FRAMES, help=f"saved frames (default {FRAMES})")
    p.add_argument("--out", required=True, help="output .npz with times, X, Z (m, n, d) and P (m, n, n)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--plot", help="write the figure to FILE.png")


def load_tokens(path: str, d: int) -> np.ndarray:
    """An (n, d) float array from a .npy file (no pickles), or InputError."""
    X = read_npy(path, "--init file")
    if X.ndim != 2 or X.shape[1] != d:
        raise InputError(f"--init must hold an (n, {d}) array, got shape {X.shape}")
    if not np.issubdtype(X.dtype, np.number) or not np.all(np.isfinite(X)):
        raise InputError("--init must hold finite numbers")
    return X.astype(float)


def finite_or_none(value) -> float | None:
    """A float, or None where x = e^{tV} z overflowed (the rescaled z stay finite)."""
    value = float(value)
    return value if np.isfinite(value) else None


def build_model(args):
    """The :class:`numerics.rd.model.RdModel` of the command's flags."""
    from numerics.rd.model import RdModel

    d = require_int(args.d, "--d", minimum=1)
    mats = {k: json_array(getattr(args, k), k) for k in ("A", "Q", "K", "V")}
    return RdModel(args.attention, d, **mats)


def initial_tokens(args, d: int) -> np.ndarray:
    if args.init is not None:
        return load_tokens(args.init, d)
    n = require_int(args.n, "--n", minimum=2)
    check_array((n, d), f"{n} initial tokens in R^{d}", copies=4)  # tokens, z, x and a stage of the integrator
    return np.random.default_rng(require_int(args.seed, "--seed", minimum=0)).standard_normal((n, d))


def run(args) -> int:
    # heavy modules are imported here, not at parser-building time (attnflow --help stays fast)
    from numerics.core.model import SaveAt, Solver
    from numerics.rd.dynamics import MAX_TOKENS_WITH_P, simulate_rd, step_count
    from numerics.rd.geometry import (boolean_limit, hull_vertices, hyperplane_coordinates, limit_codimension,
                                      predicted_limit, spread)
    from numerics.rd.stability import log_radius, radius, radius_bound

    model = build_model(args)
    d = model.d
    X0 = initial_tokens(args, d)
    n = len(X0)
    t_end = require_real(args.t_end, "--t-end", minimum=0.0, strict_minimum=True)
    dt = require_real(args.dt, "--dt", minimum=0.0, strict_minimum=True)
    frames = require_int(args.frames, "--frames", minimum=2)
    step_count(t_end, dt)  # a t_end/dt that is not a finite number of steps is refused here
    check_array((frames, n, d), f"{frames} frames of {n} tokens in R^{d}", copies=2)  # before the frame times
    # frames at exactly t_end k / (frames - 1): the run steps from one frame to the next (steps <= dt)
    res = simulate_rd(model, X0, t_end, solver=Solver("rk4", dt=dt), save=SaveAt(times=np.linspace(0, t_end, frames)),
                      progress=StderrProgress("rd"))
    R = radius(res.X)
    bound = radius_bound(model, res.times, float(R[0]))
    logR = log_radius(model, res.times, res.Z)
    log_bound = res.times * np.linalg.norm(model.V, 2) + logR[0]
    payload = {"attention": model.attention, "d": d, "n": n, "t_end": float(res.times[-1]),
               "R0": float(R[0]), "radius": finite_or_none(R[-1]), "radius_bound": finite_or_none(bound[-1]),
               "log_radius": float(logR[-1]), "log_radius_bound": float(log_bound[-1]),
               "radius_never_above_bound": bool(np.all(logR[1:] <= log_bound[1:] + 1e-12)),
               "growth_rate": model.growth_rate, "model": model.to_meta(), "solver": res.meta["solver"],
               "versions": package_versions()}
    pairs = [("attention", model.attention), ("d, n", f"{d}, {n}"), ("t_end", float(res.times[-1]))]
    P_end = None
    if res.P is not None:
        P_end = res.P[-1]
    if P_end is not None:
        lim = boolean_limit(P_end)
        payload.update(lim)
        hull = hull_vertices(res.Z[0]) if n > d else []
        payload["hull_vertices"] = hull
        payload["codimension"] = limit_codimension(res.Z[-1], lim["assignment"], scale=spread(res.Z[0]))["codimension"]
        payload["codimension_note"] = CODIMENSION_NOTE
        pairs += [("leaders", lim["leaders"]), ("boolean_gap", lim["boolean_gap"]), ("rank", lim["rank"]),
                  ("hull vertices", hull), (f"codimension at t = {float(res.times[-1]):g}", payload["codimension"]),
                  ("", CODIMENSION_NOTE)]
        if model.attention == "softmax" and np.array_equal(model.V, np.eye(d)):
            pred = predicted_limit(X0, model.A)
            det = np.array(pred["determined"])
            agree = int(np.sum(np.array(lim["assignment"])[det] == np.array(pred["assignment"])[det]))
            payload["prediction"] = {"self_attending": pred["leaders"], "determined_rows": int(det.sum()),
                                     "determined_agree": agree, "margin": pred["margin"]}
            pairs += [("self-attending", pred["leaders"]), ("predicted rows (agree)", f"{int(det.sum())} ({agree})")]
    else:
        hull = []
        payload["P"] = f"not stored (n > {MAX_TOKENS_WITH_P})"
    try:
        hp = hyperplane_coordinates(res.Z[-1], model.V)
    except InputError:
        hp = None
    if hp is not None and d > 1 and not np.allclose(model.V, model.V[0, 0] * np.eye(d)):
        payload["hyperplanes"] = hp
        pairs += [("hyperplanes", hp["count"]), ("hyperplane values", hp["values"]),
                  ("hyperplane spread", hp["spread"])]
    if np.isfinite(R[-1]) and np.isfinite(bound[-1]):
        pairs += [("radius", float(R[-1])), ("radius_bound", float(bound[-1]))]
    else:
        pairs += [("log radius", float(logR[-1])), ("log radius_bound", float(log_bound[-1]))]
    arrays = {"times": res.times, "X": res.X, "Z": res.Z, "X0": X0}
    if res.P is not None:
        arrays["P"] = res.P
    try:
        atomic_write(args.out, lambda tmp: np.savez_compressed(tmp, **arrays), suffix=".npz")
    except OSError as exc:
        raise InputError(f"cannot write --out {args.out!r}: {exc}") from None
    payload["out"] = args.out
    if args.plot:
        from numerics.rd.plots import plot_run

        try:
            plot_run(args.plot, res, {"leaders": payload.get("leaders", [])}, hull, R, bound,
                     hyperplanes=payload.get("hyperplanes"))
        except OSError as exc:
            raise InputError(f"cannot write --plot {args.plot!r}: {exc}") from None
        payload["plot"] = args.plot
    emit(args, payload, key_values(pairs + [("out", args.out)]))
    return 0
