r"""The moderate interaction regime: :math:`\beta` growing with :math:`n`, three separated phases (Bruno,
Pasqualotto, Agazzi, arXiv 2509.25040).

For ``sa`` on :math:`\mathbb{S}^{d-1}` with :math:`Q = K = I` and a value matrix :math:`V`, when :math:`\beta` is
large but the kernel window (angular width :math:`\beta^{-1/2}`) still holds many tokens (moderate interaction:
:math:`\beta \ll n^{2/(d-1)}`), the attention average of token :math:`i` is :math:`x_i + O(1/\beta)` (a mean
shift :math:`(1/\beta) \nabla \log \rho`). Derived in ``proofs_notes/meanfield-moderate-*.md``:

1. alignment, time :math:`O(1)`: :math:`dx/dt = P_x(V x) + O(1/\beta)`, the projected linear (Oja) flow
   :math:`x(t) = e^{tV} x_0 / \lVert e^{tV} x_0\rVert` (:func:`oja_flow`): tokens collapse onto the great sphere
   of the top eigenspace of :math:`V` (symmetric :math:`V`) at rate :math:`\lambda_1 - \lambda_{k+1}`;
2. clustering, time :math:`O(\log n)`: on that sphere the linearisation of the mean field is a backward heat
   equation, rates :math:`\lambda_k \sim k^2/\beta` for :math:`k \ll \sqrt{\beta}` (:func:`heat_limit_ratio`),
   saturating at :math:`2/e` near :math:`k = \sqrt{2 \beta}`; the :math:`\sqrt{1/n}` fluctuations of iid tokens
   are amplified until clusters form at :math:`t \sim \log(\sqrt{n})/\lambda_{\max}` (:func:`clustering_run`);
3. pairing, time :math:`e^{\beta(1 - \cos \theta)}`: clusters (point masses :math:`\alpha_c`) interact through
   :math:`e^{-\beta(1 - \langle c, c'\rangle)}`; the closest pair moves first, cluster :math:`i` at speed
   :math:`(\alpha_j/\alpha_i) e^{-\beta(1 - \cos \theta)} \sin \theta`, and merges after
   :math:`T \sim e^{\beta(1 - \cos \theta_0)} / ((\alpha_i/\alpha_j + \alpha_j/\alpha_i) \beta \sin^2 \theta_0)`
   (:func:`pair_merge_time`, :func:`pairing_run`).

Verified by: meanfield.moderate-alignment, meanfield.moderate-clustering, meanfield.moderate-pairing.
"""
from __future__ import annotations

import math

import numpy as np

from numerics.common.errors import InputError, require_finite_array, require_int, require_real
from numerics.common.limits import check_work


def oja_flow(X0: np.ndarray, V: np.ndarray, t: float) -> np.ndarray:
    r""":math:`x(t) = e^{tV} x_0 / \lVert e^{tV} x_0\rVert` for every row of ``X0`` (the solution of
    :math:`dx/dt = P_x(V x)` on the sphere)."""
    from scipy.linalg import expm

    Y = np.asarray(X0, float) @ expm(t * np.asarray(V, float)).T
    return Y / np.linalg.norm(Y, axis=1, keepdims=True)


def top_eigenspace(V: np.ndarray, rtol: float = 1e-9) -> tuple[np.ndarray, float]:
    """(orthonormal basis (d, k) of the eigenspace of the largest eigenvalue of the symmetric V, spectral gap
    lambda_1 - lambda_{k+1})."""
    V = require_finite_array(V, "V", ndim=2)
    if not np.allclose(V, V.T, atol=1e-12):
        raise InputError("the alignment statement is for a symmetric value matrix V")
    w, U = np.linalg.eigh(V)
    top = w[-1]
    k = int(np.sum(w >= top - rtol * max(1.0, abs(top))))
    if k == len(w):
        raise InputError("V is a multiple of the identity: there is no alignment phase")
    return U[:, -k:], float(top - w[-k - 1])


