"""attnflow simulate --norm: the radius beside X, resume, one-line errors, and a fuzz of the scheme options."""
from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from numerics.cli import main
from numerics.core.trajectory import Trajectory
from tests.cli.helpers import bad, run_json

BASE = ["simulate", "--model", "sa", "--n", "5", "--d", "3", "--beta", "1", "--t-end", "0.5"]


def test_simulate_pre_saves_radius_and_resumes(tmp_path, capsys):
    out = str(tmp_path / "pre.npz")
    payload = run_json(capsys, BASE + ["--norm", "pre", "--radius0", "2", "--out", out])
    assert payload["norm"] == "pre" and payload["final_radius_min"] > 2.0
    tr = Trajectory.load(out)
    assert tr.radius.shape == tr.X.shape[:2] and np.all(tr.radius[0] == 2.0)
    more = run_json(capsys, ["simulate", "--resume", out, "--t-end", "1", "--out", out])
    assert more["t_end"] == 1.0
    assert Trajectory.load(out).radius.shape[0] == Trajectory.load(out).X.shape[0]


def test_simulate_post_has_no_radius(tmp_path, capsys):
    out = str(tmp_path / "post.npz")
    payload = run_json(capsys, BASE + ["--norm", "post", "--out", out])
    assert "norm" not in payload and Trajectory.load(out).radius is None


def test_simulate_mix_ngpt_sqrt_centering(tmp_path, capsys):
    for extra in (["--norm", "mix", "--norm-switch", "0.2"], ["--norm", "ngpt", "--norm-alpha", "0.2"],
                  ["--norm", "sqrt", "--norm-scale", "3"], ["--norm", "peri", "--centering"]):
        payload = run_json(capsys, BASE + extra + ["--out", str(tmp_path / "o.npz")])
        assert payload["norm"] == extra[1]


def test_bad_norm_input_is_one_line(tmp_path, capsys):
    out = str(tmp_path / "o.npz")
    assert "invalid choice" in bad(capsys, BASE + ["--norm", "layernorm", "--out", out])
    assert "norm_switch" in bad(capsys, BASE + ["--norm", "mix", "--out", out])
    assert "radius 1" in bad(capsys, BASE + ["--norm", "post", "--radius0", "3", "--out", out])
    assert "radius0" in bad(capsys, BASE + ["--norm", "pre", "--radius0", "nan", "--out", out])
    np.savez(tmp_path / "m.npz", V=-np.eye(3))
    line = bad(capsys, BASE[:-1] + ["20", "--norm", "pre", "--matrices", str(tmp_path / "m.npz"), "--out", out])
    assert "radius blow-up" in line
    assert not os.path.exists(out)
    run_json(capsys, BASE + ["--norm", "pre", "--out", out])
    assert "do not pass --norm" in bad(capsys, ["simulate", "--resume", out, "--t-end", "1", "--norm", "peri",
                                                "--out", out])


OPTION_VALUES = {"--norm": st.sampled_from(["post", "pre", "peri", "mix", "ngpt", "sqrt", "lnscale", "x", ""]),
                 "--norm-alpha": st.sampled_from(["0", "-1", "0.5", "nan", "inf", "1e308"]),
                 "--norm-switch": st.sampled_from(["0", "0.1", "-2", "inf", "1e308", "abc"]),
                 "--norm-scale": st.sampled_from(["0", "1e-300", "2", "-1", "nan"]),
                 "--radius0": st.sampled_from(["1", "0", "1e-300", "1e300", "-3", "inf", "2", "from-init",
                                               "from_init", "abc", ""])}


