"""numerics.noise.homogenized: the random network's kick and collapse ratio against the derived formulas."""
import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.noise import homogenized as M


def test_kick_covariance_is_isotropic_and_matches_attention_covariance():
    X = M.orthonormal_tokens(3, 5)
    C = M.attention_covariance(X, 2.0, 6000, seed=0)
    k = M.kick_statistics(X, 2.0, 6000, seed=1)
    predicted = np.einsum("ik,ac->ikac", C / 5, np.eye(5))
    assert (np.abs(k["cov"] - predicted) / k["cov_se"]).max() < 4.5
    assert (np.abs(k["mean"]) / k["mean_se"]).max() < 4.5


def test_uniform_attention_ratio_is_exact():
    """beta = 0: every token gets the same kick, C_ik = C_ii = 1/n, R = (d-2)/(d-1) exactly."""
    assert M.predicted_collapse_ratio(4, 8, 0.0, 2000) == pytest.approx(6 / 7)
    m = M.measured_collapse_ratio(4, 8, 0.0, 0.1, 4000, seed=3)
    assert abs(m["R"] - 6 / 7) < 4 * m["se"] + 0.01


def test_measured_ratio_against_derived_and_planted_factor():
    m = M.measured_collapse_ratio(6, 12, 4.0, 0.1, 6000, seed=4)
    p = M.predicted_collapse_ratio(6, 12, 4.0, 20000, seed=0)
    assert abs(m["R"] - p) < 4 * m["se"] + 0.01 * p
    # the ratio with (d - 1) in place of (d - 2) is off by 10/11: far outside the band
    assert abs(m["R"] - p * 11 / 10) > 4 * m["se"] + 0.01 * p


def test_threshold_decreases_the_ratio_and_grows_with_d():
    b8 = M.predicted_threshold(4, 8, 0.5, 4000)
    b16 = M.predicted_threshold(4, 16, 0.5, 4000)
    assert 0 < b8 < b16
    assert M.predicted_collapse_ratio(4, 8, b8, 4000) == pytest.approx(0.5, abs=1e-6)
    assert np.isnan(M.predicted_threshold(4, 8, 0.99, 2000))


@pytest.mark.parametrize("args", [(5, 4, 1.0, 100), (2, 3, -1.0, 100), (1, 3, 1.0, 100)])
def test_bad_input(args):
    with pytest.raises(InputError):
        M.orthonormal_covariance(*args)


def test_scalings_of_depth_step_and_heads():
    """Equal t = L eta^2/H: equal laws; L eta fixed: the motion vanishes as L grows."""
    a, sa = M.network_mean_cosine(4, 8, 2.0, 8, (1.0 / 8) ** 0.5, 1, 800, seed=3)
    b, sb = M.network_mean_cosine(4, 8, 2.0, 16, (2.0 / 16) ** 0.5, 2, 800, seed=4)
    assert abs(a - b) < 4 * (sa ** 2 + sb ** 2) ** 0.5 + 0.02
    near, _ = M.network_mean_cosine(4, 8, 2.0, 4, 0.25, 1, 800, seed=5)
    deep, _ = M.network_mean_cosine(4, 8, 2.0, 64, 1 / 64, 1, 800, seed=6)
    assert 0 < deep < near / 8


def test_extrapolated_ratio_window_sees_a_half_percent_error():
    """noise.homogenized-gaussian's ratio window (issue 43): Richardson in eta and the derived side's own standard
    error, 4 SE of both, instead of 4 SE + 1%. The richardson keyword leaves R itself unchanged; the derived R with
    its standard error is the derived R. A derived ratio 0.5% high (mutant homogenized-ratio-half-percent) passes
    the old window and fails the new one."""
    import math

    m = M.measured_collapse_ratio(6, 12, 4.0, 0.1, 6000, seed=4, richardson=True)
    assert m["R"] == M.measured_collapse_ratio(6, 12, 4.0, 0.1, 6000, seed=4)["R"]
    p, pse = M.predicted_collapse_ratio_se(6, 12, 4.0, 20000, seed=0)
    assert p == M.predicted_collapse_ratio(6, 12, 4.0, 20000, seed=0) and 0 < pse < 0.01 * p
    assert abs(m["R_extrapolated"] - p) < 4 * math.hypot(m["se_extrapolated"], pse)
    assert abs(m["R"] - m["R_extrapolated"] - m["eta_bias"]) < 1e-15
    # beta = 0 (C exact, the derived side has no sampling error) at the claim's n = 8, d = 16
    m = M.measured_collapse_ratio(8, 16, 0.0, 0.1, 5000, seed=2, richardson=True)
    p, pse = M.predicted_collapse_ratio_se(8, 16, 0.0, 2000, seed=0)
    assert p == pytest.approx(14 / 15) and pse < 1e-12
    window = 4 * math.hypot(m["se_extrapolated"], pse)
    assert abs(m["R_extrapolated"] - p) < window
    assert abs(m["R"] - 1.005 * p) < 4 * m["se"] + 0.01 * 1.005 * p  # the old window passes the planted error
    assert abs(m["R_extrapolated"] - 1.005 * p) > 2 * window        # the new one fails it, by far
