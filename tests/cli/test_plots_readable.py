"""Plots a reader can read: the figures are captured before they are closed and their layout is checked."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from numerics.cli import main  # noqa: E402


@pytest.fixture
def figures(monkeypatch):
    """Every figure the code closes, kept open for inspection."""
    kept = []
    real_close = plt.close

    def close(fig=None):
        if fig is not None and not isinstance(fig, str):
            kept.append(fig)
        else:
            real_close(fig)

    monkeypatch.setattr(plt, "close", close)
    yield kept
    for f in kept:
        real_close(f)


def test_clusters_dendrogram_truncated_and_count_on_log_axis(tmp_path, capsys, figures):
    from numerics.clusters.commands.clusters import PLOT_MAX_LEAVES

    traj = tmp_path / "t.npz"
    assert main(["simulate", "--model", "sa", "--n", "80", "--d", "2", "--beta", "9", "--t-end", "30",
                 "--save-times", "log:0.1:30:30", "--out", str(traj)]) == 0
    png = tmp_path / "c.png"
    assert main(["clusters", str(traj), "--plot", str(png)]) == 0
    assert f"plot written to {png}" in capsys.readouterr().out
    fig = figures[-1]
    tree, count = fig.axes[0], fig.axes[1]
    labels = [t.get_text() for t in tree.get_yticklabels()]
    assert 0 < len(labels) <= PLOT_MAX_LEAVES  # 80 leaves would be a solid block
    assert sum(int(s) for s in labels) == 80  # each leaf labelled by its size
    assert count.get_yscale() == "log"


def test_every_json_output_carries_versions_and_plot_lines_are_uniform(tmp_path, capsys):
    """The conventions are applied by render.emit for every command: versions in JSON, 'plot written to'."""
    import json

    png = tmp_path / "s.png"
    assert main(["spectrum", "--d", "3", "--beta", "4", "--plot", str(png)]) == 0
    assert capsys.readouterr().out.rstrip().endswith(f"plot written to {png}")
    png = tmp_path / "c.png"
    assert main(["critical", "--config", "polygon", "--n", "5", "--d", "2", "--beta", "1", "--plot", str(png)]) == 0
    assert capsys.readouterr().out.rstrip().endswith(f"plot written to {png}")
    for argv in (["spectrum", "--d", "3", "--beta", "4"], ["verify", "--list"], ["conjecture", "list"],
                 ["critical", "--config", "polygon", "--n", "5", "--d", "2", "--beta", "1"]):
        assert main(argv + ["--json"]) == 0
        payload = json.loads(capsys.readouterr().out)
        assert payload["versions"]["numpy"] == np.__version__, argv


def test_clusters_refine_reports_saved_and_inserted_frames(tmp_path, capsys):
    import json

    traj = tmp_path / "t.npz"
    assert main(["simulate", "--model", "sa", "--n", "12", "--d", "2", "--beta", "4", "--t-end", "8", "--dt", "0.5",
                 "--method", "adaptive", "--save-times", "2,4,6", "--out", str(traj)]) == 0
    capsys.readouterr()
    assert main(["clusters", str(traj), "--refine", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["saved_frames"] == 5
    assert len(payload["times"]) == payload["saved_frames"] + payload["inserted_frames"]
    assert main(["clusters", str(traj), "--refine"]) == 0
    out = capsys.readouterr().out
    assert f"5 saved + {payload['inserted_frames']} inserted by --refine" in out


def test_kuramoto_angles_are_wrapped_without_jumps():
    from numerics.circle.commands.kuramoto import wrapped_paths

    t = np.linspace(0, 1, 50)[:, None]
    theta = np.hstack([3.0 + 0.5 * t, 3.0 + 0.5 * t + 2 * np.pi])  # one point, written twice unwrapped
    w = wrapped_paths(theta)
    finite = w[np.isfinite(w)]
    assert finite.min() >= -np.pi and finite.max() < np.pi
    np.testing.assert_allclose(w[:, 0], w[:, 1], equal_nan=True)  # drawn once (same path)
    assert np.isnan(w).sum() == 2  # one break per path where it crosses +-pi


def test_eigen_axis_readable_and_unclipped():
    from numerics.critical.commands.critical import eigen_axis

    fig, ax = plt.subplots()
    values = np.array([-0.38, -0.23, 0.0, 0.0, 0.13, 0.64])
    ax.plot(values, "o")
    assert eigen_axis(ax, values, 1e-9) == "linear"  # today: symlog with 24 overlapping decade labels
    spread = np.array([-40.0, -40.0, 0.0, 2e-3, 3e-2])
    fig2, ax2 = plt.subplots()
    ax2.plot(spread, "o")
    assert eigen_axis(ax2, spread, 1e-9) == "symlog"
    ticks = ax2.get_yticks()
    lo, hi = ax2.get_ylim()
    assert len(ticks) <= 9 and lo < spread.min() and hi > spread.max()
    assert all(lo <= t <= hi for t in ticks)
    plt.close(fig2)
    plt.close(fig)


def test_meanfield_colour_scale_symmetric_and_shows_the_linear_phase():
    from numerics.meanfield.commands.meanfield import density_norm

    excess = np.array([[1e-6, -1e-6], [1e-3, -1e-3], [0.5, -0.2]])
    norm = density_norm(excess)
    assert norm.vmin == -norm.vmax == -0.5
    # the perturbation at t = 0 and after three decades of growth get clearly different colours
    assert abs(float(norm(1e-3)) - float(norm(1e-6))) > 0.1


def test_gaussian_plot_readable_when_the_mean_drifts(tmp_path, capsys, figures):
    png = tmp_path / "g.png"
    assert main(["gaussian", "--attention", "softmax", "--d", "2", "--A", "[[0,0],[0,0]]", "--V", "[[1,0.3],[0,1]]",
                 "--mean", "[1,0.5]", "--cov", "[[1,0.2],[0.2,0.5]]", "--t-end", "46", "--plot", str(png)]) == 0
    fig = figures[-1]
    ellipses, spectrum = fig.axes[0], fig.axes[1]
    lo, hi = ellipses.get_xlim()
    assert -5 < lo < 0 < hi < 5  # centred on the mean (the mean itself is ~1e20)
    assert spectrum.get_yscale() == "log"


def test_change_indices_follow_the_progress_not_the_clock():
    from numerics.common.plots import change_indices

    y = np.concatenate([np.linspace(0.0, 3.0, 31), np.full(270, 3.0)])  # all change in the first 10 %
    assert change_indices(y, 4) == [0, 10, 20, 300]
    assert change_indices(np.zeros(7), 4) == [0, 2, 4, 6]  # flat: evenly spaced
    step = np.r_[np.zeros(5), np.ones(5)]  # one jump: both inner fractions fall on it, topped up to 4 frames
    assert len(change_indices(step, 4)) == 4 and 5 in change_indices(step, 4)


def test_simulate_plot_shows_the_clustering_with_cluster_counts(tmp_path, capsys, figures):
    """beta = 4, T = 30 clusters between t = 3 and 9: evenly spaced frames (0, 10, 20, 30) skip it."""
    png = tmp_path / "s.png"
    assert main(["simulate", "--model", "sa", "--n", "64", "--d", "3", "--beta", "4", "--t-end", "30",
                 "--out", str(tmp_path / "t.npz"), "--plot", str(png)]) == 0
    assert f"plot written to {png}" in capsys.readouterr().out
    fig = figures[-1]
    titles = [ax.get_title() for ax in fig.axes[:-1]]
    times = [float(t.split("\n")[0].removeprefix("t = ")) for t in titles]
    counts = [int(t.split("\n")[1].split()[0]) for t in titles]
    assert times[0] == 0.0 and times[-1] == 30.0
    assert all(3.0 <= t <= 9.0 for t in times[1:-1]), times
    assert counts[0] > counts[1] > counts[2] >= counts[3] >= 1, counts


def _legend_texts(ax):
    legend = ax.get_legend()
    return [] if legend is None else [t.get_text() for t in legend.get_texts()]


def test_clusters_plot_legend_lists_only_what_is_drawn_and_labels_are_typeset(tmp_path, figures):
    """No plateau line in the legend when no plateau is drawn; the energy axis label is mathtext, not ASCII TeX."""
    from matplotlib.collections import LineCollection

    traj = tmp_path / "t.npz"
    seen = []
    for name, t_end in (("short", "3"), ("long", "2000")):  # no plateau reached / plateaus reached
        assert main(["simulate", "--model", "sa", "--n", "40", "--d", "2", "--beta", "9", "--t-end", t_end,
                     "--save-times", f"log:0.1:{t_end}:40", "--out", str(traj)]) == 0
        assert main(["clusters", str(traj), "--plot", str(tmp_path / f"{name}.png")]) == 0
        energy = figures[-1].axes[2]
        plateaus = [c for c in energy.collections if isinstance(c, LineCollection) and len(c.get_segments())]
        listed = [t for t in _legend_texts(energy) if "plateau" in t]
        assert len(listed) == (1 if plateaus else 0), (name, listed, len(plateaus))
        label = energy.get_ylabel()
        assert label.startswith("$") and "<x_i" not in label and "sum e^" not in label
        assert all("^" not in t or "$" in t for t in _legend_texts(energy))
        seen.append(bool(plateaus))
    assert seen == [False, True]  # both cases were checked


def test_sweep_hue_curves_that_coincide_stay_visible(tmp_path, monkeypatch, figures):
    """Two --hue values with identical curves: distinct markers and dashes, and the label says they coincide."""
    from numerics.sweeps import plotting

    same = np.array([[3.0, 2.0, 1.0], [3.0, 2.0, 1.0], [5.0, 4.0, 2.0]])
    fake = plotting.Aggregate(dims=("n", "beta"), coords={"n": [8, 16, 32], "beta": [1.0, 2.0, 4.0]}, value=same,
                              lower=same - 0.5, upper=same + 0.5, seeds=np.full(same.shape, 3), kind="mean",
                              name="clusters")
    monkeypatch.setattr(plotting, "aggregate", lambda *a, **k: fake)
    plotting.plot_curves(None, "beta", "clusters", tmp_path / "c.png", hue="n", theory=False)
    ax = figures[-1].axes[0]
    lines = [ln for ln in ax.get_lines() if ln.get_label().startswith("n = ")]
    assert len(lines) == 3
    styles = {(ln.get_marker(), ln.get_linestyle()) for ln in lines}
    assert len(styles) == 3  # each curve drawn differently, so the one underneath still shows
    assert [ln.get_label() for ln in lines] == ["n = 8", "n = 16 (same as n = 8)", "n = 32"]


def test_beta_noise_diagram_labels_the_axis_as_noise_and_names_the_regions(figures):
    from numerics.noise.diagram import beta_noise_diagram, beta_noise_figure

    fig = beta_noise_figure(2, beta_noise_diagram(2, [1.0, 4.0, 6.0], modes=1))
    absolute, relative = fig.axes
    assert "K" not in absolute.get_ylabel() and "D" in absolute.get_ylabel()
    texts = {ax: " ".join(t.get_text() for t in ax.texts) for ax in (absolute, relative)}
    assert "uniform" in texts[absolute] and "clustered" in texts[absolute]
    for region in ("uniform", "clustered", "bistable"):
        assert region in texts[relative], region
    lo, hi = relative.get_ylim()
    assert lo < 1.0 < hi  # the clustered region (D < D_c) is on the panel
    # below beta* the first-order noise equals D_c: not drawn there, or it hides the threshold curve
    first = [ln for ln in absolute.get_lines() if "first-order" in ln.get_label()][0]
    assert np.isnan(np.asarray(first.get_ydata(), float)[0])