def distance_to_subspace(X: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """|x - P x| for every row, P the orthogonal projection onto span(basis)."""
    X = np.asarray(X, float)
    return np.linalg.norm(X - (X @ basis) @ basis.T, axis=1)


def alignment_run(n: int, d: int, beta: float, V, t_end: float, *, seed: int = 0, dt: float = 0.05,
                  saves: int = 21, progress=None) -> dict:
    r"""``sa`` with :math:`Q = K = I` and value matrix :math:`V` from :math:`n` iid uniform tokens on
    :math:`\mathbb{S}^{d-1}` (RK4, direct field): at each saved time the root-mean-square distance of the tokens
    to the top eigenspace of :math:`V`, the same for the Oja flow of the same tokens, and the root-mean-square
    deviation of the tokens from their Oja trajectories."""
    from numerics.core.model import Model, SaveAt, Solver
    from numerics.core.trajectory import simulate, uniform_sphere

    V = np.asarray(V, float)
    basis, gap = top_eigenspace(V)
    X0 = uniform_sphere(n, d, seed)
    steps = max(1, math.ceil(t_end / dt - 1e-12))
    every = max(1, steps // (saves - 1))
    traj = simulate(Model("sa", beta, V=V), X0, t_end, solver=Solver("rk4", dt=t_end / steps, backend="direct"),
                    save=SaveAt(every=every), progress=progress)
    rms = lambda a: float(np.sqrt(np.mean(np.square(a))))  # noqa: E731
    dist = [rms(distance_to_subspace(X, basis)) for X in traj.X]
    dev = [rms(np.linalg.norm(X - oja_flow(X0, V, t), axis=1)) for t, X in zip(traj.times, traj.X)]
    return {"times": np.asarray(traj.times), "distance": np.array(dist), "oja_deviation": np.array(dev),
            "gap": gap, "oja_distance": np.array([rms(distance_to_subspace(oja_flow(X0, V, t), basis))
                                                  for t in traj.times])}


def heat_limit_ratio(beta: float, ks) -> np.ndarray:
    """lambda_k(beta) beta / k^2 for ``sa`` on S^1 (lambda_k = k^2 I_k(beta) / (beta I_0(beta)), BPA): -> 1 as
    beta -> infinity for fixed k (backward heat equation d rho/dt = -(1/beta) d^2 rho/d theta^2), since
    I_k(beta)/I_0(beta) = 1 - k^2/(2 beta) + O(beta^-2)."""
    from scipy.special import ive

    ks = np.asarray(ks, float)
    return ive(ks, beta) / ive(0, beta)


def clustering_run(n: int, beta: float, *, seed: int = 0, threshold: float = 0.5, kmax: int | None = None,
                   t_max: float | None = None, refine: int = 1, progress=None) -> dict:
    r""":math:`n` iid uniform angles under ``sa`` on :math:`\mathbb{S}^1` (Fourier field, RK4): the first time
    :math:`\max_k \lvert r_k\rvert` reaches ``threshold`` (clusters have formed), the dominant mode then, and the
    cluster count (gaps, as :func:`numerics.meanfield.metastable.count_clusters_by_gaps`) shortly after;
    ``initial_amplitudes`` are the :math:`\lvert r_k(0)\rvert`, :math:`k = 1, \dots,` ``kmax``, of the observed
    modes.

    The discretisation is RK4 at step 0.05 / ``refine`` with frames 0.1 / ``refine`` apart (the formation time
    interpolates log max_k |r_k| linearly between frames); ``refine = 2`` halves both, on the same frames' grid
    refined, for an accuracy estimate (``attnflow moderate --phase clustering``)."""
    from numerics.meanfield.growth import circle_order_parameters, simulate_circle_angles
    from numerics.meanfield.metastable import count_clusters_by_gaps
    from theory.meanfield import dominant_degree

    n = require_int(n, "n", minimum=10)
    beta = require_real(beta, "beta", minimum=0.0, strict_minimum=True)
    dom = dominant_degree("sa", 2, beta)
    lam = float(dom.rate)
    kmax = kmax or 3 * dom.l_max + 5
    t_max = t_max or (0.5 * math.log(max(n, 3)) + 4.0) / lam   # linear phase plus a few contraction times
    from numerics.circle.fourier import harmonics_for_tolerance

    K = harmonics_for_tolerance(beta, 1e-10, model="sa")
    refine = require_int(refine, "refine", minimum=1, maximum=64)
    dt = 0.05 / refine
    check_work(4.0 * (t_max / dt + 1) * (30.0 * n * K + 1e5), f"the clustering run (n = {n}, beta = {beta:g}, "
               f"t = {t_max:.3g})")
    theta0 = np.random.default_rng(seed).uniform(0, 2 * np.pi, n)
    saves = refine * int(t_max / 0.1) + 1
    times, obs, theta = simulate_circle_angles(theta0, beta, "sa", t_max, dt, saves,
                                               lambda th: circle_order_parameters(th, kmax), progress=progress)
    peak = obs.max(axis=1)
    hit = np.nonzero(peak >= threshold)[0]
    if hit.size == 0:
        raise InputError(f"no clusters formed by t = {t_max:g} (max |r_k| = {peak.max():.3g})")
    i = int(hit[0])
    # linear interpolation of log max|r_k| between the bracketing frames
    t_form = float(times[i]) if i == 0 else float(np.interp(math.log(threshold), np.log(peak[i - 1:i + 1]),
                                                             times[i - 1:i + 1]))
    count = count_clusters_by_gaps(theta)
    return {"n": n, "beta": beta, "t_formed": t_form, "dominant_mode": int(np.argmax(obs[i]) + 1),
            "l_max": dom.l_max, "lambda_max": lam, "clusters": count.count, "t_end": float(times[-1]),
            "initial_peak": float(peak[0]), "initial_amplitudes": obs[0].tolist()}


def pair_merge_time(theta0: float, beta: float, masses=(0.5, 0.5), end: float | None = None) -> dict:
    r"""Two point clusters of masses :math:`(a_i, a_j)` at angle ``theta0`` on :math:`\mathbb{S}^1` under ``sa``,
    alone: the angle obeys
    :math:`d\theta/dt = -(a_j/a_i + a_i/a_j)\, w(\theta) \sin(\theta) / (1 + \dots)` exactly
    (:func:`_pair_rate`); returns the time to reach ``end`` (default ``theta0/10``) by quadrature and the leading
    Laplace order :math:`e^{\beta(1 - \cos \theta_0)} / ((a_i/a_j + a_j/a_i) \beta \sin^2 \theta_0)`."""
    from scipy.integrate import quad

    ai, aj = (float(m) for m in masses)
    end = theta0 / 10 if end is None else end

    def speed(th):
        return _pair_rate(th, beta, ai, aj)

    T, _ = quad(lambda th: 1.0 / speed(th), end, theta0, limit=200, epsabs=0.0, epsrel=1e-10)
    lead = math.exp(beta * (1 - math.cos(theta0))) / ((ai / aj + aj / ai) * beta * math.sin(theta0) ** 2)
    return {"time": T, "leading_order": lead, "end_angle": end}


def _pair_rate(theta: float, beta: float, ai: float, aj: float) -> float:
    """-d theta/dt for two point clusters under sa: cluster i moves toward j at
    aj e^{beta cos} sin / (ai e^{beta} + aj e^{beta cos}), and j toward i symmetrically."""
    c, s = math.cos(theta), math.sin(theta)
    u = math.exp(-beta * (1 - c))             # e^{beta cos} / e^{beta}
    return s * (aj * u / (ai + aj * u) + ai * u / (aj + ai * u))


def pairing_run(centres, sizes, beta: float, t_end: float, *, spread: float = 1e-4, seed: int = 0,
                saves: int = 201, progress=None) -> dict:
    r"""Clusters of ``sizes`` particles (angular spread ``spread``) at the angles ``centres`` on
    :math:`\mathbb{S}^1` under ``sa``
    (Fourier field, RK4): cluster centres (circular means) at each saved time."""
    from numerics.meanfield.growth import simulate_circle_angles

    centres = np.asarray(centres, float)
    sizes = [require_int(s, "size", minimum=1) for s in sizes]
    if len(sizes) != centres.size:
        raise InputError("give one size per cluster centre")
    from numerics.circle.fourier import harmonics_for_tolerance

    t_end = require_real(t_end, "t_end", minimum=0.0, strict_minimum=True)
    K = harmonics_for_tolerance(beta, 1e-10, model="sa")
    check_work(4.0 * (t_end / 0.1 + saves) * (30.0 * sum(sizes) * K + 1e5),
               f"the pairing run ({sum(sizes)} particles, t = {t_end:.3g})")
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(len(sizes)), sizes)
    theta0 = centres[labels] + spread * rng.standard_normal(labels.size)

    def observe(th):
        z = np.exp(1j * th)
        return np.array([np.angle(z[labels == c].mean()) for c in range(len(sizes))])

    times, obs, _ = simulate_circle_angles(theta0, beta, "sa", t_end, 0.1, saves, observe, progress=progress)
    return {"times": times, "centres": np.unwrap(obs, axis=0), "labels": labels}
