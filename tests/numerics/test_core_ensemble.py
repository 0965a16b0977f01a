"""Ensembles (numerics.core.ensemble, numerics.core.batch_field): members of a batch against single runs.

Where each member must equal the single run bit for bit: fixed steps (``layer``, ``rk4``) with one head (Q = K = I
and general Q, K, V, shared or per member), beta shared or per member, several heads with MLP and causal mask,
depth schedules, noise (shared or per-member D, per-member seeds). Where they agree within a stated bound: the
energies (another summation order) and the adaptive methods (one step shared by the members).
"""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.core import batch_field, ensemble
from numerics.core.blocks import MLP, MultiHead, Schedule
from numerics.core.ensemble import Members, member
from numerics.core.simulate import simulate_ensemble, with_provenance
from numerics.core.model import Model, SaveAt, Solver
from numerics.core.threads import blas_threads_for
from numerics.core.trajectory import Trajectory, simulate, uniform_sphere

EPS = np.finfo(float).eps


def starts(B, n, d, first=0):
    return np.stack([uniform_sphere(n, d, first + b) for b in range(B)])


def assert_members_equal_single(model_of, X0, t_end, solver, members=None, seeds=None):
    """Every member of the ensemble equals the single run of its own model and seed bit for bit."""
    B = X0.shape[0]
    model = model_of(None)
    ens = simulate(model, X0, t_end, solver=solver, members=members)
    assert ens.X.shape == (len(ens.times), B) + X0.shape[1:] and ens.energy.shape == (len(ens.times), B)
    for b in range(B):
        seed = solver.seed + b if seeds is None else seeds[b]
        single = simulate(model_of(b), X0[b], t_end, solver=dataclasses.replace(solver, seed=seed))
        np.testing.assert_array_equal(ens.X[:, b], single.X, err_msg=f"member {b}")
        np.testing.assert_array_equal(ens.times, single.times)
        assert_energy_close(ens.energy[:, b], single.X, single.energy, single.meta["beta"])
    return ens


def energy_bound(X, beta):
    """Rounding bound of E = 1/(2 beta n^2) sum_ij expm1(beta s_ij) between two summation orders: 4 n eps times
    the sum of the absolute terms (pairwise and blocked sums of n^2 terms err by at most ~log2(n^2) eps each)."""
    n = X.shape[-2]
    G = X @ np.swapaxes(X, -1, -2)
    terms = np.abs(np.expm1(beta * G) / beta) if beta != 0 else np.abs(G)
    return 4 * n * EPS * terms.sum(axis=(-1, -2)) / (2 * n**2) + 1e-300


def assert_energy_close(got, X, expected, beta):
    bound = energy_bound(X, beta)
    assert np.all(np.abs(got - expected) <= bound), (np.max(np.abs(got - expected) / bound))


# -- bit for bit -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["sa", "usa"])
@pytest.mark.parametrize("method", ["rk4", "layer"])
def test_members_equal_single_runs_one_head(kind, method):
    X0 = starts(4, 12, 3)
    assert_members_equal_single(lambda b: Model(kind, 3.0), X0, 1.0, Solver(method, dt=0.05))


def test_per_member_beta_and_rescaled_time():
    betas = np.array([0.0, 0.5, 3.0, -2.0, 9.0])
    X0 = starts(5, 10, 3)
    assert_members_equal_single(lambda b: Model("sa", 1.0 if b is None else betas[b]), X0, 1.0,
                                Solver("rk4", dt=0.05), Members(beta=betas))
    assert_members_equal_single(lambda b: Model("usa", 1.0 if b is None else betas[b], time_unit="rescaled"), X0,
                                0.5, Solver("rk4", dt=0.05), Members(beta=betas))


def test_per_member_and_shared_matrices():
    rng = np.random.default_rng(4)
    Q, K, V = (0.6 * rng.standard_normal((3, 4, 4)) for _ in range(3))
    X0 = starts(3, 9, 4)
    assert_members_equal_single(lambda b: Model("sa", 2.0, **({} if b is None else {"Q": Q[b], "K": K[b], "V": V[b]})),
                                X0, 1.0, Solver("rk4", dt=0.05), Members(Q=Q, K=K, V=V))
    assert_members_equal_single(lambda b: Model("usa", 1.5, Q=Q[0], V=V[1]), X0, 1.0, Solver("rk4", dt=0.05))


