r"""Runnable conjectures from the literature (``attnflow conjecture list``), each with a note in proofs_notes/.

Landscape conjectures share one outcome: from the drawn start X0, maximise
:math:`E(X) = \frac{1}{2n^2} \sum \phi(\langle x_i, x_j\rangle)` (L-BFGS on the radial parametrisation
:math:`x_i = y_i / \lVert y_i\rVert`, i.e. the ascent that ``usa`` performs up to time change, then Riemannian
Newton polishing, :func:`numerics.critical.newton.riemannian_newton`), and classify the critical point reached
with :func:`numerics.critical.critical_point_report` (Hessian spectrum off the rotation orbit). A counterexample
to "no spurious local maxima" is a critical point that is a strict local maximum (every non-rotational Hessian
eigenvalue negative) and not synchronised (more than one cluster). Degenerate or non-converged examples are
undecided. Since ``sa`` and ``usa`` share critical points and their stability (``sa`` is a gradient flow of
:math:`E` in another metric), the landscape statements cover both models.

Catalogue (ids):

- ``s1-sync-negative-beta``  (a) PRY arXiv 2507.22857: :math:`E_\beta` on :math:`\mathbb{S}^1` has no spurious
  local maxima for :math:`\beta \in [-2/3, -0.16)` (open; PRY prove it for :math:`\beta \ge -0.16` and its
  failure below :math:`-2/3`).
- ``s1-no-spurious-maxima``  the same statement for :math:`\beta \in [-2, 1]` (false below :math:`-2/3`; the
  claim conjecture.negative-beta-counterexample runs it on :math:`[-2, -0.7]` and on :math:`[0, 1]`).
- ``landscape``              the same statement for a user kernel string, dimension and :math:`\beta` range
  (CLI: ``conjecture run landscape --kernel "exp(beta*s) + c*s**3" --param c=0.5 --beta-range -1 1 --d 2``).
- ``crmb-taylor-benign``     (b) CRMB arXiv 2405.18273: no spurious local maxima on :math:`\mathbb{S}^1` when the
  Taylor coefficients of :math:`\phi'` are positive and non-increasing (exponential kernel with
  :math:`0 < \beta \le 1`; polynomials).
- ``crmb-convex-spurious``   (b') "increasing convex :math:`\phi` suffices on :math:`\mathbb{S}^1`", false by CRMB
  for :math:`n \ge 5`: the search must find a counterexample (a smoothed step of :math:`\phi'`, regular polygons).
- ``metastable-lmax``        (c) BPA arXiv 2410.23228: from uniform random starts on :math:`\mathbb{S}^1` the
  number of metastable clusters equals :math:`l_{\max}(\beta)` (theory.meanfield.dominant_degree;
  numerics.meanfield.metastable).
- ``sphere-single-cluster``  (d) MTG/CRMB/GLPR: for :math:`d \ge 3` and :math:`\beta \ge 0` every local maximum is
  synchronised.
"""
from __future__ import annotations

import functools

import numpy as np
from hypothesis import strategies as st
from scipy.optimize import minimize

from theory.expression_parser import parse_kernel
from theory.kernels import PairKernel, exponential_kernel

from numerics.common.provenance import package_versions
from numerics.conjectures.framework import (Conjecture, ReplayResult, Verdict, conjecture_table, load_conjectures,
                                            load_counterexample)
from numerics.critical.report import critical_point_report
from numerics.common.errors import InputError
from numerics.core.kernel_field import _beta_zero_limit, check_kernel_on_interval, compile_kernel
from numerics.critical.configurations import circle_clusters, orthoplex, simplex
from numerics.critical.newton import riemannian_newton
from numerics.conjectures.strategies import near_critical_configurations, uniform_configurations

#: L-BFGS stops when the largest projected-gradient component is below this (then Newton polishes to ~1e-13)
ASCENT_GTOL = 1e-11
#: kernel families: (kernel string, parameter names)
SMOOTH_STEP = "eps*s + (s + w*log(cosh((s - c)/w)))/2"   # phi' = eps + (1 + tanh((s - c)/w))/2: increasing, convex
TAYLOR_POLYNOMIAL = "a0*s + a1*s**2/2 + a2*s**3/3 + a3*s**4/4"  # phi' = a0 + a1 s + a2 s^2 + a3 s^3


