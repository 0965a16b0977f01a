"""attnflow long-context, and --beta-scaling/--gamma on simulate and critical: output, plots, bad input, fuzz."""
from __future__ import annotations

import math
import os
import resource

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from numerics.cli import main
from tests.cli.helpers import bad, run_json
from tests.cpu_budget import cpu_budget


def test_simplex_table_and_json(capsys):
    code = main(["long-context", "--rho", "0.5", "--n-max", "1e4"])
    out = capsys.readouterr().out
    assert code == 0 and "critical gamma" in out and "width * log n" in out and "above 0.5" in out
    p = run_json(capsys, ["long-context", "--rho", "0.25", "--alpha", "1", "--q", "4", "--n-max", "1e12"])
    assert p["critical_gamma"] == pytest.approx(1 / 0.75)
    assert p["limits"]["inner_product"]["supercritical"] == pytest.approx(0.25)
    assert [r["n"] for r in p["transition"]] == [10.0**k for k in range(1, 13)]
    for r in p["transition"]:
        assert r["width_p_log_n"] == pytest.approx(2 * math.log(9) / 0.75, rel=1e-9)
    assert p["width_fit"]["slope"] == pytest.approx(-1.0, abs=1e-9)


def test_simplex_without_residual_gives_four_rho_over_one_plus_three_rho(capsys):
    p = run_json(capsys, ["long-context", "--rho", "0.3", "--n-max", "100"])
    assert p["limits"]["inner_product"]["critical"] == pytest.approx(4 * 0.3 / (1 + 0.9))


def test_simplex_with_finite_d_and_plot(capsys, tmp_path):
    png = tmp_path / "s.png"
    p = run_json(capsys, ["long-context", "--rho", "0.5", "--n-max", "1000", "--d", "64", "--queries", "2",
                          "--configurations", "3", "--plot", str(png)])
    rows = p["finite_d"]["rows"]
    assert [r["n"] for r in rows] == [100, 1000] and png.stat().st_size > 10_000
    assert all(r["gamma_half"] > r["simplex_gamma_half"] for r in rows)  # finite d shifts the transition up


def test_fixed_query_and_gap_counting(capsys, tmp_path):
    p = run_json(capsys, ["long-context", "--fixed-query", "--d", "3", "--n-max", "1e4", "--replicates", "200",
                          "--plot", str(tmp_path / "f.png")])
    assert p["constant_quadrature"] == pytest.approx(0.398962230544, rel=1e-9)
    assert [r["n"] for r in p["rows"]] == [1e3, 1e4]
    g = run_json(capsys, ["long-context", "--gap-counting", "--n-max", "1000", "--rows", "12",
                          "--plot", str(tmp_path / "g.png")])
    assert [f["family"] for f in g["families"]] == ["gaussian", "simplex", "flat-edge", "sphere"]
    assert (tmp_path / "g.png").exists() and (tmp_path / "f.png").exists()


@pytest.mark.parametrize("argv, fragment", [
    (["long-context"], "give --rho"),
    (["long-context", "--rho", "1"], "rho must be <="),
    (["long-context", "--rho", "-0.5"], "rho must be >="),
    (["long-context", "--rho", "nan"], "rho must be finite"),
    (["long-context", "--rho", "0.5", "--alpha", "-1"], "alpha must be >="),
    (["long-context", "--rho", "0.5", "--q", "0"], "q must be >"),
    (["long-context", "--rho", "0.5", "--n-max", "5"], "n-max must be >="),
    (["long-context", "--rho", "0.5", "--n-max", "1e400"], "n-max"),
    (["long-context", "--rho", "0.5", "--n-max", "1e9", "--d", "16"], "above the limit"),
    (["long-context", "--rho", "0.5", "--n-max", "1e7", "--d", "4096", "--configurations", "1000"], "would take"),
    (["long-context", "--rho", "0.5", "--d", "2"], "d must be >= 3"),
    (["long-context", "--fixed-query", "--alpha", "1"], "--alpha and --q belong"),
    (["long-context", "--fixed-query", "--n-max", "50"], "must exceed"),
    (["long-context", "--fixed-query", "--replicates", "100000000000"], "memory"),
    (["long-context", "--fixed-query", "--route", "direct", "--n-max", "1e9"], "above the limit"),
    (["long-context", "--gap-counting", "--n-max", "1e12"], "above the limit"),
    (["long-context", "--gap-counting", "--rows", "10000000", "--n-max", "1e3"], "memory"),
    (["long-context", "--gap-counting", "--rows", "1000000", "--n-max", "1e7"], "would take"),
    (["long-context", "--rho", "0.5", "--plot", "x.pdf"], ".png"),
    (["long-context", "--rho", "0.5", "--fixed-query"], "not allowed"),
    (["simulate", "--model", "sa", "--n", "8", "--d", "3", "--beta-scaling", "log", "--gamma", "0", "--t-end", "1",
      "--out", "o.npz"], "gamma must be > 0"),
    (["simulate", "--model", "sa", "--n", "8", "--d", "3", "--beta-scaling", "log", "--gamma", "-2", "--t-end", "1",
      "--out", "o.npz"], "gamma must be > 0"),
    (["simulate", "--model", "sa", "--n", "8", "--d", "3", "--beta", "1", "--gamma", "2", "--t-end", "1",
      "--out", "o.npz"], "--gamma needs --beta-scaling log"),
    (["simulate", "--model", "sa", "--n", "8", "--d", "3", "--beta", "1", "--beta-scaling", "log", "--gamma", "2",
      "--t-end", "1", "--out", "o.npz"], "not both"),
    (["simulate", "--model", "sa", "--n", "8", "--d", "3", "--beta-scaling", "log", "--t-end", "1",
      "--out", "o.npz"], "needs --gamma"),
    (["critical", "--config", "sync", "--n", "4", "--d", "3", "--beta-scaling", "log", "--gamma", "-1"], "gamma"),
    (["critical", "--sweep-beta", "0:1:3", "--config", "sync", "--n", "4", "--d", "3", "--beta-scaling", "log",
      "--gamma", "1"], "sweep"),
])
def test_bad_input_is_one_line(capsys, tmp_path, monkeypatch, argv, fragment):
    monkeypatch.chdir(tmp_path)
    assert fragment in bad(capsys, argv)
    assert not (tmp_path / "o.npz").exists()


