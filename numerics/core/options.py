"""The command-line options that describe a simulation, defined once, and their one translation to a Model.

``attnflow simulate`` builds its :class:`~numerics.core.model.Model` here for one system and for a batch
(``--batch``, ``--betas``, ``--seeds``), so that an option means the same thing on both paths: what the ensemble
driver cannot batch reaches the Model all the same and is refused there, by
:func:`numerics.core.ensemble.check_batchable`, with one line (never dropped on the way). Other commands reuse
the groups they need.

Option groups (each adder puts its options on an argparse parser):

- :func:`add_model_arguments`: ``--model``, ``--n``, ``--d``, ``--beta`` (simulate's "model (required ...)" group);
- :func:`add_beta_scaling_arguments`: ``--beta-scaling``, ``--gamma`` (beta = gamma log n);
- :func:`add_matrix_arguments`: ``--matrices``;
- :func:`add_architecture_arguments`: ``--heads``, ``--mlp``, ``--schedule``, ``--causal``;
- :func:`add_position_arguments`: ``--alibi``, ``--rope``, ``--positions``;
- :func:`add_kernel_arguments`: ``--kernel``, ``--param``;
- :func:`add_norm_arguments`: ``--norm`` and the parameters of the schemes;
- :func:`add_dynamics_arguments`: ``--time-unit``, ``--noise``, ``--noise-seed``, ``--common-noise``,
  ``--common-noise-law``, ``--no-attention``;
- :func:`add_solver_arguments`: ``--method``, ``--dt``, ``--rtol``, ``--atol``, ``--backend``;
- :func:`add_save_arguments`: ``--save-every``, ``--save-times``.

Translation: :func:`model_from_args` (with the per-group :func:`scaling_from_args`, :func:`kernel_from_args`,
:func:`positions_from_args`, :func:`norm_from_args`; the architecture's is
:func:`architecture_from_args`), :func:`solver_from_args`, :func:`save_from_args` (with
:func:`parse_save_times`); :func:`require_model_options` names what a new run lacks and :func:`given_options` what
a command line set (``simulate --resume`` refuses every option of :data:`MODEL_OPTIONS` and :data:`RUN_OPTIONS`:
the saved run continues as it was).

This module imports nothing heavy at import time (``attnflow --help`` loads every command's options), and the
kernel parser (SymPy) only when a ``--kernel`` or ``--param`` is given: a plain run never pays for SymPy.
"""
from __future__ import annotations

import copy
import math
from typing import Any

from numerics.common.errors import InputError

#: step of the fixed-step methods (layer, rk4) when --dt is not given
DEFAULT_DT = 0.05
#: the options (attribute names) that describe the model and are absent (None, or [] for --param) unless given;
#: ``simulate --resume`` refuses them (the saved run's model continues). --time-unit and --noise have defaults.
MODEL_OPTIONS = ("model", "n", "d", "beta", "beta_scaling", "gamma", "matrices", "heads", "mlp", "schedule",
                 "causal", "alibi", "rope", "positions", "kernel", "param", "norm", "norm_alpha", "norm_switch",
                 "norm_scale", "radius0", "centering")
#: the defaults of the options of a run that have one (the adders use them): a value other than these was given
DEFAULTS = {"time_unit": "natural", "noise": 0.0, "common_noise": 0.0, "common_noise_law": "goe", "method": "rk4",
            "rtol": 1e-9, "atol": 1e-12, "backend": "auto", "save_every": 1}
#: the options of how a run is integrated and saved (attribute names; the defaulted ones are in DEFAULTS)
RUN_OPTIONS = ("time_unit", "noise", "common_noise", "common_noise_law", "noise_seed", "method", "dt", "rtol", "atol",
               "backend", "save_every", "stop_when")


