"""The one driver (numerics.core.simulate, issue 39 step 5): one system is a batch of one, an ensemble resumes
through the same path as a single run, the signature and the progress protocol."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.core.blocks import MultiHead
from numerics.core.members import Members, member
from numerics.core.model import Model, SaveAt, Solver
from numerics.core.record import Trajectory
from numerics.core.sampling import uniform_sphere
from numerics.core.simulate import resume, simulate, simulate_keywords, with_provenance


def starts(B: int, n: int, d: int, first: int = 0) -> np.ndarray:
    return np.stack([uniform_sphere(n, d, first + b) for b in range(B)])


_rng = np.random.default_rng(39)
HEADS = MultiHead(*(0.8 * _rng.standard_normal((2, 2, 4)) for _ in range(4)))
#: models whose single run and B = 1 member take the same arithmetic (no tile energies at saved frames: d < 8)
MODELS = {
    "sa": Model("sa", 1.5),
    "usa": Model("usa", 0.7),
    "heads causal": Model("sa", 1.0, heads=HEADS, causal=True),
    "alibi": Model("sa", 1.0, heads=HEADS, alibi=0.5),
    "noise": Model("sa", 1.0, noise=0.3),
}


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("method", ["layer", "rk4"])
def test_a_single_run_is_the_member_of_a_batch_of_one(name, method):
    """One system and the batch (1, n, d) of the same start: the same frames, bit for bit, and the same times;
    the energies agree to rounding (the batch sums pairs, the single run may read its tiles)."""
    X0 = uniform_sphere(9, 4, 5)
    solver = Solver(method, dt=0.05, seed=3)
    single = simulate(MODELS[name], X0, 0.3, solver=solver)
    batch = simulate(MODELS[name], X0[None], 0.3, solver=solver,
                     members=Members(seeds=[3]) if MODELS[name].noise > 0 else None)
    assert batch.X.shape == (single.X.shape[0], 1) + single.X.shape[1:]
    np.testing.assert_array_equal(batch.X[:, 0], single.X)
    np.testing.assert_array_equal(batch.times, single.times)
    np.testing.assert_allclose(batch.energy[:, 0], single.energy, rtol=1e-13, atol=1e-15)
    one = member(batch, 0)
    assert one.meta["beta"] == single.meta["beta"] and one.meta["model"] == single.meta["model"]


@pytest.mark.parametrize("case", ["fixed", "per-member betas", "noise per member", "save every", "layer"])
def test_an_ensemble_resumed_is_the_run_to_the_longer_end(tmp_path, case):
    """resume(ensemble, t_end) (from the file) equals the ensemble run to t_end in one piece: frames, times,
    energies and (noisy runs) the random streams continued, bit for bit with fixed steps."""
    X0 = starts(3, 7, 3, first=20)
    # binary fractions: the step of [0, 0.25], [0.375, 0.75] and [0, 0.75] is the same float (0.0625)
    solver, save, members = Solver("rk4", dt=0.0625), SaveAt(), None
    model = Model("sa", 1.0)
    if case == "per-member betas":
        members = Members(beta=[0.5, 2.0, -1.0])
    elif case == "noise per member":
        members = Members(noise=[0.1, 0.4, 0.2], seeds=[7, 8, 9])
    elif case == "save every":
        save = SaveAt(every=3)
    elif case == "layer":
        solver, model = Solver("layer", dt=0.0625), Model("usa", 1.5)
    short = simulate(model, X0, 0.375, solver=solver, save=save, members=members)
    path = short.save(tmp_path / "short.npz")
    whole = simulate(model, X0, 0.75, solver=solver, save=save, members=members)
    resumed = resume(path, 0.75)
    np.testing.assert_array_equal(resumed.X, whole.X)
    np.testing.assert_array_equal(resumed.energy, whole.energy)
    np.testing.assert_allclose(resumed.times, whole.times, rtol=0, atol=1e-15)
    assert resumed.meta["resumed_from"]["t"] == 0.375 and resumed.meta["batch"] == whole.meta["batch"]
    # and member b of the resumed ensemble is member b of the whole run, with its own meta
    for b in range(3):
        np.testing.assert_array_equal(member(resumed, b).X, member(whole, b).X)
        assert member(resumed, b).meta["beta"] == member(whole, b).meta["beta"]
    # the resumed file resumes again
    again = resume(resumed, 0.875)
    assert again.X.shape[1:] == whole.X.shape[1:] and again.times[-1] == 0.875


def test_an_adaptive_ensemble_resumes_with_its_saved_spacing(tmp_path):
    """Shared and per-member dp5 ensembles resume (the saved spacing kept) and stay within the tolerance of the
    run in one piece; per-member steps stay per member."""
    X0 = starts(2, 6, 3, first=4)
    for step in ("shared", "per-member"):
        solver = Solver("dp5", rtol=1e-8, atol=1e-10, step=step)
        short = simulate(Model("sa", 1.0), X0, 0.5, solver=solver, save=SaveAt(times=np.linspace(0, 0.5, 6)))
        resumed = resume(short, 1.0)
        whole = simulate(Model("sa", 1.0), X0, 1.0, solver=solver, save=SaveAt(times=np.linspace(0, 1.0, 11)))
        np.testing.assert_allclose(resumed.times, whole.times, rtol=0, atol=1e-14)
        np.testing.assert_allclose(resumed.X, whole.X, rtol=0, atol=1e-6)
        assert resumed.meta["batch"]["step"] == short.meta["batch"]["step"]


def test_a_noisy_ensemble_without_its_streams_is_refused():
    X0 = starts(2, 5, 3)
    noisy = simulate(Model("sa", 1.0, noise=0.2), X0, 0.2, solver=Solver("rk4", dt=0.05))
    assert isinstance(noisy.meta["noise_state"], list) and len(noisy.meta["noise_state"]) == 2
    noisy.meta["noise_state"] = None  # a file written before ensembles saved their streams
    with pytest.raises(InputError, match="holds no noise_state"):
        resume(noisy, 0.4)


def test_the_signature_is_keyword_only_after_t_end():
    params = inspect.signature(simulate).parameters
    for name in ("solver", "save", "progress", "members"):
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY, name
    assert "provenance" not in params and "energy_progress" not in params
    assert list(inspect.signature(resume).parameters) == ["trajectory", "t_end", "progress"]
    X0 = uniform_sphere(5, 3, 0)
    with pytest.raises(TypeError, match="provenance"):
        simulate(Model("sa", 1.0), X0, 0.1, provenance={"seed": 0})
    with pytest.raises(TypeError, match="energy_progress"):
        simulate(Model("sa", 1.0), X0, 0.1, energy_progress=print)
    with pytest.raises(TypeError):
        resume(simulate(Model("sa", 1.0), X0, 0.1), 0.2, energy_progress=print)
    with pytest.raises(TypeError, match="X0"):
        simulate(Model("sa", 1.0), X0, 0.1, X0=X0)
    by_name = simulate(Model("sa", 1.0), X0=X0, t_end=0.1)
    np.testing.assert_array_equal(by_name.X, simulate(Model("sa", 1.0), X0, 0.1).X)
    with pytest.raises(InputError, match="needs a Model"):
        simulate(object(), X0, 0.1)


def test_the_keyword_form_lives_under_its_own_name():
    """simulate("sa", ...) forwards to simulate_keywords (with a DeprecationWarning) and records the provenance;
    the driver itself records the start as given (provenance is the caller's: with_provenance)."""
    ours = simulate_keywords("sa", 1.0, 0.2, n=6, d=3, seed=4, dt=0.05)
    with pytest.warns(DeprecationWarning, match="simulate_keywords"):
        old = simulate("sa", 1.0, 0.2, n=6, d=3, seed=4, dt=0.05)
    np.testing.assert_array_equal(ours.X, old.X)
    assert ours.meta["seed"] == 4 and ours.meta["init"] == "uniform"
    plain = simulate(Model("sa", 1.0), uniform_sphere(6, 3, 4), 0.2, solver=Solver("rk4", dt=0.05))
    np.testing.assert_array_equal(plain.X, ours.X)
    assert plain.meta["seed"] is None and plain.meta["init"] == "given"
    assert with_provenance(plain, seed=4, init="uniform") is plain and plain.meta["seed"] == 4


class Recorder:
    """progress(t, t_end) for the integration, progress.energy(done, total) for the energy column."""

    def __init__(self, with_energy: bool = True):
        self.calls, self.energy_calls = [], []
        if with_energy:
            self.energy = lambda done, total: self.energy_calls.append((done, total))

    def __call__(self, t, t_end):
        self.calls.append((t, t_end))


@pytest.mark.parametrize("batch", [False, True])
def test_the_progress_protocol(batch):
    X0 = starts(2, 6, 3) if batch else uniform_sphere(6, 3, 0)
    progress = Recorder()
    traj = simulate(Model("sa", 1.0, kernel=None), X0, 0.2, solver=Solver("rk4", dt=0.05), progress=progress)
    assert progress.calls and progress.calls[-1][0] == pytest.approx(0.2) and progress.calls[-1][1] == 0.2
    assert progress.energy_calls and progress.energy_calls[-1][0] == progress.energy_calls[-1][1]
    if not batch:  # frames (the single run reads X0's energy off its tiles after integrating)
        assert progress.energy_calls[-1][1] == traj.times.size
    resumed = Recorder()
    resume(traj, 0.3, progress=resumed)
    assert resumed.calls[-1][0] == pytest.approx(0.3) and resumed.energy_calls
    assert resumed.energy_calls[-1][0] == resumed.energy_calls[-1][1]
    if not batch:
        assert resumed.energy_calls[-1] == (2, 2)  # the two new frames
    plain = Recorder(with_energy=False)  # a plain callable: the energy phase reports nothing
    simulate(Model("sa", 1.0), X0, 0.1, solver=Solver("rk4", dt=0.05), progress=plain)
    assert plain.calls and not hasattr(plain, "energy")


def test_the_cli_reports_the_energy_phase(tmp_path, capsys):
    """The simulate command hands one progress object with an ``energy`` attribute to the driver."""
    from numerics.common.provenance import StderrProgress
    import numerics.core.simulate as driver_module

    seen = {}
    real = driver_module.Run.run

    def spy(self, progress=None, **kw):
        seen["progress"] = progress
        return real(self, progress, **kw)

    from tests.cli.helpers import run_json

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(driver_module.Run, "run", spy)
        run_json(capsys, ["simulate", "--model", "sa", "--beta", "1", "--n", "5", "--d", "3", "--t-end", "0.1",
                          "--out", str(tmp_path / "t.npz")])
    assert isinstance(seen["progress"], StderrProgress) and isinstance(seen["progress"].energy, StderrProgress)
    assert Trajectory.load(tmp_path / "t.npz").meta["init"] == "uniform"


def test_an_ensemble_with_per_member_matrices_and_normalisations_resumes(tmp_path):
    """Per-member Q (saved as arrays) and betas whose energies take different normalisations (a list in meta)."""
    X0 = starts(2, 6, 3, first=2)
    members = Members(beta=[1.0, 700.0], Q=np.stack([np.eye(3), np.diag([1.0, 0.5, 2.0])]))
    solver = Solver("rk4", dt=0.0625)
    short = simulate(Model("sa", 1.0), X0, 0.125, solver=solver, members=members)
    assert isinstance(short.meta["energy_normalization"], list)
    path = short.save(tmp_path / "m.npz")
    whole = simulate(Model("sa", 1.0), X0, 0.25, solver=solver, members=members)
    resumed = resume(path, 0.25)
    np.testing.assert_array_equal(resumed.X, whole.X)
    np.testing.assert_array_equal(resumed.energy, whole.energy)


@pytest.mark.parametrize("key, value, message", [
    ("batch", None, "lacks a batch record"),
    ("noise_seed", [1], "noise_seed must be a list of 2"),
    ("energy_normalization", ["glpr-shifted", 3], "energy_normalization must be a list of 2"),
])
def test_a_damaged_ensemble_meta_is_one_line(key, value, message):
    traj = simulate(Model("sa", 1.0), starts(2, 5, 3), 0.125, solver=Solver("rk4", dt=0.0625))
    traj.meta[key] = value
    with pytest.raises(InputError, match=message):
        resume(traj, 0.25)


def test_a_member_resumes_as_its_single_run(tmp_path):
    """member(ensemble, b) is a single run's trajectory, its random stream included: resumed alone it equals the
    single run of seed b to the longer end (and the ensemble resumed, member b)."""
    X0 = starts(3, 6, 3, first=1)
    members = Members(noise=[0.2, 0.5, 0.3], seeds=[11, 12, 13])
    solver = Solver("rk4", dt=0.0625)
    ens = simulate(Model("sa", 1.0), X0, 0.25, solver=solver, members=members)
    for b in range(3):
        one = member(ens, b)
        assert isinstance(one.meta["noise_state"], dict) and one.meta["noise_seed"] == 11 + b
        single = simulate(Model("sa", 1.0, noise=[0.2, 0.5, 0.3][b]), X0[b], 0.5,
                          solver=Solver("rk4", dt=0.0625, seed=11 + b))
        np.testing.assert_array_equal(resume(one, 0.5).X, single.X)
        np.testing.assert_array_equal(member(resume(ens, 0.5), b).X, single.X)


def test_the_cli_resumes_an_ensemble_file(tmp_path, capsys):
    from tests.cli.helpers import bad, run_json

    base = ["simulate", "--model", "sa", "--beta", "1", "--n", "5", "--d", "3", "--dt", "0.0625"]
    run_json(capsys, base + ["--batch", "2", "--t-end", "0.25", "--out", str(tmp_path / "a.npz")])
    run_json(capsys, base + ["--batch", "2", "--t-end", "0.5", "--out", str(tmp_path / "whole.npz")])
    payload = run_json(capsys, ["simulate", "--resume", str(tmp_path / "a.npz"), "--t-end", "0.5",
                                "--out", str(tmp_path / "b.npz")])
    assert payload["batch"] == 2 and payload["t_end"] == 0.5 and len(payload["members"]) == 2
    assert [m["seed"] for m in payload["members"]] == [0, 1]
    np.testing.assert_array_equal(Trajectory.load(tmp_path / "b.npz").X, Trajectory.load(tmp_path / "whole.npz").X)
    line = bad(capsys, ["simulate", "--resume", str(tmp_path / "a.npz"), "--t-end", "0.5", "--plot", "p.png",
                        "--out", str(tmp_path / "c.npz")])
    assert "--plot draws one system" in line