def ascend_to_critical_point(X0: np.ndarray, kernel: PairKernel, beta: float, *, max_iter: int = 3000):
    """Maximise E from X0 (L-BFGS on y with x = y/|y|), polish with Riemannian Newton; return (X, info)."""
    compiled = compile_kernel(kernel)
    energy_kernel = _beta_zero_limit(compiled) if beta == 0.0 else compiled
    n, d = X0.shape

    def negative_energy(y):
        Y = y.reshape(n, d)
        r = np.linalg.norm(Y, axis=1, keepdims=True)
        X = Y / r
        G = X @ X.T
        E = energy_kernel(0, G, beta).sum() / (2.0 * n**2)
        g = compiled(1, G, beta) @ X / n**2                      # Euclidean gradient in x
        g -= np.einsum("ij,ij->i", X, g)[:, None] * X            # chain rule of x = y/|y|: P_x g / |y|
        return -E, -(g / r).ravel()

    res = minimize(negative_energy, X0.ravel(), jac=True, method="L-BFGS-B",
                   options={"maxiter": max_iter, "gtol": ASCENT_GTOL, "ftol": 0.0})
    Y = res.x.reshape(n, d)
    X = Y / np.linalg.norm(Y, axis=1, keepdims=True)
    newton = riemannian_newton(X, beta, kernel, max_iter=30)
    if newton.converged:
        X = newton.X
    return X, {"lbfgs_iterations": int(res.nit), "newton_converged": bool(newton.converged),
               "newton_residual": float(newton.residuals[-1])}


def landscape_outcome(inputs: dict) -> dict:
    """Ascend from inputs['X0'] and classify the critical point reached; if that is not a spurious maximum,
    also classify the symmetric critical points at the same beta (:func:`symmetric_candidates`).

    The drawn start explores the landscape; the symmetric scan makes every drawn beta test the configurations
    where spurious maxima are known to live (equal clusters at a regular polygon or polytope are critical for
    every pair kernel, by symmetry; PRY's three equal clusters, CRMB's polygons). ``start`` in the outcome says
    which configuration gave the reported critical point; a symmetric one has ``lbfgs_iterations``,
    ``newton_converged`` and ``newton_residual`` None (no solver ran; its ``residual`` is the measured one).
    """
    outcome = ascent_outcome(inputs)
    if _is_spurious_maximum(outcome):
        return outcome
    kernel, beta = _kernel_of(inputs), inputs["beta"]
    for label, C in symmetric_candidates(outcome["X"].shape[1]):
        # no solver ran on a symmetric configuration (it is critical by symmetry): no solver figures to report
        candidate = _classified(C, beta, kernel, start=label, lbfgs_iterations=None, newton_converged=None,
                                newton_residual=None)
        if _is_spurious_maximum(candidate):
            return candidate
    return outcome


def ascent_outcome(inputs: dict) -> dict:
    """Ascend from inputs['X0'] for the kernel of the inputs and classify the critical point reached."""
    kernel = _kernel_of(inputs)
    X, info = ascend_to_critical_point(np.asarray(inputs["X0"], dtype=float), kernel, inputs["beta"])
    return _classified(X, inputs["beta"], kernel, start="ascent from the drawn X0", **info)


def symmetric_candidates(d: int, max_clusters: int = 6, masses: tuple[int, ...] = (1, 2)):
    """(label, X) for k equal clusters of each mass at the regular k-gon on a great circle (k = 2..max_clusters)
    and, for d >= 3, at the simplex and orthoplex vertices: critical points of every pair energy by symmetry."""
    for m in masses:
        for k in range(2, max_clusters + 1):
            yield f"{k} equal clusters of {m} on a great circle", circle_clusters(d, masses=[m] * k)
        if d >= 3:
            yield f"simplex, clusters of {m}", simplex(d, masses=[m] * (d + 1))
            yield f"orthoplex, clusters of {m}", orthoplex(d, masses=[m] * (2 * d))


