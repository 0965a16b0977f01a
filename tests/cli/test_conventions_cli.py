"""Conventions that used to mislead: --heads scales scores by 1/sqrt(k), --matrices takes Q, K, V as given (one
head with scale 1 reproduces --matrices; with the default scale it is --matrices at beta/sqrt(d))."""
import numpy as np

from numerics.cli import main


def _final(path):
    with np.load(path) as data:
        return data["X"][-1]


def test_one_head_with_scale_one_is_the_matrices_option(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(1)
    d = 3
    Q, K, V = (rng.standard_normal((d, d)) for _ in range(3))
    np.savez("mats.npz", Q=Q, K=K, V=V)
    np.savez("heads1.npz", Q=Q[None], K=K[None], V=V[None], W=np.eye(d)[None], scale=np.array(1.0))
    np.savez("heads.npz", Q=Q[None], K=K[None], V=V[None], W=np.eye(d)[None])
    common = ["simulate", "--model", "sa", "--n", "6", "--d", str(d), "--t-end", "0.5", "--dt", "0.05"]
    assert main(common + ["--beta", "2", "--matrices", "mats.npz", "--out", "m.npz"]) == 0
    assert main(common + ["--beta", "2", "--heads", "heads1.npz", "--out", "h1.npz"]) == 0
    assert main(common + ["--beta", "2", "--heads", "heads.npz", "--out", "h.npz"]) == 0
    assert main(common + ["--beta", str(2 / np.sqrt(d)), "--matrices", "mats.npz", "--out", "ms.npz"]) == 0
    capsys.readouterr()
    assert np.abs(_final("m.npz") - _final("h1.npz")).max() < 1e-12
    assert np.abs(_final("h.npz") - _final("ms.npz")).max() < 1e-12
    assert np.abs(_final("h.npz") - _final("m.npz")).max() > 1e-3


def test_both_helps_state_the_scale(capsys):
    import pytest

    for argv, phrase in ((["simulate", "--help"], "as given"), (["gaussian", "--help"], "as given")):
        with pytest.raises(SystemExit):
            main(argv)
        text = " ".join(capsys.readouterr().out.split())
        assert phrase in text and "sqrt(k)" in text, argv


def test_rd_saves_at_the_requested_times():
    """A requested t = 4.0 used to be snapped to the step grid (3.994 with dt = 0.025 and t_end = 10.01)."""
    from numerics.core.model import SaveAt, Solver
    from numerics.rd.dynamics import simulate_rd
    from numerics.rd.model import RdModel

    model = RdModel("softmax", 2, A=np.eye(2), V=np.eye(2))
    X0 = np.random.default_rng(0).standard_normal((5, 2))
    run = simulate_rd(model, X0, 10.01, solver=Solver("rk4", dt=0.025), save=SaveAt(times=[0.0, 4.0, 10.01]))
    assert run.times.tolist() == [0.0, 4.0, 10.01]
    to_four = simulate_rd(model, X0, 4.0, solver=Solver("rk4", dt=0.025), save=SaveAt(times=[4.0]))
    assert np.array_equal(run.Z[1], to_four.Z[-1])  # the same steps up to t = 4


def test_rd_prints_its_codimension_as_a_finite_time_measurement(tmp_path, capsys):
    argv = ["rd", "--attention", "softmax", "--d", "2", "--A", "[[1,0],[0,1]]", "--V", "[[1,0],[0,1]]", "--n", "6",
            "--t-end", "7.95", "--frames", "3", "--out", str(tmp_path / "r.npz")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "codimension at t = 7.95" in out and "finite-time measurement" in out
    with np.load(tmp_path / "r.npz") as data:
        assert data["times"].tolist() == [0.0, 3.975, 7.95]


def test_meanfield_with_noise_says_what_it_costs_and_prints_what_is_meaningful(capsys, monkeypatch):
    """meanfield --noise ran minutes without saying why (the diffusion term makes the explicit solver stiff) and
    printed the noiseless l_max and rates of modes that had decayed to round-off."""
    import numerics.meanfield.pde as pde

    monkeypatch.setattr(pde, "RHS_SECONDS_AT_512", 1.0)  # make the estimate long enough to be announced
    assert main(["meanfield", "--beta", "5", "--noise", "0.1", "--t-end", "20"]) == 0
    captured = capsys.readouterr()
    assert "explicit steps" in captured.err and "cutoff mode 32" in captured.err
    out = captured.out
    assert "fastest mode (measured)" in out and "argmax_k lambda_k - D k^2 (predicted)" in out
    assert "l_max (predicted)" not in out and "decayed below round-off" in out
    rows = [line.split() for line in out.splitlines() if line[:1].isdigit()]
    assert rows and all(float(r[3]) < 1e-2 for r in rows)  # every printed rate is a meaningful measurement
