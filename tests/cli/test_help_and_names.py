"""What a new user reads: every option's help states its default, simulate's usage shows what it requires, the
same thing has the same option name everywhere (old spellings kept as aliases), sweep plot says where its figure
went once. Each failed before this work (115 options without a default in their help; simulate's model options
listed as optional; model --model for a checkpoint; sweep plot --out; the figure announced twice)."""
import argparse
import re
import types

import pytest

from numerics.cli import build_parser, main


def _options(parser, prefix=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, prefix + (name,))
        elif action.option_strings and not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            yield " ".join(prefix), action


OPTIONS = list(_options(build_parser()))


def test_every_option_states_its_default():
    missing = [(cmd, a.option_strings[-1]) for cmd, a in OPTIONS
               if a.nargs != 0 and not a.required and "default" not in (a.help or "").lower()
               and not (cmd == "simulate" and a.dest in ("model", "n", "d", "beta"))]
    assert not missing, missing


def test_simulate_shows_its_required_model_options(capsys):
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    out = capsys.readouterr().out
    usage = out.split("\n\n")[0]
    assert "--model {sa,usa} --beta BETA (--n N --d D | --init FILE.npy)" in usage and "--resume FILE.npz" in usage
    group = out.split("model (required")[1].split("\n\n")[0]
    assert all(opt in group for opt in ("--model", "--n N", "--d D", "--beta BETA"))
    options = out.split("options:")[1].split("model (required")[0]
    # no option line here defines --beta or --model (--betas, --beta-scaling and help texts naming --beta may)
    assert not re.search(r"^\s+--(beta|model)(\s|,|$)", options, re.MULTILINE)


@pytest.mark.parametrize("command, new, old", [
    (["model", "tokens"], "--checkpoint", "--model"),
    (["sweep", "plot", "s.zarr", "--x", "beta", "--value", "clusters"], "--plot", "--out"),
])
def test_consistent_names_keep_their_old_spellings(command, new, old):
    parser = build_parser()
    a = parser.parse_args(command + [new, "x"])
    b = parser.parse_args(command + [old, "x"])
    assert vars(a) == vars(b)


def test_model_means_the_dynamics_everywhere_else():
    for cmd, action in OPTIONS:
        if "--model" in action.option_strings and not cmd.startswith("model"):
            assert action.choices is None or set(action.choices) <= {"sa", "usa"}, cmd


def test_sweep_plot_announces_its_figure_once(capsys, monkeypatch, tmp_path):
    import numerics.sweeps.plotting as plotting
    import numerics.sweeps.store as store
    from numerics.sweeps.commands import sweep

    monkeypatch.setattr(store, "open_store", lambda path: types.SimpleNamespace(dataset=lambda: None))
    monkeypatch.setattr(plotting, "plot_phase_diagram", lambda ds, x, y, value, out, sel, theory=True: out)
    args = build_parser().parse_args(["sweep", "plot", str(tmp_path / "s.zarr"), "--x", "beta", "--y", "n",
                                      "--value", "clusters", "--plot", str(tmp_path / "f.png")])
    assert sweep._plot(args) == 0
    out = capsys.readouterr().out
    assert out.count("f.png") == 1 and out.strip() == f"phase diagram of clusters: plot written to {tmp_path / 'f.png'}"
