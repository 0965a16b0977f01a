"""CLI: simulate, derive, codegen, bench, verify; exit codes, JSON keys, every bad-input case."""
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from numerics.circle.fourier import harmonics_for_tolerance
from numerics.cli import main
from numerics.core.field import attention_field, interaction_energy
from numerics.core.trajectory import Trajectory, uniform_sphere
from tests.cli.helpers import bad, run_json

SIM_KEYS = {"out", "n", "d", "beta", "model", "method", "final_energy", "energy_monotone", "max_norm_error", "seconds"}


@pytest.mark.parametrize("method", ["layer", "rk4", "adaptive"])
def test_simulate_json(tmp_path, capsys, method):
    out = tmp_path / "t.npz"
    payload = run_json(capsys, ["simulate", "--model", "sa", "--n", "12", "--d", "3", "--beta", "1", "--t-end", "0.5",
                                "--dt", "0.05", "--method", method, "--seed", "3", "--out", str(out)])
    assert SIM_KEYS <= set(payload)
    assert payload["energy_monotone"] is True and payload["max_norm_error"] < 1e-12
    assert payload["backend"] == "direct" and payload["method"] == method
    tr = Trajectory.load(out)
    assert tr.meta["seed"] == 3 and payload["final_energy"] == pytest.approx(tr.energy[-1])


def test_simulate_text_plot_init_resume(tmp_path, capsys):
    X = uniform_sphere(7, 2, 1)
    np.save(tmp_path / "x0.npy", X * 1.5)
    out, plot = tmp_path / "a.npz", tmp_path / "a.png"
    code = main(["simulate", "--model", "usa", "--beta", "2", "--t-end", "0.4", "--init", str(tmp_path / "x0.npy"),
                 "--normalize", "--save-every", "2", "--out", str(out), "--plot", str(plot)])
    text = capsys.readouterr().out
    assert code == 0 and "final_energy" in text and plot.stat().st_size > 1000
    payload = run_json(capsys, ["simulate", "--resume", str(out), "--t-end", "0.8", "--out", str(tmp_path / "b.npz")])
    assert payload["t_end"] == pytest.approx(0.8) and payload["n"] == 7
    assert "do not pass --beta" in bad(capsys, ["simulate", "--resume", str(out), "--beta", "3", "--t-end", "1",
                                               "--out", str(tmp_path / "b.npz")])
    assert "must exceed" in bad(capsys, ["simulate", "--resume", str(out), "--t-end", "0.1",
                                         "--out", str(tmp_path / "b.npz")])
    for d in (3, 5):  # 3-D sphere view and the first-two-coordinates view
        assert main(["simulate", "--model", "sa", "--n", "6", "--d", str(d), "--beta", "1", "--t-end", "0.1",
                     "--out", str(tmp_path / f"c{d}.npz"), "--plot", str(tmp_path / f"c{d}.png")]) == 0
    capsys.readouterr()


def test_simulate_rescaled_usa_large_beta(tmp_path, capsys):
    payload = run_json(capsys, ["simulate", "--model", "usa", "--n", "8", "--d", "3", "--beta", "1000",
                                "--time-unit", "rescaled", "--t-end", "0.1", "--out", str(tmp_path / "r.npz")])
    assert payload["time_unit"] == "rescaled" and np.isfinite(payload["final_energy"])


