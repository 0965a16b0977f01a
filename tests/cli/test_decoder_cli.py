"""``attnflow decoder``: output contracts, plots, and bad input as one-line errors with exit 2.

Most cases run on a small random checkpoint written by the tests (tests/numerics/decoder_support.py); the
packaged SmolLM2 is used where its answer matters (generation)."""
import json

import pytest

from tests.cli.helpers import bad, run_json
from tests.numerics.decoder_support import (byte_vocabulary, llama_config, llama_weights, packaged,  # noqa: F401
                                            requires_decoder, requires_readers, tiny, write_folder)

pytestmark = requires_readers
TEXT = "the thin tan theater in the inn then the heat"


@requires_decoder
def test_generate_prints_token_ids_and_text(capsys, packaged):
    out = run_json(capsys, ["decoder", "generate", "--prompt", "The capital of France is", "--max-new-tokens", "3"])
    assert out["tokens"] == [7042, 30, 198] and out["text"] == " Paris.\n"
    assert out["prompt_ids"] == [504, 3575, 282, 4649, 314] and out["stopped"] == "length"


def test_tokens_json_has_per_layer_cosine_clusters_energy_and_beta(capsys, tiny):
    out = run_json(capsys, ["decoder", "tokens", "--model", str(tiny["llama"]), "--text", TEXT, "--eps", "0.5"])
    assert out["eps"] == 0.5 and len(out["layers"]) == 3
    for row in out["layers"]:
        assert {"layer", "mean_cosine", "clusters", "energy", "beta", "energy_normalization"} <= set(row)
    assert set(out["monotone"]) == {"mean_cosine", "energy", "energy_fixed_beta"}


@pytest.mark.parametrize("action, extra", [
    ("inspect", ["--text", TEXT]), ("flow", ["--text", TEXT]), ("tokens", ["--text", TEXT]),
    ("context", ["--lengths", "8,16"]), ("bench", ["--n", "16", "--repeats", "1"]),
    ("generate", ["--prompt", "the", "--max-new-tokens", "2", "--chat"])])
def test_every_action_runs_on_a_user_checkpoint(capsys, tiny, action, extra):
    out = run_json(capsys, ["decoder", action, "--model", str(tiny["gpt2.gguf"]), *extra])
    assert out["model"] == str(tiny["gpt2.gguf"])


@pytest.mark.parametrize("action, extra", [("inspect", ["--text", TEXT]), ("tokens", ["--text", TEXT]),
                                           ("flow", ["--text", TEXT]), ("context", ["--lengths", "8,16"])])
def test_plots_are_written(capsys, tiny, tmp_path, action, extra):
    path = tmp_path / f"{action}.png"
    out = run_json(capsys, ["decoder", action, "--model", str(tiny["llama"]), *extra, "--plot", str(path)])
    assert out["plot"] == str(path) and path.read_bytes()[:4] == b"\x89PNG"


def test_bad_inputs_are_one_line_errors(capsys, tiny, tmp_path):
    truncated = tmp_path / "cut.gguf"
    truncated.write_bytes(tiny["llama.gguf"].read_bytes()[:300])
    V = len(byte_vocabulary()[0])
    bert = write_folder(tmp_path / "bert", {**llama_config(V), "model_type": "bert"}, llama_weights())
    latin = tmp_path / "latin1.txt"
    latin.write_bytes("caf\xe9 na\xefve".encode("latin-1"))
    m = ["--model", str(tiny["llama"])]
    cases = [
        (["decoder", "generate", "--prompt", "x", "--model", str(tmp_path / "none.gguf")], "does not exist"),
        (["decoder", "generate", "--prompt", "x", "--model", str(truncated)], "GGUF"),
        (["decoder", "tokens", "--model", str(bert)], "model_type 'bert' is not supported; supported"),
        (["decoder", "generate", "--prompt", "   ", *m], "prompt is empty"),
        (["decoder", "generate", "--prompt", "the " * 40, "--max-new-tokens", "40", *m], "context of 64"),
        (["decoder", "tokens", "--text", "the " * 80, *m], "context of 64"),
        (["decoder", "tokens", "--file", str(latin), *m], "cannot read text file"),
        (["decoder", "generate", "--prompt", "caf\udce9", *m], "not valid UTF-8"),
        (["decoder", "context", "--lengths", "8,x", *m], "--lengths"),
        (["decoder", "context", "--lengths", "8,1000", *m], "exceeds"),
        (["decoder", "tokens", "--eps", "0", *m], "--eps"),
        (["decoder", "inspect", "--layer", "9", *m], "--layer"),
        (["decoder", "generate", "--prompt", "x", "--max-new-tokens", "0", *m], "--max-new-tokens"),
        (["decoder", "bench", "--n", "1", *m], "n must be"),
        (["decoder", "tokens", "--text", TEXT, "--plot", str(tiny["llama"] / "config.json"), *m], "inside the model"),
        (["decoder", "tokens", "--text", TEXT, "--plot", str(tiny["llama"] / "new.png"), *m], "inside the model"),
    ]
    for argv, fragment in cases:
        line = bad(capsys, argv)
        if fragment:
            assert fragment in line, (argv, line)


def test_plot_cannot_overwrite_the_model(capsys, tiny):
    gguf = str(tiny["llama.gguf"])
    line = bad(capsys, ["decoder", "tokens", "--model", gguf, "--text", TEXT, "--plot", gguf])
    assert "is the input --model" in line


def test_missing_reader_names_the_extra(capsys, monkeypatch, tiny):
    import importlib

    real = importlib.import_module

    def fake(name, *a):
        if name == "gguf":
            raise ModuleNotFoundError("No module named 'gguf'", name=name)
        return real(name, *a)

    monkeypatch.setattr(importlib, "import_module", fake)
    from numerics.decoder import checkpoint

    monkeypatch.setattr(checkpoint, "_CACHE", {})
    assert "attnflow[models]" in bad(capsys, ["decoder", "generate", "--prompt", "x", "--model", str(tiny["llama.gguf"])])


def test_json_is_one_object(capsys, tiny):
    from numerics.cli import main

    assert main(["decoder", "generate", "--prompt", "the", "--max-new-tokens", "2", "--model", str(tiny["llama"]),
                 "--json"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and "tokens" in json.loads(out[0])
