"""The top-level keys of every command's ``--json`` output, pinned so that a change of keys is a decision.

:data:`RUNS` names one cheap command line per command (tiny sizes: the whole set runs in well under a minute);
:func:`observed_keys` runs one in-process and returns the sorted top-level keys of its JSON object. The pinned
keys live in ``tests/cli/json_keys.json`` (command -> sorted keys), written by::

    PYTHONPATH=. python -m tests.cli.json_keys --write

and compared by ``tests/cli/test_json_keys.py``. Every command (and action) has a run here: none is too
expensive at these sizes (the slowest, ``bench`` and ``phase``, take a few seconds), so no key list is written
by hand. The ``model`` runs need the extra ``attnflow[models]`` (a random tiny BERT borrows the packaged
tokenizer); without it they are skipped. The ``sweep`` runs depend on each other in the order listed.

Placeholders in the command lines: ``{tmp}`` a scratch folder, ``{traj}`` a small trajectory written by
``simulate``, ``{llama}`` a random tiny decoder checkpoint folder (tests/numerics/decoder_support.py), ``{bert}``
a random tiny BERT folder (tests/numerics/test_trained_model.py), ``{spec}`` the sweep of :data:`SWEEP_SPEC`.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

PINNED = Path(__file__).resolve().parent / "json_keys.json"

EYE = "[[1,0],[0,1]]"
#: name -> the cheap command line (``--json`` is appended)
RUNS: dict[str, list[str]] = {
    "simulate": ["simulate", "--model", "sa", "--beta", "1", "--n", "5", "--d", "3", "--t-end", "0.2", "--out",
                 "{tmp}/s.npz"],
    "simulate-stop-when": ["simulate", "--model", "sa", "--beta", "1", "--n", "5", "--d", "3", "--t-end", "3",
                           "--stop-when", "one-cluster:0.5", "--out", "{tmp}/e.npz"],
    "simulate-batch-norm": ["simulate", "--model", "sa", "--beta", "1", "--n", "5", "--d", "3", "--t-end", "0.2",
                            "--batch", "2", "--norm", "pre", "--out", "{tmp}/bn.npz"],
    "derive": ["derive", "energy", "--model", "sa", "--d", "2"],
    "codegen": ["codegen", "--model", "sa", "--d", "3", "--out", "{tmp}/g.py"],
    "critical": ["critical", "--config", "polygon", "--n", "3", "--d", "2", "--beta", "1", "--model", "sa"],
    "kuramoto": ["kuramoto", "--model", "usa", "--n", "50", "--beta", "0", "--t-end", "1", "--dt", "0.1"],
    "spectrum": ["spectrum", "--d", "3", "--beta", "2"],
    "meanfield": ["meanfield", "--beta", "2", "--model", "usa", "--grid", "32", "--modes", "2", "--t-end", "0.5"],
    "masked-meanfield": ["masked-meanfield", "--beta", "1"],
    "metastable": ["metastable", "--beta", "1", "--n", "100", "--seeds", "1", "--collapse-time", "1"],
    "lost-in-the-middle": ["lost-in-the-middle", "--beta", "1"],
    "mean-field-rate": ["mean-field-rate", "--beta", "0", "--grid", "64", "--t-end", "2"],
    "low-temperature": ["low-temperature", "--betas", "16", "--rings", "8"],
    "phase": ["phase", "--beta", "4", "--d", "2", "--modes", "1"],
    "phase (several betas)": ["phase", "--beta", "1", "4", "--d", "2", "--modes", "1"],
    "moderate": ["moderate", "--phase", "pairing", "--beta", "10"],
    "moderate (clustering)": ["moderate", "--phase", "clustering", "--n", "200", "--beta", "8"],
    "nematic": ["nematic", "--kernel", "maier-saupe", "--d", "3"],
    "fokker-planck": ["fokker-planck", "--beta", "2", "--noise", "0.3", "--L", "4", "--t-end", "1"],
    "long-context": ["long-context", "--rho", "0.25", "--alpha", "1", "--q", "4", "--n-max", "1000"],
    "gaussian": ["gaussian", "--attention", "softmax", "--d", "2", "--A", EYE, "--V", EYE, "--mean", "[0.5,-0.3]",
                 "--cov", EYE, "--t-end", "0.1"],
    "rd": ["rd", "--attention", "softmax", "--d", "2", "--A", EYE, "--V", EYE, "--n", "6", "--t-end", "0.2",
           "--out", "{tmp}/r.npz"],
    "rd-stability": ["rd-stability", "--d", "2", "--A", EYE, "--V", EYE, "--n", "4", "--t-end", "0.2"],
    "frank-wolfe": ["frank-wolfe", "--A", EYE, "--n", "6", "--layers", "3"],
    "clusters": ["clusters", "{traj}"],
    "predict-merges": ["predict-merges", "{traj}", "--at", "0.1", "--eps", "0.05"],
    "conjecture list": ["conjecture", "list"],
    "conjecture run": ["conjecture", "run", "landscape", "--beta-range", "-1.6", "-0.8", "--budget", "30", "--seed",
                       "0", "--save", "{tmp}/cx.json"],
    "conjecture replay": ["conjecture", "replay", "{tmp}/cx.json"],
    "bench": ["bench", "--suite", "field", "--n", "64", "--repeats", "1"],
    "verify": ["verify", "--only", "certified.circle-three-clusters"],
    "sweep run": ["sweep", "run", "{spec}", "--store", "{tmp}/s.zarr", "--scheduler", "synchronous"],
    "sweep status": ["sweep", "status", "{tmp}/s.zarr"],
    "sweep resume": ["sweep", "resume", "{tmp}/s.zarr", "--scheduler", "synchronous"],
    "sweep convert": ["sweep", "convert", "{tmp}/s.zarr", "--out", "{tmp}/copy.zarr"],
    "sweep plot": ["sweep", "plot", "{tmp}/s.zarr", "--x", "beta", "--value", "clusters", "--plot", "{tmp}/p.png"],
    "sweep observables": ["sweep", "observables"],
    "model inspect": ["model", "inspect", "--checkpoint", "{bert}", "--text", "a b c", "--layer", "1"],
    "model tokens": ["model", "tokens", "--checkpoint", "{bert}", "--text", "a b c"],
    "model iterate": ["model", "iterate", "--checkpoint", "{bert}", "--text", "a b c", "--steps", "2"],
    "model embed": ["model", "embed", "--checkpoint", "{bert}", "--text", "a b c"],
    "certify": ["certify", "certified.noise-threshold"],
    "certify THRESHOLD": ["certify", "critical-noise", "--d", "4", "--beta", "3/2"],
    "decoder inspect": ["decoder", "inspect", "--model", "{llama}", "--text", "the thin tan"],
    "decoder generate": ["decoder", "generate", "--model", "{llama}", "--prompt", "the", "--max-new-tokens", "2"],
    "decoder tokens": ["decoder", "tokens", "--model", "{llama}", "--text", "the thin tan"],
    "decoder tokens --init random": ["decoder", "tokens", "--model", "{llama}", "--text", "the thin tan", "--init",
                                     "random", "--seeds", "2"],
    "decoder flow": ["decoder", "flow", "--model", "{llama}", "--text", "the thin tan"],
    "decoder context": ["decoder", "context", "--model", "{llama}", "--lengths", "8,16"],
    "decoder bench": ["decoder", "bench", "--model", "{llama}", "--n", "8", "--repeats", "1"],
}

#: the sweep of the ``sweep`` runs: one cell per seed, short
SWEEP_SPEC = """\
[model]
model = "sa"
d = 2
[sweep]
beta = [1.0, 4.0]
n = [8]
seeds = 1
[run]
t_end = 1.0
[observables]
clusters = { eps = 1e-3 }
"""


def fill(argv: list[str], places: dict[str, str]) -> list[str]:
    """``argv`` with the placeholders replaced."""
    out = []
    for a in argv:
        for key, value in places.items():
            a = a.replace("{" + key + "}", value)
        out.append(a)
    return out


def observed_keys(argv: list[str]) -> list[str]:
    """Run ``attnflow argv --json`` in-process; the sorted top-level keys of its one JSON object."""
    import contextlib
    import io

    from numerics.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([*argv, "--json"])
        except SystemExit as exc:  # the parser's own errors
            code = exc.code
    if code != 0:
        raise RuntimeError(f"{argv} exited {code}: {err.getvalue()[-400:]}")
    lines = [line for line in out.getvalue().splitlines() if line.strip()]
    if len(lines) != 1:
        raise RuntimeError(f"{argv} printed {len(lines)} lines, not one JSON object")
    return sorted(json.loads(lines[0]))


def make_places(tmp: Path) -> dict[str, str]:
    """The files the command lines name, made in ``tmp``."""
    traj = tmp / "traj.npz"
    if not traj.exists():
        observed_keys(["simulate", "--model", "sa", "--beta", "4", "--n", "8", "--d", "3", "--t-end", "0.5", "--out",
                       str(traj)])
    llama = tmp / "llama"
    if not llama.exists():
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
        from tests.numerics.decoder_support import byte_vocabulary, llama_config, llama_weights, write_folder

        write_folder(llama, llama_config(len(byte_vocabulary()[0])), llama_weights())
    spec = tmp / "spec.toml"
    spec.write_text(SWEEP_SPEC)
    bert = tmp / "bert"
    if not bert.exists():
        from numerics.trained import checkpoint as ck

        bert.mkdir()
        if ck.models_available():  # the tiny BERT borrows the packaged model's tokenizer
            from tests.numerics.test_trained_model import _tiny_checkpoint

            _tiny_checkpoint(bert)
    return {"tmp": str(tmp), "traj": str(traj), "llama": str(llama), "spec": str(spec), "bert": str(bert)}


def main(argv: list[str]) -> int:
    """``--write``: run every command of :data:`RUNS` and write ``json_keys.json``; otherwise print the diff."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        places = make_places(Path(folder))
        keys = {name: observed_keys(fill(cmd, places)) for name, cmd in RUNS.items()}
    if "--write" in argv:
        # one command a line, so that a change of keys is a one-line diff
        lines = [f" {json.dumps(name)}: {json.dumps(k)}" for name, k in sorted(keys.items())]
        PINNED.write_text("{\n" + ",\n".join(lines) + "\n}\n")
        print(f"wrote {PINNED} ({len(keys)} commands)")
        return 0
    pinned = json.loads(PINNED.read_text())
    changed = {k for k in set(keys) | set(pinned) if keys.get(k) != pinned.get(k)}
    for name in sorted(changed):
        print(f"{name}: pinned {pinned.get(name)} observed {keys.get(name)}")
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
