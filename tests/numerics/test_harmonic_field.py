"""numerics.harmonic.field and backend: the harmonic field against the direct field (Hypothesis), its guarantees,
the backend hook of Model/Solver/simulate, bad input, and the claims (each shown to fail on a planted error)."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from numerics.common.errors import InputError
from numerics.core.field import interaction_energy, make_field
from numerics.core.model import Model, SaveAt, Solver
from numerics.core.trajectory import simulate, uniform_sphere
from numerics.harmonic import claims, expansion, field
from numerics.harmonic.field import HarmonicField, direct_sums, harmonic_energy


def _scale(model, kappa):
    return 1.0 if model == "sa" else expansion.scaled_mean_weight(kappa) * np.exp(abs(kappa))


def test_direct_sums_are_the_core_field():
    X = claims.test_configuration(300, 1)
    for model in ("sa", "usa"):
        D = direct_sums(X, X, 3.0, model, block_entries=1000)
        if model == "usa":
            D *= np.exp(3.0)
        D -= np.einsum("ij,ij->i", X, D)[:, None] * X
        assert np.abs(D - make_field(3, 3.0, model)(X)).max() < 1e-13 * np.exp(3.0)


@given(beta=st.floats(-6, 15), model=st.sampled_from(["sa", "usa"]), seed=st.integers(0, 10**6),
       clustered=st.booleans())
def test_harmonic_field_is_the_direct_field(beta, model, seed, clustered):
    X = claims.test_configuration(240, seed) if clustered else uniform_sphere(240, 3, seed)
    f = HarmonicField(beta, model, engine="numpy")
    err = np.abs(f(X) - make_field(3, beta, model)(X)).max() / _scale(model, beta)
    assert err <= f.tol


def test_matrices_of_the_supported_form_and_time_units():
    X = claims.test_configuration(200, 2)
    R, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((3, 3)))
    Q, K, V = 3 * R, R / 6, -1.5 * np.eye(3)  # Q^T K = 0.5 I, V = -1.5 I
    m = Model("usa", 4.0, Q=Q, K=K, V=V, time_unit="rescaled")
    f, backend = m.vector_field(200, 3, backend="harmonic")
    assert backend == "harmonic" and (f.a, f.b) == pytest.approx((0.5, -1.5))
    ref = make_field(3, 4.0, "usa", Q, K, V, time_unit="rescaled")(X)
    assert np.abs(f(X) - ref).max() < 1e-10 * 1.5


def test_off_sphere_points_stay_on_their_radius():
    X = 1.3 * claims.test_configuration(100, 3)
    V = HarmonicField(2.0, "sa")(X)
    assert np.abs(np.einsum("ij,ij->i", X, V)).max() < 1e-14


def test_sa_rows_with_small_denominators_are_recomputed():
    """At beta << 0 a clustered state has Z_i/n ~ e^{-2|beta|}: those rows go to the direct sums and stay exact."""
    X = claims.test_configuration(300, 4)[100:200]  # the tight cluster alone: Z_i/n e^{-|beta|} ~ e^{-50}
    f = HarmonicField(-25.0, "sa", engine="numpy")
    err = np.abs(f(X) - make_field(3, -25.0, "sa")(X)).max()
    assert f.stats["direct_rows"] > 0 and err < 1e-10


def test_forced_low_degree_misses_the_tolerance():
    X = claims.test_configuration(300, 5)
    exact = make_field(3, 6.0, "sa")(X)
    assert np.abs(HarmonicField(6.0, "sa", degree=6)(X) - exact).max() > 1e-6
    assert np.abs(HarmonicField(6.0, "sa")(X) - exact).max() < 1e-10


@pytest.mark.parametrize("normalization", ["glpr-shifted", "gkpr", "log-mean-exp"])
def test_energy_normalisations(normalization):
    X = claims.test_configuration(250, 6)
    for beta in (0.0, 1e-7, 0.3, 2.0, 9.0, -3.0):
        if normalization == "gkpr" and beta < 0:
            continue
        ref = interaction_energy(X, beta, normalization=normalization)
        assert abs(harmonic_energy(X, beta, normalization=normalization) - ref) <= 1e-9 * abs(ref) + 1e-15


def test_energy_refuses_lost_accuracy_for_large_n(monkeypatch):
    monkeypatch.setattr(field, "ENERGY_DIRECT_MAX_N", 10)
    X = claims.test_configuration(60, 7)
    X[:] = X[0]  # one cluster: E ~ 1/(2|beta|) against terms ~ e^{|beta|}/|beta|
    with pytest.raises(InputError, match="loses accuracy"):
        harmonic_energy(X, -30.0)


def test_unsupported_models_name_the_direct_path():
    R, _ = np.linalg.qr(np.random.default_rng(1).standard_normal((3, 3)))
    for m, d in ((Model("sa", 1.0), 2), (Model("sa", 1.0, Q=np.diag([1.0, 2.0, 3.0])), 3),
                 (Model("sa", 1.0, V=R), 3), (Model("sa", 1.0, causal=True), 3)):
        with pytest.raises(InputError, match="--backend direct"):
            m.vector_field(50, d, backend="harmonic")
    with pytest.raises(InputError, match="--backend direct"):
        HarmonicField(800.0, "sa")


def test_auto_chooses_harmonic_when_cheaper_and_records_it():
    m = Model("sa", 4.0)
    assert m.vector_field(64, 3)[1] == "direct"
    assert m.vector_field(20000, 3)[1] == "harmonic"
    assert m.vector_field(20000, 4)[1] == "direct"
    X0 = uniform_sphere(1200, 3, 0)
    run = simulate(m, X0, 0.2, solver=Solver("rk4", dt=0.1), save=SaveAt(every=1))
    assert run.meta["backend"] == "harmonic" and run.meta["backend_details"]["degree"] == 21
    assert run.meta["energy_method"].startswith("spherical-harmonic")
    ref = simulate(m, X0, 0.2, solver=Solver("rk4", dt=0.1, backend="direct"), save=SaveAt(every=1))
    # the two fields differ off the sphere (RK4 stages): O(dt^4) per step, not the 1e-10 field tolerance
    assert np.abs(run.X - ref.X).max() < 1e-8
    assert np.abs(run.energy - ref.energy).max() < 1e-9 * np.abs(ref.energy).max()


# -- the claims can fail -------------------------------------------------------------------------------------------
def test_claims_pass():
    for check in (claims.check_field_agrees, claims.check_bound_holds, claims.check_degree_too_low,
                  claims.check_energy_agrees):
        assert check().status == "passed"


def test_field_claim_fails_on_a_shifted_coefficient(monkeypatch):
    """Planted: lambda_l shifted by one degree (i_{l+1} for i_l), a plausible index slip."""
    original = expansion.scaled_coefficients
    monkeypatch.setattr(field, "scaled_coefficients", lambda b, L: np.r_[original(b, L + 1)[0], original(b, L + 1)[2:]])
    assert claims.check_field_agrees().status == "failed"


def test_bound_claim_fails_on_a_halved_bound(monkeypatch):
    original = expansion.tail_bound
    monkeypatch.setattr(claims, "tail_bound", lambda L, b: 0.5 * original(L, b))
    assert claims.check_bound_holds().status == "failed"


def test_degree_claim_fails_when_the_degree_is_needlessly_large(monkeypatch):
    original = field.field_degree
    monkeypatch.setattr(claims, "field_degree", lambda k, tol, model: original(k, tol, model) + 2)
    assert claims.check_degree_too_low().status == "failed"


def test_energy_claim_fails_on_a_factor_two(monkeypatch):
    original = field.degree_powers
    monkeypatch.setattr(field, "degree_powers", lambda X, L, engine="numpy": original(X, L, engine) * np.r_[1.0, 2.0,
                                                                                                          np.ones(L - 1)])
    assert claims.check_energy_agrees().status == "failed"


@pytest.mark.slow
def test_metastable_claim():
    """n = 10^5 on S^2 through the harmonic backend (about 10 minutes of CPU)."""
    assert claims.check_metastable_lmax().status == "passed"
