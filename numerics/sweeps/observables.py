r"""Observables of one run: registered functions with documented outputs, recorded per cell of a sweep.

An observable is a function ``f(run, **params) -> {output: value}`` registered with :func:`observable`, which
declares its outputs: each is a scalar per run (a variable over the sweep's axes) or a curve over the saved
times (a variable over the axes and ``time``). Every output is stored as float64 (a count, a 0/1 indicator, a
time; NaN where it does not exist, e.g. a merge that never happened).

Users register their own in a module named in ``[run] imports`` (the workers import it too) with the
``observable`` decorator and ``Output`` descriptions; ``docs/guide/sweeps.md`` shows a complete example.

Clusters are the components of the eps-graph of :func:`numerics.clusters.detection.find_clusters` (geodesic
distance :math:`\le` ``eps``; GLPR arXiv 2312.10794, GKPR arXiv 2410.06833).
"""
from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from numerics.clusters.detection import DEFAULT_EPS, cluster_count, cluster_diameter, find_clusters, geodesic_distance
from numerics.common.errors import InputError, require_real


@dataclass(frozen=True)
class Output:
    """One recorded output: its variable name, what it means, and whether it is a curve over ``time``."""

    name: str
    doc: str
    over_time: bool = False


@dataclass(frozen=True)
class Observable:
    """A registered observable; ``event(params) -> (name, tol)`` (or None) names the event of
    :mod:`numerics.core.events` that decides all its outputs (used when ``[run] stop_when_decided = true``)."""

    name: str
    function: Callable
    outputs: tuple[Output, ...]
    doc: str
    event: Callable | None = None

    def parameters(self) -> dict:
        """Parameter name -> default, read from the function's signature (after ``run``)."""
        sig = inspect.signature(self.function)
        return {p.name: p.default for p in list(sig.parameters.values())[1:]}


@dataclass(frozen=True)
class RunResult:
    """What an observable sees of one run: saved times (m,), states (m, n, d), energies (m,), the model and
    the cell's parameters (axis values, seed)."""

    times: np.ndarray
    X: np.ndarray
    energy: np.ndarray
    model: object
    params: dict


_REGISTRY: dict[str, Observable] = {}


def observable(name: str, outputs, doc: str | None = None, event: Callable | None = None):
    """Decorator registering ``f(run, **params)`` under ``name`` with its :class:`Output` list (``event``: see
    :class:`Observable`; declare one only where the event's lemma makes every output final once it fires)."""
    def register(f):
        if name in _REGISTRY and _REGISTRY[name].function is not f:
            raise ValueError(f"observable {name!r} is already registered")
        first_line = ((f.__doc__ or "").strip().splitlines() or [""])[0]
        _REGISTRY[name] = Observable(name, f, tuple(outputs), doc or first_line, event)
        return f
    return register


def registered() -> dict[str, Observable]:
    return dict(_REGISTRY)


def get(name: str) -> Observable:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise InputError(f"unknown observable {name!r}; registered: {', '.join(sorted(_REGISTRY))}") from None


def check_observables(selection: Mapping[str, dict]) -> list[Output]:
    """Validate ``{name: params}`` (known names, known parameters, no output recorded twice); the outputs."""
    outputs, seen = [], {}
    for name, params in selection.items():
        obs = get(name)
        allowed = obs.parameters()
        unknown = set(params) - set(allowed)
        if unknown:
            raise InputError(f"observable {name}: unknown parameter(s) {sorted(unknown)}; "
                             f"it takes {', '.join(allowed) or 'no parameters'}")
        for key, value in params.items():  # a number where the default is one: finite (a NaN eps runs to garbage)
            default = allowed[key]
            if isinstance(default, (int, float)) and not isinstance(default, bool):
                require_real(value, f"observable {name}: {key}")
        for out in obs.outputs:
            if out.name in seen:
                raise InputError(f"output {out.name!r} is recorded by both {seen[out.name]} and {name}")
            seen[out.name] = name
            outputs.append(out)
    return outputs


#: the store's variable of a sweep run with ``stop_when_decided``
DECISION_TIME = Output("decision_time", "time at which the run's event decided its observables (NaN: integrated to "
                                        "t_end)")


def decided_event(selection: Mapping[str, dict]) -> tuple[str, float]:
    """``(name, tol)``: the one event that decides every selected observable (``[run] stop_when_decided``).

    Observables that declare the same event with different tolerances share the smallest: ``one-cluster`` at
    eps decides one-cluster at every larger eps. An observable without an event, or events of different names,
    are refused with one line."""
    events: dict[str, float] = {}
    for name, params in selection.items():
        obs = get(name)
        if obs.event is None:
            raise InputError(f"stop_when_decided: observable {name} declares no event that decides it (its value "
                             "needs the whole run); remove it or set stop_when_decided = false")
        event, tol = obs.event(params)
        events[event] = min(float(tol), events.get(event, math.inf))
    if len(events) != 1:
        raise InputError(f"stop_when_decided: the observables need different events {sorted(events)}; a run stops "
                         "on one")
    return next(iter(events.items()))


