"""Hostile and extreme inputs: every case ends in exit 0 with correct output or exit 2 with one ``error:`` line,
in bounded time, with the file system unchanged except for the intended output.

Each case here failed before the robustness work (device outputs replaced, inputs overwritten, temporary files
left on SIGTERM, kernel strings that took minutes, MemoryError tracebacks, runs until killed, corrupt files
ending in tracebacks, energies failing after the whole run at beta <= -601, mean-dependent blow-up times).
"""
from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys

import numpy as np
import pytest

from numerics.cli import main
from numerics.core.trajectory import simulate
from tests.cli.helpers import assert_kernel_decided_fast
from tests.cpu_budget import cpu_budget

#: every hostile case must be decided within this many seconds of CPU time (a few on an idle machine; CPU, not
#: wall-clock time, which a loaded machine stretches: tests/cpu_budget.py)
CASE_CPU_SECONDS = 40.0


def snapshot(folder) -> dict:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir()}


def run_case(capsys, argv, expect: int = 2):
    """Run one CLI case in-process; check exit code, the one-line error and the CPU time taken."""
    with cpu_budget(CASE_CPU_SECONDS, argv):
        code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert code == expect, (argv, code, captured.err[-500:])
    if expect == 2:
        lines = captured.err.strip().splitlines()
        # one error line, the last one (a command may have announced what it was about to do)
        assert [line for line in lines if line.startswith("error:")] == lines[-1:], captured.err
        assert "Traceback" not in captured.err and "Warning" not in captured.err
    return captured


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    simulate("sa", 1.0, 0.2, n=4, d=3, seed=0, dt=0.1).save("traj.npz")
    np.save("init.npy", np.eye(3))
    np.savez("mats.npz", V=np.eye(3))
    return tmp_path


SIM = ["simulate", "--model", "sa", "--n", "4", "--d", "3", "--beta", "1", "--t-end", "0.1"]


# -- output paths ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [
    SIM + ["--out", "/dev/null"],
    SIM + ["--out", "ok.npz", "--plot", "/dev/null"],
    ["critical", "--config", "sync", "--n", "3", "--d", "3", "--beta", "1", "--plot", "/dev/null"],
    ["gaussian", "--attention", "softmax", "--d", "2", "--A", "[[1,0],[0,1]]", "--V", "[[1,0],[0,1]]",
     "--mean", "[0,0]", "--cov", "[[1,0],[0,1]]", "--t-end", "0.1", "--plot", "/dev/null"],
    ["clusters", "traj.npz", "--plot", "/dev/null"],
    ["conjecture", "run", "s1-no-spurious-maxima", "--budget", "1", "--save", "/dev/null"],
    ["lost-in-the-middle", "--beta", "1", "--plot", "/dev/null"],
])
def test_device_outputs_are_refused(capsys, work, argv):
    before = snapshot(work)
    err = run_case(capsys, argv).err
    assert "not a regular file" in err and "character device" in err
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert snapshot(work) == before


def test_symlink_to_a_device_is_refused_and_to_a_file_is_followed(capsys, work):
    os.symlink("/dev/null", "dev.npz")
    run_case(capsys, SIM + ["--out", "dev.npz"])
    os.symlink("traj.npz", "link.npz")
    run_case(capsys, SIM + ["--out", "link.npz"], expect=0)
    assert os.path.islink("link.npz")  # the link stays a link; its target was replaced atomically


@pytest.mark.parametrize("argv, fragment", [
    (["simulate", "--model", "sa", "--init", "init.npy", "--beta", "1", "--t-end", "0.1", "--out", "init.npy"],
     "is the input --init"),
    (SIM + ["--matrices", "mats.npz", "--out", "mats.npz"], "is the input --matrices"),
    (SIM + ["--out", "a.npz", "--plot", "a.npz"], "name the same file"),
    (SIM + ["--out", "a.npz", "--plot", "./a.npz"], "name the same file"),
    (SIM + ["--alibi", "1", "--positions", "mats.npz", "--out", "mats.npz"], "is the input --positions"),
])
def test_outputs_never_overwrite_inputs(capsys, work, argv, fragment):
    before = snapshot(work)
    assert fragment in run_case(capsys, argv).err
    assert snapshot(work) == before


