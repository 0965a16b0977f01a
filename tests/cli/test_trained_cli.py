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


def test_a_checkpoint_folder_loads_under_a_memory_cap(capsys, tmp_path):
    """Issue 43: reading a checkpoint file asked for the whole memory limit (16 GiB) as its read buffer, so any
    address-space cap below that failed with MemoryError on a valid folder; the read is now sized by the file."""
    from tests.cli.test_hostile_files import run_bounded
    from tests.numerics.test_trained_model import _tiny_checkpoint

    folder = _tiny_checkpoint(tmp_path)
    code, err = run_bounded(capsys, ["model", "embed", "--text", SHORT, "--checkpoint", str(folder)],
                            seconds=60, extra_memory=2 << 30)
    assert code == 0 and "MemoryError" not in err, err[-600:]


def test_read_bytes_asks_for_the_file_size_not_the_limit(tmp_path, monkeypatch):
    from numerics.common import readers

    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * 100)
    asked = []
    real_open = readers.open_regular

    class Spy:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def fileno(self):
            return self.fh.fileno()

        def read(self, n=-1):
            asked.append(n)
            return self.fh.read(n)

    monkeypatch.setattr(readers, "open_regular", lambda p, what: Spy(real_open(p, what)))
    assert readers.read_bytes(path, "file", max_bytes=1 << 40) == b"x" * 100
    assert asked and max(asked) <= 101, asked
    monkeypatch.undo()
    with pytest.raises(readers.InputError, match="larger than 50 bytes"):
        readers.read_bytes(path, "file", max_bytes=50)
