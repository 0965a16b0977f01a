"""Every file option of every command against every malformed kind of file (tests/cli/malformed.py).

Each case must end within seconds in exit 2 with exactly one ``error:`` line and no traceback: a header that
declares TiB is refused from the header (no MemoryError), a corrupted member or a compression bomb is an invalid
file (no ``zlib.error``, no minutes of inflating), a FIFO is refused at once (no blocking read), an empty file or
an archive of the wrong kind is an invalid file (no EOFError, no AttributeError). Before this work, the huge
headers raised MemoryError, the corrupted member zlib.error, the bomb ran for minutes, the FIFO blocked and the
empty file raised EOFError on several of these options (``rd --init``, ``--heads``/``--mlp``/``--schedule``,
``sweep run``, ``model --file`` read with their own loaders).
"""
from __future__ import annotations

import json
import os
import resource

import numpy as np
import pytest

from numerics.cli import main
from numerics.core.trajectory import simulate
from tests.cli import malformed
from tests.cpu_budget import cpu_budget

#: a case must be decided within this many seconds of CPU time (a few on an idle machine; not wall-clock time:
#: tests/cpu_budget.py); a FIFO read, which would block forever, trips the budget's wall-clock hang guard
CASE_CPU_SECONDS = 30

F = "{F}"
SIM = ["simulate", "--model", "sa", "--n", "4", "--d", "3", "--beta", "1", "--t-end", "0.1", "--out", "o.npz"]
CRIT = ["critical", "--config", "sync", "--n", "3", "--d", "3", "--beta", "1"]
GAUSS = ["gaussian", "--attention", "softmax", "--d", "2", "--mean", "[0,0]", "--cov", "[[1,0],[0,1]]", "--t-end", "0.1"]
EYE3 = "[[1,0,0],[0,1,0],[0,0,1]]"
RD = ["rd", "--attention", "softmax", "--d", "3", "--A", EYE3, "--V", EYE3, "--t-end", "0.1", "--out", "r.npz"]
RDS = ["rd-stability", "--attention", "softmax", "--d", "3", "--A", EYE3, "--V", EYE3, "--t-end", "0.1"]

#: (option, argv with the file at {F}, what the option reads)
FILE_OPTIONS = [
    ("simulate --init", ["simulate", "--model", "sa", "--beta", "1", "--t-end", "0.1", "--out", "o.npz", "--init", F],
     "npy"),
    ("simulate --matrices", SIM + ["--matrices", F], "npz"),
    ("simulate --heads", SIM + ["--heads", F], "npz"),
    ("simulate --mlp", SIM + ["--heads", "heads.npz", "--mlp", F], "npz"),
    ("simulate --schedule", SIM + ["--schedule", F], "npz"),
    ("simulate --resume", ["simulate", "--resume", F, "--t-end", "1", "--out", "o.npz"], "npz"),
    ("critical --file", ["critical", "--config", "file", "--beta", "1", "--file", F], "npy"),
    ("critical --heads", CRIT + ["--heads", F], "npz"),
    ("critical --mlp", CRIT + ["--heads", "heads.npz", "--mlp", F], "npz"),
    ("critical --schedule", CRIT + ["--schedule", F], "refused"),  # refused before reading: one layer only
    ("gaussian --heads", GAUSS + ["--heads", F], "npz"),
    ("rd --init", RD + ["--init", F], "npy"),
    ("rd-stability --init", RDS + ["--init", F], "npy"),
    ("rd-stability --init2", RDS + ["--n", "4", "--init2", F], "npy"),
    ("codegen --matrices", ["codegen", "--model", "sa", "--d", "3", "--out", "g.py", "--matrices", F], "npz"),
    ("clusters FILE", ["clusters", F], "npz"),
    ("predict-merges FILE", ["predict-merges", F, "--at", "0"], "npz"),
    ("sweep run SPEC", ["sweep", "run", F, "--store", "s.zarr", "--scheduler", "synchronous"], "text"),
    ("conjecture replay FILE", ["conjecture", "replay", F], "text"),
    ("conjecture run --module", ["conjecture", "run", "mine", "--module", F], "text"),
    ("model tokens --file", ["model", "tokens", "--file", F], "text"),
    ("model --model", ["model", "tokens", "--model", F, "--text", "a b"], "zip"),
]

