"""numerics.noise: SDE schemes (orders, Stratonovich correction), Fokker-Planck solvers, stationary branch,
simulate with noise, and the claims failing on planted errors."""
import math

import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.core.model import Model, SaveAt, Solver
from numerics.core.trajectory import simulate, uniform_sphere
from numerics.noise import sde
from numerics.noise.stationary import order_parameter_at, stationary_branch
from numerics.noise.zonal import ZonalBasis, couplings, fitted_rates, harmonic_dimension, solve_zonal


# -- SDE schemes ----------------------------------------------------------------------------------------------
def _weak_slope(d, scheme, correction=True, Ns=(40, 80, 160)):
    errs = [abs(sde.scheme_mean_factor(d, 1.0, 1.0 / N, scheme, correction) ** N - math.exp(-(d - 1)))
            for N in Ns]
    return float(np.polyfit(np.log(1.0 / np.array(Ns)), np.log(errs), 1)[0])


@pytest.mark.parametrize("d", [3, 5])
def test_weak_orders_from_exact_step_means(d):
    assert _weak_slope(d, "euler-maruyama") == pytest.approx(1.0, abs=0.15)
    assert _weak_slope(d, "geodesic-weak2") == pytest.approx(2.0, abs=0.15)
    # planted error: no curvature correction -> weak order 1
    assert _weak_slope(d, "geodesic-weak2", correction=False) == pytest.approx(1.0, abs=0.15)


def test_circle_geodesic_step_is_exact():
    assert sde.scheme_mean_factor(2, 1.0, 0.3, "geodesic-weak2") ** 10 == pytest.approx(math.exp(-3.0), rel=1e-12)


@pytest.mark.parametrize("d", [2, 3, 5])
@pytest.mark.parametrize("correction", [True, False])
def test_step_mean_factor_equals_the_closed_forms(d, correction):
    """The quadrature runs the schemes' own steps; the closed forms of <x', x> at |P xi| = r are independent:
    Euler-Maruyama (x + sqrt(2Dh) r e_2)/|.| gives 1/sqrt(1 + 2 D h r^2), the geodesic step cos(sqrt(2 D h c) r)."""
    from scipy.special import roots_genlaguerre

    D, h = 0.7, 0.05
    x, w = roots_genlaguerre(64, (d - 1) / 2 - 1)
    w, r2 = w / w.sum(), 2 * x
    c = 1.0 - (d - 2) * D * h / 3.0 if correction else 1.0
    em = float(np.sum(w / np.sqrt(1.0 + 2 * D * h * r2)))
    geo = float(np.sum(w * np.cos(np.sqrt(2 * D * h * c * r2))))
    assert sde.scheme_mean_factor(d, D, h, "euler-maruyama") == pytest.approx(em, rel=1e-14)
    assert sde.scheme_mean_factor(d, D, h, "geodesic-weak2", correction) == pytest.approx(geo, rel=1e-14)


def test_step_mean_factor_matches_monte_carlo():
    d, D, h = 3, 1.0, 0.2
    X = np.tile([1.0, 0.0, 0.0], (200000, 1))
    xi = np.random.default_rng(0).standard_normal(X.shape)
    for scheme, step in (("euler-maruyama", lambda: sde.step_euler_maruyama(np.zeros_like, X, h, D, xi)),
                         ("geodesic-weak2", lambda: sde.geodesic_noise(X, h, D, xi))):
        c = step()[:, 0]
        assert abs(c.mean() - sde.scheme_mean_factor(d, D, h, scheme)) < 4 * c.std() / math.sqrt(c.size)


def test_brownian_correlation_monte_carlo_small():
    mean, se = sde.brownian_correlation_mc(3, 1.0, 0.5, 0.02, 4000, seed=1, scheme="geodesic-weak2")
    assert abs(mean - math.exp(-1.0)) < 4 * se


