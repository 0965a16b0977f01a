"""simulate's overhead cuts keep the results: every saved energy (X0's now read off the first step's row sums
instead of a separate pair sum) equals the pair-sum energy of the saved frame within the tile-energy bound."""
import numpy as np
import pytest

from numerics.core.field import TILE_ENERGY_MAX_ERROR, RowSumMemo, interaction_energy
from numerics.core.model import Model, SaveAt, Solver
from numerics.core.trajectory import simulate, uniform_sphere


def _check_energies(traj, beta):
    norm = traj.meta["energy_normalization"]
    want = np.array([interaction_energy(X, beta, normalization=norm) for X in traj.X])
    assert np.all(np.abs(traj.energy - want) <= 2 * TILE_ENERGY_MAX_ERROR * np.abs(want) + 1e-300)


@pytest.mark.parametrize("solver", [Solver("rk4", dt=0.1), Solver("layer", dt=0.1), Solver("dop853")])
def test_saved_energies_equal_pair_sums(solver):
    model = Model("sa", 4.0)
    traj = simulate(model, uniform_sphere(60, 3, 1), 1.0, solver=solver, save=SaveAt(every=2))
    _check_energies(traj, 4.0)


def test_wrong_row_sum_energy_is_caught(monkeypatch):
    good = RowSumMemo.energy

    def planted(self, X, normalization):
        value = good(self, X, normalization)
        return None if value is None else value * (1 + 1e-10)

    monkeypatch.setattr(RowSumMemo, "energy", planted)
    traj = simulate(Model("sa", 4.0), uniform_sphere(60, 3, 1), 0.5, solver=Solver("rk4", dt=0.1))
    with pytest.raises(AssertionError):
        _check_energies(traj, 4.0)