def test_simulate_with_log_scaling_is_the_fixed_run_and_resumes(capsys, tmp_path):
    a, b = str(tmp_path / "a.npz"), str(tmp_path / "b.npz")
    base = ["simulate", "--model", "sa", "--n", "12", "--d", "3", "--t-end", "0.3", "--seed", "4"]
    pa = run_json(capsys, base + ["--beta-scaling", "log", "--gamma", "1.5", "--out", a])
    run_json(capsys, base + ["--beta", repr(1.5 * math.log(12)), "--out", b])
    assert pa["beta"] == 1.5 * math.log(12) and pa["beta_scaling"] == "log" and pa["gamma"] == 1.5
    with np.load(a) as fa, np.load(b) as fb:
        assert np.array_equal(fa["X"], fb["X"]) and np.array_equal(fa["energy"], fb["energy"])
    pr = run_json(capsys, ["simulate", "--resume", a, "--t-end", "0.6", "--out", a])
    assert pr["beta"] == pa["beta"] and pr["gamma"] == 1.5
    assert "--gamma" in bad(capsys, ["simulate", "--resume", a, "--gamma", "2", "--t-end", "1", "--out", a])


def test_critical_with_log_scaling(capsys):
    p = run_json(capsys, ["critical", "--config", "simplex", "--n", "4", "--d", "3", "--beta-scaling", "log",
                          "--gamma", "2"])
    q = run_json(capsys, ["critical", "--config", "simplex", "--n", "4", "--d", "3", "--beta", repr(2 * math.log(4))])
    assert p["beta"] == q["beta"] and p["eigenvalues"] == q["eigenvalues"]


def test_long_runs_show_progress(capsys, monkeypatch):
    """The Monte Carlo parts report progress on stderr (shown after 2 s; here at once)."""
    from numerics.common import provenance

    class Immediate(provenance.StderrProgress):
        def __init__(self, label, **kw):
            super().__init__(label, **{**kw, "delay": 0.0, "every": 0.0})

    monkeypatch.setattr(provenance, "StderrProgress", Immediate)
    main(["long-context", "--rho", "0.5", "--n-max", "1000", "--d", "16", "--queries", "2", "--configurations", "2"])
    assert "long-context" in capsys.readouterr().err


# -- fuzz: the new command and options -------------------------------------------------------------------------------
VALUES = st.sampled_from(["0", "1", "-1", "0.5", "0.999999", "2", "3", "1e308", "-1e308", "1e-300", "nan", "inf",
                          "", "abc", "1e7", "1e12", "100000000000", "/dev/null", "x.png"])
FLAGS = ["--rho", "--alpha", "--q", "--n-max", "--d", "--queries", "--configurations", "--replicates", "--route",
         "--rows", "--seed", "--plot"]
MODES = [[], ["--fixed-query"], ["--gap-counting"]]


def _fuzz_once(capsys, tmp_path, monkeypatch, mode, flags, values):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ATTNFLOW_MAX_WORK_HOURS", "0.001")
    monkeypatch.setenv("ATTNFLOW_MAX_MEMORY_GB", "2")
    argv = ["long-context", *mode]
    for flag, value in zip(flags, values):
        argv += [flag, value]
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (_address_space() + (3 << 30), hard))  # a request may not take 3 GiB
    try:
        # the work limit refuses long requests; 120 s of CPU (not wall-clock) time: see tests/cpu_budget.py
        with cpu_budget(120, argv):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    err = capsys.readouterr().err
    assert code in (0, 2), (argv, err)
    assert "Traceback" not in err
    if code == 2:
        assert len([line for line in err.splitlines() if line.startswith("error:")]) == 1, (argv, err)
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")


def _address_space() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[0]) * resource.getpagesize()


ARGS = dict(mode=st.sampled_from(MODES), flags=st.lists(st.sampled_from(FLAGS), max_size=5, unique=True),
            values=st.lists(VALUES, min_size=5, max_size=5))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**ARGS)
def test_fuzz_long_context(capsys, tmp_path, monkeypatch, mode, flags, values):
    """A few random command lines per run (tests/cli/test_fuzz_cli.py also draws this command)."""
    _fuzz_once(capsys, tmp_path, monkeypatch, mode, flags, values)


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**ARGS)
def test_fuzz_long_context_thoroughly(capsys, tmp_path, monkeypatch, mode, flags, values):
    _fuzz_once(capsys, tmp_path, monkeypatch, mode, flags, values)
