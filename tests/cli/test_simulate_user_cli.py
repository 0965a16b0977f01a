"""simulate as a new user runs it: the energy of Fourier runs in O(n K), honest wall time, explicit save times."""
import numpy as np
import pytest

import numerics.core.simulate as trajectory_module  # the driver (numerics.core.simulate, issue 39)
from numerics.common.errors import InputError
from numerics.core.commands.simulate import parse_save_times
from numerics.core.field import interaction_energy
from numerics.core.model import Model, SaveAt, Solver
from numerics.core.trajectory import Trajectory, simulate, uniform_sphere
from tests.cli.helpers import bad, run_json


def test_fourier_energy_from_order_parameters_equals_direct(tmp_path, capsys, monkeypatch):
    """The fourier backend's energy column never calls the O(n^2) pair sum and equals it to 1e-12 relative."""
    out = tmp_path / "f.npz"
    direct_calls = []
    monkeypatch.setattr(trajectory_module, "interaction_energy",
                        lambda *a, **k: direct_calls.append(1) or interaction_energy(*a, **k))
    payload = run_json(capsys, ["simulate", "--model", "usa", "--n", "300", "--d", "2", "--beta", "30",
                                "--t-end", "5", "--time-unit", "rescaled", "--dt", "0.5", "--backend", "fourier",
                                "--out", str(out)])
    assert direct_calls == [], "the fourier run computed its energy with the O(n^2) pair sum"
    assert payload["backend"] == "fourier" and payload["energy_method"].startswith("order parameters")
    traj = Trajectory.load(out)
    direct = np.array([interaction_energy(X, 30.0) for X in traj.X])  # the other code path, pinned
    assert np.max(np.abs(traj.energy - direct) / np.abs(direct)) < 1e-12


def test_seconds_is_the_wall_time_of_the_whole_command(tmp_path, capsys, monkeypatch):
    """A slow energy or write step shows up in 'seconds' and in its breakdown (today: integration only)."""
    import time

    slow_energy = trajectory_module.frame_energies

    def slow(*a, **k):
        time.sleep(0.3)
        return slow_energy(*a, **k)

    monkeypatch.setattr(trajectory_module, "frame_energies", slow)
    payload = run_json(capsys, ["simulate", "--model", "sa", "--n", "8", "--d", "3", "--beta", "1", "--t-end", "0.2",
                                "--out", str(tmp_path / "t.npz")])
    t = payload["timings"]
    assert payload["seconds"] >= 0.3 and t["energy"] >= 0.3
    assert set(t) == {"integrate", "energy", "write", "other"}
    assert payload["seconds"] == pytest.approx(sum(t.values()), rel=1e-9, abs=1e-9)
    assert payload["versions"]["numpy"] == np.__version__


@pytest.mark.parametrize("method", ["layer", "rk4", "adaptive"])
def test_save_times_are_honoured_by_every_method(tmp_path, capsys, method):
    out = tmp_path / "t.npz"
    payload = run_json(capsys, ["simulate", "--model", "sa", "--n", "6", "--d", "3", "--beta", "1", "--t-end", "2",
                                "--dt", "0.05", "--method", method, "--save-times", "log:0.01:1:5", "--out", str(out)])
    traj = Trajectory.load(out)
    expected = np.concatenate([[0.0], np.geomspace(0.01, 1.0, 5), [2.0]])
    assert payload["frames"] == 7
    np.testing.assert_allclose(traj.times, expected, rtol=1e-15, atol=0)


def test_fixed_step_save_times_match_the_plain_run():
    """Landing on save times changes only where the steps fall: the state at t = 1 agrees with a plain run
    (rk4, h <= 0.01: both errors ~1e-9 or below, so they agree to 1e-7)."""
    model = Model("sa", beta=2.0)
    X0 = uniform_sphere(7, 3, 1)
    plain = simulate(model, X0, 1.0, solver=Solver("rk4", dt=0.01))
    timed = simulate(model, X0, 1.0, solver=Solver("rk4", dt=0.01), save=SaveAt(times=[0.0, 0.0137, 0.5, 1.0]))
    np.testing.assert_array_equal(timed.times, [0.0, 0.0137, 0.5, 1.0])
    assert np.max(np.abs(timed.X[-1] - plain.X[-1])) < 1e-7


def test_parse_save_times():
    np.testing.assert_array_equal(parse_save_times("0.5, 1", 2.0), [0.0, 0.5, 1.0, 2.0])
    np.testing.assert_array_equal(parse_save_times("0,2", 2.0), [0.0, 2.0])
    for text in ("1,0.5", "log:0:1:3", "log:1:2", "a,b", "3", "log:1:2:1"):
        with pytest.raises(InputError):
            parse_save_times(text, 2.0)


def test_save_times_bad_input(tmp_path, capsys):
    line = bad(capsys, ["simulate", "--model", "sa", "--n", "4", "--d", "3", "--beta", "1", "--t-end", "1",
                        "--save-times", "log:0:1:3", "--out", str(tmp_path / "t.npz")])
    assert "save-times" in line


def test_pca_projection_separates_clusters_the_first_coordinates_hide():
    """Two antipodal clusters along e_5 (d = 6): the first two coordinates put both at the origin, the
    principal axes put them at +-1 (today's plot showed only the first two coordinates)."""
    from numerics.common.plots import principal_axes

    rng = np.random.default_rng(0)
    X = np.zeros((20, 6))
    X[:10, 4], X[10:, 4] = 1.0, -1.0
    X[:, 5] = 1e-3 * rng.normal(size=20)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    first = X[:, :2]
    pca = X @ principal_axes(X)
    assert np.max(np.abs(first)) == 0.0
    assert np.min(np.abs(pca[:, 0])) > 0.99


def test_simulate_plot_d6_pca(tmp_path, capsys):
    png = tmp_path / "s.png"
    payload = run_json(capsys, ["simulate", "--model", "sa", "--n", "10", "--d", "6", "--beta", "1", "--t-end", "0.2",
                                "--out", str(tmp_path / "t.npz"), "--plot", str(png), "--projection", "pca"])
    assert payload["plot"] == str(png) and png.stat().st_size > 1000
