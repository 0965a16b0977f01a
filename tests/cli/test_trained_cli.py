"""``attnflow model inspect|tokens|iterate|embed`` (needs the extra attnflow[models])."""
import numpy as np
import pytest

from numerics.trained import checkpoint as ck
from tests.cli.helpers import bad, run_json

pytestmark = pytest.mark.skipif(not ck.models_available(), reason="needs the extra attnflow[models]")

SHORT = "Tokens cluster with depth."


def test_embed_prints_unit_norm_embeddings(capsys):
    from numerics.trained.texts import QUICKSTART, QUICKSTART_SIMILARITIES

    out = run_json(capsys, ["model", "embed", *sum((["--text", t] for t in QUICKSTART), [])])
    E = np.array(out["embeddings"])
    assert E.shape == (3, 384)
    assert np.allclose(np.linalg.norm(E, axis=1), 1, atol=1e-12)
    assert np.array_equal(np.round(np.array(out["similarities"]), 4), np.array(QUICKSTART_SIMILARITIES))


def test_inspect_one_layer(capsys, tmp_path):
    png = tmp_path / "heads.png"
    out = run_json(capsys, ["model", "inspect", "--layer", "1", "--text", SHORT, "--plot", str(png)])
    assert len(out["heads"]) == 12 and png.stat().st_size > 0
    assert {h["label"] for h in out["heads"]} <= {"blow-up", "collapse", "mixed, blow-up dominant",
                                                   "mixed, collapse dominant"}


def test_tokens_table_and_json(capsys, tmp_path):
    from numerics.cli import main

    assert main(["model", "tokens", "--text", SHORT]) == 0
    assert "mean cos" in capsys.readouterr().out
    out = run_json(capsys, ["model", "tokens", "--text", SHORT, "--plot", str(tmp_path / "t.png")])
    layers = out["layers"]["model"]
    assert len(layers) == 7 and layers[0]["clusters"] <= len(out["tokens"])


def test_iterate_short(capsys):
    out = run_json(capsys, ["model", "iterate", "--text", SHORT, "--layer", "6", "--steps", "3"])
    assert len(out["counts"]) == 4 and out["l_max"]["switch_to_l2"] > 255


@pytest.mark.parametrize("argv", [
    ["model", "embed", "--text", "   "],
    ["model", "embed", "--text", "x", "--model", "/nonexistent/model"],
    ["model", "inspect", "--layer", "7", "--text", "x"],
    ["model", "tokens", "--text", "x", "--eps", "nan"],
    ["model", "tokens", "--text", "x", "--file", "f.txt"],
    ["model", "tokens", "--paragraph", "9"],
    ["model", "iterate", "--text", "x", "--steps", "0"],
    ["model", "tokens", "--file", "/nonexistent.txt"],
])
def test_bad_input(capsys, argv):
    bad(capsys, argv)