def test_heads_mlp_causal_and_schedule():
    rng = np.random.default_rng(5)
    heads = MultiHead(*(rng.standard_normal((3, 2, 4)) for _ in range(4)))
    mlp = MLP(rng.standard_normal((6, 4)), rng.standard_normal(6), rng.standard_normal((4, 6)), rng.standard_normal(4),
              activation="gelu")
    X0 = starts(3, 8, 4)
    betas = np.array([0.5, 1.0, 2.0])
    assert_members_equal_single(lambda b: Model("sa", 1.0 if b is None else betas[b], heads=heads, mlp=mlp,
                                                causal=True), X0, 0.6, Solver("rk4", dt=0.05), Members(beta=betas))
    schedule = Schedule(times=[0.0, 0.3], heads=(heads, MultiHead(*(rng.standard_normal((2, 3, 4)) for _ in range(4)))))
    assert_members_equal_single(lambda b: Model("usa", 1.0, schedule=schedule), X0, 0.6, Solver("rk4", dt=0.05))


def test_noise_streams_per_member_equal_single_streams():
    X0 = starts(4, 8, 3)
    for method in ("rk4", "layer"):
        assert_members_equal_single(lambda b: Model("sa", 2.0, noise=0.2), X0, 0.5, Solver(method, dt=0.05, seed=7))
    seeds = [11, 3, 3, 40]  # two members share a stream: they get the same increments
    D = np.array([0.05, 0.1, 0.3, 0.4])
    ens = assert_members_equal_single(lambda b: Model("sa", 2.0, noise=0.0 if b is None else D[b]), X0, 0.5,
                                      Solver("rk4", dt=0.05), Members(noise=D, seeds=seeds), seeds=seeds)
    assert ens.meta["noise_seed"] == seeds and ens.meta["batch"]["noise"] == D.tolist()


def test_member_groups_do_not_change_the_bits(monkeypatch):
    """Processing the members in groups (bounded memory) changes no member's arithmetic."""
    X0 = starts(7, 20, 3)
    whole = simulate(Model("sa", 4.0), X0, 0.5, solver=Solver("rk4", dt=0.05))
    from numerics.core import sums

    monkeypatch.setattr(sums, "BATCH_TILE_ENTRIES", 1)  # one member per group (numerics.core.sums.member_groups)
    split = simulate(Model("sa", 4.0), X0, 0.5, solver=Solver("rk4", dt=0.05))
    np.testing.assert_array_equal(whole.X, split.X)
    assert batch_field.member_groups(7, 1, 3) == [slice(0, 3), slice(3, 6), slice(6, 7)]


def test_a_planted_error_in_the_batched_tiles_is_seen(monkeypatch):
    """The bitwise comparison fails when the mirrored half of the symmetric tiles is dropped for batches (a planted
    error in the one blocked primitive, numerics.core.sums, that only calls with several members see)."""
    from numerics.core import sums

    real = sums.symmetric_tile_sums

    def no_mirror(lhs, right, rhs, b, beta, energy_shift=None):
        if lhs.ndim == 2 or lhs.shape[0] == 1:  # one system ((n, p), or a group of one member): the real sums
            return real(lhs, right, rhs, b, beta, energy_shift)
        B, n, q = lhs.shape[0], lhs.shape[1], rhs.shape[2]
        acc = np.zeros((B, n, q))
        for start in range(0, n, b):
            stop = min(n, start + b)
            W = np.exp(lhs[:, start:stop] @ right[:, :, start:])
            acc[:, start:stop] += W @ rhs[:, start:]
        return acc, None

    monkeypatch.setattr(sums, "symmetric_tile_sums", no_mirror)
    with pytest.raises(AssertionError):
        assert_members_equal_single(lambda b: Model("sa", 3.0), starts(2, 40, 3), 0.3, Solver("rk4", dt=0.05))


# -- within a stated bound ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["dp5", "dop853"])
def test_adaptive_shared_step_meets_every_members_tolerance(method):
    """One step for all members, controlled by the worst: each member's error against a tight reference is at
    most 10 times the single run's own error (plus 1e-10), and every member took the same steps."""
    X0 = starts(3, 10, 3)
    betas = np.array([1.0, 4.0, 9.0])
    solver = Solver(method, rtol=1e-6, atol=1e-9)
    ens = simulate(Model("sa", 1.0), X0, 1.5, solver=solver, members=Members(beta=betas))
    for b in range(3):
        single = simulate(Model("sa", betas[b]), X0[b], 1.5, solver=solver)
        tight = simulate(Model("sa", betas[b]), X0[b], 1.5, solver=Solver("dop853", rtol=1e-12, atol=1e-14))
        own = np.abs(single.X - tight.X).max()
        assert np.abs(ens.X[:, b] - tight.X).max() <= 10 * own + 1e-10
    assert ens.meta["batch"]["step"].startswith("shared")