# -- option groups -------------------------------------------------------------------------------------------------
def add_model_arguments(p) -> None:
    """``--model``, ``--n``, ``--d``, ``--beta`` in one group of their own: required unless ``--resume`` (which
    reads them from its file); ``--init`` gives ``--n`` and ``--d``."""
    from numerics.core.names import MODELS

    model = p.add_argument_group("model (required, no defaults; --resume reads all four from its file, --init "
                                 "gives --n and --d)")
    model.add_argument("--model", choices=MODELS, help="sa (softmax) or usa (unnormalised)")
    model.add_argument("--n", type=int, help="number of particles (tokens)")
    model.add_argument("--d", type=int, help="ambient dimension (particles on S^{d-1})")
    model.add_argument("--beta", type=float, help="inverse temperature (or --beta-scaling log --gamma G)")


def add_beta_scaling_arguments(p) -> None:
    """``--beta-scaling {fixed,log}`` and ``--gamma G`` (beta = G log n with n the number of tokens)."""
    from numerics.core.beta_scaling import BETA_SCALINGS

    p.add_argument("--beta-scaling", choices=BETA_SCALINGS, default=None,
                   help="fixed (default): --beta as given; log: beta = --gamma times log n, n the number of tokens")
    p.add_argument("--gamma", type=float, default=None,
                   help="with --beta-scaling log: beta = gamma log n (gamma > 0; no default)")


def add_matrix_arguments(p) -> None:
    """``--matrices FILE.npz``: the attention matrices Q, K, V of one head."""
    p.add_argument("--matrices", metavar="FILE.npz", help="attention matrices: arrays Q, K and/or V (d x d; "
                   "missing ones are the identity), used as given: scores beta <Q x, K y>, no 1/sqrt(d) (--heads "
                   "scales by 1/sqrt(k); docs/conventions.md, section 11)")


def add_architecture_arguments(p) -> None:
    """``--heads``, ``--mlp``, ``--schedule`` (``.npz`` files) and ``--causal`` (read by
    :func:`architecture_from_args`)."""
    p.add_argument("--heads", metavar="FILE.npz", help="several heads: arrays Q, K, V, W each (H, k, d) "
                   "(scores beta <Q_h x, K_h y>/sqrt(k); optional scalar 'scale' replaces 1/sqrt(k): one head with "
                   "scale 1 and W = I is --matrices, whose Q, K are used as given)")
    p.add_argument("--mlp", metavar="FILE.npz", help="MLP on each head's output: arrays W1 (m, d), b1 (m,), "
                   "W2 (d, m), b2 (d,) and optional string 'activation' (relu, gelu, tanh, identity)")
    p.add_argument("--schedule", metavar="FILE.npz", help="depth schedule: 'times' (L,) and per-layer heads Q, K, V, "
                   "W (L, H, k, d) and optional MLP arrays with a leading layer axis")
    p.add_argument("--causal", action="store_true", default=None,
                   help="causal mask: token i attends to tokens j <= i (row order)")


def add_position_arguments(p) -> None:
    """The CLI options ``--alibi LAMBDA``, ``--rope BASE`` and ``--positions FILE`` (defaults: none)."""
    p.add_argument("--alibi", type=float, metavar="LAMBDA",
                   help="ALiBi: subtract LAMBDA |p_i - p_j| from the logits (LAMBDA >= 0; with H heads the slopes "
                        "LAMBDA 2^(-8(h-1)/H)); default none")
    p.add_argument("--rope", type=float, metavar="BASE",
                   help="rotary positions: scores <R(p_i) Q x_i, R(p_j) K x_j>, frequencies BASE^(-2m/k) (BASE > 0, "
                        "e.g. 10000; odd k: the last coordinate is not rotated); default none")
    p.add_argument("--positions", metavar="FILE",
                   help="position labels p_i for --alibi/--rope: .npy (1-D) or a text file of n numbers "
                        "(default: the row order p_i = i)")


def add_kernel_arguments(parser, what: str = "the interaction") -> None:
    """``--kernel EXPR`` and ``--param NAME=VALUE`` (repeatable); ``what`` names what the kernel defines."""
    parser.add_argument("--kernel", metavar="EXPR",
                        help=f"pair kernel phi(s), s = <x, y>, for {what}, e.g. \"exp(beta*s) + c*s**3\" "
                             "(default: the attention kernel (e^{beta s} - 1)/beta)")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                        help="value of a kernel parameter (repeatable)")


