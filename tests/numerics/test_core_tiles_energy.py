"""Cache-sized tiles of the field and the blocked expm1 energy, against the untiled field and an exact n x n sum."""
import math

import numpy as np
import pytest
from scipy.special import exprel

import numerics.core.field as field_module
from numerics.core.field import (_parse_cache_size, attention_field, block_rows, interaction_energy, l2_cache_bytes,
                                 tile_rows)
from numerics.core.trajectory import uniform_sphere

#: relative tolerance between two summation orders of the same float64 sums (n <= 400 terms of size <= e^beta):
#: a few hundred ulp
ROUNDING = 1e-13


def test_cache_size_parsing_and_tile_rows(monkeypatch):
    assert _parse_cache_size("1024K\n") == 1 << 20 and _parse_cache_size("2M") == 2 << 20
    assert l2_cache_bytes() > 0
    # half of a 1 MiB L2 holds 15 rows of 4096 + 2 * 4 numbers; never fewer than 8 rows; tall tiles from d = 8 on
    assert tile_rows(4096, 3, cache_bytes=1 << 20) == 15
    assert tile_rows(1 << 20, 3, cache_bytes=1 << 20) == field_module.TILE_MIN_ROWS
    assert tile_rows(10, 3, cache_bytes=1 << 20) == 10
    assert tile_rows(4096, 64) == block_rows(4096)
    l2_cache_bytes.cache_clear()
    monkeypatch.setattr(field_module.os, "listdir", lambda path: (_ for _ in ()).throw(OSError(path)))
    try:
        assert l2_cache_bytes() == field_module.L2_FALLBACK_BYTES
    finally:
        l2_cache_bytes.cache_clear()


@pytest.mark.parametrize("d", [3, 16])
@pytest.mark.parametrize("model", ["sa", "usa"])
def test_tiled_field_equals_one_block(d, model, rng):
    n = 400
    X = uniform_sphere(n, d, 3)
    Q, K, V = (np.eye(d) + 0.3 * rng.standard_normal((d, d)) for _ in range(3))
    for mats in ((None, None, None), (Q, K, V)):
        tiled = attention_field(X, 2.0, model, *mats)  # default tiles: tile_rows(400, d) rows
        whole = attention_field(X, 2.0, model, *mats, block=n)
        assert np.max(np.abs(tiled - whole)) <= ROUNDING * np.max(np.abs(whole))
    assert tile_rows(n, 3) < n  # the d = 3 case really is tiled


def exact_shifted_energy(X, beta):
    """Full n x n sum of s exprel(beta s) (the first release's form), halved and normalised."""
    G = X @ X.T
    return float((G * exprel(beta * G)).sum()) / (2 * len(X) ** 2)


BETAS = [0.0, 5e-324, 1e-300, 1e-7, 1e-5, 0.3, 1.0, -3.0, 40.0]


@pytest.mark.parametrize("d", [3, 24])
def test_blocked_expm1_energy_equals_exact_sum(d):
    X = uniform_sphere(300, d, 5)
    for beta in BETAS:
        exact = exact_shifted_energy(X, beta)
        for block in (None, 7, 300):
            got = interaction_energy(X, beta, block=block)
            assert got == pytest.approx(exact, rel=ROUNDING), (beta, block)
    G = X @ X.T
    gkpr = float(np.exp(3.0 * (G - 1.0)).sum()) / 300**2
    assert interaction_energy(X, 3.0, normalization="gkpr", block=7) == pytest.approx(gkpr, rel=ROUNDING)
    lme = np.log(np.mean(np.exp(0.5 * G))) / 0.5
    assert interaction_energy(X, 0.5, normalization="log-mean-exp", block=7) == pytest.approx(lme, rel=ROUNDING)