def test_resume_in_place_is_allowed(capsys, work):
    run_case(capsys, ["simulate", "--resume", "traj.npz", "--t-end", "0.4", "--out", "traj.npz"], expect=0)
    with np.load("traj.npz") as data:
        assert data["times"][-1] == pytest.approx(0.4)


def test_sigterm_cleans_temporary_files(tmp_path):
    """A long run killed by SIGTERM: exit 143, a one-line message, no temporary file, old output intact."""
    out = tmp_path / "out.npz"
    out.write_bytes(b"old")
    cmd = [sys.executable, "-m", "numerics", "simulate", "--model", "sa", "--n", "400", "--d", "3", "--beta", "1",
           "--t-end", "1e5", "--dt", "0.01", "--save-every", "100000", "--out", str(out)]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    first = proc.stderr.readline()  # the first progress line: the run (and its signal handler) is under way
    assert first.startswith("simulate"), first
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=600)  # a hang guard only
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1].startswith("error: interrupted by SIGTERM")
    assert out.read_bytes() == b"old"
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".attnflow-")]


def test_atomic_writer_removes_its_temporary_file_when_interrupted(tmp_path):
    from numerics.cli import Terminated
    from theory.files import atomic_write

    target = tmp_path / "x.npz"

    def writer(tmp):
        with open(tmp, "wb") as fh:
            fh.write(b"x" * 1_000_000)
        raise Terminated()

    with pytest.raises(Terminated):
        atomic_write(target, writer)
    assert os.listdir(tmp_path) == []


# -- kernel strings ----------------------------------------------------------------------------------------------
HOSTILE_KERNELS = ["(((((2*s)**100)**100)**100)**100)**100", "(((2*s)**100)**100)**100", "((s**100)**100)**100",
                   "(s+1)**100*(s+2)**100*(s+3)**100", "-" * 60 + "s", "exp(" * 60 + "s" + ")" * 60, "9**9**9"]


@pytest.mark.parametrize("text", HOSTILE_KERNELS)
def test_hostile_kernel_strings_are_decided_fast(text):
    assert_kernel_decided_fast(text)


@pytest.mark.parametrize("argv", [
    ["critical", "--config", "sync", "--n", "3", "--d", "2", "--beta", "1", "--kernel", HOSTILE_KERNELS[0]],
    ["conjecture", "run", "landscape", "--kernel", HOSTILE_KERNELS[0], "--budget", "1"],
    ["conjecture", "run", "landscape", "--kernel", ""],
    SIM + ["--kernel", "tan(pi/2*s)", "--out", "k.npz"],
    ["critical", "--config", "sync", "--n", "3", "--d", "2", "--beta", "1", "--kernel", "tan(pi/2*s)"],
    ["conjecture", "run", "landscape", "--kernel", "tan(pi/2*s)", "--budget", "1"],
    ["derive", "gradient", "--model", "usa", "--d", "2", "--kernel", "tan(pi/2*s)"],
])
def test_kernels_are_checked_the_same_way_everywhere(capsys, work, argv):
    before = snapshot(work)
    run_case(capsys, argv)
    assert snapshot(work) == before


def test_identity_at_a_pole_is_not_reported_as_failed():
    import sympy as sp

    from theory.derivation import Derivation
    from theory.symbols import s

    der = Derivation("tan at its pole", "test", sp.tan(sp.pi / 2 * s), sp.sin(sp.pi / 2 * s) / sp.cos(sp.pi / 2 * s),
                     sampler=lambda rng: {s: sp.Integer(1)})
    ver = der.verify(simplify=False)
    assert ver.status == "inconclusive" and not ver.ok


