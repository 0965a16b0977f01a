r"""A sweep specification: the model with its swept parameters, how each run is integrated, what is recorded.

A specification is a TOML file (or the same tables as a Python dict, or :class:`SweepSpec` built directly)::

    [model]                      # keys passed to numerics.core.model.Model(...) ("model" is its ``kind``),
    model = "sa"                 # plus the particle system: n (particles) and d (ambient dimension)
    d = 2
    [sweep]                      # one axis per key, in this order: a list, or {start, stop, num, log}
    beta = [1.0, 4.0]
    n = [16, 32]
    seeds = 3                    # the seed axis: a count (0..k-1) or a list of seed indices
    [run]
    t_end = 20.0                 # optional: method ("rk4"), dt (0.05), backend ("direct"), frames (101),
    [observables]                #   root_seed (0), imports (modules registering user observables),
    clusters = { eps = 1e-3 }    #   stop_when_decided (false)

The ``[model]`` table and the swept axes accept every field of :class:`numerics.core.model.Model` (so new model features
such as noise or heads are sweepable as soon as ``Model`` has them), plus ``n`` and ``d``; an unknown key is an error
naming the valid ones. Each run (a *cell*) draws its initial state, n iid uniform points of :math:`\mathbb{S}^{d-1}`,
from ``numpy.random.SeedSequence(root_seed, spawn_key=(seed,))``: the same seed index gives the same draw whatever the
scheduling or the number of workers (and, for the same n and d, the same initial state at every :math:`\beta`: common
random numbers, which make differences across an axis less noisy).

``[run] stop_when_decided = true`` stops each run once its observables are decided: every observable must declare
the same event (:func:`numerics.sweeps.observables.decided_event`; ``one_cluster`` declares ``one-cluster`` with
its eps), the event must hold for every cell's model (:meth:`numerics.core.events.Event.check_model`), and the
method must take fixed steps (``layer``, ``rk4``) or be ``dp5`` (run with per-member steps). The store then
records each cell's decision time (variable ``decision_time``, NaN for a run integrated to t_end).
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from numerics.common.errors import InputError, require_choice, require_int, require_real
from numerics.common.limits import check_array, check_work
from numerics.core.integrators import ADAPTIVE_METHODS, METHODS
from numerics.core.model import BACKENDS, Model

#: keys of the particle system (not Model fields) accepted in ``[model]`` and as axes
SYSTEM_KEYS = ("n", "d")
#: the ``[model]`` spelling of Model's ``kind`` field (as on the command line: --model sa)
KIND_ALIAS = "model"
SEED_AXIS = "seed"
RUN_DEFAULTS = {"t_end": None, "method": "rk4", "dt": 0.05, "backend": "direct", "frames": 101,
                "root_seed": 0, "imports": [], "rtol": 1e-9, "atol": 1e-12, "block": 0, "stop_when_decided": False}
TABLES = ("model", "sweep", "run", "observables")
#: store format written by this version (Zarr format 3, sharded; checked on resume)
FORMAT = "attnflow-sweep/2"
#: the format of earlier versions (Zarr format 2, one chunk per cell): still opened, resumed and converted
LEGACY_FORMAT = "attnflow-sweep/1"
#: automatic block size: cells per task so that a task does about this many operations (a few seconds)
TARGET_BLOCK_FLOPS = 2e10
#: most cells in one block (one ensemble)
MAX_BLOCK_CELLS = 1024
#: memory of one block's saved frames at most (bytes)
BLOCK_MEMORY = 256 * 2**20
#: smallest rtol accepted: 100 machine epsilons, below which a float64 step cannot meet the tolerance (the floor
#: SciPy's solve_ivp raises such an rtol to)
MIN_RTOL = 100 * float(np.finfo(float).eps)
#: largest noise level accepted: far above every transition of the noisy dynamics (D of order beta), where a run
#: is pure diffusion and the SDE steps no longer resolve anything
MAX_NOISE = 1e6
#: adaptive methods: the real step-size limit of their explicit stability region (DP5 about 3.3, DOP853 about
#: 6) and their field evaluations per step; the work of an adaptive run is estimated as t_end / limit steps,
#: the step of a run near its clusters (contraction rate of order 1 in natural units) being stability-bound
ADAPTIVE_STABILITY = {"dop853": (6.0, 12)}
ADAPTIVE_DEFAULT_STABILITY = (3.3, 6)


#: the most values one axis of a sweep may take (the store holds every cell of the product of the axes)
MAX_AXIS_VALUES = 1_000_000


def model_fields() -> list[str]:
    """The keys a sweep may give to :class:`Model`: its fields, with ``kind`` spelled ``model``."""
    return [KIND_ALIAS if f.name == "kind" else f.name for f in dataclasses.fields(Model)]


def valid_keys() -> list[str]:
    return model_fields() + list(SYSTEM_KEYS)


def _check_key(key: str, where: str) -> str:
    if key not in valid_keys():
        raise InputError(f"unknown key {key!r} in [{where}]; valid keys: {', '.join(valid_keys())}"
                         + (" (and seeds)" if where == "sweep" else ""))
    return key


def axis_values(name: str, value) -> list:
    """The values of one axis: a non-empty list, or ``{start, stop, num, log}`` (linspace or geomspace)."""
    if isinstance(value, Mapping):
        unknown = set(value) - {"start", "stop", "num", "log"}
        if unknown or not {"start", "stop", "num"} <= set(value):
            raise InputError(f"axis {name}: a range is {{start, stop, num, log}}, got keys {sorted(value)}")
        start = require_real(value["start"], f"{name}.start")
        stop = require_real(value["stop"], f"{name}.stop")
        # a grid is listed value by value in the store: 1e12 values asked for terabytes before any check
        num = require_int(value["num"], f"{name}.num", minimum=1, maximum=MAX_AXIS_VALUES)
        if value.get("log", False):
            if start <= 0 or stop <= 0:
                raise InputError(f"axis {name}: a log range needs start, stop > 0")
            vals = np.geomspace(start, stop, num)
        else:
            vals = np.linspace(start, stop, num)
        vals = [float(v) for v in vals]
    elif isinstance(value, (list, tuple)):
        vals = list(value)
    else:
        vals = [value]
    if not vals:
        raise InputError(f"axis {name} has no values")
    if len(set(map(_hashable, vals))) != len(vals):
        raise InputError(f"axis {name} repeats a value: {vals}")
    if name in SYSTEM_KEYS:
        vals = [_system_value(name, v) for v in vals]
    elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        vals = [require_real(v, f"axis {name}") for v in vals]  # finite: a NaN cell would run to NaN
    if name in ("noise", "common_noise"):
        for v in vals:
            _noise_value(v, f"axis {name}")
    if name == "common_noise_law":  # every value checked now: only the first cell's model is built before the runs
        from numerics.noise.common import LAWS

        vals = [require_choice(v, "axis common_noise_law", LAWS) for v in vals]
    return vals


def _noise_value(value, where: str) -> float:
    return require_real(value, where, minimum=0.0, maximum=MAX_NOISE)


def _system_value(name: str, value) -> int:
    """A number of particles n (>= 1) or a dimension d (>= 2), fixed in [model] or swept."""
    return require_int(value, name, minimum=1 if name == "n" else 2)


def _hashable(v):
    return json.dumps(v, sort_keys=True) if isinstance(v, (list, dict)) else v


def seed_values(value) -> list[int]:
    if isinstance(value, (list, tuple)):
        seeds = [require_int(s, "seeds", minimum=0) for s in value]
        if not seeds or len(set(seeds)) != len(seeds):
            raise InputError(f"seeds must be distinct non-negative integers, got {list(value)}")
        return seeds
    return list(range(require_int(value, "seeds", minimum=1)))


@dataclass(frozen=True)
class SweepSpec:
    """A parsed sweep: fixed model keys, the axes (ordered; ``seed`` last), run settings and observables.

    Parameters
    ----------
    model : dict
        Fixed keys: fields of :class:`Model` (``model`` for its kind) and ``n``, ``d``.
    axes : dict
        Axis name -> values, in the order of the store's dimensions; ``seed`` (from ``seeds``) is always last.
    run : dict
        ``t_end`` (required), ``method``, ``dt``, ``backend``, ``frames``, ``root_seed``, ``imports``,
        ``rtol``, ``atol`` (defaults in :data:`RUN_DEFAULTS`).
    observables : dict
        Observable name -> its parameters (see :mod:`numerics.sweeps.observables`).
    """

    model: dict
    axes: dict
    run: dict
    observables: dict

    # -- construction -------------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, tables: Mapping, imports: bool = True) -> "SweepSpec":
        """Validate the four tables of a specification (as read from TOML).

        With ``imports=False`` (a specification read from a store, which may come from someone else) the
        modules named in ``[run] imports`` are not imported and observables that only they register are not
        checked: reading a store runs none of its code (:func:`numerics.sweeps.store.open_store`)."""
        if not isinstance(tables, Mapping):
            raise InputError("a sweep specification is a table of tables")
        unknown = set(tables) - set(TABLES)
        if unknown:
            raise InputError(f"unknown table(s) {sorted(unknown)}; a sweep has [{'], ['.join(TABLES)}]")
        model = dict(tables.get("model") or {})
        for key in model:
            _check_key(key, "model")
            if key in SYSTEM_KEYS:
                model[key] = _system_value(key, model[key])
        if "noise" in model:
            _noise_value(model["noise"], "[model] noise")
        axes: dict[str, list] = {}
        seeds = [0]
        for key, value in dict(tables.get("sweep") or {}).items():
            if key in ("seeds", SEED_AXIS):
                seeds = seed_values(value)
                continue
            axes[_check_key(key, "sweep")] = axis_values(key, value)
            if key in model:
                raise InputError(f"{key!r} is both fixed in [model] and swept in [sweep]; keep one")
        axes[SEED_AXIS] = seeds
        scaled = model.get("beta_scaling") == "log"  # beta = gamma log n (numerics.core.beta_scaling)
        missing = {KIND_ALIAS, "n", "d", "gamma" if scaled else "beta"} - set(model) - set(axes)
        if missing:
            raise InputError(f"the sweep does not give {', '.join(sorted(missing))} (in [model] or [sweep])")
        run = dict(RUN_DEFAULTS)
        raw_run = dict(tables.get("run") or {})
        unknown = set(raw_run) - set(RUN_DEFAULTS)
        if unknown:
            raise InputError(f"unknown key(s) {sorted(unknown)} in [run]; valid keys: {', '.join(RUN_DEFAULTS)}")
        run.update(raw_run)
        run = _check_run(run)
        observables = {str(k): dict(v or {}) if isinstance(v, Mapping) else _bad_obs(k, v)
                       for k, v in dict(tables.get("observables") or {}).items()}
        if not observables:
            raise InputError("[observables] is empty: name at least one (attnflow sweep observables lists them)")
        spec = cls(model=model, axes=axes, run=run, observables=observables)
        from numerics.sweeps.observables import check_observables, registered

        if imports:
            spec.import_user_modules()
            check_observables(spec.observables)
        else:
            check_observables({k: v for k, v in spec.observables.items() if k in registered()})
        spec.check_first_cell()
        if spec.run["stop_when_decided"] and (imports or set(spec.observables) <= set(registered())):
            spec.check_event()
        spec.check_resources()
        return spec

    @classmethod
    def from_toml(cls, text: str) -> "SweepSpec":
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10: the sweeps extra installs tomli
            try:
                import tomli as tomllib
            except ModuleNotFoundError:
                raise InputError("reading TOML on Python 3.10 needs tomli: pip install 'attnflow[sweeps]'") from None
        try:
            tables = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"the sweep specification is not valid TOML: {exc}") from None
        return cls.from_dict(tables)

    @classmethod
    def from_file(cls, path) -> "SweepSpec":
        from numerics.common.readers import read_text

        return cls.from_toml(read_text(path, "sweep specification"))

    def to_dict(self) -> dict:
        """The tables (JSON-ready; ``seed`` written back as ``seeds``): stored in the Zarr attributes."""
        sweep = {k: v for k, v in self.axes.items() if k != SEED_AXIS}
        sweep["seeds"] = list(self.axes[SEED_AXIS])
        return {"model": self.model, "sweep": sweep, "run": self.run, "observables": self.observables}

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text, keys in their order (the order of the axes is the store's)."""
        return json.dumps(self.to_dict())

    # -- the cells ----------------------------------------------------------------------------------------
    @property
    def dims(self) -> tuple[str, ...]:
        return tuple(self.axes)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(v) for v in self.axes.values())

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def cells(self):
        """Every cell index (a tuple, one entry per axis), in C order."""
        return itertools.product(*(range(k) for k in self.shape))

    def cell_parameters(self, index) -> dict:
        """The parameters of one cell: the fixed keys overridden by the cell's axis values (seed included)."""
        params = dict(self.model)
        for (name, values), i in zip(self.axes.items(), index):
            params[name] = values[i]
        return params

    def build_model(self, params: Mapping) -> Model:
        """``Model(...)`` of one cell (``model`` -> ``kind``; a kernel string is parsed by the whitelist parser)."""
        kwargs = {("kind" if k == KIND_ALIAS else k): v for k, v in params.items()
                  if k not in SYSTEM_KEYS and k != SEED_AXIS}
        if isinstance(kwargs.get("kernel"), str):
            from theory.expression_parser import parse_kernel

            kwargs["kernel"] = parse_kernel(kwargs["kernel"], {})
        return Model(**kwargs)

    def event(self):
        """The :class:`numerics.core.events.Event` that stops each run (``[run] stop_when_decided``), else None."""
        if not self.run["stop_when_decided"]:
            return None
        from numerics.core.events import Event
        from numerics.sweeps.observables import decided_event

        name, tol = decided_event(self.observables)
        return Event(name, tol)

    def check_event(self) -> None:
        """Refuse, before any run, ``stop_when_decided`` where it cannot apply: observables without one common
        event, a method without fixed or per-member steps, a cell model the event's lemma does not cover (the
        first cell with each value of every axis but the seeds)."""
        from numerics.core.integrators import ADAPTIVE_METHODS as adaptive

        event = self.event()
        if self.run["method"] in adaptive and self.run["method"] != "dp5":
            raise InputError(f"stop_when_decided runs fixed steps (layer, rk4) or dp5 with per-member steps, not "
                             f"method {self.run['method']}")
        first = next(iter(self.cells()))
        for k, (axis, values) in enumerate(self.axes.items()):
            if axis == SEED_AXIS:
                continue
            for i in range(len(values)):
                index = first[:k] + (i,) + first[k + 1:]
                event.check_model(self.build_model(self.cell_parameters(index)))

    def check_first_cell(self) -> None:
        """Build the first cell's model: catches a bad fixed key (wrong type, bad matrix) before any run."""
        self.build_model(self.cell_parameters(next(iter(self.cells()))))

    def check_resources(self) -> None:
        """Refuse, before any run, a sweep whose total work or largest stored array exceeds the limits
        (:mod:`numerics.common.limits`): every cell is costed with the largest n and d of the sweep, each
        field evaluation O(n^2 (2d + 8)) (fixed-step methods: steps x stages evaluations; the adaptive methods:
        the frames' energies only, their step counts are not known in advance); in memory, a run holds its frames
        (frames x n x d doubles) while its observables are computed (the store on disk grows run by run)."""
        n, d, cells = self._largest("n"), self._largest("d"), self.size
        frames = self.run["frames"]
        what = f"the sweep ({cells} runs, n <= {n}, d <= {d})"
        check_array((frames, n, d), what + f": {frames} frames of one run", copies=2)
        if self.run["block"]:
            check_array((self.run["block"], frames, n, d), what + f": blocks of {self.run['block']} runs", copies=2)
        check_work(cells * self.cell_flops(), what)
        if self.run["method"] in ADAPTIVE_METHODS:
            check_work(cells * self.adaptive_flops(), what + f": an adaptive run to t_end = {self.run['t_end']:g}")

    def adaptive_flops(self) -> float:
        """Estimated operations of one adaptive cell: ``t_end / limit`` steps (the step of a run near its
        clusters is bound by the stability of the explicit method, :data:`ADAPTIVE_STABILITY`), each costing
        its evaluations of an O(n^2 (2d + 8)) field plus a Python call (:data:`numerics.common.limits.
        CALL_OVERHEAD`). An estimate, not a bound: it refuses before running what cannot end (t_end = 1e12),
        and the run itself stops at the work limit (:func:`numerics.common.limits.evaluation_budget`)."""
        from numerics.common.limits import CALL_OVERHEAD

        limit, stages = ADAPTIVE_STABILITY.get(self.run["method"], ADAPTIVE_DEFAULT_STABILITY)
        n, d = self._largest("n"), self._largest("d")
        steps = max(1.0, self.run["t_end"] / limit)
        return steps * stages * (float(n) * n * (2 * d + 8) + CALL_OVERHEAD)

    def _largest(self, key) -> int:
        vals = self.axes.get(key, [self.model.get(key)])
        return max(int(v) for v in vals)

    def cell_flops(self) -> float:
        """Operations of one cell at the largest n and d: field evaluations O(n^2 (2d + 8)) each (fixed steps:
        steps x stages; adaptive: not known in advance, not counted) and an O(n^2) energy per frame."""
        n, d = self._largest("n"), self._largest("d")
        per_eval = float(n) * n * (2 * d + 8)
        evals = 0.0
        if self.run["method"] not in ADAPTIVE_METHODS:
            steps, _ = self.fixed_steps()
            evals = steps * (1 if self.run["method"] == "layer" else 4)
        return evals * per_eval + self.run["frames"] * float(n) * n * 4

    def block(self) -> int:
        """Cells per task (one ensemble): ``[run] block`` if given, else chosen from the work estimate: about
        :data:`TARGET_BLOCK_FLOPS` operations a task, at most :data:`MAX_BLOCK_CELLS` cells, frames of at most
        :data:`BLOCK_MEMORY` bytes, and at least 4 tasks when the sweep has 4 cells or more."""
        if self.run["block"]:
            return int(self.run["block"])
        per_cell = max(self.cell_flops(), 1.0)
        memory = 8.0 * self.run["frames"] * self._largest("n") * self._largest("d") * 3
        block = min(MAX_BLOCK_CELLS, int(TARGET_BLOCK_FLOPS // per_cell), int(BLOCK_MEMORY // memory),
                    -(-self.size // 4))
        return max(1, block)

    def frame_times(self) -> np.ndarray:
        """The saved times of every run (they do not depend on the cell): ``frames`` of them up to ``t_end``.

        Fixed-step methods take N = ceil(t_end/dt) equal steps and keep every ``save_every``-th state and the
        last (:func:`numerics.core.integrators.integrate_fixed`); the adaptive methods (``adaptive``, ``dp5``,
        ``dop853``) keep ``frames`` equally spaced times.
        """
        t_end, frames = self.run["t_end"], self.run["frames"]
        if self.run["method"] in ADAPTIVE_METHODS:
            return np.linspace(0.0, t_end, frames)
        steps, h = self.fixed_steps()
        every = self.save_every()
        ks = [k for k in range(0, steps + 1) if k % every == 0 or k == steps]
        return np.array([k * h for k in ks])

    def fixed_steps(self) -> tuple[int, float]:
        steps = max(1, math.ceil(self.run["t_end"] / self.run["dt"] - 1e-12))
        return steps, self.run["t_end"] / steps

    def save_every(self) -> int:
        steps, _ = self.fixed_steps()
        return max(1, steps // max(1, self.run["frames"] - 1))

    def seed_sequence(self, seed: int) -> np.random.SeedSequence:
        """The initial-state seed of a cell with seed index ``seed``: SeedSequence(root_seed, spawn_key=(seed,))."""
        return np.random.SeedSequence(self.run["root_seed"], spawn_key=(int(seed),))

    def import_user_modules(self) -> None:
        """Import the modules named in ``[run] imports`` (they register user observables)."""
        import importlib

        for name in self.run["imports"]:
            try:
                importlib.import_module(name)
            except ImportError as exc:
                raise InputError(f"[run] imports: cannot import {name!r}: {exc}") from None


def _bad_obs(name, value):
    raise InputError(f"observable {name!r} needs a table of parameters (e.g. {name} = {{}}), got {value!r}")


def _check_run(run: dict) -> dict:
    if run["t_end"] is None:
        raise InputError("[run] needs t_end")
    run["t_end"] = require_real(run["t_end"], "t_end", minimum=0.0, strict_minimum=True)
    run["method"] = require_choice(run["method"], "method", METHODS)
    run["backend"] = require_choice(run["backend"], "backend", BACKENDS)
    run["dt"] = require_real(run["dt"], "dt", minimum=0.0, strict_minimum=True)
    run["frames"] = require_int(run["frames"], "frames", minimum=2)
    run["root_seed"] = require_int(run["root_seed"], "root_seed", minimum=0)
    run["rtol"] = require_real(run["rtol"], "rtol", minimum=0.0, strict_minimum=True)
    if run["rtol"] < MIN_RTOL:
        raise InputError(f"rtol must be >= {MIN_RTOL:.3g} (100 machine epsilons: float64 steps cannot meet a "
                         f"smaller relative tolerance), got {run['rtol']:g}")
    run["atol"] = require_real(run["atol"], "atol", minimum=0.0, strict_minimum=True)
    run["block"] = require_int(run["block"], "block", minimum=0)  # 0: chosen from the work estimate
    if not isinstance(run["stop_when_decided"], bool):
        raise InputError(f"[run] stop_when_decided must be true or false, got {run['stop_when_decided']!r}")
    if not isinstance(run["imports"], list) or not all(isinstance(m, str) for m in run["imports"]):
        raise InputError(f"[run] imports must be a list of module names, got {run['imports']!r}")
    return run


def spec_from(source) -> SweepSpec:
    """A :class:`SweepSpec` from a spec, a dict of tables, TOML text or a path."""
    if isinstance(source, SweepSpec):
        return source
    if isinstance(source, Mapping):
        return SweepSpec.from_dict(source)
    text = str(source)
    if "\n" in text or "[" in text:
        return SweepSpec.from_toml(text)
    return SweepSpec.from_file(text)


__all__ = ["FORMAT", "LEGACY_FORMAT", "SweepSpec", "axis_values", "model_fields", "seed_values", "spec_from", "valid_keys"]