@pytest.mark.parametrize("plant", ["diagonal-twice", "no-minus-one"])
def test_energy_check_catches_planted_errors(plant, monkeypatch):
    """The comparison above fails when the triangle weights or the expm1 are wrong."""
    X = uniform_sphere(120, 3, 5)
    import numerics.core.energy as energy_module  # the pair sum behind interaction_energy

    if plant == "diagonal-twice":
        real = energy_module._pair_sums

        def doubled(left, right, terms, block):  # counts the diagonal blocks twice (forgets the correction)
            return real(left, right, terms, block) + sum(
                terms(left[:, a:a + block] @ right[:, a:a + block].transpose(0, 2, 1)).sum(axis=(1, 2))
                for a in range(0, left.shape[1], block))

        monkeypatch.setattr(energy_module, "_pair_sums", doubled)
    else:
        monkeypatch.setattr(energy_module, "_expm1_terms", lambda G: np.exp(G, out=G))
    got = interaction_energy(X, 1.0, block=16)
    assert got != pytest.approx(exact_shifted_energy(X, 1.0), rel=ROUNDING)


@pytest.mark.parametrize("kind,beta,method", [("sa", 1.0, "rk4"), ("usa", 3.0, "rk4"), ("sa", -2.0, "dp5"),
                                              ("sa", 30.0, "layer")])
def test_frame_energies_from_the_field_row_sums(kind, beta, method, monkeypatch):
    """simulate reads the energy of a frame off the row sums of the field evaluated there: equal to the pair
    sum within the 1e-12 bound it promises, and the pair sum runs only for frames the field never saw."""
    import numerics.core.simulate as trajectory_module  # the driver (issue 39)
    from numerics.core.model import Model, Solver
    from numerics.core.trajectory import simulate

    calls = []
    real = trajectory_module.interaction_energy
    monkeypatch.setattr(trajectory_module, "interaction_energy", lambda *a, **k: calls.append(1) or real(*a, **k))
    X0 = uniform_sphere(64, 3, 0)
    traj = simulate(Model(kind, beta), X0, 1.0, solver=Solver(method, dt=0.1))
    direct = np.array([real(X, beta) for X in traj.X])
    assert np.max(np.abs(traj.energy - direct) / np.abs(direct)) <= field_module.TILE_ENERGY_MAX_ERROR
    assert len(calls) <= 1, len(calls)  # the last frame (rk4, layer) never evaluated; X0 from the first step
    assert "row sums" in traj.meta["energy_method"]


def test_frame_energy_check_catches_a_planted_offset(monkeypatch):
    """An error of 1e-10 in the remembered log-mean-exp shows up against the pair sum."""
    real = field_module.RowSumMemo.store
    monkeypatch.setattr(field_module.RowSumMemo, "store",
                        lambda self, key, L, err, expm1_mean=None: real(self, key, L + 1e-10, err, expm1_mean))
    f = field_module.make_field(3, 1.0, "sa")
    X = uniform_sphere(64, 3, 0)
    f(X)
    from_tiles = f.tile_energy(X, "glpr-shifted")
    assert from_tiles is not None
    assert abs(from_tiles - interaction_energy(X, 1.0)) > 1e-12 * abs(interaction_energy(X, 1.0))


def _run_requested(kind, beta, method, monkeypatch, tiles=None):
    """simulate at d = 64 from a uniform start (row-sum energies rejected: L near 0.02, estimated error above
    1e-12) with every other frame saved; returns the trajectory, the pair-sum calls of the energy column, the
    flags of the tile sums (True: energy terms summed) and the states of the same run integrated without
    energy requests. ``tiles`` replaces the tile sums (planted errors)."""
    import numerics.core.simulate as trajectory_module  # the driver (issue 39)
    from numerics.core.integrators import integrate
    from numerics.core.model import Model, SaveAt, Solver
    from numerics.core.trajectory import simulate

    pair_calls, energy_tiles = [], []
    real_pair = trajectory_module.interaction_energy
    monkeypatch.setattr(trajectory_module, "interaction_energy",
                        lambda *a, **k: pair_calls.append(1) or real_pair(*a, **k))
    real_tiles = tiles or field_module._symmetric_tile_sums

    def counted(lhs, right, rhs, b, beta_, energy_shift=None):
        energy_tiles.append(energy_shift is not None)
        return real_tiles(lhs, right, rhs, b, beta_, energy_shift)

    monkeypatch.setattr(field_module, "_symmetric_tile_sums", counted)
    X0 = uniform_sphere(96, 64, 4)
    model, solver = Model(kind, beta), Solver(method, dt=0.1)
    traj = simulate(model, X0, 1.0, solver=solver, save=SaveAt(every=2))
    plain, _ = model.vector_field(96, 64, "direct")
    _, states, _ = integrate(plain, X0, 1.0, method, dt=0.1, save_every=2)  # no requests: no energy terms
    return traj, pair_calls, energy_tiles, states


