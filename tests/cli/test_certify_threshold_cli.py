"""``attnflow certify THRESHOLD --d D [--beta B | --l L]``: one threshold certified at the user's own parameters.

Each printed enclosure is compared with the API (:mod:`theory.certified.statements`, the same digits) and with an
mpmath value computed here by a route that shares nothing with the code: beta*(d) from mpmath's Bessel functions,
D_c and the switch points from the Funk-Hecke integral by quadrature (not the Bessel closed form of theory/).
"""
from __future__ import annotations

import mpmath as mp
import pytest

from numerics.cli import main
from tests.cli.helpers import bad, run_json

DPS = 50


def _inside(enclosure: str, value: mp.mpf) -> bool:
    lo, hi = (mp.mpf(x) for x in enclosure.strip("[]").split(","))
    return lo <= value <= hi and (hi - lo) < mp.mpf(10) ** -24 * max(1, abs(value))


def _funk_hecke(d: int, l: int, beta) -> mp.mpf:  # noqa: E741 - degree
    """a_l(beta) = |S^{d-2}| int_{-1}^1 e^{beta t} P_l(t) (1-t^2)^{(d-3)/2} dt, P_l the Gegenbauer polynomial
    normalised to P_l(1) = 1, by quadrature."""
    lam = mp.mpf(d - 2) / 2
    norm = mp.gegenbauer(l, lam, 1)
    sphere = 2 * mp.pi ** (mp.mpf(d - 1) / 2) / mp.gamma(mp.mpf(d - 1) / 2)
    return sphere * mp.quad(lambda t: mp.exp(beta * t) * mp.gegenbauer(l, lam, t) / norm
                            * (1 - t * t) ** (mp.mpf(d - 3) / 2), [-1, 0, 1])


def _rate(d: int, l: int, beta) -> mp.mpf:  # noqa: E741 - degree
    """lambda_l(beta) of usa at the uniform measure: l (l + d - 2) rho_0 a_l(beta) / beta, rho_0 = 1/|S^{d-1}|."""
    rho0 = mp.gamma(mp.mpf(d) / 2) / (2 * mp.pi ** (mp.mpf(d) / 2))
    return l * (l + d - 2) * rho0 * _funk_hecke(d, l, beta) / beta


def test_beta_star_against_the_api_and_mpmath(capsys):
    from theory.certified.statements import noise_threshold

    payload = run_json(capsys, ["certify", "beta-star", "--d", "7"])
    assert payload["status"] == "certified" and payload["contains_reference"] is True
    assert payload["certificate"] == "beta*(7)" and payload["beta"] is None and payload["l"] is None
    assert payload["enclosure"] == noise_threshold(7).enclosure.text(25)
    with mp.workdps(DPS):
        ref = mp.findroot(lambda b: mp.besseli(mp.mpf(9) / 2, b) / mp.besseli(mp.mpf(7) / 2, b) - mp.mpf(1) / 7,
                          mp.mpf("1.3"))
        assert _inside(payload["enclosure"], ref)


def test_critical_noise_against_the_api_and_the_funk_hecke_integral(capsys):
    from theory.certified.statements import critical_noise

    payload = run_json(capsys, ["certify", "critical-noise", "--d", "4", "--beta", "3/2"])
    assert payload["status"] == "certified" and payload["beta"] == "3/2" and payload["d"] == 4
    assert payload["enclosure"] == critical_noise(4, "3/2").text(25)
    with mp.workdps(DPS):
        ref = _rate(4, 1, mp.mpf(3) / 2) / 3  # D_c = lambda_1 / (d - 1)
        assert _inside(payload["enclosure"], ref)


def test_switch_point_against_the_api_and_the_funk_hecke_integral(capsys):
    from theory.certified.statements import switch_point

    payload = run_json(capsys, ["certify", "switch-point", "--d", "3", "--l", "2"])
    assert payload["status"] == "certified" and payload["l"] == 2
    assert payload["enclosure"] == switch_point(3, 2).enclosure.text(25)
    with mp.workdps(30):
        ref = mp.findroot(lambda b: _rate(3, 3, b) - _rate(3, 2, b), mp.mpf("4.4"))
        assert _inside(payload["enclosure"], ref)