def assert_per_member_equals_single(model_of, X0, t_end, solver, members=None, save=None):
    """Per-member adaptive steps: every member equals its single dp5 run bit for bit, step counts included."""
    ens = simulate(model_of(None), X0, t_end, solver=solver, members=members, save=save)
    stats = ens.meta["integrator_stats"]
    for b in range(X0.shape[0]):
        single = simulate(model_of(b), X0[b], t_end, solver=dataclasses.replace(solver, step="shared"), save=save)
        np.testing.assert_array_equal(ens.X[:, b], single.X, err_msg=f"member {b}")
        one = single.meta["integrator_stats"]
        assert (stats["accepted_steps"][b], stats["rejected_steps"][b], stats["field_evaluations"][b]) == \
            (one["accepted_steps"], one["rejected_steps"], one["field_evaluations"]), f"member {b}"
    return ens


def test_per_member_steps_equal_single_runs_bit_for_bit():
    """Each member has its own step size and accept/reject: it takes exactly its single run's steps."""
    betas = np.array([0.5, 2.0, 12.0, -1.0])
    X0 = starts(4, 9, 3)
    ens = assert_per_member_equals_single(lambda b: Model("sa", 1.0 if b is None else betas[b]), X0, 1.5,
                                          Solver("dp5", rtol=1e-7, atol=1e-10, step="per-member"),
                                          Members(beta=betas), SaveAt(times=[0.0, 0.4, 1.5]))
    assert ens.meta["batch"]["step"].startswith("per member")
    rng = np.random.default_rng(8)
    heads = MultiHead(*(rng.standard_normal((2, 2, 4)) for _ in range(4)))
    assert_per_member_equals_single(lambda b: Model("sa", 1.0 if b is None else betas[b], heads=heads),
                                    starts(4, 6, 4), 0.8, Solver("adaptive", rtol=1e-2, step="per-member"),
                                    Members(beta=betas), SaveAt(times=[0.0, 0.3, 0.8]))


def test_a_stiff_member_no_longer_sets_the_others_steps():
    """With a shared step every member takes the worst member's steps; per member, each takes its own (the
    single run's count), so the easy members take far fewer."""
    betas = np.array([1.0, 1.0, 40.0])
    X0 = starts(3, 8, 3)
    save = SaveAt(times=[0.0, 3.0])
    per = simulate(Model("sa", 1.0), X0, 3.0, solver=Solver("dp5", rtol=1e-8, step="per-member"),
                   members=Members(beta=betas), save=save).meta["integrator_stats"]
    shared = simulate(Model("sa", 1.0), X0, 3.0, solver=Solver("dp5", rtol=1e-8), members=Members(beta=betas),
                      save=save).meta["integrator_stats"]
    steps = [a + r for a, r in zip(per["accepted_steps"], per["rejected_steps"])]
    assert max(steps) <= shared["accepted_steps"] + shared["rejected_steps"]
    assert min(steps) * 4 <= shared["accepted_steps"] + shared["rejected_steps"], (steps, shared)
    assert per["batched_evaluations"] < shared["field_evaluations"]


def test_per_member_step_control_is_the_single_runs():
    """The step-size constants of the per-member loop are those of integrate_adaptive (the bitwise test above
    would see a difference only where a step is rejected or shortened)."""
    import inspect

    from numerics.core import integrators, member_adaptive

    source = inspect.getsource(integrators.integrate_adaptive)
    assert (f"safety, fac_min, fac_max = {member_adaptive.SAFETY}, {member_adaptive.FAC_MIN}, "
            f"{member_adaptive.FAC_MAX}") in source


def test_noisy_ensembles_load_the_noise_through_the_single_runs_loader(monkeypatch):
    """One loader (numerics.core.noise_loader.noise_scheme) serves single runs and ensembles."""
    from numerics.core import noise_loader

    def refuse(solver, save):
        raise InputError("planted: the shared loader was used")

    monkeypatch.setattr(noise_loader, "noise_scheme", refuse)
    for X0 in (starts(2, 5, 3), starts(1, 5, 3)[0]):
        with pytest.raises(InputError, match="planted"):
            simulate(Model("sa", 1.0, noise=0.1), X0, 0.1, solver=Solver("layer", dt=0.05))


