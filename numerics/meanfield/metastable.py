r"""The metastable cluster count from uniform random starts on :math:`\mathbb{S}^1`, against the mean-field
prediction :math:`l_{\max}(\beta)`.

BPA (arXiv 2410.23228) predict that, starting near the uniform measure, the fastest-growing degree
:math:`l_{\max}(\beta)` (:func:`theory.meanfield.dominant_degree`) fixes the structure of the metastable state: on
the circle, :math:`l_{\max}` roughly equally spaced clusters. Here :math:`n` iid uniform angles are evolved with
the Fourier fast path (:mod:`numerics.circle.fourier`, :math:`O(n K)` per step, RK4 on the angles) through the
linear phase and the collapse of the clusters, then clusters are counted by gaps in the sorted angles
(:func:`count_clusters_by_gaps`: a gap wider than ``min_gap`` separates clusters; groups holding less than
``min_fraction`` of the particles are stragglers, not clusters). The dominant mode of each seed is
:math:`\operatorname{argmax}_k \lvert r_k\rvert` at the end of the linear phase,
:math:`r_k = \frac{1}{n} \sum_j e^{ik \theta_j}`.

Time budget per seed: the linear phase lasts about :math:`\log(\sqrt{n}/2)/\lambda_{\max}`, then clusters
contract at rate :math:`\sim 1` (``sa``; :math:`e^{\lvert\beta\rvert - c \beta}` for ``usa``); we observe at the
end of the linear phase plus ``collapse_time`` contraction units, long before the first merger
(:math:`\log T \sim \beta`, GKPR arXiv 2410.06833).

Verified by: meanfield.metastable-count.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from numerics.common.limits import check_work
from numerics.common.errors import InputError, require_choice, require_finite_array, require_int, require_real
from numerics.core.field import MODELS, TIME_UNITS
from numerics.meanfield.growth import circle_order_parameters, particle_time_step, predicted_rates, simulate_circle_angles

#: the most seeds of one experiment (each is a full run)
MAX_SEEDS = 1000


@dataclass(frozen=True)
class ClusterCount:
    """Clusters of angles found by gaps: count, sizes (particles) and circular mean angles."""

    count: int
    sizes: list[int]
    centers: list[float]
    stragglers: int


def count_clusters_by_gaps(theta, min_gap: float = 0.05, min_fraction: float = 0.01) -> ClusterCount:
    """Count clusters of angles on the circle: split the sorted angles at circular gaps > ``min_gap`` (radians).

    Groups with fewer than ``min_fraction * n`` particles are counted as stragglers. If no gap exceeds
    ``min_gap`` the angles cover the circle without separation and the count is 0 (no clusters).
    """
    theta = require_finite_array(theta, "theta", ndim=1)
    if theta.size < 1:
        raise InputError("theta must hold at least one angle")
    # a gap larger than pi leaves at most one cluster: the count is meaningless there
    min_gap = require_real(min_gap, "min_gap", minimum=0.0, strict_minimum=True, maximum=math.pi)
    min_fraction = require_real(min_fraction, "min_fraction", minimum=0.0, maximum=1.0)
    a = np.sort(np.mod(theta, 2 * np.pi))
    n = a.size
    gaps = np.diff(np.concatenate([a, [a[0] + 2 * np.pi]]))   # gaps[i]: from a[i] to the next angle
    cuts = np.nonzero(gaps > min_gap)[0]
    if cuts.size == 0:
        return ClusterCount(0, [], [], 0)
    # groups run from cuts[j] + 1 to cuts[j + 1] (circularly)
    starts = (cuts + 1) % n
    ends = np.roll(cuts, -1)
    sizes, centers = [], []
    stragglers = 0
    for s, e in zip(starts, ends):
        idx = np.arange(s, e + 1) if e >= s else np.concatenate([np.arange(s, n), np.arange(0, e + 1)])
        if idx.size < max(1, min_fraction * n):
            stragglers += idx.size
            continue
        sizes.append(int(idx.size))
        centers.append(float(np.mod(np.angle(np.exp(1j * a[idx]).mean()), 2 * np.pi)))
    return ClusterCount(len(sizes), sizes, centers, stragglers)


@dataclass(frozen=True)
class MetastableRun:
    """One seed: observed cluster count, dominant mode of the linear phase, and the count over time."""

    seed: int
    observed: int
    dominant_mode: int
    t_linear_end: float
    t_observed: float
    counts_over_time: list[tuple[float, int]]
    cluster_sizes: list[int]


@dataclass(frozen=True)
class MetastableResult:
    """Prediction l_max(beta) (with runner-up and ratio) and the runs of every seed."""

    beta: float
    model: str
    n: int
    predicted: int
    runner_up: int
    ratio: float
    runs: list[MetastableRun]
    meta: dict = field(default_factory=dict)

    @property
    def observed(self) -> list[int]:
        return [r.observed for r in self.runs]

    @property
    def dominant_modes(self) -> list[int]:
        return [r.dominant_mode for r in self.runs]

    @property
    def fraction_matching(self) -> float:
        return sum(o == self.predicted for o in self.observed) / len(self.runs)

    def to_dict(self) -> dict:
        return {"beta": self.beta, "model": self.model, "n": self.n, "d": 2, "predicted": self.predicted,
                "runner_up": self.runner_up, "ratio": self.ratio, "observed": self.observed,
                "dominant_modes": self.dominant_modes, "fraction_matching": self.fraction_matching,
                "seeds": [r.seed for r in self.runs],
                "t_linear_end": [r.t_linear_end for r in self.runs],
                "t_observed": [r.t_observed for r in self.runs],
                "counts_over_time": [r.counts_over_time for r in self.runs],
                "cluster_sizes": [r.cluster_sizes for r in self.runs], **self.meta}


def metastable_run(beta: float, model: str, n: int, seed: int, *, collapse_time: float = 10.0,
                   linear_threshold: float = 0.3, min_gap: float = 0.05, min_fraction: float = 0.01,
                   tol: float = 1e-6, time_unit: str = "natural", frames: int = 12, progress=None,
                   theta0=None) -> MetastableRun:
    """Evolve n iid uniform angles (seed) and count clusters after the linear phase (see module docstring).

    The dominant mode is argmax_k |r_k| (k <= 4 sqrt(|beta|) + 12) at the first frame where max_k |r_k|
    exceeds ``linear_threshold``. ``tol`` is the Fourier truncation tolerance (1e-6: the field is exact to
    ~1e-6 relative, far below what the cluster count can feel). ``theta0`` replaces the random start (n
    angles; the claim ``meanfield.dominant-mode`` plants modes of known amplitude there).
    """
    kmax = 4 * int(math.sqrt(abs(beta))) + 12
    rates = predicted_rates(model, 2, beta, range(1, kmax + 1), time_unit)
    lam = max(rates)
    if lam <= 0:
        raise InputError(f"no growing mode at beta={beta:g}: the uniform state is linearly stable")
    collapse_rate = 1.0 if model == "sa" else math.exp(abs(beta) - (beta if time_unit == "rescaled" else 0.0))
    t_lin = math.log(max(math.sqrt(n) / 2, math.e)) / lam
    t_obs = 1.3 * t_lin + collapse_time / collapse_rate
    dt = 2 * particle_time_step(model, beta, time_unit, lam)   # RK4 at h * rate <= 0.2: ample for counting
    saves = max(frames, 2) * 4 + 1
    if theta0 is None:
        theta0 = np.random.default_rng(seed).uniform(0, 2 * np.pi, size=n)
    else:
        theta0 = require_finite_array(theta0, "theta0", ndim=1)
        if theta0.size != n:
            raise InputError(f"theta0 must hold n = {n} angles, got {theta0.size}")

    def observe(th):
        amps = circle_order_parameters(th, kmax)
        return np.concatenate([amps, [count_clusters_by_gaps(th, min_gap, min_fraction).count]])

    times, obs, final = simulate_circle_angles(theta0, beta, model, t_obs, dt, saves, observe, tol=tol,
                                               time_unit=time_unit, progress=progress)
    amps, counts = obs[:, :kmax], obs[:, kmax].astype(int)
    over = np.nonzero(amps.max(axis=1) > linear_threshold)[0]
    i_lin = int(over[0]) if over.size else len(times) - 1
    dominant = int(np.argmax(amps[i_lin])) + 1
    final_count = count_clusters_by_gaps(final, min_gap, min_fraction)
    history = [(float(t), int(c)) for t, c in zip(times[::4], counts[::4])]
    return MetastableRun(int(seed), final_count.count, dominant, float(times[i_lin]), float(t_obs), history,
                         final_count.sizes)


def metastable_experiment(beta: float, n: int, *, model: str = "sa", seeds=5, collapse_time: float = 10.0,
                          min_gap: float = 0.05, min_fraction: float = 0.01, tol: float = 1e-6,
                          time_unit: str = "natural", progress=None) -> MetastableResult:
    r"""The number of metastable clusters from uniform random starts on :math:`\mathbb{S}^1` over several seeds vs
    :math:`l_{\max}(\beta)`.

    Parameters
    ----------
    beta : float
        Inverse temperature (> 0).
    n : int
        Particles (>= 100).
    model : {"sa", "usa"}
    seeds : int or sequence of int
        Number of seeds (0..S-1) or explicit seeds.
    collapse_time, min_gap, min_fraction, tol, time_unit
        See :func:`metastable_run` and :func:`count_clusters_by_gaps`.
    progress : callable, optional
        ``progress(seed)`` returns the progress callback ``(t, t_end) -> None`` of that seed's run (or None).

    Returns
    -------
    MetastableResult

    Notes
    -----
    Source: BPA arXiv 2410.23228 (fastest mode fixes the metastable structure). Conjecture-level.
    Verified by: meanfield.metastable-count.
    """
    from theory.meanfield import dominant_degree

    beta = require_real(beta, "beta", minimum=0.0, strict_minimum=True)
    model = require_choice(model, "model", MODELS)
    time_unit = require_choice(time_unit, "time_unit", TIME_UNITS)
    n = require_int(n, "n", minimum=100)
    # the count is bounded before the list is built: range(1e12) as a list is terabytes, and each seed is a full
    # run (a fraction of a second at the smallest n), so more than MAX_SEEDS is a typo, not an experiment
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        seed_list = list(range(require_int(seeds, "seeds", minimum=1, maximum=MAX_SEEDS)))
    else:
        seeds = list(itertools.islice(seeds, MAX_SEEDS + 1))
        if len(seeds) > MAX_SEEDS:
            raise InputError(f"seeds must hold at most {MAX_SEEDS} seeds")
        seed_list = [require_int(s, "seed") for s in seeds]
        if not seed_list:
            raise InputError("seeds must not be empty")
    collapse_time = require_real(collapse_time, "collapse_time", minimum=0.0)
    require_real(min_gap, "min_gap", minimum=0.0, strict_minimum=True, maximum=math.pi)
    # Fourier harmonics K ~ beta + 10 sqrt(beta) and 4 sqrt(beta) + 12 observed modes, at least ~1000 RK4 steps
    harmonics = beta + 10 * math.sqrt(beta) + 32
    check_work(len(seed_list) * 4000.0 * n * harmonics, f"a metastable experiment at beta={beta:g} with n={n} "
               f"and {len(seed_list)} seeds")
    dom = dominant_degree(model, 2, beta)
    runs = []
    for s in seed_list:
        runs.append(metastable_run(beta, model, n, s, collapse_time=collapse_time, min_gap=min_gap,
                                   min_fraction=min_fraction, tol=tol, time_unit=time_unit,
                                   progress=progress(s) if progress is not None else None))
    return MetastableResult(beta, model, n, dom.l_max, dom.runner_up, dom.ratio, runs,
                            {"time_unit": time_unit if model == "usa" else "natural", "min_gap": min_gap,
                             "min_fraction": min_fraction, "collapse_time": collapse_time,
                             "near_tie": dom.near_tie, "cluster_method": "gaps in sorted angles"})