def add_norm_arguments(p) -> None:
    """--norm and the parameters of the schemes (every default stated in its help)."""
    from numerics.core.norm_options import parse_radius0
    from numerics.core.norms import DESCRIPTIONS, NORMS

    p.add_argument("--norm", choices=NORMS, help="normalisation scheme (default post, the sphere flow): "
                   + "; ".join(f"{k}: {v}" for k, v in DESCRIPTIONS.items()))
    p.add_argument("--norm-alpha", type=float, help="--norm ngpt: step size alpha > 0 (default 1)")
    p.add_argument("--norm-switch", type=float, help="--norm mix: time T > 0 of the switch from post-LN to "
                   "pre-LN (required for mix)")
    p.add_argument("--norm-scale", type=float, help="--norm sqrt, lnscale: depth scale tau > 0 of the factor "
                   "(1 + t/tau)^(-1/2) (layer l = 1 + t/tau; default 1)")
    p.add_argument("--radius0", type=parse_radius0, metavar="R|from-init",
                   help="initial radius of every token (> 0; pre, peri, sqrt, lnscale; default 1), or 'from-init': "
                        "each token's radius is the norm of its row in --init (the rows need not be unit vectors; "
                        "the directions are the rows divided by their norms)")
    p.add_argument("--centering", action="store_true", default=None,
                   help="LayerNorm with centring (subtract the coordinate mean) instead of RMSNorm (default off)")


def add_dynamics_arguments(p) -> None:
    """The Model's time unit and noise level, and the seed of the noise."""
    from numerics.core.names import TIME_UNITS

    p.add_argument("--time-unit", choices=TIME_UNITS, default=DEFAULTS["time_unit"],
                   help="usa only: 'rescaled' integrates in t' = e^beta t (finite for any beta)")
    p.add_argument("--noise", type=float, default=DEFAULTS["noise"],
                   help="D >= 0: Brownian noise sqrt(2D) P_x o dB on each token (layer = Euler-Maruyama, "
                        "rk4 = weak-order-2 splitting)")
    p.add_argument("--noise-seed", type=int, help="seed of the noise (default: --seed)")
    p.add_argument("--common-noise", type=float, default=DEFAULTS["common_noise"], metavar="SIGMA",
                   help="sigma >= 0: every token feels the same matrix Brownian motion, -sigma P_x o dQ x "
                        "(layer = projected Euler-Maruyama, rk4 = stochastic Heun; docs/guide/common-noise.md)")
    p.add_argument("--common-noise-law", choices=("goe", "values"), default=DEFAULTS["common_noise_law"],
                   help="law of dQ: goe = (dB + dB^T)/sqrt(2) (default), values = dB/sqrt(d)")
    p.add_argument("--no-attention", dest="attention", action="store_false", default=True,
                   help="switch the attention field off: the noise alone moves the tokens")


def add_solver_arguments(p) -> None:
    """The integrator, its step or tolerances, and the field's backend (:func:`solver_from_args`)."""
    from numerics.core.names import BACKENDS, METHODS

    p.add_argument("--method", choices=METHODS, default=DEFAULTS["method"],
                   help="integrator (default rk4); adaptive = dop853 at --rtol <= 1e-3, dp5 above (recorded)")
    p.add_argument("--dt", type=float, help=f"step (layer, rk4; default {DEFAULT_DT:g}); initial step hint for "
                   "adaptive")
    p.add_argument("--rtol", type=float, default=DEFAULTS["rtol"], help="adaptive: relative tolerance")
    p.add_argument("--atol", type=float, default=DEFAULTS["atol"], help="adaptive: absolute tolerance")
    p.add_argument("--backend", choices=BACKENDS, default=DEFAULTS["backend"],
                   help="field evaluation: direct sums, fourier (d=2, Q=K=V=I), numba (fused compiled kernel; "
                        "pip install 'attnflow[fast]'), harmonic (d=3, Q^T K = aI, V = bI: spherical harmonics, "
                        "tolerance 1e-10), or auto (never numba; default auto)")
    p.add_argument("--stop-when", metavar="EVENT:TOL",
                   help="stop each system once its observable is decided, e.g. one-cluster:1e-3 (fixed steps, or "
                        "per-member dp5; refused where the event's lemma does not hold; numerics.core.events)")


