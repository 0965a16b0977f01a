r"""The transitions of noisy ``usa`` at fixed :math:`(d, \beta)`, mode by mode: threshold, type, fold, first-order
noise.

For each mode :math:`k` (degree :math:`l = k` on :math:`\mathbb{S}^{d-1}`; :math:`k`-fold states on the circle)
:func:`mode_transition` returns

- the **linear-stability threshold** :math:`D_k = g_k`: the uniform state is unstable in mode :math:`k` for
  :math:`D < D_k` (for :math:`k = 1` this is :math:`D_c`, the threshold of the uniform state itself; Mun and
  Rosenzweig's :math:`K_\# = 1/(2 D_c)`);
- the **type** of the branch leaving the uniform state at :math:`D_k` (theory.noise_global.mode_bifurcation):
  continuous (supercritical pitchfork), discontinuous (subcritical pitchfork, with a fold), transcritical
  (even degrees on :math:`\mathbb{S}^{d-1}`, :math:`d \ge 3`), or none (:math:`g_k \le 0`); at
  :math:`\beta = \beta^*(d)` exactly, mode 1 is continuous (the quartic coefficient vanishes; the papers count
  the point as continuous, and the branch is :math:`D_c - D \sim r^4`, measured by noise.global-first-order);
- the **fold**: the largest :math:`D` on the branch (refined by Brent's method in the amplitude; the grid value
  of the continuation is up to 5e-5 relative low), with an accuracy: the change when the truncation grows from
  :math:`L` to :math:`L + 8` and the quadrature to twice its nodes, plus Newton's and Brent's parts;
- the **first-order noise**: the largest :math:`D` at which the branch state and the uniform state have equal
  free energy (theory.noise_global). For a continuous branch it is :math:`D_k`; for a discontinuous one it lies
  strictly between :math:`D_k` and the fold (Mun and Rosenzweig's :math:`K_c = 1/(2 D_{\text{1st}}) < K_\#`),
  same accuracy rule.

For :math:`k \ge 2` the branch bifurcates from a uniform state that is already unstable in mode 1
(:math:`D_k < D_1`): it is a stationary state in its symmetry class (:math:`k`-fold on the circle, even on
:math:`\mathbb{S}^{d-1}` for even degrees), relevant for metastability, not for the global transition; its
first-order noise compares it with the uniform state.

Verified by: noise.global-first-order, noise.global-higher-modes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from numerics.common.errors import require_int, require_real
from numerics.noise.branches import (ModeBranch, RefinedPoint, ZonalProblem, amplitudes, continue_in_amplitude,
                                     equal_free_energy, refine_fold, trace_branch)

#: a fold or first-order noise closer than this (relative) to the threshold is not resolved from it
RESOLUTION = 1e-11
#: a fold this close (relative) to the threshold (beta near beta*) has its first-order point at amplitudes
#: below the main continuation's first point: it is looked for on a geometric grid from s = 1e-7
NEAR_THRESHOLD = 1e-6
#: degrees added to the truncation (and the quadrature nodes doubled) for the accuracy estimate of the fold and
#: the first-order noise
ACCURACY_EXTRA_L = 8
#: a fold or first-order noise whose accuracy estimate exceeds this (relative) is not reported (unresolved)
MAX_RELATIVE_ACCURACY = 1e-6
#: relative accuracy of Brent's method in the amplitude, added to the truncation change and Newton's part
SOLVER_ACCURACY = 1e-13
#: largest mode accepted by :func:`transitions` (the k-fold couplings need g up to k L)
MAX_MODES = 8
#: the amplitude s = m_mode the continuation aims for (at large beta the stable clustered states have
#: r = m_1 > 0.99)
S_MAX = 0.9995
#: the truncation is doubled (from the requested L) up to this when a branch stops on its truncation tail
#: before its fold or first-order point
MAX_L = 128


@dataclass(frozen=True)
class Estimate:
    """A computed noise value and its accuracy (absolute); ``note`` says how it was obtained."""

    value: float
    accuracy: float
    note: str = ""


@dataclass(frozen=True)
class ModeTransition:
    d: int
    beta: float
    mode: int
    threshold: float
    kind: str
    states: str
    fold: Estimate | None
    fold_amplitude: float | None
    first_order: Estimate | None
    first_order_amplitude: float | None
    branches: tuple = ()
    landau: object = None
    note: str = ""
    meta: dict = field(default_factory=dict)

    @property
    def coupling_threshold(self) -> float | None:
        """Mun and Rosenzweig's K at the threshold, 1/(2 D_k)."""
        from theory.noise_global import coupling_of_noise

        return coupling_of_noise(self.threshold) if self.threshold > 0 else None

    @property
    def coupling_first_order(self) -> float | None:
        from theory.noise_global import coupling_of_noise

        return coupling_of_noise(self.first_order.value) if self.first_order else None