# -- resources ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, fragment", [
    (["simulate", "--model", "sa", "--n", "1000000000", "--d", "3", "--beta", "1", "--t-end", "1", "--out", "o.npz"],
     "memory"),
    (["simulate", "--model", "sa", "--n", "5", "--d", "1000000000", "--beta", "1", "--t-end", "1", "--out", "o.npz"],
     "memory"),
    (SIM[:-2] + ["--t-end", "1", "--dt", "1e-300", "--out", "o.npz"], "memory"),
    (SIM[:-2] + ["--t-end", "1e308", "--out", "o.npz"], "steps"),
    (["kuramoto", "--model", "sa", "--n", "1000000000", "--beta", "1", "--t-end", "1"], "memory"),
    (["kuramoto", "--model", "sa", "--n", "10", "--beta", "1", "--t-end", "1e308"], "steps"),
    (["kuramoto", "--model", "sa", "--n", "10", "--beta", "1", "--t-end", "1", "--dt", "1e-300"], "memory"),
    (["critical", "--config", "sync", "--n", "100000", "--d", "3", "--beta", "1"], "memory"),
    (["critical", "--search", "--n", "4", "--d", "3", "--beta", "1", "--starts", "1000000000"], "hours"),
    (["critical", "--search", "--n", "4", "--d", "3", "--beta", "1", "--starts", "2", "--warmup", "1000000000"],
     "hours"),
    (["bench", "--n", "1000000000"], "hours"),
    (["bench", "--repeats", "1000000000"], "hours"),
    (["metastable", "--beta", "1e308", "--n", "200"], "hours"),
    (["metastable", "--beta", "3", "--n", "200", "--min-gap", "7"], "min_gap"),
    (["spectrum", "--d", "3", "--beta", "1e4"], "700"),
    (["meanfield", "--beta", "1e4"], "700"),
    (["critical", "--config", "sync", "--n", "3", "--d", "3", "--beta", "1e4"], "700"),
    (["conjecture", "run", "landscape", "--beta-range", "1e4", "1e4"], "700"),
    (["--max-memory", "-1"] + SIM + ["--out", "o.npz"], "--max-memory"),
    (["lost-in-the-middle", "--beta", "1", "--time-unit", "sa", "--particles", "512", "--runs", "10000"], "hours"),
    (["phase", "--beta"] + ["3"] * 1_000_000 + ["--d", "3"], "hours"),
])
def test_requests_beyond_the_limits_are_refused_before_work(capsys, work, argv, fragment):
    before = snapshot(work)
    assert fragment in run_case(capsys, argv).err
    assert snapshot(work) == before


def test_decoder_requests_beyond_the_limits_are_refused_before_work(capsys, work):
    """A decoder forward pass is costed before it runs (work and memory of every block and head)."""
    pytest.importorskip("gguf")
    from tests.numerics.decoder_support import llama_weights, write_llama_gguf

    model = str(write_llama_gguf(work / "small.gguf", llama_weights()))
    before = snapshot(work)
    for argv, fragment in ((["--max-hours", "1e-12", "decoder", "tokens", "--text", "the inn"], "hours"),
                           (["--max-memory", "1e-9", "decoder", "flow", "--text", "the inn"], "memory"),
                           (["--max-hours", "1e-9", "decoder", "bench", "--n", "32", "--repeats", "100"], "hours")):
        assert fragment in run_case(capsys, argv + ["--model", model]).err
    assert snapshot(work) == before


def test_the_limit_can_be_raised(capsys, work):
    argv = ["bench", "--repeats", "1000000000"]
    assert "24 hours" in run_case(capsys, argv).err
    assert "1e+03 hours" in run_case(capsys, ["--max-hours", "1000"] + argv).err