def test_shared_step_norm_is_the_worst_members():
    """The adaptive methods' RMS norm of an ensemble is the largest member's (each member meets its tolerance)."""
    from numerics.core.integrators import _rms

    Z = np.zeros((3, 4, 2))
    Z[1] = 2.0
    assert _rms(Z) == 2.0 and _rms(Z[1]) == 2.0


def test_energies_agree_with_interaction_energy_in_every_normalisation():
    from numerics.core.field import interaction_energy

    rng = np.random.default_rng(2)
    X = starts(6, 15, 3)[None]
    betas = np.array([0.0, 1e-8, 0.7, -3.0, 700.0, -800.0])
    norms = ["glpr-shifted", "glpr-shifted", "log-mean-exp", "log-mean-exp", "gkpr", "log-mean-exp"]
    got = ensemble.ensemble_energies(X, betas, norms)
    for b in range(6):
        want = interaction_energy(X[0, b], betas[b], normalization=norms[b])
        assert abs(got[0, b] - want) <= 1e-13 * max(1.0, abs(want)), (b, got[0, b], want)
    assert rng is not None


# -- files, members, refusals -----------------------------------------------------------------------------------------
def test_file_round_trip_and_member_view(tmp_path):
    betas = np.array([1.0, 5.0])
    ens = with_provenance(simulate(Model("sa", 1.0), starts(2, 6, 3, first=10), 0.5, solver=Solver("rk4", dt=0.1),
                                   members=Members(beta=betas)), seed=[10, 11])
    path = ens.save(tmp_path / "ens.npz")
    back = Trajectory.load(path)
    np.testing.assert_array_equal(back.X, ens.X)
    one = member(back, 1)
    single = simulate("sa", 5.0, 0.5, n=6, d=3, seed=11, dt=0.1)
    np.testing.assert_array_equal(one.X, single.X)
    assert one.meta["beta"] == 5.0 and one.meta["seed"] == 11 and one.meta["member"] == {"index": 1, "of": 2}
    from numerics.core.trajectory import resume  # an ensemble resumes through the one driver (issue 39)

    longer = simulate(Model("sa", 1.0), starts(2, 6, 3, first=10), 1.0, solver=Solver("rk4", dt=0.1),
                      members=Members(beta=betas))
    np.testing.assert_array_equal(resume(path, 1.0).X, longer.X)
    data = dict(np.load(path))
    data["X"][1, 0, 2] *= 1.1
    np.savez(tmp_path / "bad.npz", **data)
    with pytest.raises(InputError, match="member 0 row 2 is off the unit sphere"):
        Trajectory.load(tmp_path / "bad.npz")


@dataclasses.dataclass(frozen=True, eq=False)
class _FutureModel(Model):
    """A model with a field added later by another area (the ensemble does not know it)."""

    future: str = "none"


@pytest.mark.parametrize("call, message", [
    (lambda: simulate(Model("sa", 1.0), starts(2, 5, 2), 1.0, solver=Solver("rk4", dt=0.1, backend="fourier")),
     "fourier backend evaluates one system"),
    (lambda: simulate(Model("sa", 1.0, heads=MultiHead(*(np.ones((2, 2, 3)),) * 4), causal=True), starts(2, 5, 3),
                      1.0, solver=Solver("rk4", dt=0.1, backend="numba")), "numba backend of a batch evaluates one"),
    (lambda: simulate(Model("sa", 1.0), starts(2, 5, 3), 1.0, solver=Solver("dop853", step="per-member")),
     "per-member adaptive steps run dp5 only"),
    (lambda: simulate(Model("sa", 1.0), starts(2, 5, 3), 1.0, solver=Solver("dp5", step="each")),
     "step must be one of"),
    (lambda: simulate(_FutureModel("sa", 1.0, future="on"), starts(2, 5, 3), 1.0),
     "do not support Model.future yet"),
    (lambda: simulate(Model("sa", 1.0), starts(2, 5, 3), 1.0, members=Members(beta=[1.0, 2.0, 3.0])),
     "3 values for a batch of 2 members"),
    (lambda: simulate(Model("sa", 1.0), starts(2, 5, 3), 1.0, members=Members(Q=np.eye(3)[None])),
     "1 values for a batch of 2"),
    (lambda: simulate(Model("sa", 1.0), starts(2, 5, 3), 1.0, members=Members(noise=[0.0, 0.1])),
     "all zero or all positive"),
    (lambda: simulate(Model("sa", 1.0), starts(2, 5, 3)[:, :, :2], 1.0), "off the unit sphere"),
    (lambda: simulate(Model("sa", 1.0), np.zeros((0, 5, 3)), 1.0), "B >= 1"),
    (lambda: simulate(Model("sa", 1.0), uniform_sphere(5, 3, 0), 1.0, members=Members()), "3 dimensions"),
    (lambda: simulate(Model("sa", 1.0), np.ones((10**6, 1000, 3)) if False else _huge(), 1.0), "memory"),
])
def test_bad_batches_are_refused_before_work(call, message):
    with pytest.raises(InputError, match=message):
        call()