def evaluate(selection: Mapping[str, dict], run: RunResult) -> dict:
    """Every selected observable on one run: ``{output name: float or (m,) float array}``."""
    values = {}
    m = run.times.shape[0]
    for name, params in selection.items():
        obs = get(name)
        got = obs.function(run, **params)
        for out in obs.outputs:
            if out.name not in got:
                raise ValueError(f"observable {name} did not return its output {out.name!r}")
            v = np.asarray(got[out.name], dtype=float)
            if v.shape != ((m,) if out.over_time else ()):
                raise ValueError(f"observable {name}: output {out.name} has shape {v.shape}, expected "
                                 f"{(m,) if out.over_time else ()}")
            values[out.name] = v
    return values


# -- built-in observables ---------------------------------------------------------------------------------
def _counts(X, eps: float, min_fraction: float) -> int:
    c = find_clusters(X, eps, normalize=True)
    return int(np.sum(c.sizes >= max(1.0, min_fraction * X.shape[0])))


def _eps(eps, min_fraction):
    return (require_real(eps, "eps", minimum=0.0, strict_minimum=True),
            require_real(min_fraction, "min_fraction", minimum=0.0, maximum=1.0))


def _one_cluster_event(params: dict) -> tuple[str, float]:
    """The event that decides the eps-cluster observables: ``one-cluster`` with their eps. Once every particle lies
    within eps/2 of the particles' mean direction, they form one eps-cluster at every later time (the cap lemma,
    proofs_notes/core-events-one-cluster.md): the count is 1 from then on, whatever min_fraction, and every
    earlier frame is the run's own."""
    return "one-cluster", params.get("eps", DEFAULT_EPS)


@observable("clusters", [Output("clusters", "number of eps-clusters at t_end (clusters with fewer than "
                                            "min_fraction * n particles are not counted)")],
            event=_one_cluster_event)
def clusters(run: RunResult, eps: float = DEFAULT_EPS, min_fraction: float = 0.0) -> dict:
    """Final cluster count: components of the graph joining particles at geodesic distance <= eps."""
    eps, min_fraction = _eps(eps, min_fraction)
    return {"clusters": _counts(run.X[-1], eps, min_fraction)}


@observable("cluster_counts", [Output("cluster_counts", "number of eps-clusters at each saved time", True)],
            event=_one_cluster_event)
def cluster_counts(run: RunResult, eps: float = DEFAULT_EPS, min_fraction: float = 0.0) -> dict:
    """Cluster count at every saved time."""
    eps, min_fraction = _eps(eps, min_fraction)
    return {"cluster_counts": [_counts(X, eps, min_fraction) for X in run.X]}


@observable("one_cluster", [Output("one_cluster", "1 if all particles form one eps-cluster at t_end, else 0"),
                            Output("time_to_one_cluster", "first saved time with one eps-cluster (NaN: never)")],
            event=_one_cluster_event)
def one_cluster(run: RunResult, eps: float = DEFAULT_EPS) -> dict:
    """Whether (and when first, on the saved times) the particles form a single eps-cluster."""
    eps, _ = _eps(eps, 0.0)
    first, at = np.nan, None
    for k, (t, X) in enumerate(zip(run.times, run.X)):
        if cluster_count(X, eps, normalize=True) == 1:
            first, at = float(t), k
            break
    # the last frame's verdict is known already when the first one-cluster frame is the last frame
    one = at == len(run.X) - 1 or cluster_count(run.X[-1], eps, normalize=True) == 1
    return {"one_cluster": float(one), "time_to_one_cluster": first}


@observable("first_merge", [Output("first_merge_time", "first saved time at which the eps-cluster count is "
                                                      "below its value at t = 0 (NaN: no merge)")],
            event=_one_cluster_event)
def first_merge(run: RunResult, eps: float = DEFAULT_EPS) -> dict:
    """The first saved time at which two eps-clusters of the initial state have merged."""
    eps, _ = _eps(eps, 0.0)
    start = cluster_count(run.X[0], eps, normalize=True)
    for t, X in zip(run.times[1:], run.X[1:]):
        if cluster_count(X, eps, normalize=True) < start:
            return {"first_merge_time": float(t)}
    return {"first_merge_time": np.nan}


def tight_cluster_count(X, eps: float, min_fraction: float, max_diameter: float, coverage: float = 0.0) -> int:
    """Clusters holding at least ``min_fraction`` of the particles with geodesic diameter <= ``max_diameter``;
    0 when together they hold less than ``coverage`` of the particles (chance groups in a near-uniform state).

    With r the largest geodesic distance of a member from the cluster's normalised mean, r <= diameter <= 2r
    (triangle inequality), so the exact O(m^2) diameter is computed only when r <= max_diameter < 2r.
    """
    c = find_clusters(X, eps, normalize=True)
    count = covered = 0
    for k in np.flatnonzero(c.sizes >= max(1.0, min_fraction * X.shape[0])):
        members = X[c.members(k)]
        centre = c.centres[k]
        if not np.all(np.isfinite(centre)):
            continue  # zero mean: the members surround the origin, not a tight cluster
        r = float(np.max(geodesic_distance(members, centre)))
        if r > max_diameter:
            continue
        if 2 * r <= max_diameter or cluster_diameter(members) <= max_diameter:
            count += 1
            covered += members.shape[0]
    return count if covered >= coverage * X.shape[0] else 0


