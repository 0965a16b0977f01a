"""Several heads (numerics.architectures.multihead, claims architectures.multihead-*) and causal parking
(numerics.architectures.parking, claim architectures.causal-parking): identities, two routes, planted errors."""
import math

import numpy as np
import pytest

from numerics.architectures import multihead as mh
from numerics.architectures import multihead_claims as mc
from numerics.architectures import parking as pk
from numerics.architectures import parking_claims as pc
from numerics.common.errors import InputError


def test_claims_pass():
    for check in (mc.check_multihead_energy, mc.check_multihead_critical_beta, mc.check_multihead_superadditive,
                  mc.check_multihead_entropy):
        r = check()
        assert r.status == "passed", (r.claim_id, r.measured, r.details.get("paths"))


def test_energy_claim_fails_without_the_radial_shadow(monkeypatch):
    real = mh.energy_rate_terms

    def no_shadow(*a, **k):
        return [dict(t, shadow=0.0, rate=t["own"] + t["cross"]) for t in real(*a, **k)]

    monkeypatch.setattr(mh, "energy_rate_terms", no_shadow)
    assert mc.check_multihead_energy().status == "failed"


def test_critical_beta_claim_fails_on_log_n(monkeypatch):
    monkeypatch.setattr(mh, "critical_beta", lambda n, m=1.0: math.log(n) / m)
    assert mc.check_multihead_critical_beta().status == "failed"


def test_equiangular_speed_matches_the_field_and_fails_when_planted(monkeypatch):
    rng = np.random.default_rng(0)
    X = mh.equiangular_points(5, 0.3, rng, 6)
    measured = mc.field_initial_speed(1.7, (1.0, 2.5), (0.3, 0.7), X)
    assert measured == pytest.approx(float(mh.equiangular_speed(0.3, 1.7, 5, (1.0, 2.5), (0.3, 0.7))), rel=1e-12)
    monkeypatch.setattr(mh, "equiangular_speed", lambda r, b, n, ms, ws: 2 * (1 - r) * (1 + n * r) * sum(
        w / (np.exp(b * m * (1 - r)) + n - 1) for m, w in zip(ms, ws)))
    assert mc.check_multihead_superadditive().status == "failed"


def test_entropy_claim_fails_on_a_sign(monkeypatch):
    real = mh.entropy_production
    monkeypatch.setattr(mh, "entropy_production", lambda *a: -real(*a))
    assert mc.check_multihead_entropy().status == "failed"


def test_inputs_are_validated():
    with pytest.raises(InputError):
        mh.critical_beta(2)
    with pytest.raises(InputError):
        mh.equiangular_points(4, -0.5, np.random.default_rng(0))
    with pytest.raises(InputError):
        mh.head_energy(np.eye(2), 0.0, np.eye(2))


# -- parking --------------------------------------------------------------------------------------------------
def test_renyi_constant_two_ways():
    assert pk.renyi_constant() == pytest.approx(pk.RENYI_CONSTANT, abs=1e-15)
    x, M = pk.parking_mean(30.0, 1e-2)
    assert M[-1] - M[-101] == pytest.approx(pk.RENYI_CONSTANT, abs=1e-5)  # O(h^2) ~ 1.4e-6 at h = 1e-2


def test_parking_fails_with_the_factor_two_dropped(monkeypatch):
    x, M = pk.parking_mean(30.0, 1e-2)
    # Renyi's equation without the 2: M(x) = 1 + int M / (x - 1) gives a density ~ log x / x, far from c_R
    N = M.size
    bad = np.zeros(N)
    S = np.zeros(N)
    for k in range(N):
        if k >= 100:
            j = k - 100
            bad[k] = 1.0 if j == 0 else 1.0 + S[j] / x[j]
        if k > 0:
            S[k] = S[k - 1] + (0.0 if k == 100 else 0.005 * (bad[k - 1] + bad[k]))
    assert abs((bad[-1] - bad[-101]) - pk.RENYI_CONSTANT) > 0.1


def test_monte_carlo_parking_matches_the_delay_equation():
    rng = np.random.default_rng(1)
    L = 7.0
    s = np.array([pk.parking_sample(L, rng) for _ in range(3000)])
    assert abs(s.mean() - pk.circle_parking_mean(L)) <= 4 * s.std(ddof=1) / math.sqrt(s.size)


def test_renyi_centers_weak_and_strong():
    angles = [0.0, 0.3, 1.2, 1.0, 2.5]
    assert pk.renyi_centers(angles, 0.5).tolist() == [0, 2, 4]
    # token 2 (1.2) is >= 0.5 from 0 but only 0.9 from 0.3: strong needs distance to every earlier token
    assert pk.renyi_centers(angles, 0.5, strong=True).tolist() == [0, 2, 4]
    assert pk.renyi_centers([0.0, 0.3, 0.7], 0.5, strong=True).tolist() == [0]
    assert pk.renyi_centers([0.0, 0.3, 0.7], 0.5).tolist() == [0, 2]
    X = np.column_stack([np.cos([0.0, 0.01, 2.0, 2.02]), np.sin([0.0, 0.01, 2.0, 2.02])])
    assert pk.circle_cluster_count(X, 0.1) == 2


@pytest.mark.slow
def test_causal_parking_claim_passes():
    r = pc.check_causal_parking()
    assert r.status == "passed", r.details["counts"]
