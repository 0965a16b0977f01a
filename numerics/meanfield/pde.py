r"""Pseudo-spectral solver of the mean-field continuity equation of self-attention on the circle
:math:`\mathbb{S}^1`.

The equation (GLPR arXiv 2312.10794, mean field; BPA arXiv 2410.23228), for a probability density
:math:`\rho(\theta)` w.r.t. :math:`d\theta` on :math:`[0, 2 \pi)`:

.. math::

    \begin{aligned}
    &\partial_t \rho + \partial_\theta (\rho v) = 0, \\
    \texttt{usa}:\quad &v(\theta) = \int e^{\beta \cos(\phi - \theta)} \sin(\phi - \theta) \rho(\phi)\, d\phi, \\
    \texttt{sa}:\quad &v(\theta) = \frac{\int e^{\beta \cos(\phi - \theta)} \sin(\phi - \theta) \rho(\phi)\, d\phi}
    {\int e^{\beta \cos(\phi - \theta)} \rho(\phi)\, d\phi},
    \end{aligned}

which is the :math:`n \to \infty` limit of docs/conventions.md's particle models on :math:`\mathbb{S}^1`
(:math:`x = (\cos \theta, \sin \theta)`).

Discretisation: :math:`\rho` on :math:`M` uniform grid points; with :math:`\rho = \sum_k c_k e^{ik \theta}`, the
convolutions are diagonal,
:math:`\big(\int e^{\beta \cos(\theta-\phi)} \rho(\phi)\, d\phi\big)_k = 2 \pi I_k(\beta) c_k`, and
:math:`v_k = i k\, 2 \pi I_k(\beta) c_k / \beta` (``usa``). The multipliers :math:`I_k(\beta) e^{-\lvert\beta\rvert}`
come from the generated code of :func:`theory.meanfield.convolution_multiplier_function`
(``scipy.special.ive``: no overflow). Products are dealiased with the 2/3 rule (both factors and the flux
truncated to :math:`\lvert k\rvert \le M/3`), so the :math:`k = 0` coefficient of :math:`\partial_t \rho` is
exactly zero and mass is conserved to rounding. Time stepping: Dormand-Prince 5(4) with error
control (``scipy.integrate.solve_ivp``, method RK45). Monitored at every saved frame: mass, minimum density;
at every step: spectral resolution (the solve stops when the top fifth of the retained band carries a coefficient above
``resolution_tol`` times the mean: the density has concentrated below grid scale,
which happens soon after clusters form) and, for ``sa``, positivity of the partition function.

Verified by: meanfield.pde-rates.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import solve_ivp

from numerics.common.limits import check_array
from numerics.common.errors import InputError, require_choice, require_int, require_real

MODELS = ("sa", "usa")
TIME_UNITS = ("natural", "rescaled")


@dataclass(frozen=True)
class DensityHistory:
    """A solution of the continuity equation on S^1 at saved times.

    Attributes
    ----------
    times : (T,) ndarray
        Saved times (in ``meta["time_unit"]``; only usa distinguishes units).
    theta : (M,) ndarray
        Grid angles 2 pi j / M.
    density : (T, M) ndarray
        rho(t, theta_j), a probability density w.r.t. d theta.
    coefficients : (T, M//2 + 1) complex ndarray
        c_k(t), rho = sum_k c_k e^{ik theta} (c_0 = 1/(2 pi)); |c_k| is the mode amplitude.
    mass : (T,) ndarray
        int rho d theta at each saved time (1 up to rounding).
    min_density : (T,) ndarray
        min_j rho(t, theta_j) (positivity monitor).
    t_reached : float
        Last time integrated (< t_end if the run stopped early).
    stopped : str
        "t_end", "unresolved" (spectral tail above tolerance), "nonpositive-partition" (sa) or "solver: ...".
    meta : dict
        Parameters, seed, solver statistics, wall time.
    """

    times: np.ndarray
    theta: np.ndarray
    density: np.ndarray
    coefficients: np.ndarray
    mass: np.ndarray
    min_density: np.ndarray
    t_reached: float
    stopped: str
    meta: dict = field(default_factory=dict)

    @property
    def max_mass_drift(self) -> float:
        return float(np.max(np.abs(self.mass - 1.0)))


def _multipliers(beta: float, modes: np.ndarray) -> np.ndarray:
    """I_k(beta) e^{-|beta|} for k in ``modes`` (generated code; beta = 0 gives the limit 1 for k = 0 else 0)."""
    if beta == 0.0:
        return (modes == 0).astype(float)
    from theory.meanfield import convolution_multiplier_function

    return convolution_multiplier_function(2)(modes.astype(float), beta)


class CircleContinuityOperator:
    """d rho/dt = -d/d theta (rho v[rho]) on M grid points, dealiased; callable ``rhs(rho) -> (M,)``.

    Parameters: beta (real), model ("sa" | "usa"), grid M (even, >= 8), time_unit (usa only: "rescaled"
    means t' = e^beta t, finite for any beta).
    """

    def __init__(self, beta: float, model: str, grid: int, time_unit: str = "natural", noise: float = 0.0):
        self.beta, self.model, self.grid, self.time_unit = beta, model, grid, time_unit
        self.noise = noise
        self.k = np.arange(grid // 2 + 1)
        self.cutoff = grid // 3
        self.mask = (self.k <= self.cutoff).astype(float)
        mult = _multipliers(beta, self.k) * self.mask        # I_k(beta) e^{-|beta|}, truncated
        if model == "usa":
            if beta == 0.0:
                # limit beta -> 0 of 2 pi I_k(beta)/beta: pi for k = 1, 0 otherwise (the Kuramoto field)
                conv = np.where(self.k == 1, math.pi, 0.0)
            else:
                scale = abs(beta) - (beta if time_unit == "rescaled" else 0.0)
                if scale > 700:
                    raise InputError(f"usa in natural time overflows at beta={beta:g}; use time_unit='rescaled'")
                conv = 2 * math.pi * mult * math.exp(scale) / beta
            self.velocity_multiplier = 1j * self.k * conv
        else:
            self.partition_multiplier = 2 * math.pi * mult        # Z e^{-|beta|}
            self.velocity_multiplier = 1j * self.k * self.partition_multiplier / beta if beta != 0 else (
                1j * self.k * np.where(self.k == 1, math.pi, 0.0))
        self.derivative = -1j * self.k * self.mask
        # Fokker-Planck: + noise * d^2 rho/d theta^2, diagonal -noise k^2 (proofs_notes/noise-threshold.md)
        self.diffusion = -noise * self.k.astype(float) ** 2 * self.mask
        self.min_partition = math.inf

    def coefficients(self, rho: np.ndarray) -> np.ndarray:
        return np.fft.rfft(rho) / self.grid

    def velocity(self, rho: np.ndarray) -> np.ndarray:
        c = self.coefficients(rho) * self.mask
        v = np.fft.irfft(self.velocity_multiplier * c, self.grid) * self.grid
        if self.model == "sa":
            if self.beta == 0.0:
                return v  # Z = 1 at beta = 0 for a probability density
            Z = np.fft.irfft(self.partition_multiplier * c, self.grid) * self.grid
            zmin = float(Z.min())
            self.min_partition = min(self.min_partition, zmin)
            if zmin <= 0:
                return np.full_like(v, np.nan)
            v = v / Z
        return v

    def __call__(self, t: float, rho: np.ndarray) -> np.ndarray:
        c = self.coefficients(rho) * self.mask
        filtered = np.fft.irfft(c, self.grid) * self.grid
        flux = filtered * self.velocity(rho)
        fc = np.fft.rfft(flux) * self.mask
        if self.noise:
            return np.fft.irfft(self.derivative * fc + self.diffusion * np.fft.rfft(rho), self.grid)
        return np.fft.irfft(self.derivative * fc, self.grid)

    def tail_fraction(self, rho: np.ndarray) -> float:
        """max |c_k| over the top fifth of the retained band, relative to the mean c_0 = 1/(2 pi).

        Relative to the mean (not to the largest mode) so that integration noise at the level of ``atol``
        during the linear phase, when every mode is tiny, does not count as a loss of resolution.
        """
        c = np.abs(self.coefficients(rho))
        return float(c[int(0.8 * self.cutoff):self.cutoff + 1].max() / c[0])


def seeded_perturbation(grid: int, amplitude: float, seed, modes: int) -> np.ndarray:
    """(1/2pi)(1 + amplitude sum_{k=1}^{modes} cos(k theta + phase_k)), phases iid uniform from ``seed``.

    Every mode k <= ``modes`` starts with the same relative amplitude, so each growth rate can be fitted.
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    theta = 2 * np.pi * np.arange(grid) / grid
    phases = rng.uniform(0, 2 * np.pi, size=modes)
    k = np.arange(1, modes + 1)
    eta = np.cos(np.outer(theta, k) + phases).sum(axis=1)
    return (1 + amplitude * eta) / (2 * np.pi)


def solve_continuity_circle(beta: float, model: str, *, grid: int = 512, t_end: float, amplitude: float = 1e-6,
                            seed=0, perturbation_modes: int | None = None, rho0=None, saves: int = 201,
                            rtol: float = 1e-8, atol: float = 1e-13, time_unit: str = "natural",
                            resolution_tol: float = 1e-6, progress=None, noise: float = 0.0) -> DensityHistory:
    r"""Solve the :math:`\mathbb{S}^1` continuity equation from the uniform density plus a seeded small perturbation.

    Parameters
    ----------
    beta : float
        Inverse temperature (any real).
    model : {"sa", "usa"}
    grid : int
        Number of grid points :math:`M` (even, :math:`\ge 8`); modes :math:`\lvert k\rvert \le M/3` are kept (2/3
        dealiasing).
    t_end : float
        Final time (> 0); the run stops earlier if the density leaves the resolved band.
    amplitude : float
        Relative amplitude of each perturbed mode (0 < ``amplitude``, ``amplitude * modes < 1`` keeps
        :math:`\rho > 0`).
    seed : int or numpy.random.Generator
        Seed of the phases of the perturbation.
    perturbation_modes : int, optional
        Perturb modes :math:`1, \dots, K` (default :math:`\min(32, M/6)`: below the monitored tail band).
    rho0 : (M,) array_like, optional
        Explicit initial density (overrides amplitude/seed); must integrate to 1.
    saves : int
        Number of equally spaced saved frames in [0, t_end].
    rtol, atol : float
        Error tolerances of the embedded Runge-Kutta pair (``atol`` absolute on :math:`\rho`).
    time_unit : {"natural", "rescaled"}
        ``usa`` only: "rescaled" is :math:`t' = e^\beta t`.
    resolution_tol : float
        Stop when the spectral tail fraction exceeds this (see the module docstring).
    noise : float
        :math:`D \ge 0`: solve the Fokker-Planck equation
        :math:`\partial_t \rho + \partial_\theta(\rho v) = D\, \partial_\theta^2 \rho` (noisy particles,
        :mod:`theory.noise`); mode :math:`k` then grows at :math:`\lambda_k - D k^2`.

    Returns
    -------
    DensityHistory

    Notes
    -----
    Verified by: meanfield.pde-rates.
    """
    beta = require_real(beta, "beta")
    model = require_choice(model, "model", MODELS)
    time_unit = require_choice(time_unit, "time_unit", TIME_UNITS)
    grid = require_int(grid, "grid", minimum=8)
    check_array((grid, 64), f"the S^1 PDE on a grid of {grid} points")  # states, stages and saved frames
    if grid % 2:
        raise InputError(f"grid must be even, got {grid}")
    t_end = require_real(t_end, "t_end", minimum=0.0, strict_minimum=True)
    saves = require_int(saves, "saves", minimum=2)
    rtol = require_real(rtol, "rtol", minimum=0.0, strict_minimum=True)
    atol = require_real(atol, "atol", minimum=0.0, strict_minimum=True)
    resolution_tol = require_real(resolution_tol, "resolution_tol", minimum=0.0, strict_minimum=True)
    noise = require_real(noise, "noise", minimum=0.0)
    op = CircleContinuityOperator(beta, model, grid, time_unit, noise)
    if rho0 is None:
        amplitude = require_real(amplitude, "amplitude", minimum=0.0, strict_minimum=True)
        kmax = min(32, grid // 6) if perturbation_modes is None else require_int(
            perturbation_modes, "perturbation_modes", minimum=1, maximum=grid // 3)
        if amplitude * kmax >= 1:
            raise InputError(f"amplitude * perturbation_modes must be < 1 for a positive density, got "
                             f"{amplitude:g} * {kmax} = {amplitude * kmax:g}")
        rho = seeded_perturbation(grid, amplitude, seed, kmax)
    else:
        rho = np.asarray(rho0, dtype=float)
        if rho.shape != (grid,) or not np.all(np.isfinite(rho)):
            raise InputError(f"rho0 must be a finite array of shape ({grid},), got shape {rho.shape}")
        kmax = None
    theta = 2 * np.pi * np.arange(grid) / grid
    save_times = np.linspace(0.0, t_end, saves)

    def unresolved(t, y):
        return op.tail_fraction(y) - resolution_tol

    unresolved.terminal = True
    unresolved.direction = 1

    def rhs(t, y):
        if progress is not None:
            progress(t, t_end)
        return op(t, y)

    start = time.perf_counter()
    sol = solve_ivp(rhs, (0.0, t_end), rho, method="RK45", t_eval=save_times, events=unresolved,
                    rtol=rtol, atol=atol)
    wall = time.perf_counter() - start
    Y = sol.y.T
    good = np.all(np.isfinite(Y), axis=1)
    times, Y = sol.t[good], Y[good]
    if sol.status == 1:
        stopped, t_reached = "unresolved", float(sol.t_events[0][0])
    elif model == "sa" and op.min_partition <= 0:
        stopped, t_reached = "nonpositive-partition", float(times[-1])
    elif sol.status < 0:
        stopped, t_reached = f"solver: {sol.message}", float(times[-1]) if times.size else 0.0
    else:
        stopped, t_reached = "t_end", float(t_end)
    coeffs = np.fft.rfft(Y, axis=1) / grid
    mass = Y.sum(axis=1) * (2 * np.pi / grid)
    meta = {"beta": beta, "model": model, "grid": grid, "t_end": t_end, "amplitude": amplitude if rho0 is None
            else None, "seed": seed if isinstance(seed, (int, np.integer)) else None, "perturbation_modes": kmax,
            "time_unit": time_unit if model == "usa" else "natural",
            "time_unit_note": "t' = e^beta t" if (model == "usa" and time_unit == "rescaled") else "natural",
            "dealiasing": "2/3 rule", "cutoff_mode": op.cutoff, "rtol": rtol, "atol": atol,
            "integrator": "Dormand-Prince 5(4) (scipy solve_ivp RK45)", "steps_rhs_evaluations": int(sol.nfev),
            "resolution_tol": resolution_tol, "wall_seconds": wall, "noise": noise}
    return DensityHistory(times, theta, Y, coeffs, mass, Y.min(axis=1), t_reached, stopped, meta)


#: |h lambda| that Dormand-Prince 5(4) (scipy RK45) tolerates on the negative real axis
RK45_STABILITY = 3.3
#: seconds of one right-hand side at grid 512 (FFTs and Python overhead; measured on the 2-core development
#: machine under load: 0.7 ms) -- the estimate scales it linearly with the grid
RHS_SECONDS_AT_512 = 7e-4


def noise_stiffness_estimate(grid: int, noise: float, t_end: float) -> dict:
    """What the diffusion term D d^2/dtheta^2 costs the explicit solver: its fastest rate D k_c^2 at the cutoff
    mode k_c = grid // 3 bounds the stable step by 3.3 / (D k_c^2), so about t_end D k_c^2 / 3.3 steps of 6
    right-hand sides each (an estimate: the transport adds its own, smaller, rates)."""
    cutoff = grid // 3
    rate = noise * cutoff * cutoff
    steps = t_end * rate / RK45_STABILITY
    evaluations = 6.0 * steps
    return {"cutoff_mode": cutoff, "diffusion_rate": rate, "steps": steps, "evaluations": evaluations,
            "seconds": evaluations * RHS_SECONDS_AT_512 * grid / 512.0,
            "flops": evaluations * 60.0 * grid * max(1.0, math.log2(grid))}

