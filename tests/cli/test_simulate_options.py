"""``attnflow simulate`` builds its Model the same way for one system and for a batch (issue 39, "One core").

Before ``numerics.core.options`` the batch path (``--batch``, ``--betas``, ``--seeds``) had its own translation of
the options: ``--beta 2 --beta-scaling log --gamma 1 --batch 2`` exited 0 and ran the fixed beta 2 (the scaling
dropped) while the same flags without ``--batch`` were refused; ``--norm`` was refused by a check of its own and the
positions, kernels and scalings by accident or not at all. Here each option is shown to reach the Model (the one
handed to the driver) identically on both paths; what the ensemble driver cannot batch is refused by the driver
with one line naming the Model field; contradictions get the same line on both paths; and a plain run never
imports SymPy.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import numerics.core.simulate as trajectory_module  # the driver (numerics.core.simulate, issue 39)
from numerics.common.errors import InputError
from numerics.core.trajectory import Trajectory
from tests.cli.helpers import bad, run_json

ROOT = Path(__file__).resolve().parents[2]
N, D = 6, 4
BATCH = ["--batch", "2"]


@pytest.fixture
def files(tmp_path):
    """The input files of the options that read one (matrices, heads, MLP, schedule, position labels)."""
    rng = np.random.default_rng(7)
    H, k, L = 2, 2, 2
    paths = {name: tmp_path / name for name in ("m.npz", "h.npz", "mlp.npz", "s.npz", "labels.txt")}
    np.savez(paths["m.npz"], Q=np.eye(D) + 0.1 * rng.standard_normal((D, D)), V=np.diag([1.0, 0.5, 0.5, 1.0]))
    np.savez(paths["h.npz"], **{n: rng.standard_normal((H, k, D)) for n in "QKVW"})
    np.savez(paths["mlp.npz"], W1=rng.standard_normal((3, D)), b1=np.zeros(3), W2=rng.standard_normal((D, 3)),
             b2=np.zeros(D))
    np.savez(paths["s.npz"], times=np.arange(L, dtype=float), **{n: rng.standard_normal((L, H, k, D)) for n in "QKVW"})
    paths["labels.txt"].write_text("0 1 2 4 8 16")
    return {name: str(path) for name, path in paths.items()}


def _argv(tmp_path, files, options):
    """A run of N tokens in R^D with ``options`` (file names replaced by the fixture's paths)."""
    options = [files.get(o, o) for o in options]
    model = [] if "--model" in options else ["--model", "sa"]
    beta = [] if any(o in options for o in ("--beta", "--beta-scaling")) else ["--beta", "1"]
    return (["simulate", "--n", str(N), "--d", str(D), "--t-end", "0.2", "--out", str(tmp_path / "o.npz")]
            + model + beta + options)


class _Handed(InputError):
    """Raised by the stand-in driver: the command exits 2 right after building the Model, Solver and SaveAt."""


def _handed_to_driver(capsys, monkeypatch, argv):
    """The (model, solver, save, X0 shape) that ``attnflow argv`` hands to ``simulate`` (the shipped code path
    up to the driver; the driver itself is replaced, so that refused features can be compared too)."""
    seen = {}

    def driver(model, X0, t_end, *, solver, save, **kwargs):
        seen.update(model=model, solver=solver, save=save, shape=np.shape(X0))
        raise _Handed("handed to the driver")

    monkeypatch.setattr(trajectory_module, "simulate", driver)
    assert bad(capsys, argv) == "error: handed to the driver"
    return seen


#: every option group of simulate that reaches the Model (several schemes of each kind where they differ)
MODEL_CASES = {
    "model": ["--model", "usa"],
    "beta": ["--beta", "2.5"],
    "time-unit": ["--model", "usa", "--time-unit", "rescaled"],
    "matrices": ["--matrices", "m.npz"],
    "heads": ["--heads", "h.npz"],
    "mlp": ["--mlp", "mlp.npz"],
    "heads+mlp+causal": ["--heads", "h.npz", "--mlp", "mlp.npz", "--causal"],
    "schedule": ["--schedule", "s.npz"],
    "causal": ["--causal"],
    "noise": ["--noise", "0.1"],
    "kernel": ["--kernel", "exp(beta*s) + c*s**3", "--param", "c=0.25"],
    "beta-scaling": ["--beta-scaling", "log", "--gamma", "1.5"],
    "alibi": ["--alibi", "0.5"],
    "rope": ["--rope", "100"],
    "positions": ["--alibi", "0.5", "--positions", "labels.txt"],
    "norm-pre": ["--norm", "pre", "--radius0", "2"],
    "norm-ngpt": ["--norm", "ngpt", "--norm-alpha", "0.5"],
    "norm-mix": ["--norm", "mix", "--norm-switch", "0.1"],
    "norm-sqrt": ["--norm", "sqrt", "--norm-scale", "2"],
    "norm-centering": ["--norm", "peri", "--centering"],
}


@pytest.mark.parametrize("name", list(MODEL_CASES))
def test_each_option_reaches_the_model_the_same_way_with_and_without_batch(capsys, monkeypatch, tmp_path, files,
                                                                           name):
    argv = _argv(tmp_path, files, MODEL_CASES[name])
    single = _handed_to_driver(capsys, monkeypatch, argv)
    batch = _handed_to_driver(capsys, monkeypatch, argv + BATCH)
    plain = _handed_to_driver(capsys, monkeypatch, _argv(tmp_path, files, []))
    assert single["shape"] == (N, D) and batch["shape"] == (2, N, D)
    meta = single["model"].to_meta()
    assert batch["model"].to_meta() == meta
    assert meta != plain["model"].to_meta(), f"{name}: the option did not reach the Model"


#: the solver and save options (the Solver's seed is the single run's noise seed; a batch's members carry theirs)
SOLVER_CASES = {
    "method-dt": ["--method", "layer", "--dt", "0.01"],
    "adaptive": ["--method", "dp5", "--rtol", "1e-6", "--atol", "1e-8"],
    "backend": ["--backend", "direct"],
    "save-every": ["--save-every", "3"],
    "save-times": ["--save-times", "0.05,0.1"],
    "save-times-log": ["--method", "dop853", "--save-times", "log:0.01:0.1:4"],
}


@pytest.mark.parametrize("name", list(SOLVER_CASES))
def test_solver_and_save_options_are_the_same_with_and_without_batch(capsys, monkeypatch, tmp_path, files, name):
    argv = _argv(tmp_path, files, SOLVER_CASES[name])
    single = _handed_to_driver(capsys, monkeypatch, argv)
    batch = _handed_to_driver(capsys, monkeypatch, argv + BATCH)
    plain = _handed_to_driver(capsys, monkeypatch, _argv(tmp_path, files, []))

    def described(seen):
        s, save = seen["solver"], seen["save"]
        return (s.method, s.dt, s.rtol, s.atol, s.backend, s.step, save.every,
                None if save.times is None else save.times.tolist())

    assert described(batch) == described(single) != described(plain)


@pytest.mark.parametrize("name", ["model", "time-unit", "matrices", "heads+mlp+causal", "noise", "beta-scaling",
                                  "kernel", "alibi", "rope", "positions", "norm-pre", "norm-ngpt", "norm-mix",
                                  "norm-sqrt", "norm-centering"])
def test_batch_members_are_the_single_runs(capsys, tmp_path, files, name):
    """What a batch can do it runs: member b is the single run of seed b (fixed steps: bit for bit), and the saved
    model is the single run's (the normalisation schemes: their radii too; every feature of the ensemble driver's
    check, numerics.core.ensemble.check_batchable, now batches)."""
    argv = _argv(tmp_path, files, MODEL_CASES[name])
    out = tmp_path / "o.npz"
    run_json(capsys, argv + BATCH)
    batch = Trajectory.load(out)
    for b in range(2):
        run_json(capsys, argv + ["--seed", str(b)])
        single = Trajectory.load(out)
        assert single.model.to_meta() == batch.model.to_meta()
        assert np.array_equal(batch.X[:, b], single.X), (name, b)
        assert (batch.radius is None) == (single.radius is None), name
        assert batch.radius is None or np.array_equal(batch.radius[:, b], single.radius), (name, b)


#: contradictory or inapplicable options: the same one line with and without --batch
CONTRADICTIONS = [
    ["--beta", "2", "--beta-scaling", "log", "--gamma", "1"],  # the seam of issue 39
    ["--beta", "2", "--gamma", "1"],
    ["--beta-scaling", "log"],
    ["--param", "c=1"],
    ["--kernel", "exp(beta*s)", "--matrices", "m.npz"],
    ["--kernel", "exp(beta*s)", "--model", "usa", "--time-unit", "rescaled"],
    ["--alibi", "-1"],
    ["--rope", "0"],
    ["--positions", "labels.txt"],
    ["--norm-alpha", "0.5"],
    ["--norm", "mix"],
    ["--radius0", "from-init"],
    ["--noise", "-1"],
]


@pytest.mark.parametrize("options", CONTRADICTIONS, ids=lambda o: " ".join(o))
def test_contradictions_get_the_same_line_with_and_without_batch(capsys, tmp_path, files, options):
    argv = _argv(tmp_path, files, options)
    assert bad(capsys, argv) == bad(capsys, argv + BATCH)


def test_beta_scaling_with_beta_is_refused_by_a_batch_as_by_one_system(capsys, tmp_path, files):
    """Issue 39's seam: one system refuses a beta together with beta = gamma log n (they say two things); a batch
    used to run the fixed beta and drop the scaling, with exit 0."""
    argv = _argv(tmp_path, files, ["--beta", "2", "--beta-scaling", "log", "--gamma", "1"])
    line = bad(capsys, argv + BATCH)
    assert line == "error: give either --beta or --beta-scaling log with --gamma, not both"
    assert bad(capsys, argv) == line
    # per-member betas contradict beta = gamma log n as a fixed --beta does
    assert bad(capsys, argv[:-6] + ["--betas", "1,2", "--beta-scaling", "log", "--gamma", "1"]) == (
        "error: per-member beta needs a fixed beta (the model sets beta = gamma log n)")


@pytest.mark.parametrize("options", [["--param", "c=1"], ["--method", "dp5"], ["--dt", "0.01"], ["--rtol", "1e-3"],
                                     ["--backend", "direct"], ["--noise", "0.5"], ["--noise-seed", "3"],
                                     ["--time-unit", "rescaled"], ["--save-every", "3"], ["--seed", "4"],
                                     ["--normalize"]], ids=lambda o: o[0])
def test_resume_refuses_what_it_would_ignore(capsys, tmp_path, files, options):
    """--resume continues the saved run's model, solver and spacing: an option that would describe another one is
    refused (each of these was ignored with exit 0 before)."""
    out = tmp_path / "o.npz"
    run_json(capsys, _argv(tmp_path, files, []))
    line = bad(capsys, ["simulate", "--resume", str(out), "--t-end", "1", "--out", str(tmp_path / "p.npz")] + options)
    assert line.endswith(f"do not pass {options[0]}"), line


_STARTUP = """
import sys
from numerics.cli import main
try:
    code = main({argv!r})
except SystemExit as exc:
    code = exc.code
print(json.dumps({{"code": code, "sympy": "sympy" in sys.modules}}))
"""


def _run_fresh(tmp_path, options):
    """``attnflow simulate`` in a fresh interpreter: (exit code, whether SymPy was imported)."""
    argv = ["simulate", "--model", "sa", "--beta", "1", "--n", "8", "--d", "3", "--t-end", "0.1",
            "--out", str(tmp_path / "fresh.npz")] + options
    proc = subprocess.run([sys.executable, "-c", "import json" + _STARTUP.format(argv=argv)], capture_output=True,
                          text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return result["code"], result["sympy"]


def test_a_plain_simulate_imports_no_sympy(tmp_path):
    assert _run_fresh(tmp_path, []) == (0, False)
    assert _run_fresh(tmp_path, ["--batch", "2"]) == (0, False)


def test_a_user_kernel_still_runs(tmp_path, capsys):
    assert _run_fresh(tmp_path, ["--kernel", "exp(beta*s)"]) == (0, True)
    p = run_json(capsys, ["simulate", "--model", "sa", "--beta", "1", "--n", "8", "--d", "3", "--t-end", "0.1",
                          "--kernel", "exp(beta*s)", "--out", str(tmp_path / "k.npz")])
    assert p["kernel"] == "exp(beta*s)"
    assert Trajectory.load(tmp_path / "k.npz").model.kernel is not None


@pytest.mark.parametrize("option", ["--betas", "--seeds"])
def test_member_lists_refuse_an_empty_item(capsys, tmp_path, files, option):
    """The one comma-list parser: ``1,,2`` is refused naming the empty item (it was dropped: a batch of 2)."""
    argv = _argv(tmp_path, files, [option, "1,,2"])
    line = bad(capsys, argv)
    assert line.startswith(f"error: {option} has an empty item (item 2 of 3"), line