def usa_problem(d: int, beta: float, mode: int, L: int, nodes: int | None = None) -> tuple[ZonalProblem, int]:
    """The class of states of the mode-k branch of usa and the continued moment's degree in it (``nodes``:
    the quadrature's size, 4 L + 8 by default)."""
    from numerics.noise.zonal import couplings

    if mode == 1 or (d > 2 and mode % 2 == 1):
        return ZonalProblem.build(d, couplings(d, beta, L), nodes=nodes), mode
    if d == 2:
        g = couplings(2, beta, L * mode)
        return ZonalProblem.build(2, g[: L * mode + 1: mode], label=f"{mode}-fold states (couplings g_(jk))",
                                  nodes=nodes), 1
    L = L + (L % 2)
    return ZonalProblem.build(d, couplings(d, beta, L), active=range(2, L + 1, 2),
                              label="states even under x -> -x (even degrees)", nodes=nodes), mode


def at_discontinuity_threshold(d: int, beta: float) -> bool:
    """beta = beta*(d) to double precision (within theory.noise.BETA_STAR_TOLERANCE relative)."""
    from theory.noise import BETA_STAR_TOLERANCE, discontinuity_threshold

    bstar = discontinuity_threshold(d)
    return abs(beta - bstar) <= BETA_STAR_TOLERANCE * bstar


def _start(bif, s0: float) -> float:
    """Landau's D at the first amplitude s0 (theory.noise_global.ModeBifurcation.slope)."""
    if bif.slope is None:
        return bif.threshold
    if bif.kind == "transcritical":
        return bif.threshold + bif.slope * s0
    return bif.threshold - s0 ** 2 / bif.slope


def _sides(problem: ZonalProblem, mode: int, kind: str) -> list[float]:
    """The largest |amplitude| to continue to on each side: + only for pitchforks (the other side is its
    mirror image), both for transcritical branches (the - side ends where P_mode is most negative)."""
    if kind != "transcritical":
        return [S_MAX]
    lowest = float(problem.basis.P[:, mode].min())   # min of P_mode over the nodes
    return [S_MAX, 0.95 * lowest]


def _branch(problem, mode, bif, s_max, steps, progress=None) -> ModeBranch:
    """The side towards s_max by pseudo-arclength (follows turning points of s at large beta and d)."""
    s0 = math.copysign(1e-3, s_max)
    return trace_branch(problem, mode, s_max, _start(bif, s0), s_first=s0, max_steps=steps, progress=progress)


def _small_amplitudes(problem, mode, bif, s_max, points) -> ModeBranch:
    """The branch from s = 1e-7 to s_max (<= 0.05) on a geometric grid: where the fold and the first-order
    point sit when beta is just above beta*."""
    s = amplitudes(1e-7, s_max, points)
    return continue_in_amplitude(problem, mode, s, _start(bif, s[0]))


def _again(problem: ZonalProblem, mode: int, branch: ModeBranch, point: RefinedPoint, what: str) -> RefinedPoint | None:
    """The fold or the equal-free-energy point recomputed with ``problem`` (a larger truncation) on a short
    branch around the point: for the fold the grid points that bracket it (D(s) is flat there, so a narrow
    window cannot locate the maximum), for the root a window of +-6% of min(|s|, 1 - |s|) around s."""
    if what == "fold":
        i = int(np.argmax(branch.D))       # the grid maximum that refine_fold bracketed (s is monotone there)
        s = np.array([branch.s[i - 1], point.s, branch.s[i + 1]])
    else:
        s = point.s + math.copysign(2e-2 * min(abs(point.s), 1 - abs(point.s)), point.s) * np.arange(-3, 4)
    short = continue_in_amplitude(problem, mode, s, point.D, m_start=point.moments)
    if short.D.size < s.size:
        return None
    if what == "fold":
        return refine_fold(short)
    found = equal_free_energy(short, skip=0)
    return found[0] if found else None


