"""``attnflow certify`` and the ``certified`` verdict of ``attnflow verify``."""
from __future__ import annotations

from numerics.cli import main
from tests.cli.helpers import bad, run_json


def test_certify_prints_enclosures_sign_runs_and_method(capsys):
    assert main(["certify", "circle-three-clusters"]) == 0
    out = capsys.readouterr().out
    assert "zero in [-0.666666666667, -0.666666666666] (simple" in out
    assert "< 0 on [-4, -1]" in out and "method: Arb ball arithmetic" in out
    assert out.rstrip().splitlines()[-1].startswith("CERTIFIED")


def test_certify_json(capsys):
    payload = run_json(capsys, ["certify", "certified.noise-threshold"])
    assert payload["status"] == "certified" and payload["id"] == "certified.noise-threshold"
    entry = payload["details"]["certificates"]["beta*(2)"]
    assert entry["contains reference"] and entry["enclosure"].startswith("[2.4469183112890461309039")


def test_certify_refuses_unknown_and_uncertified_claims(capsys):
    assert "unknown certified claim 'nope'" in bad(capsys, ["certify", "nope"])
    assert "unknown certified claim 'noise.kuramoto'" in bad(capsys, ["certify", "noise.kuramoto"])
    assert "unknown certified claim ''" in bad(capsys, ["certify", ""])


def test_verify_shows_the_certified_verdict(capsys):
    assert main(["verify", "--only", "certified.circle-three-clusters,certified.strict-saddles"]) == 0
    out = capsys.readouterr().out
    assert "CERTIFIED" in out and "0 passed, 0 failed, 0 inconclusive, 2 certified" in out
    payload = run_json(capsys, ["verify", "--only", "certified.circle-three-clusters"])
    assert payload["summary"]["certified"] == 1 and payload["checks"][0]["status"] == "certified"
    assert "method" in payload["checks"][0]["details"]