# -- corrupt and bad files ---------------------------------------------------------------------------------------
def _corrupt_files(folder):
    np.savez(folder / "empty.npz")
    (folder / "random.npz").write_bytes(bytes(range(256)) * 4)
    (folder / "zero.npz").write_bytes(b"")
    full = (folder / "traj.npz").read_bytes()
    (folder / "truncated.npz").write_bytes(full[: len(full) // 2])
    with np.load(folder / "traj.npz") as data:
        base = dict(data)
    variants = {
        "badmeta": {"meta": np.array(json.dumps({"model": 3, "beta": "x"}))},
        "metalist": {"meta": np.array("[1, 2]")},
        "metanum": {"meta": np.array(3.0)},
        "offsphere": {"X": base["X"] * 1.1},
        "nanstate": {"X": np.where(np.arange(base["X"].size).reshape(base["X"].shape) == 5, np.nan, base["X"])},
        "decreasing": {"times": base["times"][::-1].copy()},
        "complexX": {"X": base["X"].astype(complex)},
        "shapes": {"times": base["times"][:-1]},
    }
    for name, change in variants.items():
        np.savez(folder / f"{name}.npz", **{**base, **change})
    return ["empty", "random", "zero", "truncated", *variants]


def test_corrupt_trajectories_are_one_line_errors(capsys, work):
    names = _corrupt_files(work)
    (work / "init_as_npz.npy").write_bytes((work / "traj.npz").read_bytes())
    for name in names + ["init"]:
        path = f"{name}.npz" if name != "init" else "init.npy"
        before = snapshot(work)
        run_case(capsys, ["simulate", "--resume", path, "--t-end", "5", "--out", "new.npz"])
        run_case(capsys, ["clusters", path])
        run_case(capsys, ["predict-merges", path, "--at", "0"])
        assert snapshot(work) == before
    for argv in (["simulate", "--model", "sa", "--init", "traj.npz", "--beta", "1", "--t-end", "0.1", "--out", "o.npz"],
                 SIM + ["--matrices", "init.npy", "--out", "o.npz"]):
        run_case(capsys, argv)


def test_deeply_nested_json_arguments_are_one_line_errors(capsys, work):
    deep = "[" * 100_000 + "]" * 100_000
    base = ["gaussian", "--attention", "softmax", "--d", "2", "--V", "[[1,0],[0,1]]", "--A", "[[1,0],[0,1]]",
            "--cov", "[[1,0],[0,1]]", "--t-end", "0.1"]
    assert "nested deeper" in run_case(capsys, base + ["--mean", deep]).err
    assert "nested deeper" in run_case(capsys, ["rd", "--attention", "softmax", "--d", "2", "--V", deep, "--n", "4",
                                                "--t-end", "1", "--out", "rd.npz"]).err


def test_complex_arrays_are_refused_not_truncated(capsys, work):
    np.save("c.npy", np.eye(3).astype(complex))
    assert "complex" in run_case(capsys, ["simulate", "--model", "sa", "--init", "c.npy", "--beta", "1",
                                          "--t-end", "0.1", "--out", "o.npz"]).err


@pytest.mark.parametrize("content", [
    '{"format": "attnflow-conjecture-counterexample/1"}',
    '{"format": "attnflow-conjecture-counterexample/1", "id": "landscape", "inputs": '
    '{"X": {"ndarray": [[1, 0]], "dtype": "object"}}}',
    '{"format": "attnflow-conjecture-counterexample/1", "id": 3, "inputs": {}}',
    "[" * 100_000 + "]" * 100_000,
    "{not json",
    "",
])
def test_corrupt_replay_files_are_invalid_files_not_unreproduced(capsys, work, content):
    (work / "cx.json").write_text(content)
    run_case(capsys, ["conjecture", "replay", "cx.json"])


# -- the beta range and the energy -------------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [
    ["simulate", "--model", "sa", "--n", "6", "--d", "3", "--beta", "-700", "--t-end", "0.5", "--out", "o.npz",
     "--json"],
    ["kuramoto", "--model", "sa", "--n", "6", "--beta", "-700", "--t-end", "0.5", "--dt", "0.1", "--json"],
])
def test_sa_at_very_negative_beta_runs_with_a_stated_energy(capsys, work, argv):
    out = json.loads(run_case(capsys, argv, expect=0).out)
    assert out["energy_normalization"] == "log-mean-exp"


