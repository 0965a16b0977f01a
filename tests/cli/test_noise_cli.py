"""CLI: attnflow phase, simulate --noise, meanfield --noise."""
import numpy as np
import pytest

from tests.cli.helpers import bad, run_json


def test_phase_json_kuramoto(capsys):
    out = run_json(capsys, ["phase", "--beta", "0", "--d", "2", "--noise", "0.25", "--modes", "1"])
    assert out["linear_stability_threshold"] == 0.5 and out["transition"] == "continuous"
    assert abs(out["branch_at"][0]["r"] - 0.831462024754257) < 1e-9


def test_phase_plot_and_particles(capsys, tmp_path):
    png = tmp_path / "phase.png"
    out = run_json(capsys, ["phase", "--beta", "3", "--noise", "1.0", "--modes", "1", "--particles", "30", "--t-end", "2",
                            "--dt", "0.05", "--plot", str(png)])
    assert out["transition"] == "discontinuous" and out["fold"]["D"] > out["linear_stability_threshold"]
    assert png.stat().st_size > 10_000 and len(out["particles"]) == 2


def test_phase_bad_input(capsys):
    assert "need --noise values" in bad(capsys, ["phase", "--beta", "1", "--particles", "10"])
    assert "need --noise values" in bad(capsys, ["phase", "--beta", "1", "--d", "3", "--pde", "8"])
    assert "--d 3" in bad(capsys, ["phase", "--beta", "1", "--noise", "0.2", "--pde", "8"])
    assert "noise" in bad(capsys, ["phase", "--beta", "1", "--noise", "-1"])
    assert ".png" in bad(capsys, ["phase", "--beta", "1", "--plot", "x.txt"])


def test_simulate_noise_reproducible(capsys, tmp_path):
    outs = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.npz"
        out = run_json(capsys, ["simulate", "--model", "usa", "--beta", "1", "--n", "10", "--d", "3", "--t-end",
                                "0.3", "--dt", "0.05", "--noise", "0.4", "--noise-seed", "5", "--out", str(path)])
        assert out["noise"] == 0.4 and out["noise_seed"] == 5
        outs.append(np.load(path)["X"])
    assert np.array_equal(*outs)
    assert "noise" in bad(capsys, ["simulate", "--model", "usa", "--beta", "1", "--n", "10", "--d", "3", "--t-end",
                                   "0.3", "--noise", "nan", "--out", str(tmp_path / "c.npz")])


def test_meanfield_noise(capsys):
    out = run_json(capsys, ["meanfield", "--beta", "2", "--model", "usa", "--grid", "32", "--modes", "2",
                            "--noise", "0.7", "--t-end", "40", "--amplitude", "1e-6"])
    assert out["noise"] == 0.7
    assert abs(out["measured_rates"][0] - out["predicted_rates"][0]) < 1e-4 * abs(out["predicted_rates"][0])
    assert "no growing mode" in bad(capsys, ["meanfield", "--beta", "2", "--model", "usa", "--noise", "0.9"])


def test_fokker_planck_rates_and_steady_state(capsys, tmp_path):
    out = run_json(capsys, ["fokker-planck", "--beta", "2", "--noise", "0.3", "--L", "6", "--t-end", "20"])
    assert out["mass_drift"] < 1e-13
    for row in out["rates"][:4]:
        assert abs(row["measured_m_nonzero_max"] - row["predicted"]) < 1e-4 * max(1, abs(row["predicted"]))
        assert abs(row["measured_m_nonzero_min"] - row["predicted"]) < 1e-4 * max(1, abs(row["predicted"]))
    png = tmp_path / "fp.png"
    out = run_json(capsys, ["fokker-planck", "--beta", "1", "--noise", "0.3", "--L", "8", "--start", "clustered",
                            "--t-end", "25", "--plot", str(png)])
    assert abs(out["final_r"] - out["branch_r"]) < 1e-4 and png.stat().st_size > 10_000
    # no rate fit from a clustered start (it used to advise lowering --amplitude, which it does not use)
    assert out["rates"] == [] and "--start perturbed" in out["rates_note"] and "amplitude" not in out["rates_note"]