def test_planted_dropped_stratonovich_correction_is_detected(monkeypatch):
    """Dropping the renormalisation (which is the Stratonovich-to-Ito correction -D(d-1)x of this scheme) leaves
    E<x(t), x(0)> = 1: the check fails by many standard errors."""
    def no_correction(field, X, h, D, xi):   # Stratonovich noise read as Ito, no projection back
        u = X / np.linalg.norm(X, axis=1, keepdims=True)
        return X + h * field(X) + np.sqrt(2 * D * h) * sde.tangent(u, xi)

    monkeypatch.setattr(sde, "step_euler_maruyama", no_correction)
    mean, se = sde.brownian_correlation_mc(3, 1.0, 0.5, 0.01, 4000, seed=1, scheme="euler-maruyama")
    assert abs(mean - math.exp(-1.0)) > 10 * se


def test_explicit_normal_drift_is_mostly_removed_by_renormalisation():
    """Adding the Ito drift -D(d-1)x on top of the renormalisation does not double the correction: the normal
    drift is projected away and only rescales the noise by 1/(1 - D(d-1)h), an O(h^{3/2}) change per step."""
    X = uniform_sphere(50, 3, 1)
    xi = np.random.default_rng(2).standard_normal(X.shape)
    h = 0.01
    a = sde.step_euler_maruyama(np.zeros_like, X, h, 1.0, xi)
    b = sde.step_euler_maruyama(lambda Y: -2.0 * Y, X, h, 1.0, xi)
    gap = float(np.max(np.linalg.norm(a - b, axis=1)))
    assert 0 < gap <= 3 * 2 * h * np.sqrt(2 * h) * np.max(np.linalg.norm(xi, axis=1))