def _check_requested(traj, beta, states):
    direct = np.array([interaction_energy(X, beta) for X in traj.X])
    # the same terms from two GEMM shapes and summation orders: the difference is bounded relative to the sum of
    # the terms' absolute values (a summation error bound; ROUNDING is ~450 ulp of it), not to the energy, which
    # cancels (sum |expm1| / |sum expm1| up to ~250 here when beta < 0 spreads the points)
    scale = np.array([float(np.abs(np.expm1(beta * X @ X.T)).sum()) / (2 * abs(beta) * len(X) ** 2) for X in traj.X])
    assert np.max(np.abs(traj.energy - direct) / scale) <= ROUNDING
    # the field itself unchanged: the same trajectory as without requests, to the rounding of 10 steps
    assert np.max(np.abs(traj.X - states)) <= 1e-13


@pytest.mark.parametrize("kind,beta,method", [("sa", 1.0, "rk4"), ("usa", 0.5, "layer"), ("sa", -1.0, "rk4")])
def test_requested_frames_sum_the_pair_terms_in_the_tiles(kind, beta, method, monkeypatch):
    """Each saved frame after X0 from which a step starts gets its energy from expm1 terms summed in that step's
    first field evaluation: equal to the pair sum to rounding (the same terms from another GEMM shape and
    summation order), the field unchanged to rounding, and the pair sum runs for X0 and the last frame only."""
    traj, pair_calls, energy_tiles, states = _run_requested(kind, beta, method, monkeypatch)
    X0 = traj.X[0]
    L0 = math.log(float(np.mean(np.exp(beta * X0 @ X0.T))))
    err0 = 16.0 * np.finfo(float).eps * (1.0 + abs(beta) * 65 + math.log2(96) + abs(L0))
    assert field_module._glpr_row_sum_error(beta, L0, err0) > field_module.TILE_ENERGY_MAX_ERROR  # precondition
    _check_requested(traj, beta, states)
    # every frame but X0 (no guess before the first evaluation: its row sums are tried, then the pair sum) and
    # the last (never evaluated)
    assert sum(energy_tiles) == traj.times.size - 2
    assert len(pair_calls) == 2
    assert "tile terms" in traj.meta["energy_method"]


@pytest.mark.parametrize("plant", ["diagonal-twice", "shift-not-subtracted"])
def test_requested_frame_checks_catch_planted_errors(plant, monkeypatch):
    """The checks above fail when the energy terms count the diagonal block twice, or when the shift is not
    subtracted before the exp (the usa field then carries a factor e^beta)."""
    real = field_module._symmetric_tile_sums

    def planted(lhs, right, rhs, b, beta, energy_shift=None):
        acc, total = real(lhs, right, rhs, b, beta, energy_shift)
        if energy_shift is None:
            return acc, total
        if plant == "diagonal-twice":
            diagonal = sum(float(np.expm1(lhs[a:a + b] @ right[:, a:a + b]).sum()) for a in range(0, len(lhs), b))
            return acc, total + diagonal
        return real(lhs, right, rhs, b, beta, None)[0], total  # the unshifted weights e^{beta s}

    traj, _, _, states = _run_requested("usa", 0.5, "layer", monkeypatch, planted)
    with pytest.raises(AssertionError):
        _check_requested(traj, 0.5, states)