def test_simulate_bad_inputs(tmp_path, capsys):
    base = ["simulate", "--model", "sa", "--n", "5", "--d", "3", "--beta", "1", "--t-end", "0.1"]
    out = ["--out", str(tmp_path / "o.npz")]
    assert "n must be >= 1" in bad(capsys, ["simulate", "--model", "sa", "--n", "0", "--d", "3", "--beta", "1",
                                            "--t-end", "0.1"] + out)
    assert "d must be >= 2" in bad(capsys, ["simulate", "--model", "sa", "--n", "5", "--d", "1", "--beta", "1",
                                            "--t-end", "0.1"] + out)
    for beta in ("nan", "inf"):
        assert "beta must be finite" in bad(capsys, ["simulate", "--model", "sa", "--n", "5", "--d", "3", "--beta",
                                                     beta, "--t-end", "0.1"] + out)
    bad(capsys, base[:2] + ["xx"] + base[3:] + out)  # unknown model
    bad(capsys, base + ["--method", "euler"] + out)  # unknown method
    bad(capsys, base + ["--backend", "gpu"] + out)
    assert "fourier" in bad(capsys, ["simulate", "--model", "sa", "--n", "5", "--d", "3", "--beta", "1",
                                     "--t-end", "0.1", "--backend", "fourier"] + out)
    assert "not writable" in bad(capsys, base + ["--out", str(tmp_path / "missing" / "o.npz")])
    assert "not writable" in bad(capsys, base + out + ["--plot", str(tmp_path / "missing" / "p.png")])
    X = uniform_sphere(5, 3, 0)
    np.save(tmp_path / "wrong_shape.npy", X[:, :2].reshape(-1))
    np.save(tmp_path / "nan.npy", np.where(np.arange(15).reshape(5, 3) == 4, np.nan, X))
    np.save(tmp_path / "off.npy", X * (1 + 1e-6))
    sim = ["simulate", "--model", "sa", "--beta", "1", "--t-end", "0.1"] + out
    assert "dimensions" in bad(capsys, sim + ["--init", str(tmp_path / "wrong_shape.npy")])
    assert "non-finite" in bad(capsys, sim + ["--init", str(tmp_path / "nan.npy")])
    assert "off the unit sphere" in bad(capsys, sim + ["--init", str(tmp_path / "off.npy")])
    assert "does not match" in bad(capsys, sim + ["--init", str(tmp_path / "off.npy"), "--normalize", "--d", "4"])
    assert "cannot read" in bad(capsys, sim + ["--init", str(tmp_path / "none.npy")])
    assert "needs --model" in bad(capsys, ["simulate", "--n", "5", "--d", "3", "--t-end", "1"] + out)
    assert "t_end" in bad(capsys, base[:-1] + ["-1"] + out)
    assert "dt must be >" in bad(capsys, base + ["--dt", "0"] + out)
    assert "cannot read" in bad(capsys, ["simulate", "--resume", str(tmp_path / "none.npz"), "--t-end", "1"] + out)


def test_derive_text_latex_json(capsys):
    assert main(["derive", "gradient", "--model", "usa", "--d", "2"]) == 0
    text = capsys.readouterr().out
    assert "usa field = n * Riemannian gradient" in text and "verification: proved" in text
    assert main(["derive", "field", "--model", "sa", "--d", "2", "--latex"]) == 0
    assert r"\begin{align*}" in capsys.readouterr().out
    payload = run_json(capsys, ["derive", "energy", "--model", "sa", "--d", "2"])
    assert payload["ok"] is True and payload["kind"] == "energy"
    assert {d["verification"]["status"] for d in payload["derivations"]} <= {"proved", "checked-at-points"}
    payload = run_json(capsys, ["derive", "hessian", "--model", "usa", "--d", "2"])
    assert payload["ok"] and "closed-form blocks" in payload["derivations"][0]["title"]


def test_derive_bad_inputs(capsys):
    bad(capsys, ["derive", "curvature", "--model", "sa", "--d", "3"])
    bad(capsys, ["derive", "energy", "--model", "xx", "--d", "3"])
    assert "d must be >= 2" in bad(capsys, ["derive", "energy", "--model", "sa", "--d", "1"])
    assert "between 2 and" in bad(capsys, ["derive", "energy", "--model", "sa", "--d", "64"])
    assert "between 2 and 4" in bad(capsys, ["derive", "hessian", "--model", "sa", "--d", "5"])


def test_codegen_module_matches_library(tmp_path, capsys, rng):
    out = tmp_path / "gen_sa.py"
    payload = run_json(capsys, ["codegen", "--model", "sa", "--d", "3", "--out", str(out)])
    assert payload["out"] == str(out) and len(payload["key"]) == 16
    spec = importlib.util.spec_from_file_location("gen_sa", out)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    X = uniform_sphere(200, 3, rng)
    for beta in (-1.0, 0.0, 2.5):
        assert np.abs(mod.field(X, beta) - attention_field(X, beta, "sa")).max() <= 1e-12
        assert abs(mod.energy(X, beta) - interaction_energy(X, beta)) <= 1e-12


def test_codegen_bad_inputs(tmp_path, capsys):
    assert "d must be >= 2" in bad(capsys, ["codegen", "--model", "sa", "--d", "1", "--out", str(tmp_path / "a.py")])
    assert ".py" in bad(capsys, ["codegen", "--model", "sa", "--d", "3", "--out", str(tmp_path / "a.txt")])
    assert "not writable" in bad(capsys, ["codegen", "--model", "sa", "--d", "3", "--out",
                                          str(tmp_path / "no" / "a.py")])
    bad(capsys, ["codegen", "--model", "xx", "--d", "3", "--out", str(tmp_path / "a.py")])


def test_bench_small(capsys):
    payload = run_json(capsys, ["bench", "--suite", "field", "--n", "256", "--repeats", "1"])
    assert [r["d"] for r in payload["results"]] == [3, 64]
    assert all(r["ratio"] > 0 and r["floor_seconds"] > 0 for r in payload["results"])
    assert main(["bench", "--suite", "field", "--n", "128", "--repeats", "1"]) == 0
    assert "floor" in capsys.readouterr().out
    assert "n must be >= 1" in bad(capsys, ["bench", "--n", "0"])
    assert "repeats must be >= 1" in bad(capsys, ["bench", "--repeats", "0"])