def _classified(X: np.ndarray, beta: float, kernel: PairKernel, *, start: str, **info) -> dict:
    report = critical_point_report(X, beta, "usa", kernel)
    mu = report.eigenvalues
    return {"X": X, "classification": report.classification, "cluster_sizes": report.cluster_sizes,
            "residual": report.residual, "energy": report.energy, "reason": report.reason,
            "top_eigenvalues": np.sort(mu)[-min(4, mu.size):], "zero_tolerance": report.zero_tolerance,
            "symmetry_zero_modes": report.symmetry_zero_modes, "unstable": report.unstable, "start": start,
            **info}


def _is_spurious_maximum(outcome: dict) -> bool:
    return outcome["classification"] == "local maximum" and len(outcome["cluster_sizes"]) > 1


def no_spurious_maximum(inputs: dict, outcome: dict) -> Verdict:
    """Counterexample: a strict (modulo rotations) local maximum with more than one cluster."""
    cls, sizes = outcome["classification"], outcome["cluster_sizes"]
    data = {"classification": cls, "cluster_sizes": sizes}
    if len(sizes) == 1:
        return Verdict(True, "synchronised", data)
    if cls in ("strict saddle", "local minimum"):
        return Verdict(True, f"{cls} with clusters {sizes}", data)
    if cls == "local maximum":
        return Verdict(False, f"strict local maximum with {len(sizes)} clusters {sizes} "
                              f"({outcome.get('start', 'ascent from the drawn X0')}): {outcome['reason']}", data)
    if cls == "degenerate" and outcome["unstable"]:
        # a Hessian eigenvalue > 0 off the rotation orbit is a strict ascent direction: not a local maximum
        # (e.g. beta = 0, where {mean(X) = 0} is a critical manifold of extra zero modes)
        return Verdict(True, f"degenerate but with an ascent direction, clusters {sizes}", data)
    return Verdict(None, f"{cls}: {outcome['reason']}", data)


@functools.lru_cache(maxsize=64)
def _parsed(text: str, params: tuple) -> PairKernel:
    return parse_kernel(text, dict(params))


def _kernel_of(inputs: dict) -> PairKernel:
    family = inputs.get("kernel", "exponential")
    if family == "exponential":
        return exponential_kernel()
    params = tuple(sorted((k, float(v)) for k, v in inputs.get("params", {}).items()))
    return _parsed(family, params)


# -- input strategies -----------------------------------------------------------------------------------------
@st.composite
def _starts(draw, d, max_clusters: int = 8):
    """Three starts in four near a structured critical point (where spurious maxima live), one uniform.
    Shrinking moves towards the structured branch (choice 0) and towards few clusters."""
    kinds = ("polygon", "equal-clusters", "clusters") + (("simplex", "orthoplex") if d >= 3 else ())
    if draw(st.integers(0, 3)) < 3:
        return draw(near_critical_configurations(d=d, kinds=kinds, max_clusters=max_clusters,
                                                 perturbation=st.floats(0, 0.05)))
    return draw(uniform_configurations(n=st.integers(2, 10), d=d))


@st.composite
def stratified_floats(draw, low: float, high: float, *, strata: int = 8, exclude_max: bool = False):
    """A float in [low, high] (or [low, high)): first one of ``strata`` equal sub-intervals, then a float in it.

    Hypothesis's own float draws favour simple and boundary values, so a sub-interval such as beta < -2/3 in
    [-1, 1] can go unvisited for 40 examples (measured: 3 runs in 20); drawing the sub-interval first spreads the
    examples over the whole range, and shrinking still moves towards ``low``.
    """
    if not high > low:
        return draw(st.floats(low, high, exclude_max=exclude_max))
    k = draw(st.integers(0, strata - 1))
    a = low + (high - low) * k / strata
    b = high if k == strata - 1 else low + (high - low) * (k + 1) / strata
    return draw(st.floats(a, b, exclude_max=exclude_max or k < strata - 1))