def add_save_arguments(p) -> None:
    """``--save-every`` and ``--save-times`` (:func:`save_from_args`)."""
    p.add_argument("--save-every", type=int, default=DEFAULTS["save_every"],
                   help="keep every k-th step (fixed-step methods)")
    p.add_argument("--save-times", metavar="TIMES",
                   help="keep the states at these times (every method): a comma list 't1,t2,...' or 'log:T0:T1:N' "
                        "(N log-spaced times from T0 > 0 to T1); t = 0 and --t-end are always kept")


# -- the translation, group by group --------------------------------------------------------------------------------
def scaling_from_args(args) -> dict:
    """Model keywords ``beta``, ``beta_scaling``, ``gamma`` from ``--beta``, ``--beta-scaling``, ``--gamma``
    (refusing the combinations that do not say one thing)."""
    from numerics.core.beta_scaling import check_scaling

    scaling = getattr(args, "beta_scaling", None) or "fixed"
    gamma = getattr(args, "gamma", None)
    if scaling == "fixed" and gamma is not None:
        raise InputError("--gamma needs --beta-scaling log (beta = gamma log n)")
    if scaling == "log":
        if args.beta is not None:
            raise InputError("give either --beta or --beta-scaling log with --gamma, not both")
        if gamma is None:
            raise InputError("--beta-scaling log needs --gamma (beta = gamma log n, gamma > 0)")
    beta, scaling, gamma = check_scaling(args.beta if scaling == "fixed" else None, scaling,
                                         gamma if scaling == "log" else None)
    return {"beta": beta, "beta_scaling": scaling, "gamma": gamma}


def beta_from_args(args, n: int | None, what: str = "this command without --n") -> float:
    """The beta of a command that works on n given tokens: ``--beta``, or ``--gamma`` log n."""
    from numerics.core.beta_scaling import effective_beta

    kw = scaling_from_args(args)
    return effective_beta(kw["beta"], kw["beta_scaling"], kw["gamma"], n, what)


def kernel_from_args(args, check: bool = True):
    """The PairKernel of ``--kernel``/``--param``, or None when no kernel string was given.

    With ``check`` (the default) the kernel is also checked on [-1, 1] before any work
    (:func:`numerics.core.kernel_field.check_kernel_on_interval`) at the command's ``--beta`` (beta = 1 for
    the symbolic commands, which have none) and for its ``--model``. The parser (and SymPy with it) is imported
    only when ``--kernel`` or ``--param`` is given.
    """
    from numerics.core.kernel_options import command_line_message, kernel_parameters

    params = kernel_parameters(getattr(args, "param", None))
    text = getattr(args, "kernel", None)
    if text is None:
        if params:
            raise InputError("--param needs --kernel")
        return None
    from theory.expression_parser import parse_kernel

    try:
        kernel = parse_kernel(text, params)
    except ValueError as exc:
        raise InputError(command_line_message(exc)) from None
    if check:
        from numerics.core.kernel_field import check_kernel_on_interval

        beta = getattr(args, "beta", None)
        check_kernel_on_interval(kernel, 1.0 if beta is None else beta, getattr(args, "model", None))
    return kernel


def positions_from_args(args) -> dict:
    """Model keywords ``alibi``, ``rope``, ``positions`` from ``--alibi``, ``--rope``, ``--positions``."""
    out = {}
    if getattr(args, "alibi", None) is not None:
        out["alibi"] = args.alibi
    if getattr(args, "rope", None) is not None:
        out["rope"] = args.rope
    if getattr(args, "positions", None):
        from numerics.core.positions import load_labels

        out["positions"] = load_labels(args.positions)
    return out


def norm_from_args(args, radii=None) -> dict:
    """The ``Model`` keywords given on the command line (absent options keep the Model defaults); ``radii``
    replaces ``--radius0 from-init`` (the row norms of --init,
    :func:`numerics.core.norm_options.initial_with_radii`)."""
    from numerics.core.norm_options import FROM_INIT, NORM_OPTIONS

    out = {}
    for key in NORM_OPTIONS:
        value = getattr(args, key, None)
        if value is not None:
            out[key] = value
    if out.get("radius0") == FROM_INIT:
        if radii is None:
            raise InputError(f"--radius0 {FROM_INIT} takes the radii from the rows of --init FILE.npy: give --init "
                             "(a single run, not a batch)")
        out["radius0"] = radii
    return out