#: the reason each kind must be refused with, for the readers of arrays
REASONS = {"huge-header": "memory", "huge-member": "memory", "corrupt-member": "invalid file", "bomb": "bomb",
           "fifo": "FIFO", "empty": "empty", "npz-as-npy": ".npz archive", "npy-as-npz": ".npy array",
           "truncated": "truncated", "directory": "directory", "pickled": "pickled"}


def _address_space() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[0]) * resource.getpagesize()


def run_bounded(capsys, argv, seconds=CASE_CPU_SECONDS, extra_memory=1 << 30):
    """Run ``attnflow argv`` in-process within a CPU-time budget (and a hang guard) and an address-space bound;
    return (code, stderr)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (_address_space() + extra_memory, hard))
    try:
        with cpu_budget(seconds, f"{argv} (blocked or worked on a hostile file)"):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    return code, capsys.readouterr().err


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("malformed")
    paths = malformed.make_all(str(folder))
    return folder, paths


@pytest.fixture
def work(tmp_path, monkeypatch, files):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    np.savez("heads.npz", **{k: rng.standard_normal((2, 2, 3)) for k in ("Q", "K", "V", "W")})
    return tmp_path


#: an archive named .npy is a valid archive, an array named .npz a valid array: readers go by content, so these
#: pairs are not malformed for the reader of that content
VALID_CONTENT = {("npy", "npy-as-npz"), ("npz", "npz-as-npy"), ("zip", "npz-as-npy")}
CASES = [pytest.param(option, argv, reads, kind, id=f"{option}-{kind}") for option, argv, reads in FILE_OPTIONS
         for kind in sorted(malformed.MAKERS) if (reads, kind) not in VALID_CONTENT]


@pytest.mark.parametrize("option, argv, reads, kind", CASES)
def test_every_file_option_refuses_every_malformed_kind(capsys, work, files, option, argv, reads, kind):
    _, paths = files
    before = sorted(os.listdir(work))
    code, err = run_bounded(capsys, [paths[kind] if a == F else a for a in argv])
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert code == 2, (option, kind, err[-800:])
    assert "Traceback" not in err, (option, kind, err[-800:])
    assert [line for line in lines if line.startswith("error:")] == lines[-1:], (option, kind, err)
    if reads in ("npy", "npz") and not (reads == "npy" and kind in ("huge-member", "corrupt-member", "bomb")) \
            and not (reads == "npz" and kind in ("huge-header", "truncated", "pickled")):  # those: the other format
        assert REASONS[kind] in lines[-1], (option, kind, lines[-1])
    assert sorted(os.listdir(work)) == before  # nothing written


def _trajectory_with(folder, name, **changes):
    path = os.path.join(folder, name)
    simulate("sa", 1.0, 0.2, n=4, d=3, seed=0, dt=0.1).save(path)
    with np.load(path) as data:
        base = dict(data)
    meta = json.loads(str(base["meta"]))
    for key, value in changes.items():
        if key.startswith("array:"):
            base[key[6:]] = value
        else:
            meta[key] = value
    np.savez(path, **{**base, "meta": np.array(json.dumps(meta))})
    return path


@pytest.mark.parametrize("changes, fragment", [
    ({"heads": [1, 2]}, "meta.heads must be a JSON object"),
    ({"mlp": 3}, "meta.mlp must be a JSON object"),
    ({"schedule": {}}, "meta.schedule lacks times, heads"),
    ({"schedule": {"times": [0.0], "heads": [[1]]}}, "meta.schedule.heads[0] must be a JSON object"),
    ({"causal": [1]}, "meta.causal must be true/false"),
    ({"energy_normalization": [1]}, "meta.energy_normalization must be a string"),
    ({"save_every": [1]}, "meta.save_every must be an integer"),
    ({"noise_seed": "x"}, "meta.noise_seed must be an integer"),
    ({"rtol": [1]}, "meta.rtol must be a number"),
    ({"method": 3}, "meta.method must be a string"),
])
def test_resume_refuses_metadata_of_the_wrong_type(capsys, work, changes, fragment):
    path = _trajectory_with(str(work), "bad.npz", **changes)
    code, err = run_bounded(capsys, ["simulate", "--resume", path, "--t-end", "1", "--out", "o.npz"])
    assert code == 2 and err.strip().splitlines()[-1].startswith("error:"), err
    assert fragment in err, err
    assert "Traceback" not in err


def test_resume_with_tiny_time_spacing_is_refused_before_allocating(capsys, work):
    path = os.path.join(str(work), "dense.npz")
    from numerics.core.model import Model, SaveAt, Solver
    from numerics.core.trajectory import simulate as run
    from numerics.core.trajectory import uniform_sphere

    X0 = uniform_sphere(4, 3, 0)
    run(Model("sa", 1.0), X0, 1e-9, solver=Solver("adaptive", rtol=1e-6),
        save=SaveAt(times=np.linspace(0, 1e-9, 11))).save(path)
    code, err = run_bounded(capsys, ["simulate", "--resume", path, "--t-end", "1000", "--out", "o.npz"])
    assert code == 2 and "new frames" in err and "memory" in err, err


# -- sizes estimated before work ---------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, fragment", [
    (SIM[:-2] + ["--t-end", "1e9", "--method", "adaptive", "--save-times", "log:1:1e9:1000000000", "--out", "o.npz"],
     "--save-times with 1000000000 times"),
    (["codegen", "--model", "sa", "--d", "1000000000000", "--out", "g.py"], "symbolic matrix entries"),
    (["codegen", "--model", "sa", "--d", "5000", "--out", "g.py"], "memory"),
    (["bench", "--repeats", "1000000000000"], "hours"),
    (["bench", "--fourier-n", "1000000000000"], "--fourier-n"),
    (["bench", "--fourier-large-n", "1000000000000"], "--fourier-large-n"),
    (["bench", "--suite", "fourier", "--repeats", "1000000000"], "hours"),
    (["bench", "--suite", "simulate", "--repeats", "1000000000"], "hours"),
    (["bench", "--repeats", "1e12"], "invalid int value"),
])
def test_sizes_are_estimated_before_work(capsys, work, argv, fragment):
    code, err = run_bounded(capsys, argv)
    assert code == 2 and fragment in err and "Traceback" not in err, err
    assert [line for line in err.splitlines() if line.startswith("error:")] == err.strip().splitlines()[-1:]


@pytest.mark.parametrize("argv", [
    SIM + ["--kernel", "abs(s)"],
    CRIT + ["--kernel", "abs(s)"],
    ["derive", "gradient", "--model", "sa", "--d", "3", "--kernel", "abs(s)"],
    ["codegen", "--model", "usa", "--d", "3", "--out", "g.py", "--kernel", "abs(s)*s"],
])
def test_non_smooth_kernels_get_the_kernel_checks_line(capsys, work, argv):
    code, err = run_bounded(capsys, argv)
    assert code == 2 and "twice continuously differentiable" in err and "Traceback" not in err, err


@pytest.mark.parametrize("argv", [
    SIM + ["--kernel", "exp(c*s)"],
    ["conjecture", "run", "landscape", "--kernel", "exp(c*s)", "--budget", "1"],
])
def test_a_missing_kernel_parameter_names_the_option(capsys, work, argv):
    code, err = run_bounded(capsys, argv)
    assert code == 2 and "--param NAME=VALUE" in err and "params" not in err, err


def test_a_local_sweep_with_more_workers_than_cores_is_refused(capsys, work):
    from numerics.sweeps.workers import available_cores, check_local_workers

    from tests.numerics.sweep_helpers import MINIMAL_TOML

    (work / "spec.toml").write_text(MINIMAL_TOML)
    code, err = run_bounded(capsys, ["sweep", "run", "spec.toml", "--store", "s.zarr", "--workers",
                                     str(available_cores() + 38)])
    assert code == 2 and "cores available" in err, err
    assert not (work / "s.zarr").exists()
    assert check_local_workers(available_cores()) == available_cores()
    assert check_local_workers(1000, "tcp://127.0.0.1:8786") == 1000  # a remote cluster brings its own