def _huge():
    """A (B, n, d) view whose size would not fit: refused from its shape (no data is touched)."""
    return np.lib.stride_tricks.as_strided(np.ones(3) / np.sqrt(3), shape=(10**5, 10**4, 3), strides=(0, 0, 8))


def test_circle_and_rd_integrators_refuse_batches_with_one_line():
    from numerics.circle.angles import simulate_circle
    from numerics.rd.dynamics import simulate_rd
    from numerics.rd.model import RdModel

    with pytest.raises(InputError, match="must have 1 dimensions"):
        simulate_circle("sa", 1.0, 1.0, theta0=np.zeros((3, 5)), dt=0.1)
    with pytest.raises(InputError, match="must have 2 dimensions"):
        simulate_rd(RdModel("softmax", 3, np.eye(3), A=np.eye(3)), starts(2, 5, 3), 1.0, solver=Solver("rk4", dt=0.1))


def test_kernel_models_run_for_batches_as_single_runs():
    """User kernels are a weight of the one attention pipeline: members equal their single runs bit for bit (the
    field and the kernel's pair energy); with the numba backend both paths refuse in one line."""
    from theory.expression_parser import parse_kernel

    kernel = parse_kernel("exp(beta*s)", {})
    X0 = starts(2, 5, 3)
    ens = simulate(Model("usa", 1.0, kernel=kernel), X0, 0.3, solver=Solver("rk4", dt=0.05))
    for b in range(2):
        single = simulate(Model("usa", 1.0, kernel=kernel), X0[b], 0.3, solver=Solver("rk4", dt=0.05))
        np.testing.assert_array_equal(ens.X[:, b], single.X)
        np.testing.assert_array_equal(ens.energy[:, b], single.energy)
    assert ens.meta["energy_normalization"] == "kernel" == single.meta["energy_normalization"]
    for X in (X0, X0[0]):
        with pytest.raises(InputError, match="numba backend") as err:
            simulate(Model("usa", 1.0, kernel=kernel), X, 0.3, solver=Solver("rk4", dt=0.05, backend="numba"))
        assert "\n" not in str(err.value)


# -- threads ---------------------------------------------------------------------------------------------------------
def test_thread_rule(monkeypatch):
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "ATTNFLOW_BLAS_THREADS"):
        monkeypatch.delenv(var, raising=False)
    assert blas_threads_for(1e6, cores=2, load=0.0).threads == 1  # small field
    assert blas_threads_for(1e9, cores=2, load=0.1).threads == 2  # idle machine, large field
    assert blas_threads_for(1e9, cores=2, load=1.7).threads == 1  # busy machine
    assert blas_threads_for(1e9, cores=8, load=3.2).threads == 5
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    assert blas_threads_for(1e9, cores=2, load=5.0).threads is None  # the user's setting is kept
    monkeypatch.setenv("ATTNFLOW_BLAS_THREADS", "3")
    assert blas_threads_for(1e3, cores=2, load=5.0).threads == 3
    monkeypatch.setenv("ATTNFLOW_BLAS_THREADS", "zero")
    with pytest.raises(InputError, match="ATTNFLOW_BLAS_THREADS"):
        blas_threads_for(1e3)