def test_log_mean_exp_energy_against_mpmath():
    import mpmath as mp

    from numerics.core.field import interaction_energy
    from numerics.core.trajectory import uniform_sphere

    X = uniform_sphere(12, 3, 4)
    S = X @ X.T
    with mp.workdps(40):
        for beta in (-1e4, -700.0, -3.0, 1e-9, 0.5, 700.0, 1e4):
            ref = mp.log(mp.fsum(mp.exp(mp.mpf(beta) * mp.mpf(float(v))) for v in S.ravel()) / S.size) / beta
            got = interaction_energy(X, beta, normalization="log-mean-exp")
            assert abs(got - float(ref)) <= 1e-13 * abs(float(ref)), beta


def test_gaussian_blowup_time_does_not_depend_on_the_mean(capsys, work):
    base = ["gaussian", "--attention", "softmax", "--d", "2", "--A", "[[1,0],[0,1]]", "--V", "[[1,0],[0,1]]",
            "--cov", "[[1,0],[0,1]]", "--t-end", "3", "--json"]
    times = [json.loads(run_case(capsys, base + ["--mean", m], expect=0).out)["blowup_time"]
             for m in ("[1, 0]", "[1e200, 1]", "[1e300, 0]")]
    # softmax, V = I: Sigma(t) = (Sigma0^-1 - 2 t S_A)^-1 blows up at t* = 1/2 whatever the mean
    assert all(abs(t - 0.5) < 1e-8 for t in times), times
    assert "overflow" in run_case(capsys, base + ["--mean", "[1e308, 0]"]).err


# -- reproducibility ---------------------------------------------------------------------------------------------
def test_two_blas_thread_counts_agree_to_the_stated_tolerance(tmp_path):
    code = ("import numpy as np, sys; from numerics.core.trajectory import simulate; "
            "t = simulate('sa', 2.0, 0.4, n=300, d=8, seed=3, dt=0.01); np.save(sys.argv[1], t.X[-1]); "
            "print(t.meta['threads']['blas_threads'])")
    finals = []
    for threads in ("1", "2"):
        env = {**os.environ, "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads}
        path = tmp_path / f"x{threads}.npy"
        out = subprocess.run([sys.executable, "-c", code, str(path)], env=env, capture_output=True, text=True,
                             check=True).stdout
        assert f"'threads': {threads}" in out or "[]" in out
        finals.append(np.load(path))
    # the guarantee recorded in the metadata (numerics.common.provenance.REPRODUCIBILITY): 1e-10 after 40 steps
    assert np.abs(finals[0] - finals[1]).max() <= 1e-10


# -- --radius0 from-init: the radii come from the file, so every hostile file must be refused in one line --------
def test_radius0_from_init_refuses_hostile_files(capsys, work):
    from tests.cli import malformed

    made = {kind: make(str(work)) for kind, make in malformed.MAKERS.items()
            if kind in ("huge-header", "empty", "npz-as-npy", "npy-as-npz", "truncated", "directory", "pickled")}
    np.save("nan.npy", np.array([[1.0, np.nan, 0.0], [0.0, 1.0, 0.0]]))
    np.save("big.npy", np.array([[1e308, 1e308, 0.0], [0.0, 1.0, 0.0]]))  # |x| overflows a naive norm: radius 1.4e308
    np.save("batch.npy", np.ones((2, 3, 3)))
    base = ["simulate", "--model", "sa", "--beta", "1", "--t-end", "0.1", "--norm", "pre", "--radius0", "from-init",
            "--out", "o.npz"]
    readable = made.pop("npy-as-npz")
    for path in [*made.values(), "nan.npy", "big.npy", "batch.npy"]:  # (other shapes: the generic --init tests)
        before = snapshot(work)
        run_case(capsys, base + ["--init", path])
        assert snapshot(work) == before
    # a .npy saved under a .npz name is read by its content (np.eye(3): three tokens of radius 1)
    run_case(capsys, base + ["--init", readable], expect=0)