def _accuracy(point: RefinedPoint, other: RefinedPoint | None) -> float:
    """|D(L + 8) - D(L)| (inf if the larger truncation failed) + Newton's part (its residual over the
    amplitude, relative: D is fixed by the O(s) part of the equations) + :data:`SOLVER_ACCURACY`, times D."""
    truncation = abs(other.D - point.D) if other is not None else math.inf
    newton = point.residual / abs(point.s) if point.s else 0.0
    return truncation + (newton + SOLVER_ACCURACY) * abs(point.D)


def mode_transition(d: int, beta: float, mode: int = 1, *, L: int = 32, points: int = 400,
                    accuracy: bool = True, progress=None, trace_continuous: bool = True) -> ModeTransition:
    r"""Threshold, type, refined fold and first-order noise of the mode-``mode`` branch of ``usa`` (see the module).

    If a branch stops on its truncation tail or its quadrature's resolution before its fold or its
    equal-free-energy point is found (the stable states at large :math:`\beta` are concentrated), ``L`` is
    doubled, up to :data:`MAX_L` and within the work limit (checked before each doubling); ``meta["L"]`` is the
    truncation used. With ``trace_continuous`` false a continuous branch is not traced (its first-order noise is its
    threshold; only a plot needs the branch).
    """
    d = require_int(d, "d", minimum=2)
    beta = require_real(beta, "beta")
    mode = require_int(mode, "mode", minimum=1, maximum=MAX_MODES)
    L = require_int(L, "L", minimum=4, maximum=MAX_L)
    while True:
        result = _mode_transition(d, beta, mode, L, points, accuracy, progress, trace_continuous)
        truncated = any(st.startswith(("truncation", "quadrature")) for st in result.meta.get("stopped") or [])
        missing = result.kind in ("discontinuous", "transcritical") and (
            result.fold is None or result.first_order is None or result.first_order_amplitude is None)
        if not (truncated and missing) or 2 * L > MAX_L:
            return result
        from numerics.common.limits import work_limit

        if estimate_work(d, 1, 1, 2 * L) * (2 if d > 2 and mode % 2 == 0 else 1) > work_limit():
            return result       # the doubled truncation would exceed the work limit: keep what was found
        L *= 2