def given_options(args, names, defaults: dict | None = None) -> list[str]:
    """The flags among ``names`` (attribute names) that the command line set: a value other than the option's
    default (``defaults``, else :data:`DEFAULTS`, else None, or [] for ``--param``). An option given with its
    default value cannot be told from an absent one."""
    defaults = DEFAULTS if defaults is None else {**DEFAULTS, **defaults}
    return [f"--{k.replace('_', '-')}" for k in names
            if getattr(args, k, None) not in (None, []) and getattr(args, k) != defaults.get(k)]


# -- the translation: a Model, a Solver, a SaveAt ------------------------------------------------------------------
def require_model_options(args, batch: bool = False) -> None:
    """One line naming the options a new run lacks: ``--model``; ``--beta`` (unless ``--beta-scaling log`` gives
    it, or a batch's ``--betas``); ``--n`` and ``--d`` unless ``--init`` gives them."""
    missing = [] if args.model is not None else ["--model"]
    if args.beta is None and getattr(args, "beta_scaling", None) != "log":
        if not batch:
            missing.append("--beta")
        elif getattr(args, "betas", None) is None:
            missing.append("--beta (or --betas)")
    if getattr(args, "init", None) is None:
        missing += [f"--{k}" for k in ("n", "d") if getattr(args, k) is None]
    if missing:
        raise InputError(f"simulate needs {', '.join(missing)}" + ("" if batch else " (or --resume FILE.npz)"))


def architecture_from_args(args) -> dict:
    """Model keywords ``heads``, ``mlp``, ``schedule``, ``causal`` from the CLI flags ``--heads FILE.npz``,
    ``--mlp FILE.npz``, ``--schedule FILE.npz`` and ``--causal`` (missing flags are left out), and ``alibi``,
    ``rope``, ``positions`` from ``--alibi``, ``--rope``, ``--positions`` (:mod:`numerics.core.positions`)."""
    from numerics.core.blocks import MLP, MultiHead, Schedule

    out = {}
    if getattr(args, "heads", None):
        out["heads"] = MultiHead.load(args.heads)
    if getattr(args, "mlp", None):
        out["mlp"] = MLP.load(args.mlp)
    if getattr(args, "schedule", None):
        out["schedule"] = Schedule.load(args.schedule)
    if getattr(args, "causal", None):
        out["causal"] = True
    out.update(positions_from_args(args))
    return out


def model_from_args(args, d: int | None, radii=None, *, beta: float | None = None):
    """The :class:`~numerics.core.model.Model` of the command-line options: the one translation of every group.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options (groups a command does not have count as absent).
    d : int or None
        The ambient dimension, to check ``--matrices`` against (None or an invalid value: checked by the Model
        and the driver instead).
    radii : (n,) ndarray, optional
        The radii of ``--radius0 from-init`` (the row norms of ``--init``).
    beta : float, optional
        Stands in for an absent ``--beta`` with a fixed beta: a batch's first ``--betas`` value (the members
        carry their own betas; the Model needs one). Ignored when ``--beta`` or ``--beta-scaling log`` is given,
        so that the contradictions are refused as for one system.

    Returns
    -------
    Model
        Every option reaches it; what a driver cannot do (a batch with positions, norms, a user kernel, a scaled
        beta) is refused by that driver, with one line.
    """
    from numerics.core.model import Model
    from numerics.core.trajectory import load_attention_matrices

    mats = (load_attention_matrices(args.matrices, d if isinstance(d, int) and d >= 2 else None)
            if getattr(args, "matrices", None) else {})
    if beta is not None and args.beta is None and getattr(args, "beta_scaling", None) != "log":
        args = copy.copy(args)  # the caller's namespace keeps --beta absent
        args.beta = beta
    return Model(kind=args.model, **scaling_from_args(args), kernel=kernel_from_args(args),
                 time_unit=getattr(args, "time_unit", DEFAULTS["time_unit"]),
                 common_noise=getattr(args, "common_noise", DEFAULTS["common_noise"]),
                 common_noise_law=getattr(args, "common_noise_law", DEFAULTS["common_noise_law"]),
                 attention=getattr(args, "attention", True),
                 noise=getattr(args, "noise", DEFAULTS["noise"]), **mats, **architecture_from_args(args),
                 **norm_from_args(args, radii))