def test_thread_choice_is_applied_and_recorded(monkeypatch):
    from threadpoolctl import threadpool_info

    seen = []
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv("ATTNFLOW_BLAS_THREADS", "1")

    def spy(X):
        seen.append({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})
        return np.zeros_like(X)

    monkeypatch.setattr(Model, "vector_field", lambda self, n, d, backend="auto": (spy, "direct"))
    traj = simulate(Model("sa", 1.0), uniform_sphere(5, 3, 0), 0.1, solver=Solver("rk4", dt=0.1))
    assert seen and all(s == {1} for s in seen)
    assert traj.meta["threads"]["blas_threads_chosen"] == 1
    assert "ATTNFLOW_BLAS_THREADS=1" in traj.meta["threads"]["choice"]["reason"]
    json.dumps(traj.meta["threads"])


# -- the command line ---------------------------------------------------------------------------------------------------
def test_cli_batch(tmp_path, capsys):
    from numerics.cli import main

    out = tmp_path / "b.npz"
    assert main(["simulate", "--model", "sa", "--n", "6", "--d", "3", "--betas", "1,4", "--seeds", "3,9",
                 "--t-end", "0.5", "--dt", "0.1", "--out", str(out), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["batch"] == 2 and [m["seed"] for m in payload["members"]] == [3, 9]
    single = simulate("sa", 4.0, 0.5, n=6, d=3, seed=9, dt=0.1)
    np.testing.assert_array_equal(member(Trajectory.load(out), 1).X, single.X)
    for argv, message in [(["--batch", "3", "--seeds", "1,2"], "batch size differs"),
                          (["--batch", "0"], "--batch must be >= 1"),
                          (["--betas", "1,x"], "--betas must be comma-separated numbers"),
                          (["--batch", "2", "--plot", "p.png"], "--plot draws one system"),
                          (["--batch", "2", "--backend", "fourier"], "fourier backend"),
                          (["--batch", "2", "--method", "dop853", "--step", "per-member"], "run dp5 only"),
                          (["--step", "per-member"], "applies to an ensemble"),
                          (["--batch", "2", "--step", "per-member"], "--method rk4 takes fixed steps"),
                          (["--batch", "2", "--method", "dp5", "--noise", "0.1", "--step", "per-member"],
                           "does not apply to noisy runs")]:
        base = ["simulate", "--model", "sa", "--n", "6", "--d", "2", "--beta", "1", "--t-end", "0.2",
                "--out", str(tmp_path / "x.npz")]
        assert main(base + argv) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "x.npz").exists() and not (tmp_path / "p.png").exists()
    np.save(tmp_path / "init.npy", starts(2, 4, 3))
    assert main(["simulate", "--model", "sa", "--init", str(tmp_path / "init.npy"), "--batch", "2", "--beta", "1",
                 "--t-end", "0.2", "--out", str(tmp_path / "i.npz")]) == 0
    capsys.readouterr()
    assert main(["simulate", "--model", "sa", "--n", "6", "--d", "3", "--betas", "1,4", "--method", "dp5",
                 "--step", "per-member", "--t-end", "0.5", "--out", str(tmp_path / "p.npz"), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["step"].startswith("per member")
    with pytest.raises(SystemExit):
        main(["simulate", "--model", "sa", "--n", "6", "--d", "3", "--batch", "2", "--step", "each"])
    assert "invalid choice: 'each'" in capsys.readouterr().err
    single = simulate("sa", 4.0, 0.5, n=6, d=3, seed=1, method="dp5")
    np.testing.assert_array_equal(member(Trajectory.load(tmp_path / "p.npz"), 1).X, single.X)


def test_ensemble_meta_is_json(tmp_path):
    ens = simulate_ensemble(Model("sa", 1.0), starts(2, 4, 3), 0.2, Solver("rk4", dt=0.1), SaveAt())
    json.dumps(ens["meta"])
    assert ens["meta"]["batch"]["B"] == 2 and ens["meta"]["energy_normalization"] == "glpr-shifted"


def test_per_member_noise_too_large_for_the_weak2_step_is_refused_with_the_largest_member():
    """The geodesic noise step (numerics.noise.sde, shared by single runs and ensembles) checks every member's
    D h < 3/(d-2) and names the largest D h."""
    X0 = starts(3, 5, 4)
    with pytest.raises(InputError, match=r"got D h = 1\.6$"):
        simulate(Model("sa", 1.0), X0, 0.5, solver=Solver("rk4", dt=0.5),
                 members=Members(noise=[0.1, 3.2, 0.2], seeds=[1, 2, 3]))