def _mode_transition(d: int, beta: float, mode: int, L: int, points: int, accuracy: bool,
                     progress, trace_continuous: bool = True) -> ModeTransition:
    from theory.noise_global import mode_bifurcation

    problem, cmode = usa_problem(d, beta, mode, L)
    bif = mode_bifurcation(problem.d, cmode, problem.g[: 2 * cmode + 1])
    kind, note = bif.kind, ""
    if mode == 1 and (bif.kind == "degenerate" or at_discontinuity_threshold(d, beta)):
        kind, note = "continuous", ("beta = beta* to double precision: the quartic Landau coefficient vanishes; "
                                    "continuous (the branch is D_c - D ~ r^4)")
    common = dict(d=d, beta=beta, mode=mode, threshold=float(bif.threshold), states=problem.label, landau=bif)
    if kind == "none":
        return ModeTransition(**common, kind=kind, fold=None, fold_amplitude=None, first_order=None,
                              first_order_amplitude=None,
                              note=f"g_{mode} = {bif.threshold:.3g} <= 0: mode {mode} is stable for every D > 0")
    if kind == "continuous" and not trace_continuous:
        return ModeTransition(**common, kind=kind, fold=None, fold_amplitude=None,
                              first_order=Estimate(float(bif.threshold), 0.0, "= threshold (continuous)"),
                              first_order_amplitude=0.0, note=note, meta={"L": problem.L, "stopped": None})
    sides = [_branch(problem, cmode, bif, s_max, points, progress=progress)
             for s_max in _sides(problem, cmode, kind)]
    # the accuracy check: 8 more degrees and twice the quadrature nodes (truncation and quadrature errors)
    Lx = L + ACCURACY_EXTRA_L
    larger = usa_problem(d, beta, mode, Lx, nodes=2 * (4 * Lx + 8))[0] if accuracy else None
    # the fold: an interior maximum of D on a side (discontinuous: the + side; transcritical: the side to D > D_k)
    fold, fold_s = None, None
    unresolved = False
    if kind in ("discontinuous", "transcritical"):
        for side in sides:
            found = refine_fold(side)
            if found is not None and kind == "discontinuous" and found.D - bif.threshold <= RESOLUTION * bif.threshold:
                found = None        # a maximum at round-off level above the threshold is not a resolved fold
            if found is None and kind == "discontinuous" and side.D.size >= 2 and int(np.argmax(side.D)) == 0:
                # D decreases from s = 1e-3 on: the fold lies at smaller amplitudes (beta near beta*)
                found = refine_fold(_small_amplitudes(problem, cmode, bif, 1e-3, 30))
                if found is None or found.D - bif.threshold <= RESOLUTION * bif.threshold:
                    unresolved = True
                    found = None
            if found is not None:
                acc = _accuracy(found, _again(larger, cmode, side, found, "fold")) if accuracy else math.nan
                fold, fold_s = Estimate(found.D, acc, "Brent in the amplitude"), found.s
    if unresolved:
        acc = RESOLUTION * bif.threshold
        note = (f"the fold and the first-order noise are within {RESOLUTION:.0e} (relative) of D_{mode}: "
                "beta is too close to beta* to resolve them in double precision")
        fold = Estimate(float(bif.threshold), acc, "unresolved (at the threshold to solver accuracy)")
        first = Estimate(float(bif.threshold), acc, "unresolved (at the threshold to solver accuracy)")
        return ModeTransition(**common, kind=kind, fold=fold, fold_amplitude=None, first_order=first,
                              first_order_amplitude=None, branches=tuple(sides), note=note,
                              meta={"L": problem.L, "points": points, "stopped": [s.stopped for s in sides],
                                    "accuracy_L": None})
    # the first-order noise: the largest D with equal free energy on the branch (D_k itself when a side leaves
    # the uniform state with Delta F < 0, i.e. towards D < D_k)
    candidates = []
    for side in sides:
        leaves_below = side.D.size > 0 and side.free_energy[0] < 0 and side.D[0] < bif.threshold
        if leaves_below and kind != "transcritical":
            candidates.append((float(bif.threshold), 0.0, Estimate(float(bif.threshold), 0.0,
                                                                   "= threshold (continuous side)")))
        if kind == "transcritical" and not leaves_below and side.stopped == "s_max" and \
                not np.any(side.free_energy[3:] < 0):
            # the side towards D > D_k was traced to its end with Delta F > 0: the other side, which leaves D_k
            # with Delta F < 0, makes D_k itself the equal-free-energy noise
            candidates.append((float(bif.threshold), 0.0, Estimate(float(bif.threshold), 0.0,
                                                                   "= threshold (no crossing on the other side)")))
        for p in equal_free_energy(side):
            if kind == "discontinuous" and not (bif.threshold < p.D <= (fold.value if fold else math.inf)):
                continue            # a discontinuous branch's equal-free-energy point lies between D_k and the fold
            acc = _accuracy(p, _again(larger, cmode, side, p, "first-order")) if accuracy else math.nan
            candidates.append((p.D, p.s, Estimate(p.D, acc, "Delta F = 0 on the branch (Brent in the amplitude)")))
    if kind == "continuous" and not candidates:
        candidates.append((float(bif.threshold), 0.0, Estimate(float(bif.threshold), 0.0, "= threshold")))
    first = max(candidates, key=lambda c: c[0]) if candidates else None
    if first is not None and fold is not None and kind == "discontinuous":
        # a discontinuous branch's equal-free-energy point lies in (D_k, D_fold): never less accurate than that
        bound = fold.value + fold.accuracy - bif.threshold
        if first[2].accuracy > bound:
            first = (first[0], first[1], Estimate(first[2].value, bound, first[2].note + "; accuracy bounded by "
                                                  "the window (D_k, D_fold)"))
    if first is None and kind == "discontinuous" and fold is not None and \
            fold.value - bif.threshold < NEAR_THRESHOLD * bif.threshold:
        # the equal-free-energy point lies below the first reliable amplitude (beta near beta*): look on a
        # branch from s = 1e-7; failing that, it is somewhere between the threshold and the fold
        small = _small_amplitudes(problem, cmode, bif, min(0.05, max(2 * abs(fold_s), 2e-3)), 40)
        found = [p for p in equal_free_energy(small, skip=0) if bif.threshold < p.D <= fold.value]
        if found:
            p = max(found, key=lambda q: q.D)
            acc = _accuracy(p, _again(larger, cmode, small, p, "first-order")) if accuracy else math.nan
            first = (p.D, p.s, Estimate(p.D, acc, "Delta F = 0 on the branch (Brent in the amplitude)"))
        else:
            half = (fold.value - bif.threshold) / 2
            first = (bif.threshold + half, None, Estimate(bif.threshold + half, half,
                                                          "between the threshold and the fold (not resolved)"))
    # an estimate the larger truncation and the finer quadrature do not confirm is not reported
    for name in ("fold", "first-order noise"):
        est = fold if name == "fold" else (first[2] if first else None)
        if accuracy and est is not None and not est.accuracy <= MAX_RELATIVE_ACCURACY * abs(est.value):
            note = (note + "; " if note else "") + (f"{name} not resolved (D = {est.value:.6g} changes by "
                                                    f"{est.accuracy:.2g} with L + {ACCURACY_EXTRA_L} degrees and "
                                                    "twice the quadrature nodes)")
            if name == "fold":
                fold, fold_s = None, None
            else:
                first = None
    if first is None and kind in ("discontinuous", "transcritical") and "first-order noise not" not in note:
        note = (note + "; " if note else "") + "no equal-free-energy point on the traced branch (" + \
            "; ".join(s.stopped for s in sides) + ")"
    return ModeTransition(**common, kind=kind, fold=fold, fold_amplitude=fold_s,
                          first_order=first[2] if first else None, first_order_amplitude=first[1] if first else None,
                          branches=tuple(sides), note=note,
                          meta={"L": problem.L, "points": points, "stopped": [s.stopped for s in sides],
                                "accuracy_L": problem.L + ACCURACY_EXTRA_L if accuracy else None})


