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


def test_tokens_init_random_puts_the_trained_model_beside_its_draws(capsys, tiny, tmp_path):
    path = tmp_path / "random.png"
    out = run_json(capsys, ["decoder", "tokens", "--model", str(tiny["llama"]), "--text", TEXT, "--init", "random",
                            "--seed", "3", "--seeds", "2", "--std", "0.05", "--plot", str(path)])
    assert out["init"] == "random" and out["seeds"] == [3, 4] and out["std"] == 0.05 and out["std_from"] == "given"
    assert len(out["trained"]["mean_cosine"]) == 3 and len(out["random"]["per_seed"]) == 2
    assert set(out["random"]["band"]) == {"mean_cosine", "clusters", "effective_rank", "energy_fixed_beta"}
    assert path.read_bytes()[:4] == b"\x89PNG"
    # the checkpoint states no initializer_range: GPT-2's 0.02, said so
    out = run_json(capsys, ["decoder", "tokens", "--model", str(tiny["llama"]), "--text", TEXT, "--init", "random",
                            "--seeds", "1"])
    assert out["std"] == 0.02 and "GPT-2" in out["std_from"]


def test_tokens_init_random_bad_inputs(capsys, tiny):
    m = ["--model", str(tiny["llama"]), "--text", TEXT]
    for argv, fragment in ((["--init", "random", "--seeds", "0"], "--seeds"),
                           (["--init", "random", "--std", "-1"], "--std"),
                           (["--init", "random", "--std", "nan"], "--std"),
                           (["--init", "random", "--seed", "-2"], "--seed"),
                           (["--init", "random", "--minilm"], "--minilm"),
                           (["--seed", "1"], "--init random")):
        assert fragment in bad(capsys, ["decoder", "tokens", *m, *argv]), argv


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


# -- issue 43: the reviewer's checkpoints (one error line, exit 2, no traceback, decided in seconds) -----------------
def _config_case(tmp_path, change: dict, family: str = "llama"):
    from tests.numerics.decoder_support import gpt2_config, gpt2_weights

    V = len(byte_vocabulary()[0])
    config, weights = (llama_config(V), llama_weights()) if family == "llama" else (gpt2_config(V), gpt2_weights())
    return write_folder(tmp_path / "m", {**config, **change}, weights)


@pytest.mark.parametrize("family, change, fragment", [
    ("llama", {"rms_norm_eps": -1e-5}, "rms_norm_eps must be a finite number in (0, 0.1]"),
    ("llama", {"rms_norm_eps": float("nan")}, "rms_norm_eps must be a finite number"),
    ("llama", {"rms_norm_eps": 1e308}, "rms_norm_eps must be a finite number"),
    ("llama", {"rms_norm_eps": 0}, "rms_norm_eps must be a finite number"),
    ("llama", {"rope_theta": float("inf")}, "rope_theta must be a finite number in (1, 1e+12]"),
    ("llama", {"rope_theta": 1.0}, "rope_theta must be a finite number"),
    ("llama", {"tie_word_embeddings": "no"}, "tie_word_embeddings must be true or false"),
    ("llama", {"attention_bias": 0}, "attention_bias must be true or false"),
    ("llama", {"eos_token_id": 2.5}, "eos_token_id must be a token id"),
    ("llama", {"eos_token_id": [1, "2"]}, "eos_token_id must be a token id"),
    ("llama", {"eos_token_id": 10**6}, "eos_token_id 1000000 lies outside the vocabulary"),
    ("llama", {"bos_token_id": -1}, "bos_token_id must be a token id"),
    ("llama", {"rope_scaling": "x"}, "rope_scaling must be a JSON object or null"),
    ("llama", {"rope_scaling": {"type": 3}}, "rope_scaling.type must be a string"),
    ("llama", {"hidden_size": True}, "hidden_size must be a positive integer"),
    ("llama", {"sliding_window": -4}, "sliding_window must be a positive integer"),
    ("llama", {"hidden_act": 7}, "hidden_act must be a string"),
    ("gpt2", {"layer_norm_epsilon": -1.0}, "layer_norm_epsilon must be a finite number"),
    ("gpt2", {"tie_word_embeddings": "false"}, "tie_word_embeddings must be true or false"),
    ("gpt2", {"scale_attn_weights": "yes"}, "scale_attn_weights must be true or false"),
    ("gpt2", {"n_inner": 1.5}, "n_inner must be a positive integer"),
])
def test_every_config_value_is_checked_by_type_and_range(capsys, tmp_path, family, change, fragment):
    import time

    folder = _config_case(tmp_path, change, family)
    start = time.perf_counter()
    for action in ("inspect", "generate"):
        extra = ["--prompt", "the"] if action == "generate" else ["--text", TEXT]
        line = bad(capsys, ["decoder", action, "--model", str(folder), *extra])
        assert fragment in line, line
    assert time.perf_counter() - start < 10


def test_valid_optional_config_values_still_load(capsys, tmp_path):
    """null means the default; the newer rope_parameters layout and list-valued eos ids are accepted."""
    V = len(byte_vocabulary()[0])
    folder = _config_case(tmp_path, {"head_dim": None, "sliding_window": None, "rope_scaling": None,
                                     "rope_parameters": {"rope_type": "default", "rope_theta": 1000.0},
                                     "eos_token_id": [V - 1, V - 2], "tie_word_embeddings": True})
    out = run_json(capsys, ["decoder", "generate", "--model", str(folder), "--prompt", "the", "--max-new-tokens", "2"])
    assert out["model"] == str(folder)