def test_fokker_planck_text_table_says_which_degrees_it_leaves_out(capsys):
    """The text table stops at degree 6; below it a line says the JSON has the rest."""
    from numerics.cli import main

    assert main(["fokker-planck", "--beta", "2", "--noise", "0.3", "--L", "7", "--t-end", "10"]) == 0
    out = capsys.readouterr().out
    assert "(degree 7 not shown: --json lists every degree" in out


def test_fokker_planck_bad_input(capsys):
    assert "--t-end" in bad(capsys, ["fokker-planck", "--beta", "2", "--noise", "5"])
    assert "noise" in bad(capsys, ["fokker-planck", "--beta", "2", "--noise", "nan"])
    assert "L" in bad(capsys, ["fokker-planck", "--beta", "2", "--noise", "0.1", "--L", "1000"])
    assert "blew up" in bad(capsys, ["fokker-planck", "--beta", "2", "--noise", "0.1", "--L", "8", "--dt", "5",
                                     "--t-end", "200"])
    assert "--seed must be >= 0" in bad(capsys, ["fokker-planck", "--beta", "2", "--noise", "0.1", "--L", "4",
                                                 "--t-end", "1", "--seed", "-1"])
    # a huge D makes the ETDRK4 coefficients overflow: said so, not "blew up; lower dt"
    for argv in (["fokker-planck", "--beta", "2", "--noise", "1e300", "--L", "4", "--t-end", "1"],
                 ["phase", "--beta", "3", "--d", "3", "--noise", "1e300", "--pde", "4", "--pde-t-end", "1"]):
        err = bad(capsys, argv)
        assert "too large for the ETDRK4 coefficients" in err and "blew up" not in err


def test_simulate_noise_resume_equals_one_piece(capsys, tmp_path):
    """simulate --noise, then --resume: bitwise the run in one piece (the file holds the random stream's state)."""
    common = ["--model", "usa", "--beta", "1", "--n", "10", "--d", "3", "--dt", "0.05", "--noise", "0.4",
              "--noise-seed", "5", "--save-every", "4"]
    run_json(capsys, ["simulate", *common, "--t-end", "1.6", "--out", str(tmp_path / "whole.npz")])
    run_json(capsys, ["simulate", *common, "--t-end", "0.8", "--out", str(tmp_path / "part.npz")])
    out = run_json(capsys, ["simulate", "--resume", str(tmp_path / "part.npz"), "--t-end", "1.6",
                            "--out", str(tmp_path / "part.npz")])
    assert out["noise"] == 0.4 and out["resumed_from"] == str(tmp_path / "part.npz")
    whole, joined = np.load(tmp_path / "whole.npz"), np.load(tmp_path / "part.npz")
    assert np.array_equal(whole["X"], joined["X"]) and np.array_equal(whole["times"], joined["times"])


def test_clusters_on_a_noisy_trajectory(capsys, tmp_path):
    path = tmp_path / "noisy.npz"
    run_json(capsys, ["simulate", "--model", "usa", "--beta", "4", "--n", "12", "--d", "3", "--t-end", "2",
                      "--dt", "0.05", "--noise", "0.01", "--save-every", "10", "--out", str(path)])
    out = run_json(capsys, ["clusters", str(path), "--eps", "0.01"])
    assert out["counts"][0] == 12 and len(out["counts"]) == 5
    # refining merge times re-integrates the ODE, which is not the noisy dynamics: refused
    assert "noisy trajectory" in bad(capsys, ["clusters", str(path), "--refine"])