@st.composite
def _landscape_inputs(draw, low: float, high: float, d: int = 2, kernel: str = "exponential",
                      params: dict | None = None, open_high: bool = False):
    out = {"beta": draw(stratified_floats(low, high, exclude_max=open_high)), "X0": draw(_starts(d))}
    if kernel != "exponential":
        out.update(kernel=kernel, params=dict(params or {}))
    return out


#: PRY arXiv 2507.22857: below this beta, E_beta on S^1 has spurious local maxima (three equal clusters)
PRY_THRESHOLD = -2.0 / 3.0


@st.composite
def _taylor_inputs(draw):
    if draw(st.booleans()):
        return {"kernel": "exponential", "beta": draw(st.floats(0.05, 1.0)), "X0": draw(_starts(2))}
    # non-increasing coefficients a0 >= a1 >= a2 >= a3 >= 0 on a grid of quarters (compiled kernels are reused)
    steps = draw(st.lists(st.integers(0, 4), min_size=4, max_size=4))
    a = np.cumsum(steps[::-1])[::-1] / 4.0 + np.array([0.25, 0, 0, 0])
    params = {f"a{i}": float(v) for i, v in enumerate(a)}
    return {"kernel": TAYLOR_POLYNOMIAL, "params": params, "beta": 1.0, "X0": draw(_starts(2))}


@st.composite
def _convex_inputs(draw):
    # a small grid (each parameter set is compiled once by numerics.critical.hessian); n >= 5 polygons are where CRMB's
    # counterexamples live, so the structured starts go up to 9 clusters
    params = {"eps": draw(st.sampled_from([0.05, 0.01])), "w": draw(st.sampled_from([0.1, 0.05])), "c": -0.25}
    return {"kernel": SMOOTH_STEP, "params": params, "beta": 1.0, "X0": draw(_starts(2, max_clusters=9))}


@st.composite
def _sphere_inputs(draw):
    d = draw(st.integers(3, 5))
    X0 = draw(st.one_of(near_critical_configurations(d=d, kinds=("simplex", "orthoplex", "polygon", "equal-clusters", "clusters")),
                        uniform_configurations(n=st.integers(2, 10), d=d)))
    return {"beta": draw(st.floats(0.0, 4.0)), "X0": X0}


# -- metastable clusters (BPA, arXiv 2410.23228) ----------------------------------------------------------------------------
def metastable_outcome(inputs: dict) -> dict:
    from theory.meanfield import dominant_degree

    from numerics.meanfield.metastable import metastable_run

    run = metastable_run(inputs["beta"], "sa", inputs["n"], inputs["seed"])
    dom = dominant_degree("sa", 2, inputs["beta"])
    return {"observed": run.observed, "l_max": dom.l_max, "runner_up": dom.runner_up, "ratio": dom.ratio,
            "near_tie": dom.near_tie, "dominant_mode": run.dominant_mode, "cluster_sizes": run.cluster_sizes,
            "t_observed": run.t_observed}


def metastable_count_is_lmax(inputs: dict, outcome: dict) -> Verdict:
    if outcome["near_tie"]:
        return Verdict(None, f"near tie: l_max {outcome['l_max']} vs {outcome['runner_up']} "
                             f"(rate ratio {outcome['ratio']:.3f})")
    ok = outcome["observed"] == outcome["l_max"]
    return Verdict(ok, f"{outcome['observed']} clusters observed, l_max(beta) = {outcome['l_max']} "
                       f"(linear-phase dominant mode {outcome['dominant_mode']})")


@st.composite
def _metastable_inputs(draw):
    return {"beta": draw(st.floats(2.0, 12.0)), "n": 200, "seed": draw(st.integers(0, 10_000))}


