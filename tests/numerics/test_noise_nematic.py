"""Maier-Saupe and Onsager on S^1 and S^2 (numerics.noise.nematic, theory.noise_nematic, attnflow nematic)."""
import math

import pytest

from numerics.common.errors import InputError
from tests.cli.helpers import bad, run_json


def test_maier_saupe_claim_passes():
    from numerics.noise.claims_nematic import check_maier_saupe

    r = check_maier_saupe()
    assert r.status == "passed", r.measured["flags"]


def test_maier_saupe_numbers_against_the_certificate():
    from numerics.noise.nematic import nematic_transition
    from theory.noise_nematic import certified_points

    tr = nematic_transition("maier-saupe", 3)
    cert = certified_points()
    assert tr.kind == "transcritical" and tr.threshold == pytest.approx(0.2, abs=1e-15)
    assert abs(tr.first_order[0] - float(cert["transition"][1].mid())) < 1e-12
    assert abs(tr.first_order[1] - float(cert["transition"][2].mid())) < 1e-11
    assert abs(tr.fold[0] - float(cert["fold"][1].mid())) < 1e-12


def test_certified_transition_contains_the_mpmath_root():
    from theory.noise_nematic import certified_points, reference_point

    c = certified_points()["transition"]
    ref = reference_point("transition")
    assert abs(float(ref.D) - float(c[1].mid())) <= float(c[1].rad()) + 1e-25
    assert abs(float(ref.S) - float(c[2].mid())) <= float(c[2].rad()) + 1e-25


def test_onsager_sphere_couplings_closed_form():
    from numerics.noise.nematic import onsager_sphere_couplings

    g = onsager_sphere_couplings(8)
    # (1/2) int -sqrt(1 - s^2) P_l: g_0 = -pi/4, g_2 = pi/32, odd degrees vanish
    assert g[0] == pytest.approx(-math.pi / 4, abs=1e-15) and g[2] == pytest.approx(math.pi / 32, abs=1e-15)
    assert max(abs(g[1]), abs(g[3]), abs(g[5])) < 1e-15


def test_bad_kernel_or_dimension():
    from numerics.noise.nematic import nematic_transition

    with pytest.raises(InputError):
        nematic_transition("landau", 3)
    with pytest.raises(InputError):
        nematic_transition("maier-saupe", 4)


def test_nematic_cli(capsys, tmp_path):
    png = tmp_path / "ms.png"
    out = run_json(capsys, ["nematic", "--plot", str(png)])
    assert out["type"] == "transcritical" and abs(out["first_order"]["S"] - 0.42902902571632) < 1e-11
    assert png.stat().st_size > 10_000
    out = run_json(capsys, ["nematic", "--kernel", "onsager", "--d", "2", "--L", "16"])
    assert out["type"] == "continuous" and out["coupling_threshold"] == pytest.approx(3 * math.pi / 4, rel=1e-12)
    assert "--d must be 2" in bad(capsys, ["nematic", "--d", "5"])
    assert ".png" in bad(capsys, ["nematic", "--plot", "x.txt"])
    assert "L" in bad(capsys, ["nematic", "--L", "1000"])