def test_text_table_and_exit_code(capsys):
    assert main(["certify", "critical-noise", "--d", "4", "--beta", "3/2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("D_c(d=4, beta=3/2): D_c(beta) = lambda_1(beta)/(d-1)")
    assert "enclosure           [0.300297438520605093932111" in out
    assert "(inside the enclosure)" in out and out.rstrip().splitlines()[-1].startswith("CERTIFIED")
    assert main(["certify", "beta-star", "--d", "2"]) == 0
    out = capsys.readouterr().out
    assert "[2.446918311289046130903948, 2.446918311289046130903949]" in out and "unique in" in out


def test_a_wrong_reference_fails_the_certificate(capsys, monkeypatch):
    """The check can fail: a reference function moved by 1e-20 relative puts its root (or value) outside the
    enclosure; the verdict is FAILED, exit 1."""
    import numerics.certified.runs as runs
    import theory.noise

    ratio = theory.noise.bessel_ratio
    monkeypatch.setattr(theory.noise, "bessel_ratio", lambda d, b, dps: ratio(d, b, dps) * (1 + mp.mpf(10) ** -20))
    assert main(["certify", "beta-star", "--d", "5"]) == 1
    out = capsys.readouterr().out
    assert "OUTSIDE the enclosure" in out and "problem: beta*(5): enclosure" in out
    assert out.rstrip().splitlines()[-1].startswith("FAILED")
    rate = runs.reference_growth_rate
    monkeypatch.setattr(runs, "reference_growth_rate", lambda *a: rate(*a) * (1 + mp.mpf(10) ** -20))
    assert main(["certify", "critical-noise", "--d", "3", "--beta", "2"]) == 1
    assert "OUTSIDE the enclosure" in capsys.readouterr().out


def test_large_dimensions_raise_the_precision(capsys):
    """beta_5(d=300) is enclosed only to 3e-24 at 128 bits (cancellation); the command retries at 256 bits."""
    payload = run_json(capsys, ["certify", "switch-point", "--d", "300", "--l", "5"])
    assert payload["status"] == "certified" and "256 bits" in payload["method"]


@pytest.mark.parametrize("argv, message", [
    (["beta-star", "--d", "1"], "--d must be an integer in [2, 1000], got 1"),
    (["beta-star"], "--d is required"),
    (["beta-star", "--d", "7", "--beta", "2"], "beta-star takes no --beta"),
    (["beta-star", "--d", "7", "--l", "2"], "beta-star takes no --l"),
    (["critical-noise", "--d", "4"], "critical-noise needs --beta"),
    (["critical-noise", "--d", "4", "--beta", "0"], "--beta must be > 0"),
    (["critical-noise", "--d", "4", "--beta=-3/2"], "--beta must be > 0"),
    (["critical-noise", "--d", "4", "--beta", "nan"], "--beta must be an exact rational"),
    (["critical-noise", "--d", "4", "--beta", "1/0"], "--beta must be an exact rational"),
    (["critical-noise", "--d", "4", "--beta", "1e5"], "--beta must be at most 1000"),
    (["critical-noise", "--d", "4", "--beta", "1/" + "7" * 80], "--beta is 82 characters long"),
    (["critical-noise", "--d", "4", "--beta", "1", "--l", "1"], "critical-noise takes no --l"),
    (["switch-point", "--d", "3", "--l", "0"], "--l must be an integer in [1, 100], got 0"),
    (["switch-point", "--d", "3", "--beta", "1"], "switch-point takes no --beta"),
    (["beta-stars", "--d", "3"], "unknown threshold 'beta-stars' (known: beta-star, critical-noise, switch-point)"),
    (["noise-threshold", "--d", "3"], "--d applies to a threshold"),
    (["nope"], "thresholds with --d: beta-star, critical-noise, switch-point"),
    (["beta-star", "--d", "x"], "invalid int value: 'x'"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, message):
    assert message in bad(capsys, ["certify", *argv])


def test_help_lists_the_thresholds(capsys):
    with pytest.raises(SystemExit):
        main(["certify", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for name in ("beta-star", "critical-noise", "switch-point", "attnflow certify critical-noise --d 4 --beta 3/2"):
        assert name in out