@observable("metastable_clusters",
            [Output("metastable_clusters", "the first non-zero count of tight clusters that holds for at least "
                                           "`hold` time units (else the longest-held one; 0 if none forms)"),
             Output("tight_clusters", "count of tight clusters at each saved time", True)])
def metastable_clusters(run: RunResult, eps: float = 0.05, min_fraction: float = 0.02,
                        max_diameter: float = 0.3, coverage: float = 0.5, hold: float = 5.0) -> dict:
    """The metastable cluster count: the first count of tight clusters that lasts (BPA arXiv 2410.23228).

    A *tight cluster* is an eps-cluster holding at least ``min_fraction`` of the particles with geodesic
    diameter at most ``max_diameter``; a frame counts 0 unless its tight clusters hold at least ``coverage`` of the
    particles (so the near-uniform start, with at most a few chance groups, counts 0). From near
    the uniform state the dynamics first forms about l_max(beta) clusters on S^1 and lingers there; the count
    recorded is the first non-zero count held for ``hold`` time units on the saved times (the longest-held
    non-zero count if none is held that long).
    """
    eps, min_fraction = _eps(eps, min_fraction)
    max_diameter = require_real(max_diameter, "max_diameter", minimum=0.0, strict_minimum=True)
    hold = require_real(hold, "hold", minimum=0.0)
    coverage = require_real(coverage, "coverage", minimum=0.0, maximum=1.0)
    counts = np.array([tight_cluster_count(X, eps, min_fraction, max_diameter, coverage) for X in run.X])
    return {"metastable_clusters": first_held_value(run.times, counts, hold), "tight_clusters": counts}


def _runs(times, counts):
    """Maximal runs of equal values: (value, start time, end time) with end = the next run's start."""
    times = np.asarray(times, float)
    counts = np.asarray(counts)
    out, start = [], 0
    for k in range(1, len(counts) + 1):
        if k == len(counts) or counts[k] != counts[start]:
            end = times[k] if k < len(counts) else times[-1]
            out.append((int(counts[start]), float(times[start]), float(end)))
            start = k
    return out


def first_held_value(times, counts, hold: float) -> float:
    """The first non-zero value of the step function ``counts`` held for at least ``hold``; else
    :func:`persistent_value`."""
    for value, start, end in _runs(times, counts):
        if value > 0 and end - start >= hold:
            return float(value)
    return persistent_value(times, counts)


def persistent_value(times, counts) -> float:
    """The non-zero value of ``counts`` (a step function, value k on [t_k, t_{k+1})) held longest; 0 if none."""
    durations = {}
    for value, start, end in _runs(times, counts):
        if value > 0:
            durations[value] = durations.get(value, 0.0) + end - start
    if not durations or max(durations.values()) == 0.0:
        last = int(np.asarray(counts)[-1])
        return float(last) if last > 0 else 0.0
    return float(max(sorted(durations), key=lambda c: durations[c]))


@observable("energy", [Output("energy", "interaction energy at t_end (normalisation of the trajectory meta)"),
                       Output("energy_t", "interaction energy at each saved time", True)])
def energy(run: RunResult) -> dict:
    """The interaction energy E_beta (GLPR normalisation minus 1/(2 beta); see the trajectory's meta)."""
    return {"energy": float(run.energy[-1]), "energy_t": run.energy}


@observable("order_parameter", [Output("order_parameter", "|(1/n) sum_i x_i| at t_end"),
                                Output("order_parameter_t", "|(1/n) sum_i x_i| at each saved time", True)])
def order_parameter(run: RunResult) -> dict:
    """The order parameter |mean of the particles| (1 for one point cluster, ~ n^{-1/2} for iid uniform)."""
    r = np.linalg.norm(run.X.mean(axis=1), axis=-1)
    return {"order_parameter": float(r[-1]), "order_parameter_t": r}


@observable("antipodal", [Output("antipodal", "1 if some pair of particles is within eps of antipodal (geodesic "
                                              "distance >= pi - eps) at t_end, else 0"),
                          Output("max_angle", "largest pairwise geodesic distance at t_end")])
def antipodal(run: RunResult, eps: float = math.pi / 4) -> dict:
    """Whether an antipodal pair has formed (the two-token transition of the common noise, docs/guide/common-noise.md).

    The default eps = pi/4 counts a pair further apart than 3 pi/4; with two tokens under the values common noise
    the angle ends near 0 or near pi, so any eps below pi/2 gives the same fraction once the runs are decided."""
    eps = require_real(eps, "eps", minimum=0.0, maximum=math.pi, strict_minimum=True)
    X = run.X[-1] / np.linalg.norm(run.X[-1], axis=-1, keepdims=True)
    largest = float(geodesic_distance(X[:, None, :], X[None, :, :]).max())
    return {"antipodal": float(largest >= math.pi - eps), "max_angle": largest}