# -- the catalogue --------------------------------------------------------------------------------------------
def literature_expectation(beta_low: float, beta_high: float, kernel: str = "exponential", d: int = 2) -> str:
    """What the literature (and this project's verified claims) predict for "no spurious local maxima".

    ``counterexample`` for E_beta on S^1 when the range reaches below -2/3 (PRY arXiv 2507.22857: three equal
    clusters are a strict local maximum there; verified by conjecture.negative-beta-counterexample);
    ``no-counterexample-found`` for E_beta on S^1 with 0 < beta <= 1 (CRMB arXiv 2405.18273) and for E_beta on
    S^{d-1}, d >= 3, beta >= 0 (MTG / CRMB); ``open`` otherwise (user kernels, the PRY gap [-2/3, -0.16)).
    """
    if kernel != "exponential":
        return "open"
    if d == 2 and beta_low < PRY_THRESHOLD:
        return "counterexample"
    if (d == 2 and 0.0 <= beta_low and beta_high <= 1.0) or (d >= 3 and beta_low >= 0.0):
        return "no-counterexample-found"
    return "open"


def landscape_conjecture(beta_low: float, beta_high: float, *, kernel: str = "exponential",
                         params: dict | None = None, d: int = 2, id: str = "landscape",
                         expected: str | None = None, max_examples: int = 40) -> Conjecture:
    """"E has no spurious local maxima on S^{d-1} for beta in [beta_low, beta_high]" for any kernel string.

    ``kernel`` is ``"exponential"`` (phi_beta) or a kernel string for
    :func:`theory.expression_parser.parse_kernel` with parameter values ``params``. The inputs record the kernel,
    so saved counterexamples replay through any landscape conjecture (they share outcome and predicate).
    """
    if not (np.isfinite(beta_low) and np.isfinite(beta_high) and beta_low <= beta_high):
        raise InputError(f"need finite beta_low <= beta_high, got [{beta_low}, {beta_high}]")
    if not isinstance(d, int) or d < 2:
        raise InputError(f"d must be an integer >= 2, got {d!r}")
    name = "E_beta" if kernel == "exponential" else f"phi(s) = {kernel}"
    if expected is None:
        expected = literature_expectation(beta_low, beta_high, kernel, d)
    if kernel != "exponential":
        try:
            parsed = parse_kernel(kernel, params or {})
        except ValueError as exc:
            raise InputError(str(exc)) from None
        # usable on all of [-1, 1] at both ends of the beta range, before any example is drawn
        for beta in (beta_low, beta_high):
            check_kernel_on_interval(parsed, beta)
    return Conjecture(
        id=id, title=f"no spurious local maxima of {name} on S^{d - 1} for beta in [{beta_low:g}, {beta_high:g}]",
        source="PRY arXiv 2507.22857 and CRMB arXiv 2405.18273, synchronisation on circles and spheres",
        note="conjecture-s1-no-spurious-maxima.md",
        inputs=_landscape_inputs(beta_low, beta_high, d, kernel, params),
        outcome=landscape_outcome, predicate=no_spurious_maximum, expected=expected, max_examples=max_examples)


def circle_landscape_conjecture(beta_low: float, beta_high: float, *, id: str = "s1-no-spurious-maxima",
                                expected: str = "no-counterexample-found", max_examples: int = 40) -> Conjecture:
    """"E_beta on S^1 has no spurious local maxima for beta in [beta_low, beta_high]" as a Conjecture."""
    return landscape_conjecture(beta_low, beta_high, id=id, expected=expected, max_examples=max_examples)


def _landscape_entry(id: str, title: str, source: str, inputs, expected: str, max_examples: int) -> Conjecture:
    """A 'no spurious local maxima' conjecture: shared outcome (ascent + classification) and predicate."""
    return Conjecture(id=id, title=title, source=source, note=f"conjecture-{id}.md", inputs=inputs,
                      outcome=landscape_outcome, predicate=no_spurious_maximum, expected=expected,
                      max_examples=max_examples)


