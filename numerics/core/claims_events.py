"""Claim of the events that decide an observable (numerics.core.events; note proofs_notes/core-events-one-cluster.md).
Registered from :mod:`numerics.core.claims`.

- core.events-one-cluster: the cap lemma checked along RK4 runs from adversarial starts (tokens spread over a cap
  of angular radius just below pi/2, some on its rim; beta = 0, 1e-6, 0.5, 4, -0.5; sa and usa; Q = K = I and
  random Q, K; and the models allowed beyond one head: several heads with W_h^T V_h = c_h I, c_h >= 0, the causal
  mask, ALiBi, RoPE, beta = gamma log n, all at once): the smallest <w, x_i> never decreases beyond rounding; and
  members of an ensemble (one head, and each of those models) stopped by
  ``one-cluster:eps`` equal their runs to the end in the decided observable (one eps-cluster at t_end, first
  saved time with one eps-cluster), bit for bit up to their decision, with a decided state of diameter <= eps.
"""
from __future__ import annotations

import numpy as np

from numerics.common.verification import CheckResult, claim

#: the lemma's start: tokens in a cap of angular radius pi/2 - RIM_GAP around w
RIM_GAP = 1e-3
#: RK4 step and horizon of the lemma's runs
LEMMA_DT, LEMMA_T = 0.01, 4.0
#: allowed decrease of min_i <w, x_i> along a run (rounding of the renormalised steps: a few ulp of 1)
LEMMA_SLACK = 1e-13