def transitions(d: int, beta: float, modes: int = 3, *, L: int = 32, points: int = 400, accuracy: bool = True,
                progress=None, trace_continuous: bool = True) -> list[ModeTransition]:
    """:func:`mode_transition` for k = 1..``modes``."""
    modes = require_int(modes, "modes", minimum=1, maximum=MAX_MODES)
    out = []
    for k in range(1, modes + 1):
        out.append(mode_transition(d, beta, k, L=L, points=points, accuracy=accuracy,
                                   trace_continuous=trace_continuous))
        if progress is not None:
            progress(k, modes)
    return out


#: Newton solves of one branch side: the arclength steps (typically 80-200) plus the fold, the first-order root
#: and their recomputation at L + 8 (measured: 250-400 in all)
SOLVES_PER_BRANCH = 400


def estimate_work(d: int, n_betas: int, modes: int, L: int = 32) -> float:
    """Floating-point operations (with the per-call overhead of :mod:`numerics.common.limits`) of
    ``n_betas`` x ``modes`` transitions: per branch side :data:`SOLVES_PER_BRANCH` Newton solves, each about
    12 evaluations of the self-consistency map (6 L n operations on the n = 4 L + 8 quadrature nodes; twice as
    many nodes on the circle) and 4 of its Jacobian (2 n L^2), with 16 calls' overhead. Even degrees on
    S^{d-1} have two sides. The truncation may double up to MAX_L for concentrated states; this estimate is
    for L (calibrated within a factor 2-3 of the measured time at L = 32)."""
    from numerics.common.limits import CALL_OVERHEAD

    nodes = (2 if d == 2 else 1) * (4 * L + 8)
    per_solve = 12 * 6.0 * L * nodes + 4 * 2.0 * nodes * L * L + 16 * CALL_OVERHEAD
    sides = sum(2 if d > 2 and k % 2 == 0 else 1 for k in range(1, modes + 1))
    return float(n_betas) * sides * SOLVES_PER_BRANCH * per_solve