def test_a_tensor_in_two_shards_is_refused(capsys, tmp_path):
    from safetensors.numpy import save_file

    folder = _config_case(tmp_path, {})
    save_file({"model.norm.weight": llama_weights()["model.norm.weight"].astype("float32")},
              str(folder / "model-00002.safetensors"))
    line = bad(capsys, ["decoder", "inspect", "--model", str(folder), "--text", TEXT])
    assert "tensor model.norm.weight is in two shards" in line


@pytest.mark.parametrize("command", [["decoder", "inspect", "--text", TEXT, "--model"],
                                     ["model", "tokens", "--text", "a b", "--checkpoint"]])
def test_a_deeply_nested_config_is_an_error_not_a_recursion_error(capsys, tmp_path, command):
    from tests.cli.test_hostile_files import run_bounded

    folder = _config_case(tmp_path, {})
    (folder / "config.json").write_text("[" * 100_000 + "]" * 100_000)
    code, err = run_bounded(capsys, [*command, str(folder)])
    assert code == 2 and "Traceback" not in err and err.strip().count("\n") == 0, err[-400:]
    assert err.startswith("error:") and "nested deeper than" in err


class _unblocking:
    """While the block runs, a thread opens the FIFO for writing after 12 s and closes it: a reader that regressed
    to a blocking open (in native code, where neither the test's alarm nor SIGTERM can interrupt it) then sees
    end-of-file and returns, so the test fails on its time bound instead of hanging the suite."""

    def __init__(self, path):
        import threading

        self.path, self.done = path, threading.Event()
        self.thread = threading.Thread(target=self._release, daemon=True)

    def _release(self):
        import os

        if self.done.wait(12):
            return
        fd = os.open(self.path, os.O_WRONLY)  # blocks until the stuck reader is there, then releases it
        os.close(fd)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()


@pytest.mark.parametrize("action", [["generate", "--prompt", "x"], ["inspect", "--text", TEXT]])
@pytest.mark.parametrize("name", ["model.safetensors", "config.json", "tokenizer.json"])
def test_a_fifo_in_the_checkpoint_is_refused_at_once(capsys, tmp_path, action, name):
    import os

    from tests.cli.test_hostile_files import run_bounded

    folder = _config_case(tmp_path, {})
    (folder / name).unlink()
    os.mkfifo(folder / name)
    with _unblocking(folder / name):
        code, err = run_bounded(capsys, ["decoder", *action, "--model", str(folder)], seconds=10)
    assert code == 2 and "Traceback" not in err and err.startswith("error:"), err[-400:]
    assert "FIFO" in err and name in err


def test_a_fifo_given_as_the_model_file_is_refused_at_once(capsys, tmp_path):
    import os

    from tests.cli.test_hostile_files import run_bounded

    os.mkfifo(tmp_path / "model.gguf")
    with _unblocking(tmp_path / "model.gguf"):
        code, err = run_bounded(capsys, ["decoder", "generate", "--prompt", "x", "--model",
                                         str(tmp_path / "model.gguf")])
    assert code == 2 and "FIFO" in err, err


def test_a_fifo_checkpoint_ends_on_sigterm_within_seconds(tmp_path):
    """Out of process, as a user would see it: the command ends by itself (exit 2) well before the SIGTERM that
    would otherwise be needed, and if it were still running SIGTERM would end it."""
    import os
    import signal
    import subprocess
    import sys
    import time

    folder = _config_case(tmp_path, {})
    (folder / "model.safetensors").unlink()
    os.mkfifo(folder / "model.safetensors")
    proc = subprocess.Popen([sys.executable, "-m", "numerics", "decoder", "inspect", "--model", str(folder), "--text",
                             "the"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
        start = time.perf_counter()
        try:
            proc.communicate(timeout=10)
            pytest.fail(f"blocked on the FIFO; SIGTERM ended it after {time.perf_counter() - start:.1f} s")
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            pytest.fail("blocked on the FIFO, and SIGTERM did not end it (killed)")
    assert proc.returncode == 2 and "FIFO" in err and "Traceback" not in err, err[-400:]


def test_context_refuses_a_big_file_before_tokenising_it(capsys, tmp_path):
    import time

    from numerics.decoder.context import MAX_TEXT_BYTES

    big = tmp_path / "big.txt"
    big.write_text("the thin tan theater " * (MAX_TEXT_BYTES // 21 + 10))
    start = time.perf_counter()
    line = bad(capsys, ["decoder", "context", "--file", str(big), "--lengths", "8,16", "--model",
                        str(tiny_llama(tmp_path))])
    assert "larger than 2 MiB" in line and time.perf_counter() - start < 5
    for action in ("tokens", "inspect", "flow"):
        assert "larger than 2 MiB" in bad(capsys, ["decoder", action, "--file", str(big), "--model",
                                                   str(tiny_llama(tmp_path))])
    ok = tmp_path / "ok.txt"
    ok.write_text("the thin tan theater " * 4)
    assert run_json(capsys, ["decoder", "context", "--file", str(ok), "--lengths", "8,16",
                             "--model", str(tiny_llama(tmp_path))])["text_tokens"] >= 16


def tiny_llama(tmp_path):
    folder = tmp_path / "llama"
    if not folder.exists():
        V = len(byte_vocabulary()[0])
        write_folder(folder, llama_config(V), llama_weights())
    return folder


@pytest.mark.parametrize("lengths, fragment", [("8,,16", "--lengths has an empty item (item 2 of 3"),
                                               ("8,16,", "--lengths has an empty item (item 3 of 3"),
                                               (",".join(["8"] * 1001), "at most 1000"),
                                               ("8,x", "comma-separated integers")])
def test_context_lengths_are_one_parser(capsys, tmp_path, lengths, fragment):
    assert fragment in bad(capsys, ["decoder", "context", "--lengths", lengths, "--model", str(tiny_llama(tmp_path))])