def cap_start(n: int, d: int, radius: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``(X, w)``: n tokens at angles from w spread over [radius/2, radius], a third of them exactly at
    ``radius`` (on the rim of the cap, where the lemma is tight)."""
    w = rng.standard_normal(d)
    w /= np.linalg.norm(w)
    angles = rng.uniform(radius / 2, radius, n)
    angles[: max(1, n // 3)] = radius
    X = np.empty((n, d))
    for i, theta in enumerate(angles):
        u = rng.standard_normal(d)
        u -= (u @ w) * w
        u /= np.linalg.norm(u)
        X[i] = np.cos(theta) * w + np.sin(theta) * u
    return X, w


def feature_models(d: int, beta: float, rng: np.random.Generator, slope: float = 4.0) -> dict:
    """The models the lemma covers beyond one head with V = I (the note's list), at ``beta``: several heads with
    W_h^T V_h = c_h I (c_h = 1, 0.5, 0 and 2, random Q_h, K_h), the causal mask, ALiBi (``slope``, large by default), RoPE
    (base 1: large rotations between neighbours, and with several heads), beta = gamma log n (gamma = beta, so
    beta = 0 gives gamma = 0 only where allowed) and all of them at once."""
    from numerics.core.blocks import MultiHead
    from numerics.core.model import Model

    H = 4
    Qh, Kh = rng.standard_normal((2, H, d, d)) / np.sqrt(d)
    c = np.array([1.0, 0.5, 0.0, 2.0])
    eye = np.broadcast_to(np.eye(d), (H, d, d))
    heads = MultiHead(Qh, Kh, eye * c[:, None, None], eye.copy())  # W_h^T V_h = c_h I
    models = {"heads": Model("sa", beta, heads=heads), "causal": Model("sa", beta, causal=True),
              "alibi": Model("sa", beta, alibi=slope), "rope": Model("sa", beta, rope=1.0),
              "heads_rope_alibi_causal": Model("sa", beta, heads=heads, rope=1.0, alibi=[0.5, 1.0, 2.0, 4.0],
                                               causal=True)}
    if beta > 0:  # gamma log n with gamma = beta (gamma must be positive)
        models["beta_log"] = Model("sa", beta=None, beta_scaling="log", gamma=beta)
    return models


def lemma_cases() -> list[dict]:
    """The smallest <w, x_i> along RK4 runs from cap starts: its largest decrease below its start value."""
    from numerics.core.model import Model, Solver, SaveAt
    from numerics.core.simulate import simulate

    rng = np.random.default_rng(20261207)

    def row(kind, beta, d, general, model, X, w, feature="one head"):
        traj = simulate(model, X, LEMMA_T, solver=Solver("rk4", dt=LEMMA_DT), save=SaveAt(every=1))
        alpha = (traj.X @ w).min(axis=1)
        return {"kind": kind, "feature": feature, "beta": beta, "d": d, "general_QK": general,
                "alpha0": float(alpha[0]), "decrease": float(max(0.0, alpha[0] - alpha.min())),
                "gain": float(alpha[-1] - alpha[0])}

    rows = []
    for kind in ("sa", "usa"):
        for beta in (0.0, 1e-6, 0.5, 4.0, -0.5):
            for d, general in ((2, False), (3, False), (3, True), (8, True)):
                X, w = cap_start(12, d, np.pi / 2 - RIM_GAP, rng)
                Q = K = None
                if general:  # the lemma needs V = I only: Q and K random
                    Q, K = rng.standard_normal((d, d)) / np.sqrt(d), rng.standard_normal((d, d)) / np.sqrt(d)
                rows.append(row(kind, beta, d, general, Model(kind, beta=beta, Q=Q, K=K), X, w))
    for beta in (1e-6, 4.0, -0.5):  # the models allowed beyond one head, from the same adversarial caps
        for d in (2, 4):
            for feature, model in feature_models(d, beta, rng).items():
                X, w = cap_start(12, d, np.pi / 2 - RIM_GAP, rng)
                rows.append(row("sa", beta, d, True, model, X, w, feature))
    return rows


def one_eps_cluster(X: np.ndarray, eps: float) -> bool:
    """All tokens of X (n, d) in one eps-cluster: the graph joining tokens at geodesic distance <= eps is
    connected (the definition of :func:`numerics.clusters.detection.find_clusters`, which the core may not
    import; a test compares the two)."""
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    near = np.arccos(np.clip(Xn @ Xn.T, -1.0, 1.0)) <= eps
    seen = np.zeros(X.shape[0], dtype=bool)
    seen[0] = True
    frontier = seen.copy()
    while frontier.any():
        frontier = near[frontier].any(axis=0) & ~seen
        seen |= frontier
    return bool(seen.all())


def _compare(full, cut, eps: float, out: dict) -> None:
    """Add to ``out`` how the run ``cut`` (with the event) differs from ``full`` (without) member by member."""
    ev = cut.meta["events"]
    B = full.X.shape[1]
    out["members"] += B
    out["stopped"] += ev["count"]
    out["member_steps_fraction"].append(ev["member_steps"] / ev["member_steps_without"])
    for b in range(B):
        def decided(X):
            return one_eps_cluster(X, eps)

        def first(traj):
            return next((float(t) for t, X in zip(traj.times, traj.X[:, b]) if decided(X)), None)
        out["outcome_differs"] += int(decided(full.X[-1, b]) != decided(cut.X[-1, b]))
        out["first_time_differs"] += int(first(full) != first(cut))
        tb = ev["times"][b]
        if tb is None:
            out["not_bitwise_before"] += int(not np.array_equal(full.X[:, b], cut.X[:, b]))
            continue
        k = int(np.searchsorted(cut.times, tb - 1e-9))
        out["not_bitwise_before"] += int(not np.array_equal(full.X[: k + 1, b], cut.X[: k + 1, b]))
        out["not_repeated_after"] += int(not np.all(cut.X[k:, b] == cut.X[k, b]))
        G = np.clip(cut.X[k, b] @ cut.X[k, b].T, -1.0, 1.0)
        out["largest_decided_diameter"] = max(out["largest_decided_diameter"], float(np.arccos(G).max()))


def stop_cases(eps: float = 1e-2) -> dict:
    """Ensembles run with and without ``one-cluster:eps``: the decided observable of every member, frames up to
    each decision, the diameter of each decided state. One head (betas 0.1..8, d = 2 and 3), then each model of
    :func:`feature_models` (d = 3; per-member betas 0.1..8, or one gamma log n for the scaled beta)."""
    from numerics.core.events import Event
    from numerics.core.members import Members
    from numerics.core.model import Model, Solver, SaveAt
    from numerics.core.sampling import uniform_sphere
    from numerics.core.simulate import simulate

    out = {"members": 0, "stopped": 0, "outcome_differs": 0, "first_time_differs": 0, "not_bitwise_before": 0,
           "not_repeated_after": 0, "largest_decided_diameter": 0.0, "member_steps_fraction": [], "features": {}}
    rng = np.random.default_rng(7)
    event = Event("one-cluster", eps)
    for d in (2, 3):
        B, n = 12, 16
        X0 = np.stack([uniform_sphere(n, d, rng) for _ in range(B)])
        members = Members(beta=np.geomspace(0.1, 8.0, B))
        solver, save = Solver("rk4", dt=0.1), SaveAt(every=1)
        full = simulate(Model("sa", beta=1.0), X0, 30.0, solver=solver, save=save, members=members)
        cut = simulate(Model("sa", beta=1.0), X0, 30.0, solver=solver, save=save, members=members, events=event)
        _compare(full, cut, eps, out)
    for feature, model in feature_models(3, 1.0, rng, slope=0.1).items():
        B, n = 6, 12
        X0 = np.stack([uniform_sphere(n, 3, rng) for _ in range(B)])
        members = None if model.beta_scaling == "log" else Members(beta=np.geomspace(0.1, 8.0, B))
        solver, save = Solver("rk4", dt=0.1), SaveAt(every=1)
        full = simulate(model, X0, 20.0, solver=solver, save=save, members=members)
        cut = simulate(model, X0, 20.0, solver=solver, save=save, members=members, events=event)
        before = out["stopped"]
        _compare(full, cut, eps, out)
        out["features"][feature] = {"members": B, "stopped": out["stopped"] - before}
    return out


# slow tier (issue 44: the default verify stays under 60 s of CPU): its mutants events-* are killed by
# tests/numerics/test_core_events.py
@claim(id="core.events-one-cluster",
       title="one-cluster event: a cap of radius < pi/2 holding every token is invariant (sa, usa, V = I or heads "
             "with W_h^T V_h = c_h I, c_h >= 0; causal, ALiBi, RoPE, beta scaling); a stopped member's decided "
             "observable equals its run to the end",
       source="GLPR arXiv 2312.10794 (hemisphere collapse); the invariance proof is in the note",
       note="core-events-one-cluster.md", default=False)
def check_events_one_cluster() -> CheckResult:
    eps = 1e-2
    rows = lemma_cases()
    stops = stop_cases(eps)
    worst = max(r["decrease"] for r in rows)
    flags = {"cap_invariant": worst <= LEMMA_SLACK,
             "outcome": stops["outcome_differs"] == 0 and stops["first_time_differs"] == 0,
             "bitwise_before": stops["not_bitwise_before"] == 0 and stops["not_repeated_after"] == 0,
             "decided_diameter": stops["largest_decided_diameter"] <= eps,
             "some_stopped": 0 < stops["stopped"] < stops["members"],
             "every_feature_stops": all(f["stopped"] > 0 for f in stops["features"].values())}
    ok = all(flags.values())
    return CheckResult("core.events-one-cluster", "passed" if ok else "failed",
                       {"largest_cap_decrease": worst, "outcome_differs": stops["outcome_differs"],
                        "largest_decided_diameter": stops["largest_decided_diameter"], "flags": flags},
                       {"largest_cap_decrease": 0.0, "outcome_differs": 0},
                       f"min <w, x_i> decreases by <= {LEMMA_SLACK:g} (rounding) along RK4 dt = {LEMMA_DT:g} to "
                       f"t = {LEMMA_T:g}; decided outcomes equal; decided diameter <= eps = {eps:g}",
                       {"lemma_runs": rows, "stops": stops})