def test_bench_fourier_small(capsys):
    payload = run_json(capsys, ["bench", "--suite", "fourier", "--fourier-n", "512", "--fourier-large-n", "2000",
                                "--repeats", "1"])
    report = payload["fourier"]
    assert set(report["models"]) == {"sa", "usa"}
    for model, r in report["models"].items():
        assert r["relative_error"] <= 1e-12 and isinstance(r["within_target"], bool)
        # the reported speed-up is the ratio of the two reported timings, and K is the tolerance's harmonics
        assert r["speedup"] == pytest.approx(r["direct_seconds"] / r["fourier_seconds"], rel=1e-12)
        assert r["harmonics"] == harmonics_for_tolerance(report["beta"], 1e-12, model=model)
    assert report["large"]["n"] == 2000 and "results" not in payload
    assert "fourier-n must be >= 2" in bad(capsys, ["bench", "--suite", "fourier", "--fourier-n", "1"])


def test_verify_core_json(capsys):
    payload = run_json(capsys, ["verify", "--only", "core.equivariance"])
    check = payload["checks"][0]
    assert {"id", "title", "source", "status", "measured", "expected", "tolerance", "seconds"} <= set(check)
    assert check["status"] == "passed" and payload["summary"]["passed"] == 1
    assert main(["verify", "--list"]) == 0
    listing = capsys.readouterr().out
    for cid in ("core.gradient-structure", "core.energy-identity", "core.equivariance", "core.integrator-orders",
                "core.codegen"):
        assert cid in listing
    assert "unknown claim id" in bad(capsys, ["verify", "--only", "core.nope"])


def test_no_command_and_python_m(capsys):
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2
    capsys.readouterr()
    # python -m numerics runs the same CLI (not only: the file exists)
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    proc = subprocess.run([sys.executable, "-m", "numerics", "verify", "--list", "--json"], cwd=root,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    ids = {c["id"] for c in json.loads(proc.stdout)["claims"]}
    assert {"core.equivariance", "core.general-qkv-field"} <= ids
    bad_run = subprocess.run([sys.executable, "-m", "numerics", "verify", "--only", "core.nope"], cwd=root,
                             capture_output=True, text=True, timeout=600)
    assert bad_run.returncode == 2 and bad_run.stderr.startswith("error:") and "Traceback" not in bad_run.stderr
    # python -m attnflow (the public package's name) runs it too
    version = subprocess.run([sys.executable, "-m", "attnflow", "--version"], cwd=root, capture_output=True,
                             text=True, timeout=600)
    assert version.returncode == 0 and version.stdout.startswith("attnflow "), (version.stdout, version.stderr)


def test_matrices_flag_simulate_and_codegen(tmp_path, capsys, rng):
    Q, V = rng.standard_normal((3, 3)), rng.standard_normal((3, 3)) / 2
    np.savez(tmp_path / "m.npz", Q=Q, V=V)
    out = tmp_path / "t.npz"
    payload = run_json(capsys, ["simulate", "--model", "usa", "--n", "6", "--d", "3", "--beta", "1", "--t-end", "0.2",
                                "--matrices", str(tmp_path / "m.npz"), "--out", str(out)])
    assert payload["energy_is_lyapunov"] is False
    meta = Trajectory.load(out).meta
    assert np.allclose(meta["Q"], Q) and meta["K"] is None and np.allclose(meta["V"], V)
    gen = tmp_path / "g.py"
    assert main(["codegen", "--model", "sa", "--d", "3", "--matrices", str(tmp_path / "m.npz"), "--out", str(gen)]) == 0
    capsys.readouterr()
    spec = importlib.util.spec_from_file_location("g", gen)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    X = uniform_sphere(30, 3, rng)
    assert np.abs(mod.field(X, 0.8) - attention_field(X, 0.8, "sa", Q=Q, V=V)).max() <= 1e-12
    np.savez(tmp_path / "bad_key.npz", A=Q)
    np.savez(tmp_path / "bad_shape.npz", Q=Q[:2])
    base = ["simulate", "--model", "sa", "--n", "6", "--d", "3", "--beta", "1", "--t-end", "0.2", "--out", str(out)]
    assert "named Q, K and/or V" in bad(capsys, base + ["--matrices", str(tmp_path / "bad_key.npz")])
    assert "must be 3 x 3" in bad(capsys, base + ["--matrices", str(tmp_path / "bad_shape.npz")])
    assert "cannot read matrices" in bad(capsys, base + ["--matrices", str(tmp_path / "none.npz")])
    assert "must be 3 x 3" in bad(capsys, ["codegen", "--model", "sa", "--d", "3", "--matrices",
                                           str(tmp_path / "bad_shape.npz"), "--out", str(gen)])