def test_sweep_with_a_noise_axis(capsys, tmp_path):
    """A noise axis: each seed index gets its own noise stream (SeedSequence(root, (seed, 1))), reproducibly."""
    import pytest

    pytest.importorskip("zarr")
    xr = pytest.importorskip("xarray")
    spec = tmp_path / "spec.toml"
    spec.write_text('[model]\nmodel = "usa"\nd = 2\nbeta = 0.0\nn = 60\n[sweep]\nnoise = [0.1, 0.8]\nseeds = 2\n'
                    '[run]\nt_end = 3.0\ndt = 0.1\nframes = 4\n[observables]\norder_parameter = {}\n')
    stores = []
    for name in ("a", "b"):
        store = tmp_path / f"{name}.zarr"
        run_json(capsys, ["sweep", "run", str(spec), "--store", str(store), "--scheduler", "synchronous"])
        stores.append(xr.open_zarr(str(store)).load())
    a, b = stores
    assert (a["status"].values == 1).all()
    assert np.array_equal(a["order_parameter"].values, b["order_parameter"].values)
    # the two seeds differ (their own noise and initial state); weak noise orders more than strong noise
    r = a["order_parameter"].values
    assert r[0, 0] != r[0, 1] and r[0].mean() > r[1].mean()


def _kuramoto(capsys, *extra):
    return run_json(capsys, ["kuramoto", "--model", "usa", "--n", "300", "--beta", "0", "--t-end", "30", "--dt",
                             "0.1", "--save-every", "10", "--seed", "2", *extra])


def test_kuramoto_noise_reaches_the_bessel_root_reproducibly(capsys, tmp_path):
    png = tmp_path / "k.png"
    out = _kuramoto(capsys, "--noise", "0.25", "--plot", str(png))
    pred = out["prediction"]
    assert pred["linear_stability_threshold"] == 0.5 and pred["coupling_K"] == 1.0
    assert abs(pred["r"] - 0.831462024754257) < 1e-9
    # finite n = 300: |mean x| fluctuates by ~0.015 per frame; the late average is within 0.05 of the root
    assert abs(out["r_late_mean"] - pred["r"]) < 0.05
    assert png.stat().st_size > 10_000
    again = _kuramoto(capsys, "--noise", "0.25")
    other = _kuramoto(capsys, "--noise", "0.25", "--noise-seed", "7")
    assert again["order_parameter"] == out["order_parameter"] and other["order_parameter"] != out["order_parameter"]
    # above D_c the prediction is r = 0 and the particles stay near the O(1/sqrt(n)) level
    high = _kuramoto(capsys, "--noise", "0.8")
    assert high["prediction"]["r"] == 0.0 and high["r_late_mean"] < 0.15


def test_kuramoto_noise_planted_wrong_coupling_is_detected(capsys, monkeypatch):
    """Planted error: K = 2 in the Bessel equation (r = I_1(2r/D)/I_0(2r/D)) predicts 0.95, off by > 0.05."""
    import theory.noise

    original = theory.noise.kuramoto_order_parameter
    monkeypatch.setattr(theory.noise, "kuramoto_order_parameter", lambda D, dps=30: original(D / 2, dps))
    out = _kuramoto(capsys, "--noise", "0.25")
    assert abs(out["r_late_mean"] - out["prediction"]["r"]) > 0.05


def test_kuramoto_noise_bad_input(capsys):
    base = ["kuramoto", "--model", "usa", "--n", "10", "--beta", "0", "--t-end", "1"]
    assert "noise" in bad(capsys, base + ["--noise", "-1"])
    assert "layer" in bad(capsys, base + ["--noise", "0.2", "--method", "adaptive"])
    assert "--noise-seed needs" in bad(capsys, base + ["--noise-seed", "3"])


def test_phase_pde_shows_hysteresis_on_s2(capsys):
    """beta = 3, d = 3 (discontinuous): at D between D_c and the fold the S^2 PDE keeps a clustered start clustered
    (on the stable branch) and a near-uniform start uniform."""
    out = run_json(capsys, ["phase", "--beta", "3", "--d", "3", "--noise", "0.79", "--pde", "8", "--pde-t-end", "20",
                            "--modes", "1"])
    states = {p["start"]: p for p in out["pde"]}
    assert abs(states["clustered"]["r"] - out["branch_at"][0]["r"]) < 5e-3     # truncation at L = 8
    assert states["uniform"]["r"] < 0.5 * states["uniform"]["r_start"]


