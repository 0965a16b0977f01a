"""Events that decide an observable (numerics.core.events) and the loop's handling of them (numerics.core.loop).

- a member stopped by ``one-cluster:eps`` equals its run to the end in the decided observable, bit for bit up to
  its decision (fixed steps, per-member dp5, one system), and its later frames repeat the decided state;
- the event refuses the models its lemma does not cover, an unknown name and a tolerance out of range (one line,
  exit 2 on the command line);
- the claim core.events-one-cluster passes (the lemma on adversarial caps, the stopped ensembles).
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from numerics.clusters.detection import find_clusters
from numerics.common.errors import InputError
from numerics.core.blocks import MLP, MultiHead
from numerics.core.events import Event, cap_radius, events_summary
from numerics.core.members import Members
from numerics.core.model import Model, SaveAt, Solver
from numerics.core.trajectory import simulate, uniform_sphere

EPS = 1e-2


def _ensemble(B=8, n=12, d=2, seed=4):
    rng = np.random.default_rng(seed)
    return np.stack([uniform_sphere(n, d, rng) for _ in range(B)]), Members(beta=np.geomspace(0.1, 8.0, B))


def _one(X) -> bool:
    return find_clusters(X, EPS, normalize=True).count == 1


def _check_stopped(full, cut, B, all_may_stop=False):
    """Decided outcomes equal; frames bitwise equal up to each decision, repeated after it; undecided members
    bitwise equal throughout."""
    ev = cut.meta["events"]
    assert 0 < ev["count"] <= B if all_may_stop else 0 < ev["count"] < B
    assert ev["stopped"] == [b for b in range(B) if ev["times"][b] is not None]
    for b in range(B):
        assert _one(full.X[-1, b]) == _one(cut.X[-1, b])
        tb = ev["times"][b]
        if tb is None:
            assert np.array_equal(full.X[:, b], cut.X[:, b])
            continue
        assert _one(cut.X[-1, b])
        k = int(np.searchsorted(cut.times, tb - 1e-9))
        assert abs(cut.times[k] - tb) < 1e-9
        assert np.array_equal(full.X[: k + 1, b], cut.X[: k + 1, b])
        assert np.all(cut.X[k:, b] == cut.X[k, b])
        assert cap_radius(cut.X[k, b][None])[0] <= EPS / 2


@pytest.mark.parametrize("d", [2, 3])
def test_fixed_steps_stopped_members_equal_the_run_to_the_end(d):
    X0, members = _ensemble(d=d)
    solver, save = Solver("rk4", dt=0.1), SaveAt(every=1)
    full = simulate(Model("sa", 1.0), X0, 25.0, solver=solver, save=save, members=members)
    cut = simulate(Model("sa", 1.0), X0, 25.0, solver=solver, save=save, members=members,
                   events=Event("one-cluster", EPS))
    _check_stopped(full, cut, X0.shape[0])
    ev = cut.meta["events"]
    assert ev["member_steps"] < ev["member_steps_without"] == 8 * 250
    assert np.array_equal(cut.times, full.times)


def test_saved_every_k_steps_and_usa():
    X0, members = _ensemble(seed=9)
    solver, save = Solver("layer", dt=0.05), SaveAt(every=7)
    model = Model("usa", 1.0)
    full = simulate(model, X0, 20.0, solver=solver, save=save, members=members)
    cut = simulate(model, X0, 20.0, solver=solver, save=save, members=members, events="one-cluster:0.01")
    assert np.array_equal(cut.times, full.times)
    ev = cut.meta["events"]
    assert ev["count"] > 0
    for b in range(X0.shape[0]):
        assert _one(full.X[-1, b]) == _one(cut.X[-1, b])
        if ev["times"][b] is not None:  # frames saved before the decision are the run's
            k = int(np.searchsorted(cut.times, ev["times"][b] - 1e-9))
            assert np.array_equal(full.X[:k, b], cut.X[:k, b])


def test_per_member_dp5_stops_members():
    X0, members = _ensemble(B=6, seed=2)
    solver, save = Solver("dp5", rtol=1e-6, atol=1e-9, step="per-member"), SaveAt(times=np.linspace(0, 25, 26))
    full = simulate(Model("sa", 1.0), X0, 25.0, solver=solver, save=save, members=members)
    cut = simulate(Model("sa", 1.0), X0, 25.0, solver=solver, save=save, members=members,
                   events=Event("one-cluster", EPS))
    ev = cut.meta["events"]
    assert 0 < ev["count"] < 6
    assert cut.meta["integrator_stats"]["batched_evaluations"] < full.meta["integrator_stats"]["batched_evaluations"]
    for b in range(6):
        assert _one(full.X[-1, b]) == _one(cut.X[-1, b])
        tb = ev["times"][b]
        if tb is None:
            assert np.array_equal(full.X[:, b], cut.X[:, b])
        else:  # saved frames before the decision time are the run's; from the next save time on: the decided state
            k = int(np.searchsorted(cut.times, tb))
            assert np.array_equal(full.X[:k, b], cut.X[:k, b])
            assert np.all(cut.X[k:, b] == cut.X[k, b]) and _one(cut.X[k, b])


def test_one_system_stops_too():
    X0 = uniform_sphere(12, 3, 1)
    solver = Solver("rk4", dt=0.1, backend="direct")
    full = simulate(Model("sa", 1.0), X0, 25.0, solver=solver)
    cut = simulate(Model("sa", 1.0), X0, 25.0, solver=solver, events="one-cluster:0.01")
    ev = cut.meta["events"]
    assert ev["count"] == 1 and ev["member_steps"] < ev["member_steps_without"]
    k = int(np.searchsorted(cut.times, ev["times"][0] - 1e-9))
    assert np.array_equal(full.X[: k + 1], cut.X[: k + 1])
    assert np.all(cut.X[k:] == cut.X[k]) and _one(full.X[-1]) and _one(cut.X[-1])
    assert events_summary(cut.meta)["stopped"] == 1 and events_summary(full.meta) is None


def test_one_system_with_dp5_steps_stops_after_the_deciding_step():
    """One system, shared dp5 steps: the run without the event up to the step that decided it (the same steps),
    then the decided state; dop853 and the shared step of an ensemble are refused with one line."""
    X0 = uniform_sphere(12, 3, 1)
    solver, save = Solver("dp5", rtol=1e-6, atol=1e-9), SaveAt(times=np.linspace(0.0, 25.0, 51))
    full = simulate(Model("sa", 1.0), X0, 25.0, solver=solver, save=save)
    cut = simulate(Model("sa", 1.0), X0, 25.0, solver=solver, save=save, events="one-cluster:0.01")
    ev = cut.meta["events"]
    assert ev["count"] == 1 and ev["event"] == "one-cluster:0.01"
    tb = ev["times"][0]
    k = int(np.searchsorted(cut.times, tb))  # the first save time after the decision
    assert 0 < k < cut.times.size - 1 and cut.times[k - 1] < tb <= cut.times[k]
    assert np.array_equal(full.X[:k], cut.X[:k]) and np.all(cut.X[k:] == cut.X[k])
    assert _one(cut.X[-1]) and _one(full.X[-1]) and cap_radius(cut.X[k][None])[0] <= EPS / 2
    stats = cut.meta["integrator_stats"]
    assert stats["accepted_steps"] < full.meta["integrator_stats"]["accepted_steps"]
    assert ev["member_steps"] == stats["accepted_steps"] + stats["rejected_steps"]
    with pytest.raises(InputError, match="dp5 only") as info:
        simulate(Model("sa", 1.0), X0, 1.0, solver=Solver("dop853"), events="one-cluster:0.01")
    assert "\n" not in str(info.value)
    X, members = _ensemble(B=2)
    with pytest.raises(InputError, match="per-member dp5 steps"):
        simulate(Model("sa", 1.0), X, 1.0, solver=Solver("dp5"), members=members, events="one-cluster:0.01")


@pytest.mark.parametrize("how", ["fixed", "one system", "per-member dp5", "one system dp5"])
def test_resume_carries_the_event(tmp_path, how):
    """A resumed run continues with its saved event: members decided before stay stopped with their decision
    times, the others stop when decided; fixed steps resumed equal the run in one piece bit for bit."""
    from numerics.core.simulate import resume

    X0, members = _ensemble(B=6, seed=2)
    if how == "fixed":
        solver, save, X, mem = Solver("rk4", dt=0.1), SaveAt(every=1), X0, members
    elif how == "one system":
        solver, save, X, mem = Solver("rk4", dt=0.1), SaveAt(every=1), X0[0], None
    elif how == "per-member dp5":
        solver, save, X, mem = Solver("dp5", rtol=1e-6, atol=1e-9, step="per-member"), None, X0, members
    else:
        solver, save, X, mem = Solver("dp5", rtol=1e-6, atol=1e-9), None, X0[0], None
    first = simulate(Model("sa", 1.0), X, 12.0, solver=solver, save=save, members=mem, events="one-cluster:0.01")
    path = tmp_path / "e.npz"
    first.save(str(path))
    cont = resume(str(path), 25.0)
    old, ev = first.meta["events"], cont.meta["events"]
    assert ev["event"] == "one-cluster:0.01"
    B = 1 if X.ndim == 2 else X.shape[0]
    k0 = first.times.size
    for b in range(B):
        Xb = cont.X[:, b] if X.ndim == 3 else cont.X
        if old["times"][b] is not None:  # decided before: kept, and still
            assert ev["times"][b] == old["times"][b] and np.all(Xb[k0 - 1:] == Xb[k0 - 1])
        elif ev["times"][b] is not None:  # decided in the continuation
            assert ev["times"][b] > 12.0 and _one(Xb[-1])
    if X.ndim == 3:  # some members decided before the resume, some during it
        assert 0 < old["count"] < ev["count"]
    if how in ("fixed", "one system"):
        one_piece = simulate(Model("sa", 1.0), X, 25.0, solver=solver, save=save, members=mem,
                             events="one-cluster:0.01")
        # the continuation's grid is t0 + k h (times equal up to rounding), its states bit for bit
        assert np.allclose(one_piece.times, cont.times, rtol=0, atol=1e-12) and np.array_equal(one_piece.X, cont.X)
        whole = one_piece.meta["events"]["times"]
        assert [t is None for t in whole] == [t is None for t in ev["times"]]
        assert all(abs(a - b) < 1e-12 for a, b in zip(whole, ev["times"]) if a is not None)


def test_claim_cluster_test_is_find_clusters():
    from numerics.core.claims_events import one_eps_cluster

    rng = np.random.default_rng(0)
    for k in range(40):
        X = uniform_sphere(10, 2, int(rng.integers(1 << 30)))
        eps = float(rng.uniform(0.05, 1.5))
        assert one_eps_cluster(X, eps) == (find_clusters(X, eps, normalize=True).count == 1)


def test_cap_radius():
    X = np.array([[[1.0, 0.0], [np.cos(0.2), np.sin(0.2)]]])
    assert abs(cap_radius(X)[0] - 0.1) < 1e-15
    assert cap_radius(np.array([[[1.0, 0.0], [-1.0, 0.0]]]))[0] == np.pi  # zero mean: no cap
    assert Event("one-cluster", 0.2 * (1 + 1e-9)).fired(X)[0] and not Event("one-cluster", 0.2 * (1 - 1e-9)).fired(X)[0]
    rng = np.random.default_rng(1)  # the fired test is cap_radius <= tol/2 (away from the boundary)
    Y = np.stack([uniform_sphere(5, 3, int(s)) * 0.0 + uniform_sphere(1, 3, int(s)) for s in range(6)])
    Y = Y + 1e-3 * rng.standard_normal(Y.shape)
    Y /= np.linalg.norm(Y, axis=-1, keepdims=True)
    r = cap_radius(Y)
    for tol in (1.5 * r.min(), 2 * np.median(r), 2.5 * r.max()):
        assert np.array_equal(Event("one-cluster", tol).fired(Y), r <= tol / 2)


@pytest.mark.parametrize("kwargs, words", [
    (dict(V=np.diag([2.0, 1.0])), "V != I"),
    (dict(noise=0.1), "noise"),
    (dict(mlp=MLP(W1=np.eye(2), b1=np.zeros(2), W2=np.eye(2), b2=np.zeros(2))), "MLP"),
    (dict(heads=MultiHead(*np.stack([np.eye(2)] * 3)[:, None].repeat(2, 1), -np.eye(2)[None].repeat(2, 0))),
     "heads whose W_h"),
    (dict(heads=MultiHead(*[np.eye(2)[None].repeat(2, 0)] * 2, np.eye(2)[None].repeat(2, 0),
                          np.stack([np.eye(2), np.array([[0.0, -1.0], [1.0, 0.0]])]))), "heads whose W_h"),
    (dict(norm="pre"), "norm"),
])
def test_refused_where_the_lemma_does_not_hold(kwargs, words):
    with pytest.raises(InputError, match=words) as info:
        simulate(Model("sa", 1.0, **kwargs), uniform_sphere(6, 2, 0), 1.0, solver=Solver("rk4", dt=0.1),
                 events="one-cluster:1e-3")
    assert "\n" not in str(info.value)


def test_refused_per_member_v_and_shared_adaptive():
    X0, members = _ensemble(B=2)
    with pytest.raises(InputError, match="per-member V"):
        simulate(Model("sa", 1.0), X0, 1.0, solver=Solver("rk4", dt=0.1),
                 members=Members(V=np.stack([np.eye(2), 2 * np.eye(2)])), events="one-cluster:1e-3")
    with pytest.raises(InputError, match="per-member dp5"):
        simulate(Model("sa", 1.0), X0, 1.0, solver=Solver("dp5"), members=members, events="one-cluster:1e-3")


@pytest.mark.parametrize("feature", ["heads", "causal", "alibi", "rope", "heads_rope_alibi_causal", "beta_log"])
def test_newly_allowed_features_stop_with_the_run_to_the_end_outcome(feature):
    """Several heads with W_h^T V_h = c_h I, the causal mask, ALiBi, RoPE, beta = gamma log n: the lemma covers
    them (the note); a stopped member's decided outcome equals the run to the end, bit for bit before."""
    from numerics.core.claims_events import feature_models

    model = feature_models(3, 1.0, np.random.default_rng(3), slope=0.1)[feature]
    rng = np.random.default_rng(11)
    X0 = np.stack([uniform_sphere(12, 3, rng) for _ in range(6)])
    members = None if model.beta_scaling == "log" else Members(beta=np.geomspace(0.1, 8.0, 6))
    solver, save = Solver("rk4", dt=0.1), SaveAt(every=1)
    full = simulate(model, X0, 20.0, solver=solver, save=save, members=members)
    cut = simulate(model, X0, 20.0, solver=solver, save=save, members=members, events=Event("one-cluster", EPS))
    _check_stopped(full, cut, 6, all_may_stop=True)
    one = simulate(model, X0[0], 20.0, solver=solver, events=Event("one-cluster", EPS))  # one system too
    assert _one(one.X[-1]) == _one(simulate(model, X0[0], 20.0, solver=solver).X[-1])