@functools.lru_cache(maxsize=1)
def catalogue() -> dict[str, Conjecture]:
    """The runnable conjectures, by id."""
    items = [
        _landscape_entry(
            "s1-sync-negative-beta",
            "synchronisation on S^1 for beta in [-2/3, -0.16): no spurious local maxima of E_beta",
            "PRY arXiv 2507.22857, synchronisation of mean-field models on the circle (open range)",
            _landscape_inputs(-2.0 / 3.0, -0.16, open_high=True), "open", 40),
        circle_landscape_conjecture(-2.0, 1.0, expected="counterexample", max_examples=80),
        landscape_conjecture(-1.0, 1.0, id="landscape"),  # expects a counterexample: [-1, -2/3) is inside
        _landscape_entry(
            "crmb-taylor-benign",
            "no spurious local maxima on S^1 when phi' has non-increasing positive Taylor coefficients",
            "CRMB arXiv 2405.18273, synchronisation on the circle (Taylor-coefficient condition)",
            _taylor_inputs(), "no-counterexample-found", 30),
        _landscape_entry(
            "crmb-convex-spurious",
            "increasing convex phi has no spurious local maxima on S^1 (false for n >= 5 by CRMB)",
            "CRMB arXiv 2405.18273, increasing convex kernels with spurious local maxima on the circle",
            _convex_inputs(), "counterexample", 40),
        Conjecture(
            id="metastable-lmax",
            title="from uniform starts on S^1 the number of metastable clusters is l_max(beta) (sa, n = 200)",
            source="BPA arXiv 2410.23228, fastest mode fixes the metastable structure",
            note="conjecture-metastable-lmax.md", inputs=_metastable_inputs(), outcome=metastable_outcome,
            predicate=metastable_count_is_lmax, expected="open", max_examples=4, shrink_budget=6),
        _landscape_entry(
            "sphere-single-cluster",
            "d >= 3, beta >= 0: every local maximum of E_beta is synchronised (single cluster)",
            "MTG arXiv 1609.04885, CRMB arXiv 2405.18273, GLPR arXiv 2312.10794 (d >= 3)",
            _sphere_inputs(), "no-counterexample-found", 25),
    ]
    return {c.id: c for c in items}


def get_conjecture(cid: str) -> Conjecture:
    """The catalogue entry ``cid`` (InputError listing the ids otherwise)."""
    cat = catalogue()
    if cid not in cat:
        raise InputError(f"unknown conjecture id {cid!r}; known: {', '.join(cat)}")
    return cat[cid]


__all__ = [
    "SMOOTH_STEP",
    "TAYLOR_POLYNOMIAL",
    "ascend_to_critical_point",
    "catalogue",
    "circle_landscape_conjecture",
    "get_conjecture",
    "landscape_conjecture",
    "landscape_outcome",
    "no_spurious_maximum",
]


def replay(path, conjectures=None, *, module=None) -> ReplayResult:
    """Re-evaluate a saved counterexample with the conjecture of the same id.

    The conjecture is looked up in ``conjectures`` (a mapping id -> Conjecture or an iterable of them), then in
    ``module`` (a user module: a ``.py`` path, a dotted name or a module object, see
    :func:`numerics.conjectures.framework.load_conjectures`), then in the catalogue. A file never makes replay
    import code by itself: for a user conjecture the error names the module recorded in the file
    (``defined_in``), to be passed as ``module``.
    """
    payload = load_counterexample(path)
    table = {**catalogue(), **(load_conjectures(module) if module is not None else {}),
             **conjecture_table(conjectures)}
    cid = payload.get("id")
    if cid not in table:
        where = payload.get("defined_in") or {}
        hint = (f"; it was saved from {where.get('file') or where.get('module')}: replay it with "
                f"module=... (attnflow conjecture replay FILE --module {where.get('file') or where.get('module')})"
                if where.get("file") or where.get("module") else "; pass the user module that defines it")
        raise InputError(f"{path}: conjecture id {cid!r} is not in the catalogue{hint}")
    conjectures = table
    outcome, verdict = conjectures[cid].check(payload["inputs"])
    return ReplayResult(cid, verdict.holds is False, verdict, payload.get("verdict", {}), outcome,
                        payload.get("versions", {}), package_versions())