@pytest.mark.parametrize("argv,message", [
    (["--d", "101"], "d must be <= 100"),
    (["--noise", "0.1", "--particles", "100000", "--t-end", "1e6"], "of memory"),
    (["--noise", "0.1", "0.2", "--particles", "2000", "--d", "3", "--t-end", "1e5"], "hours"),
    (["--noise", "0.1", "--particles", "20", "--t-end", "1e300", "--dt", "1e-300"], "not a finite number of steps"),
    (["--noise", "0.1", "--d", "3", "--pde", "64", "--pde-t-end", "1e7"], "hours"),
])
def test_phase_refuses_absurd_requests_at_once(capsys, argv, message):
    """Dimension bound, and the memory and work of all particle runs and PDE solves together, are checked
    before anything runs (one line, exit 2)."""
    err = bad(capsys, ["phase", "--beta", "1", *argv])
    assert message in err


@pytest.mark.parametrize("argv,message", [
    (["--d", "3", "--pde", "8", "--pde-t-end", "1e12"], "hours"),
    (["--d", "3", "--pde", "8", "--pde-t-end", "nan"], "pde t_end"),
    (["--d", "2", "--pde", "8"], "--d 3"),
])
def test_phase_checks_the_pde_request_before_any_particle_run(capsys, monkeypatch, argv, message):
    """With --particles and a bad --pde request the refusal comes before the first particle run (it used to come
    after all of them): a particle run here is a test failure."""
    import numerics.noise.phase as phase

    def no_run(*args, **kwargs):
        raise AssertionError("a particle run started before the --pde request was checked")

    monkeypatch.setattr(phase, "particle_average", no_run)
    assert message in bad(capsys, ["phase", "--beta", "1", "--noise", "0.2", "--particles", "20", *argv])


def test_phase_at_tiny_beta_is_the_beta_zero_limit(capsys):
    """--beta 1e-300 at d = 3 used to raise OverflowError (b^{-d/2} in the couplings): now D_c = 1/d."""
    out = run_json(capsys, ["phase", "--beta", "1e-300", "--d", "3", "--modes", "1"])
    assert out["linear_stability_threshold"] == pytest.approx(1 / 3, rel=1e-12)


# -- phase: the global transition (issue 28) and its conventions (issue 32) -------------------------------------
@pytest.mark.parametrize("d", [2, 3])
def test_phase_at_beta_star_is_continuous(capsys, d):
    """At beta = beta*(d) exactly `phase` used to end in a ZeroDivisionError traceback; the papers count the
    point as continuous."""
    from numerics.cli import main
    from theory.noise import discontinuity_threshold

    assert main(["phase", "--d", str(d), "--beta", repr(discontinuity_threshold(d))]) == 0
    out = capsys.readouterr().out
    assert "continuous (beta = beta*" in out and "discontinuous (first order)" not in out.splitlines()[4]


def test_phase_names_the_linear_stability_threshold_and_the_coupling(capsys):
    """D_c is the linear-stability threshold (not "critical noise"), and the output states K = 1/(2D)."""
    from numerics.cli import main

    assert main(["phase", "--beta", "3", "--d", "3", "--modes", "1"]) == 0
    out = capsys.readouterr().out
    assert "linear-stability threshold D_c" in out and "critical noise" not in out
    assert "K = 1/(2D)" in out and "K_# = 1/(2 D_c)" in out
    js = run_json(capsys, ["phase", "--beta", "3", "--d", "3", "--modes", "1"])
    assert js["coupling_threshold"] * js["linear_stability_threshold"] == pytest.approx(0.5, rel=1e-14)
    assert js["coupling_first_order"] < js["coupling_threshold"]          # K_c < K_# above beta*


def test_phase_prints_the_refined_fold_with_its_accuracy(capsys):
    """The fold used to be the largest D of the continuation grid (up to 5e-5 relative low); now it is refined
    and printed with its accuracy, and lies above every grid point."""
    from numerics.noise.stationary import stationary_branch

    js = run_json(capsys, ["phase", "--beta", "3", "--d", "3", "--modes", "1"])
    grid = stationary_branch(3, 3.0, L=32, points=80, r_max=0.99)
    assert js["fold"]["D"] > grid.D.max() * (1 + 1e-6)
    assert 0 < js["fold"]["accuracy"] < 1e-10 * js["fold"]["D"]
    first = js["first_order_noise"]
    assert js["linear_stability_threshold"] < first["D"] < js["fold"]["D"] and first["accuracy"] < 1e-10


