"""CLI: --heads/--mlp/--schedule/--causal on simulate, --heads on gaussian; bad combinations exit 2."""
from __future__ import annotations

import numpy as np
import pytest

from tests.cli.helpers import bad, run_json


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    H, k, d, L = 2, 2, 3, 3
    heads = tmp_path / "heads.npz"
    np.savez(heads, **{n: rng.standard_normal((H, k, d)) for n in "QKVW"})
    mlp = tmp_path / "mlp.npz"
    np.savez(mlp, W1=rng.standard_normal((4, d)), b1=np.zeros(4), W2=rng.standard_normal((d, 4)), b2=np.zeros(d),
             activation=np.array("tanh"))
    sched = tmp_path / "schedule.npz"
    np.savez(sched, times=np.arange(L, dtype=float), **{n: rng.standard_normal((L, H, k, d)) for n in "QKVW"})
    broken = tmp_path / "broken.npz"
    np.savez(broken, Q=np.ones((2, 2, 3)))
    heads2 = tmp_path / "heads2.npz"
    np.savez(heads2, **{n: rng.standard_normal((H, k, 2)) for n in "QKVW"})
    return {"heads": str(heads), "mlp": str(mlp), "schedule": str(sched), "broken": str(broken),
            "heads2": str(heads2), "dir": tmp_path}


def test_simulate_with_heads_mlp_causal(capsys, files):
    out = str(files["dir"] / "a.npz")
    p = run_json(capsys, ["simulate", "--model", "sa", "--beta", "1", "--n", "6", "--d", "3", "--t-end", "0.5",
                          "--heads", files["heads"], "--mlp", files["mlp"], "--causal", "--out", out])
    assert p["backend"] == "blocks" and "causal mask" in p["architecture"] and p["max_norm_error"] < 1e-12
    assert p["energy_is_lyapunov"] is False


def test_simulate_schedule_and_resume(capsys, files):
    out = str(files["dir"] / "s.npz")
    p = run_json(capsys, ["simulate", "--model", "sa", "--beta", "1", "--n", "6", "--d", "3", "--t-end", "2",
                          "--method", "layer", "--dt", "1", "--schedule", files["schedule"], "--out", out])
    assert p["architecture"] == "schedule of 3 layers" and p["frames"] == 3
    out2 = str(files["dir"] / "s2.npz")
    p2 = run_json(capsys, ["simulate", "--resume", out, "--t-end", "4", "--out", out2])
    assert p2["frames"] == 5


@pytest.mark.parametrize("extra, message", [
    (["--heads", "broken"], "must hold arrays Q, K, V, W"),
    (["--heads", "heads", "--schedule", "schedule"], "schedule carries"),
    (["--heads", "heads", "--kernel", "exp(s)"], "user kernel"),
    (["--heads", "heads", "--backend", "fourier"], "fourier"),
    (["--heads", "heads2"], "act on R^2"),
    (["--mlp", "missing"], "cannot read mlp"),
])
def test_bad_combinations(capsys, files, extra, message):
    extra = [files.get(e, e) if not e.startswith("--") and e != "exp(s)" and e != "fourier" else e for e in extra]
    extra = [str(files["dir"] / "nope.npz") if e == "missing" else e for e in extra]
    line = bad(capsys, ["simulate", "--model", "sa", "--beta", "1", "--n", "4", "--d", "3", "--t-end", "0.1",
                        "--out", str(files["dir"] / "x.npz")] + extra)
    assert message in line


def test_gaussian_heads(capsys, files):
    p = run_json(capsys, ["gaussian", "--attention", "softmax", "--d", "2", "--heads", files["heads2"],
                          "--mean", "[0.1, 0.2]", "--cov", "[[1, 0.1], [0.1, 0.5]]", "--t-end", "0.3"])
    assert p["status"] == "completed" and len(p["parameters"]["heads"]) == 2
    assert "--heads needs --attention softmax" in bad(capsys, [
        "gaussian", "--attention", "l2", "--d", "2", "--heads", files["heads2"], "--mean", "[0, 0]",
        "--cov", "[[1, 0], [0, 1]]", "--t-end", "0.3"])
    assert "replaces --V" in bad(capsys, [
        "gaussian", "--attention", "softmax", "--d", "2", "--heads", files["heads2"], "--V", "[[1, 0], [0, 1]]",
        "--mean", "[0, 0]", "--cov", "[[1, 0], [0, 1]]", "--t-end", "0.3"])


@pytest.mark.parametrize("flag", ["--heads", "--mlp", "--schedule", "--matrices"])
def test_empty_file_is_a_one_line_error(capsys, files, flag):
    empty = files["dir"] / "empty.npz"
    empty.write_bytes(b"")
    bad(capsys, ["simulate", "--model", "sa", "--beta", "1", "--n", "4", "--d", "3", "--t-end", "0.1",
                 "--out", str(files["dir"] / "x.npz"), flag, str(empty)])