@settings(deadline=None, max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(options=st.dictionaries(st.sampled_from(sorted(OPTION_VALUES)), st.just(None), max_size=4),
       data=st.data(), centering=st.booleans())
def test_fuzz_scheme_options(tmp_path, capsys, options, data, centering):
    argv = list(BASE) + ["--out", str(tmp_path / "f.npz")]
    for flag in options:
        argv += [flag, data.draw(OPTION_VALUES[flag])]
    if centering:
        argv.append("--centering")
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert code in (0, 2), (argv, err)
    assert "Traceback" not in err
    if code == 2:
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error:"), (argv, err)


# -- LayerNorm Scaling and per-token radii ------------------------------------------------------------------------
def test_simulate_lnscale(tmp_path, capsys):
    out = str(tmp_path / "l.npz")
    payload = run_json(capsys, BASE + ["--norm", "lnscale", "--norm-scale", "2", "--radius0", "1.5", "--out", out])
    assert payload["norm"] == "lnscale" and payload["final_radius_min"] > 1.5
    assert Trajectory.load(out).meta["norm_scale"] == 2.0


def test_radius0_from_init(tmp_path, capsys):
    rng = np.random.default_rng(3)
    raw = rng.standard_normal((5, 3)) * rng.uniform(0.5, 3.0, (5, 1))
    np.save(tmp_path / "raw.npy", raw)
    out = str(tmp_path / "r.npz")
    args = ["simulate", "--model", "sa", "--beta", "1", "--t-end", "0.5", "--init", str(tmp_path / "raw.npy")]
    run_json(capsys, args + ["--norm", "pre", "--radius0", "from-init", "--out", out])
    tr = Trajectory.load(out)
    norms = np.linalg.norm(raw, axis=1)
    assert np.allclose(tr.radius[0], norms, rtol=4e-16, atol=0)  # |x| = m |x/m| (overflow-safe): a few ulps
    assert np.allclose(tr.X[0] * tr.radius[0][:, None], raw, rtol=0, atol=1e-14)
    assert np.array_equal(np.asarray(tr.meta["radius0"]), tr.radius[0])
    run_json(capsys, ["simulate", "--resume", out, "--t-end", "1", "--out", out])  # resumes from the saved radii
    again = Trajectory.load(out)
    assert again.times[-1] == 1.0 and np.array_equal(again.radius[0], tr.radius[0])
    # the same run through the API gives the same arrays (the CLI path is only the reading of the file)
    from numerics.core.model import Model, Solver
    from numerics.core.trajectory import simulate
    from numerics.core.norm_options import initial_with_radii
    X0, radii = initial_with_radii(str(tmp_path / "raw.npy"))
    api = simulate(Model("sa", 1.0, norm="pre", radius0=radii), X0, 0.5, solver=Solver(dt=0.05))
    assert np.array_equal(api.radius, tr.radius) and np.array_equal(api.X, tr.X)


def test_radius0_bad_values_are_one_line(tmp_path, capsys):
    out = str(tmp_path / "o.npz")
    raw = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    np.save(tmp_path / "zero.npy", raw)
    np.save(tmp_path / "huge.npy", np.array([[1e200, 0.0, 0.0], [0.0, 1.0, 0.0]]))
    np.save(tmp_path / "unit.npy", np.eye(3))
    args = ["simulate", "--model", "sa", "--beta", "1", "--t-end", "0.5", "--out", out]
    assert "row 1 is zero" in bad(capsys, args + ["--init", str(tmp_path / "zero.npy"), "--norm", "pre",
                                            "--radius0", "from-init"])
    assert "radius0 must lie" in bad(capsys, args + ["--init", str(tmp_path / "huge.npy"), "--norm", "pre",
                                                     "--radius0", "from-init"])
    assert "from the rows of --init" in bad(capsys, BASE + ["--norm", "pre", "--radius0", "from-init", "--out", out])
    assert "expected a number" in bad(capsys, BASE + ["--norm", "pre", "--radius0", "big", "--out", out])
    # unit rows from --init keep radius 1 under post-LN; from-init with post-LN and other radii is refused
    run_json(capsys, args + ["--init", str(tmp_path / "unit.npy"), "--norm", "post", "--radius0", "from-init"])
    np.save(tmp_path / "two.npy", 2.0 * np.eye(3))
    assert "radius 1" in bad(capsys, args + ["--init", str(tmp_path / "two.npy"), "--norm", "ngpt",
                                             "--radius0", "from-init"])
    # a batch carries its radii (B, n) per frame, member 0 the single run of seed 0 (the batch's first seed)
    run_json(capsys, BASE + ["--batch", "2", "--norm", "pre", "--radius0", "2", "--out", out])
    one = str(tmp_path / "one.npz")
    run_json(capsys, BASE + ["--seed", "0", "--norm", "pre", "--radius0", "2", "--out", one])
    batch, single = Trajectory.load(out), Trajectory.load(one)
    assert batch.radius.shape == batch.X.shape[:-1] == (11, 2, 5)
    assert np.array_equal(batch.radius[:, 0], single.radius) and np.array_equal(batch.X[:, 0], single.X)
    assert "do not pass --radius0" in bad(capsys, ["simulate", "--resume", out, "--t-end", "2", "--radius0",
                                                   "from-init", "--out", out])
    assert not os.path.exists(str(tmp_path / "never.npz"))