def test_phase_several_betas_print_a_table_and_draw_the_diagram(capsys, tmp_path):
    png = tmp_path / "diagram.png"
    js = run_json(capsys, ["phase", "--beta", "1", "3", "--d", "2", "--modes", "2", "--plot", str(png)])
    assert [b["beta"] for b in js["betas"]] == [1.0, 3.0] and png.stat().st_size > 10_000
    low, high = (b["modes"][0] for b in js["betas"])
    assert low["type"] == "continuous" and low["first_order_noise"]["D"] == low["linear_stability_threshold"]
    assert high["type"] == "discontinuous" and high["first_order_noise"]["D"] > high["linear_stability_threshold"]
    assert [m["mode"] for m in js["betas"][1]["modes"]] == [1, 2]


def test_phase_rejects_bad_new_options(capsys):
    assert "one --beta" in bad(capsys, ["phase", "--beta", "1", "2", "--noise", "0.3"])
    assert "modes" in bad(capsys, ["phase", "--beta", "1", "--modes", "0"])
    assert "modes" in bad(capsys, ["phase", "--beta", "1", "--modes", "9"])
    assert "beta" in bad(capsys, ["phase", "--beta", "1", "nan"])
    many = ["phase", "--beta"] + ["3"] * 1_000_000 + ["--d", "3"]
    assert "would take about" in bad(capsys, many)


def test_fokker_planck_names_the_linear_stability_threshold(capsys):
    """D_c is named the linear-stability threshold; fokker-planck wrote it as critical_noise until the rename,
    so, as phase and kuramoto, it keeps that key (the same value) for one release (issue 43)."""
    js = run_json(capsys, ["fokker-planck", "--beta", "2", "--noise", "0.3", "--L", "4", "--t-end", "1"])
    assert js["linear_stability_threshold"] == pytest.approx(0.487191, rel=1e-5)
    assert js["critical_noise"] == js["linear_stability_threshold"]


def test_noisy_sweep_plots_overlay_the_noise_transitions(capsys, tmp_path, monkeypatch):
    """A (beta, noise) sweep of usa: the phase diagram carries D_c(beta), the fold and the first-order noise;
    curves against noise at beta = 3 carry vertical lines at the same noises; --no-theory removes them."""
    pytest.importorskip("zarr")
    import numerics.sweeps.plotting as P

    spec = tmp_path / "spec.toml"
    spec.write_text('[model]\nmodel = "usa"\nd = 2\nn = 40\n[sweep]\nbeta = [1.0, 3.0]\nnoise = [0.5, 1.0, 1.4]\n'
                    'seeds = 1\n[run]\nt_end = 2.0\ndt = 0.1\nframes = 3\n[observables]\norder_parameter = {}\n')
    store = tmp_path / "s.zarr"
    run_json(capsys, ["sweep", "run", str(spec), "--store", str(store), "--scheduler", "synchronous"])
    labels = {}

    def keep(fig, path):
        labels[path] = [line.get_label() for ax in fig.axes for line in ax.get_lines()]
        return P.atomic_write(path, lambda tmp: fig.savefig(tmp, format="png"), suffix=".png")

    monkeypatch.setattr(P, "_save", keep)
    for argv in (["--x", "beta", "--y", "noise"], ["--x", "noise", "--sel", "beta=3"]):
        out = tmp_path / f"{argv[1]}.png"
        run_json(capsys, ["sweep", "plot", str(store), *argv, "--value", "order_parameter", "--out", str(out)])
        text = " ".join(labels[str(out)])
        assert "linear-stability threshold" in text and "first-order noise" in text and "fold" in text
        run_json(capsys, ["sweep", "plot", str(store), *argv, "--value", "order_parameter", "--out", str(out),
                          "--no-theory"])
        assert not any("threshold" in label for label in labels[str(out)])