def test_simulate_with_per_head_mlp(capsys, files):
    rng = np.random.default_rng(2)
    H, d, m = 2, 3, 4
    per = files["dir"] / "mlp_heads.npz"
    np.savez(per, W1=rng.standard_normal((H, m, d)), b1=np.zeros((H, m)), W2=rng.standard_normal((H, d, m)),
             b2=np.zeros((H, d)), activation=np.array("relu"))
    p = run_json(capsys, ["simulate", "--model", "sa", "--beta", "1", "--n", "5", "--d", "3", "--t-end", "0.2",
                          "--heads", files["heads"], "--mlp", str(per), "--out", str(files["dir"] / "m.npz")])
    assert p["architecture"] == "2 heads (k=2), MLP (relu, width 4, one per head)"
    three = files["dir"] / "mlp_three.npz"
    np.savez(three, W1=np.ones((3, m, d)), b1=np.zeros((3, m)), W2=np.ones((3, d, m)), b2=np.zeros((3, d)))
    line = bad(capsys, ["simulate", "--model", "sa", "--beta", "1", "--n", "5", "--d", "3", "--t-end", "0.2",
                        "--heads", files["heads"], "--mlp", str(three), "--out", str(files["dir"] / "m3.npz")])
    assert "weights for 3 heads, but the attention has 2" in line


def _identity_heads(path, betas):
    H = len(betas)
    np.savez(path, Q=np.stack([b * np.eye(2) for b in betas]), K=np.stack([np.eye(2)] * H),
             V=np.stack([np.eye(2)] * H), W=np.stack([np.eye(2) / H] * H), scale=1.0)
    return str(path)


def test_critical_with_heads(capsys, files):
    """Heads Q_h^T K_h = b_h I on the triangle: stationary; for b = (1, 2) the field Jacobian equals the average of
    the one-head Jacobians (numerics.critical.report.linearized_jacobian), an independent closed path."""
    from numerics.critical.report import linearized_jacobian

    heads = _identity_heads(files["dir"] / "h.npz", [1.0, 2.0])
    p = run_json(capsys, ["critical", "--config", "polygon", "--n", "3", "--d", "2", "--beta", "1", "--model", "sa",
                          "--heads", heads, "--symmetry-modes", "1"])
    assert p["stationary"] and p["residual"] < 1e-14 and p["architecture"] == "2 heads (k=2)"
    th = 2 * np.pi * np.arange(3) / 3
    X = np.column_stack([np.cos(th), np.sin(th)])
    ref = np.sort(np.linalg.eigvals(0.5 * (linearized_jacobian(X, 1.0, "sa") + linearized_jacobian(X, 2.0, "sa"))).real)
    assert np.abs(np.sort(p["eigenvalues"]["real"]) - ref).max() < 1e-8
    assert p["verdict"] == ("unstable" if ref.max() > 1e-7 else "stable")
    q = run_json(capsys, ["critical", "--config", "polygon", "--n", "3", "--d", "3", "--beta", "1", "--model", "sa",
                          "--heads", files["heads"], "--mlp", files["mlp"], "--causal"])
    assert q["verdict"] == "not stationary" and q["residual"] > 1e-3


@pytest.mark.parametrize("extra, message", [
    (["--schedule", "schedule"], "time-independent"),
    (["--kernel", "exp(s)"], "user kernel"),
    (["--search", "--starts", "2"], "--search is not available"),
    (["--sweep-beta", "0:1:3"], "--sweep-beta is not available"),
    (["--closed-form"], "--closed-form is not available"),
    (["--heads", "heads2", "--symmetry-modes", "-1"], "symmetry modes"),
    (["--param", "c=1"], "--param sets kernel parameters"),
    (["--causal", "--param", "c=1"], "--param sets kernel parameters"),
])
def test_critical_bad_combinations(capsys, files, extra, message):
    # heads2 acts on R^2: d = 2 keeps every other input valid, so only the tested option is at fault
    d = "2" if "heads2" in extra else "3"
    extra = [files.get(e, e) if e in ("schedule", "heads2") else e for e in extra]
    args = ["critical", "--config", "polygon", "--n", "3", "--d", d, "--beta", "1"]
    if "--heads" not in extra and "--causal" not in extra:
        args += ["--heads", files["heads"]]
    assert message in bad(capsys, args + extra)


def test_masked_meanfield_command(capsys, tmp_path):
    png = tmp_path / "mm.png"
    p = run_json(capsys, ["masked-meanfield", "--beta", "1", "--compare", "40,80", "--plot", str(png)])
    assert png.stat().st_size > 1000 and p["plot"] == str(png)
    assert p["self_error"] < 1e-9 and abs(p["particles"][1]["observed_order"] - 1.0) < 0.1
    q = run_json(capsys, ["masked-meanfield", "--beta", "1", "--compare", "40,80", "--reverse-mask"])
    assert q["particles"][1]["max_error"] > 0.5  # planted: the reversed mask does not converge


@pytest.mark.parametrize("extra, message", [
    (["--reverse-mask"], "give --compare"),
    (["--compare", "1,a"], "comma-separated"),
    (["--compare", "100000"], "particle size"),
    (["--nodes", "2"], "nodes"),
    (["--t-end", "-1"], "t_end"),
    (["--model", "usa", "--beta", "600"], "would take about"),
])
def test_masked_meanfield_bad_input(capsys, extra, message):
    args = ["masked-meanfield"] + (["--beta", "1"] if "--beta" not in extra else []) + extra
    assert message in bad(capsys, args)