def test_q_k_and_negative_beta_are_allowed():
    Q = np.array([[1.0, 0.5], [0.0, 1.0]])
    traj = simulate(Model("sa", -0.5, Q=Q, K=np.eye(2)), uniform_sphere(6, 2, 0), 1.0,
                    solver=Solver("rk4", dt=0.1), events="one-cluster:1e-3")
    assert traj.meta["events"]["event"] == "one-cluster:0.001"


@pytest.mark.parametrize("text, words", [("bogus:1", "unknown event"), ("one-cluster:0", "tolerance must be in"),
                                         ("one-cluster:3.2", "tolerance must be in"),
                                         ("one-cluster:nan", "tolerance must be in"),
                                         ("one-cluster", "NAME:TOL"), ("one-cluster:x", "must be a number")])
def test_bad_events(text, words):
    with pytest.raises(InputError, match=words) as info:
        Event.parse(text)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("extra, words", [(["--stop-when", "bogus:1"], "unknown event"),
                                          (["--stop-when", "one-cluster:5"], "tolerance must be in"),
                                          (["--stop-when", "one-cluster:1e-3", "--noise", "0.1"], "noise")])
def test_cli_bad_events_exit_2(tmp_path, extra, words):
    cmd = [sys.executable, "-m", "numerics", "simulate", "--model", "sa", "--n", "6", "--d", "2", "--beta", "1",
           "--t-end", "1", "--out", str(tmp_path / "x.npz")] + extra
    run = subprocess.run(cmd, capture_output=True, text=True)
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0]