def solver_from_args(args, seed: int | None = None):
    """The :class:`~numerics.core.model.Solver` of ``--method``, ``--dt`` (default :data:`DEFAULT_DT` for the
    fixed-step methods), ``--rtol``, ``--atol``, ``--backend`` and ``--step``; ``seed`` is the noise seed of one
    system (a batch gives its members' seeds instead)."""
    from numerics.core.model import Solver
    from numerics.core.names import ADAPTIVE_METHODS

    dt = args.dt if (args.dt is not None or args.method in ADAPTIVE_METHODS) else DEFAULT_DT
    extra: dict[str, Any] = {} if seed is None else {"seed": seed}
    return Solver(method=args.method, dt=dt, rtol=args.rtol, atol=args.atol, backend=args.backend,
                  step=getattr(args, "step", "shared"), **extra)


def events_from_args(args):
    """The :class:`~numerics.core.events.Event` of ``--stop-when NAME:TOL`` (None without it)."""
    text = getattr(args, "stop_when", None)
    if text is None:
        return None
    from numerics.core.events import Event

    return Event.parse(text)


def save_from_args(args, frame_size: int = 1):
    """The :class:`~numerics.core.model.SaveAt` of ``--save-every`` and ``--save-times`` (frames of
    ``frame_size`` numbers, for the memory check of a long list of times)."""
    from numerics.core.model import SaveAt

    times = None if args.save_times is None else parse_save_times(args.save_times, args.t_end, frame_size)
    return SaveAt(every=args.save_every, times=times)


def parse_save_times(text: str, t_end: float, frame_size: int = 1):
    """Save times from ``--save-times``: ``'t1,t2,...'`` or ``'log:T0:T1:N'``; 0 and ``t_end`` are added.

    Every time must lie in (0, t_end]; the result increases strictly from 0 to t_end. N is checked against the
    memory limit (N frames of ``frame_size`` = n d numbers each) before the times are made.
    """
    import numpy as np

    from numerics.common.limits import check_array

    text = text.strip()
    try:
        if text.startswith("log:"):
            parts = text[4:].split(":")
            if len(parts) != 3:
                raise InputError(f"--save-times log form is log:T0:T1:N, got {text!r}")
            t0, t1, count = float(parts[0]), float(parts[1]), int(parts[2])
            if not (math.isfinite(t0) and math.isfinite(t1) and 0 < t0 < t1) or count < 2:
                raise InputError(f"--save-times log:T0:T1:N needs 0 < T0 < T1 and N >= 2, got {text!r}")
            # every saved time keeps a frame of frame_size numbers: refuse before allocating the times
            check_array((count, frame_size + 3), f"--save-times with {count} times (frames of {frame_size} numbers)")
            times = np.geomspace(t0, t1, count)
        else:
            times = np.array([float(v) for v in text.split(",") if v.strip()])
    except InputError:
        raise
    except ValueError:
        raise InputError(f"--save-times must be a comma list of times or log:T0:T1:N, got {text!r}") from None
    if times.size == 0 or not np.all(np.isfinite(times)):
        raise InputError(f"--save-times holds no finite time: {text!r}")
    if np.any(np.diff(times) <= 0):
        raise InputError(f"--save-times must increase strictly, got {text!r}")
    if times[0] < 0 or times[-1] > t_end * (1 + 1e-12):
        raise InputError(f"--save-times must lie in [0, --t-end = {t_end:g}], got {times[0]:g}..{times[-1]:g}")
    times = np.minimum(times, t_end)
    if times[0] > 0:
        times = np.concatenate([[0.0], times])
    if times[-1] < t_end:
        times = np.concatenate([times, [t_end]])
    return times