def test_strong_order_half_for_projected_euler_maruyama():
    """Strong error against a fine path driven by the same Brownian increments: slope ~ 1/2 in d = 3."""
    rng = np.random.default_rng(3)
    d, D, T, samples, fine = 3, 1.0, 0.5, 400, 512
    X0 = uniform_sphere(samples, d, 4)
    dW = rng.standard_normal((fine, samples, d)) * math.sqrt(T / fine)
    zero = np.zeros_like

    def run(m):
        X, h = X0.copy(), T / (fine // m)
        incr = dW.reshape(fine // m, m, samples, d).sum(axis=1)
        for k in range(fine // m):
            X = sde.step_euler_maruyama(zero, X, h, D, incr[k] / math.sqrt(h))
        return X

    ref = run(1)
    ms = (8, 16, 32, 64)
    errs = [float(np.mean(np.linalg.norm(run(m) - ref, axis=1))) for m in ms]
    slope = np.polyfit(np.log(np.array(ms) * T / fine), np.log(errs), 1)[0]
    assert 0.35 <= slope <= 0.75, (slope, errs)


def test_geodesic_step_rejects_huge_steps():
    with pytest.raises(InputError):
        sde.geodesic_noise(np.array([[1.0, 0, 0, 0, 0]]), 10.0, 1.0, np.ones((1, 5)))


# -- the model object -----------------------------------------------------------------------------------------
def test_model_noise_validation_and_metadata():
    m = Model("usa", 1.0, noise=0.3)
    assert Model.from_meta(m.to_meta()).noise == 0.3
    assert Model.from_meta({k: v for k, v in m.to_meta().items() if k != "noise"}).noise == 0.0
    for bad in (-0.1, float("nan"), "x"):
        with pytest.raises(InputError):
            Model("usa", 1.0, noise=bad)
    with pytest.raises(InputError):
        Solver("rk4", dt=0.1, seed=-1)


def test_simulate_with_noise_is_reproducible_and_recorded():
    X0 = uniform_sphere(20, 3, 0)
    model = Model("sa", 2.0, noise=0.5)
    a = simulate(model, X0, 0.5, solver=Solver("layer", dt=0.05, seed=9))
    b = simulate(model, X0, 0.5, solver=Solver("layer", dt=0.05, seed=9))
    c = simulate(model, X0, 0.5, solver=Solver("layer", dt=0.05, seed=10))
    assert np.array_equal(a.X, b.X) and not np.array_equal(a.X, c.X)
    assert a.meta["noise"] == 0.5 and a.meta["noise_seed"] == 9 and a.meta["energy_is_lyapunov"] is False
    assert "Euler-Maruyama" in a.meta["scheme"]
    assert np.allclose(np.linalg.norm(a.X, axis=2), 1.0)
    # without noise the deterministic path runs and no noise seed is recorded
    det = simulate(Model("sa", 2.0), X0, 0.5, solver=Solver("layer", dt=0.05))
    assert det.meta["noise_seed"] is None and det.meta["noise"] == 0.0
    with pytest.raises(InputError):
        simulate(model, X0, 0.5, solver=Solver("adaptive"))
    with pytest.raises(InputError):
        simulate(model, X0, 0.5, solver=Solver("rk4", dt=0.1), save=SaveAt(times=[0.0, 0.5]))


@pytest.mark.parametrize("method", ["layer", "rk4"])
def test_noisy_resume_continues_the_random_stream_bitwise(tmp_path, method):
    """A noisy run split in two (saved, then resumed from the file) equals the run in one piece, bitwise: the
    file holds the bit generator's state at the end of the first piece."""
    from numerics.core.trajectory import Trajectory, resume

    model, X0 = Model("usa", 1.0, noise=0.3), uniform_sphere(12, 3, 1)
    solver, save = Solver(method, dt=0.05, seed=4), SaveAt(every=5)
    whole = simulate(model, X0, 2.0, solver=solver, save=save)
    first = simulate(model, X0, 1.0, solver=solver, save=save)
    first.save(tmp_path / "first.npz")
    joined = resume(tmp_path / "first.npz", 2.0)
    assert np.array_equal(joined.X, whole.X) and np.array_equal(joined.times, whole.times)
    # the energy column: the field row sums or the pair sum at the split frame (relative error <= 1e-12)
    assert np.allclose(joined.energy, whole.energy, rtol=1e-12, atol=0)
    assert joined.meta["noise_state"] == whole.meta["noise_state"]
    # resuming twice from the same file is reproducible; a third piece continues the same stream
    assert np.array_equal(resume(tmp_path / "first.npz", 2.0).X, joined.X)
    joined.save(tmp_path / "joined.npz")
    three = resume(Trajectory.load(tmp_path / "joined.npz"), 3.0)
    assert np.array_equal(three.X, simulate(model, X0, 3.0, solver=solver, save=save).X)


def test_planted_restarted_stream_breaks_the_resume_equality(tmp_path, monkeypatch):
    """Planted error: resuming with a fresh generator from the seed (not the saved state) repeats the first
    piece's noise; the split run then differs from the run in one piece."""
    from numerics.core.trajectory import resume

    model, X0 = Model("usa", 1.0, noise=0.3), uniform_sphere(12, 3, 1)
    solver = Solver("rk4", dt=0.05, seed=4)
    whole = simulate(model, X0, 2.0, solver=solver)
    first = simulate(model, X0, 1.0, solver=solver)
    monkeypatch.setattr(sde, "generator_from_state", lambda state: np.random.default_rng(4))
    joined = resume(first, 2.0)
    assert not np.array_equal(joined.X, whole.X)


def test_noisy_resume_refuses_files_without_noise_state(tmp_path):
    from numerics.core.trajectory import resume

    traj = simulate(Model("usa", 0.0, noise=0.2), uniform_sphere(5, 2, 0), 0.2, solver=Solver("rk4", dt=0.1))
    traj.meta.pop("noise_state")
    with pytest.raises(InputError, match="noise_state"):
        resume(traj, 0.4)
    traj.meta["noise_state"] = {"bit_generator": "PCG64", "state": {"state": "x"}}
    with pytest.raises(InputError, match="invalid noise state"):
        resume(traj, 0.4)


def test_noise_with_a_depth_schedule_runs_and_is_reproducible():
    """Time-dependent fields (depth schedules) get the step's time in both noisy schemes."""
    from numerics.core.blocks import MultiHead, Schedule

    sch = Schedule(times=[0.0, 0.5], heads=(MultiHead.from_single(d=3), MultiHead.from_single(V=-np.eye(3))))
    model = Model("sa", 1.0, schedule=sch, noise=0.2)
    for method in ("layer", "rk4"):
        a = simulate(model, uniform_sphere(8, 3, 0), 1.0, solver=Solver(method, dt=0.1, seed=1))
        b = simulate(model, uniform_sphere(8, 3, 0), 1.0, solver=Solver(method, dt=0.1, seed=1))
        assert np.array_equal(a.X, b.X) and np.allclose(np.linalg.norm(a.X, axis=2), 1.0)


def _schedule_errors(method, steps=(0.1, 0.05, 0.025)):
    """Max error at t = 1 of a noisy run (D = 1e-30: the noise moves a token by ~sqrt(2 D) = 1e-15) of a depth
    schedule switching heads at t = 0.5, against the deterministic run solved piece by piece (dop853, rtol
    1e-12: agrees with rk4 at h = 0.005 to 1.4e-14), and the observed order. The steps divide 0.5, so no stage
    straddles the switch and the scheme's own order shows."""
    from numerics.core.blocks import MultiHead, Schedule

    H1, H2 = MultiHead.from_single(d=3), MultiHead.from_single(V=-np.eye(3))
    X0 = uniform_sphere(8, 3, 0)
    exact = Solver("dop853", rtol=1e-12, atol=1e-14)
    Xh = simulate(Model("sa", 1.0, schedule=Schedule(times=[0.0], heads=(H1,))), X0, 0.5, solver=exact).X[-1]
    ref = simulate(Model("sa", 1.0, schedule=Schedule(times=[0.0], heads=(H2,))), Xh, 0.5, solver=exact).X[-1]
    model = Model("sa", 1.0, schedule=Schedule(times=[0.0, 0.5], heads=(H1, H2)), noise=1e-30)
    errs = [float(np.max(np.abs(simulate(model, X0, 1.0, solver=Solver(method, dt=h, seed=1)).X[-1] - ref)))
            for h in steps]
    return errs, float(np.polyfit(np.log(steps), np.log(errs), 1)[0])


def test_noisy_schemes_follow_the_depth_schedule_in_time():
    """With vanishing noise the noisy schemes must reproduce the deterministic schedule run at their orders,
    which needs the step's time in every drift stage. Measured: geodesic-weak2 (rk4) errors 2.0e-7, 2.5e-8,
    3.1e-9 (order 3.0: the two midpoint half steps beat their order 2 here), Euler-Maruyama (layer) 3.3e-3,
    1.6e-3, 8.1e-4 (order 1.00). Bounds: at least the scheme's order minus 0.2 and the finest error within 30x
    of the measured one; a drift at the wrong time gives an error of 0.2 that does not shrink."""
    errs, order = _schedule_errors("rk4")
    assert order >= 1.8 and errs[-1] < 1e-7, (errs, order)
    errs, order = _schedule_errors("layer")
    assert order == pytest.approx(1.0, abs=0.15) and errs[-1] < 3e-2, (errs, order)


@pytest.mark.parametrize("plant", ["half-drift", "stepper"])
def test_planted_drift_ignoring_time_breaks_the_schedule_check(monkeypatch, plant):
    """Planted: the drift evaluated at t = 0 whatever the step's time (in _half_drift, or in the stepper for both
    schemes): the errors stay at ~0.2 and the check above fails."""
    if plant == "half-drift":
        original = sde._half_drift
        monkeypatch.setattr(sde, "_half_drift",
                            lambda field, X, h, t=None: original(field, X, h, None if t is None else 0.0))
        methods = ("rk4",)
    else:
        original = sde.noisy_steppers

        def planted(D, rng, scheme):
            step = original(D, rng, scheme)[scheme]
            return {scheme: lambda field, X, h, t=None: step(field, X, h, None if t is None else 0.0)}

        monkeypatch.setattr(sde, "noisy_steppers", planted)
        methods = ("rk4", "layer")
    for method in methods:
        errs, order = _schedule_errors(method)
        assert min(errs) > 0.1 and not (order >= 1.8 and errs[-1] < 1e-7), (method, errs, order)


def test_kuramoto_field_equals_model_field():
    from numerics.noise.claims import kuramoto_field

    X = uniform_sphere(30, 3, 2)
    f, _ = Model("usa", 0.0).vector_field(30, 3, "direct")
    assert np.allclose(kuramoto_field(X), f(X), atol=1e-13)


# -- Fokker-Planck solvers ------------------------------------------------------------------------------------
def test_zonal_basis_orthogonality_and_dimensions():
    for d in (2, 3, 5):
        B = ZonalBasis.build(d, 8)
        G = (B.w[:, None, None] * B.P[:, :, None] * B.P[:, None, :]).sum(axis=0)
        dims = np.array([harmonic_dimension(d, l) for l in range(9)])
        assert np.allclose(G, np.diag(1.0 / dims), atol=1e-12)
    assert [harmonic_dimension(3, l) for l in range(4)] == [1, 3, 5, 7]


def test_couplings_match_theory():
    from theory.noise import coupling

    for d, beta in ((2, 1.5), (3, 2.0), (4, -1.0)):
        g = couplings(d, beta, 4)
        assert np.allclose(g[1:], [float(coupling(d, l, beta)) for l in range(1, 5)], rtol=1e-12)


def _check_couplings_against_mpmath(d, betas, rtol=1e-12):
    """g_l = Gamma(d/2) (2/b)^{d/2-1} I_{l+d/2-1}(b) / b at 50 digits. rtol: the series sums positive terms whose
    logarithms reach a few hundred (Gamma of l + d/2 + k), so exp turns absolute rounding of ~300 eps of the
    logarithm into a relative 7e-14; 1e-12 leaves a factor 15."""
    import mpmath as mp

    with mp.workdps(50):
        for beta in betas:
            b = mp.mpf(abs(beta))
            ref = [float(mp.gamma(mp.mpf(d) / 2) * (2 / b) ** (mp.mpf(d) / 2 - 1) * mp.besseli(l + mp.mpf(d) / 2 - 1, b) / b
                         * mp.sign(beta) ** (l + 1)) for l in range(7)]
            got = couplings(d, beta, 6)
            for l in range(7):
                if ref[l] == 0.0:  # below the smallest double: the series underflows to 0 too
                    assert got[l] == 0.0, (d, beta, l, got[l])
                else:
                    assert abs(got[l] - ref[l]) <= rtol * abs(ref[l]), (d, beta, l, got[l], ref[l])


@pytest.mark.parametrize("d", [2, 3, 64, 300])
def test_couplings_for_tiny_beta_and_large_d_match_mpmath(d):
    """The series branch (|beta| < 1) keeps b^{-d/2} and Gamma(l + d/2) from overflowing: phase --beta 1e-300
    used to fail with OverflowError at d >= 3, and the Bessel form gives inf * 0 at large d."""
    _check_couplings_against_mpmath(d, [1e-300, -1e-20, 1e-3, 0.5, 0.999, -0.999, 1.0, 3.0])


def test_couplings_check_catches_a_wrong_series_order(monkeypatch):
    import numerics.noise.zonal as zonal

    real = zonal._couplings_series
    monkeypatch.setattr(zonal, "_couplings_series", lambda d, b, l: real(d, b, l + 1))
    with pytest.raises(AssertionError):
        _check_couplings_against_mpmath(3, [0.5])


@pytest.mark.parametrize("d,model", [(2, "usa"), (3, "usa"), (3, "sa"), (4, "usa")])
def test_zonal_rates_are_lambda_minus_noise_laplacian(d, model):
    from theory.meanfield import growth_rate

    beta, D = 1.5, 0.2
    hist = solve_zonal(d, beta, D, L=10, t_end=2.0, amplitude=1e-8, degrees=(1, 2, 3), model=model, saves=21,
                       rtol=1e-10, atol=1e-20)
    rates = fitted_rates(hist, (1, 2, 3))
    for l in (1, 2, 3):
        pred = float(growth_rate(model, d, l, beta)) - D * l * (l + d - 2)
        assert rates[l] == pytest.approx(pred, rel=1e-5, abs=1e-7)


def test_circle_pde_noise_term_matches_zonal_solver():
    """Two code paths for d = 2: the FFT solver of numerics.meanfield.pde and the Chebyshev-Galerkin zonal one."""
    from numerics.meanfield.pde import solve_continuity_circle

    beta, D = 1.0, 0.3
    grid = 64
    theta = 2 * np.pi * np.arange(grid) / grid
    rho0 = (1 + 0.2 * np.cos(theta) + 0.1 * np.cos(2 * theta)) / (2 * np.pi)
    h = solve_continuity_circle(beta, "usa", grid=grid, t_end=3.0, rho0=rho0, saves=4, noise=D,
                                resolution_tol=1.0, rtol=1e-10, atol=1e-13)
    f0 = np.zeros(21)
    f0[0], f0[1], f0[2] = 1.0, 0.2, 0.1
    z = solve_zonal(2, beta, D, L=20, t_end=3.0, f0=f0, saves=4, rtol=1e-10, atol=1e-13)
    # rho/rho_0 = 1 + sum_k 2 (2 pi c_k) cos k theta for an even density
    fft_f = 2 * 2 * np.pi * h.coefficients[-1, 1:4].real
    assert np.allclose(fft_f, z.coefficients[-1, 1:4], atol=1e-8)


# -- stationary states ----------------------------------------------------------------------------------------
def test_kuramoto_branch_matches_bessel():
    from theory.noise import kuramoto_order_parameter

    br = stationary_branch(2, 0.0, L=4, points=30)
    assert max(abs(r - kuramoto_order_parameter(D)) for D, r in list(zip(br.D, br.r))[::6]) < 1e-9
    assert order_parameter_at(br, 0.3) == pytest.approx(kuramoto_order_parameter(0.3), abs=1e-10)


@pytest.mark.parametrize("d", [2, 3])
def test_branch_type_matches_landau(d):
    from theory.noise import bifurcation, discontinuity_threshold

    b = discontinuity_threshold(d)
    for beta in (0.6 * b, 1.4 * b):
        br = stationary_branch(d, beta, L=20, points=24, r_max=0.8)
        bif = bifurcation(d, beta)
        assert (br.fold is None) == bif.continuous
        assert br.r[0] ** 2 / (bif.critical_noise - br.D[0]) == pytest.approx(bif.slope, rel=1e-4)


# -- claims fail on planted errors ------------------------------------------------------------------------------
def test_threshold_claim_fails_with_wrong_laplacian_eigenvalue(monkeypatch):
    import theory.noise as tn
    from numerics.noise.claims import check_threshold

    monkeypatch.setattr(tn, "laplacian_eigenvalue", lambda l, d: l * (l + d - 1))
    assert check_threshold().status == "failed"


@pytest.mark.slow
def test_kuramoto_claim_fails_with_wrong_coupling_convention(monkeypatch):
    """K_c = D instead of 2D (a factor 2 in the coupling of the self-consistency) is caught."""
    import numerics.noise.stationary as st
    from numerics.noise import claims

    orig = st.couplings
    monkeypatch.setattr(st, "couplings", lambda d, beta, L: 2 * orig(d, beta, L))
    monkeypatch.setattr(claims, "kuramoto_particles", lambda *a, **k: (0.83, 0.01))  # keep the test fast
    assert claims.check_kuramoto().status == "failed"


@pytest.mark.slow
def test_bifurcation_claim_fails_if_type_is_always_continuous(monkeypatch):
    import dataclasses

    import theory.noise as tn
    from numerics.noise.claims import check_bifurcation

    orig = tn.bifurcation
    monkeypatch.setattr(tn, "bifurcation", lambda d, beta: dataclasses.replace(orig(d, beta), continuous=True))
    assert check_bifurcation().status == "failed"


def test_brownian_claim_fails_without_curvature_correction(monkeypatch):
    from numerics.noise.claims import check_brownian_moments

    orig = sde.scheme_mean_factor
    monkeypatch.setattr(sde, "scheme_mean_factor",
                        lambda d, D, h, scheme, correction=True, nodes=64: orig(d, D, h, scheme, False, nodes))
    assert check_brownian_moments().status == "failed"
