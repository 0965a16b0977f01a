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