def test_claim_passes():
    from numerics.core.claims_events import check_events_one_cluster

    result = check_events_one_cluster()
    assert result.status == "passed", result.details


def test_cli_stop_when_runs_and_resume_refuses_it(tmp_path):
    import json

    out = tmp_path / "s.npz"
    base = [sys.executable, "-m", "numerics", "simulate"]
    run = subprocess.run(base + ["--model", "sa", "--n", "8", "--d", "2", "--beta", "1", "--t-end", "30", "--seed",
                                 "1", "--out", str(out), "--stop-when", "one-cluster:1e-2", "--json"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)["events"]
    assert summary["event"] == "one-cluster:0.01" and summary["stopped"] == 1 and summary["last_decision"] < 30
    again = subprocess.run(base + ["--resume", str(out), "--t-end", "40", "--out", str(tmp_path / "r.npz"),
                                   "--stop-when", "one-cluster:1e-2"], capture_output=True, text=True)
    assert again.returncode == 2 and again.stderr.strip().endswith("do not pass --stop-when")
    carried = subprocess.run(base + ["--resume", str(out), "--t-end", "40", "--out", str(tmp_path / "r.npz"),
                                     "--json"], capture_output=True, text=True)  # the saved event continues
    assert carried.returncode == 0, carried.stderr
    assert json.loads(carried.stdout)["events"]["event"] == "one-cluster:0.01"
