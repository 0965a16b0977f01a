"""The mean-field energy of attention with an additive perceptron block on S^1 and its critical points
(after Alvarez-Lopez, Geshkovski, Ruiz-Balet, arXiv 2601.21366, abstract: with the perceptron block, critical
points of the mean-field energy are generically atomic and localised).

The model (derived here, see proofs_notes/meanfield-perceptron-atomic.md): a token moves by
dx/dt = P_x( int e^{beta <x, y>} y d mu(y) + W2 tanh(W1 x + b1) ) with W2 = W1^T diag(w) (usa attention,
Q = K = V = I, natural time), a perceptron whose output is the gradient of Phi(x) = sum_j w_j log cosh(<a_j, x> +
b_j) (a_j the rows of W1). The flow of mu is then the Wasserstein gradient ascent of

    F[mu] = (1 / (2 beta)) int int e^{beta <x, y>} d mu d mu + int Phi d mu,

whose first variation is psi_mu(x) = (1/beta) int e^{beta <x, y>} d mu(y) + Phi(x). A measure is critical iff
grad psi_mu = 0 on its support. On S^1 psi_mu is real-analytic (tanh is analytic on the real line), so either
psi_mu is constant or psi_mu' has finitely many zeros and every critical measure is atomic; psi_mu constant
requires m_k = -beta Phi_k / I_k(beta) for every k >= 1 (m_k = int e^{-ik theta} d mu, Phi_k the Fourier
coefficients of Phi), impossible for a probability measure (|m_k| <= 1) as soon as one k has
beta |Phi_k| > I_k(beta): :func:`constant_first_variation_obstruction`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp
from scipy.special import iv


@dataclass(frozen=True)
class Perceptron:
    """Phi(theta) = sum_j w_j log cosh(<a_j, x> + b_j), x = (cos theta, sin theta); a : (m, 2), b, w : (m,)."""

    a: np.ndarray
    b: np.ndarray
    w: np.ndarray

    def _z(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        theta = np.asarray(theta, dtype=float)[..., None]
        z = self.a[:, 0] * np.cos(theta) + self.a[:, 1] * np.sin(theta) + self.b
        dz = -self.a[:, 0] * np.sin(theta) + self.a[:, 1] * np.cos(theta)
        return z, dz

    def potential(self, theta) -> np.ndarray:
        z, _ = self._z(theta)
        # log cosh z = |z| + log1p(e^{-2|z|}) - log 2, without overflow
        return (self.w * (np.abs(z) + np.log1p(np.exp(-2 * np.abs(z))) - np.log(2.0))).sum(axis=-1)

    def gradient(self, theta) -> np.ndarray:
        """Phi'(theta) = sum_j w_j tanh(z_j) dz_j/dtheta: the angular component of W2 tanh(W1 x + b1)."""
        z, dz = self._z(theta)
        return (self.w * np.tanh(z) * dz).sum(axis=-1)

    def second(self, theta) -> np.ndarray:
        """Phi''(theta) = sum_j w_j (sech^2(z_j) (dz_j)^2 - tanh(z_j) z0_j), z0 = <a_j, x> (d^2 z/dtheta^2 = -z0)."""
        z, dz = self._z(theta)
        z0 = z - self.b
        return (self.w * (dz ** 2 / np.cosh(z) ** 2 - np.tanh(z) * z0)).sum(axis=-1)


def random_perceptron(m: int, seed: int, scale: float = 1.5) -> Perceptron:
    """Generic parameters: a_j ~ N(0, scale^2 I), b_j ~ N(0, 1/4), w_j ~ N(0, 1)."""
    rng = np.random.default_rng(seed)
    return Perceptron(scale * rng.standard_normal((m, 2)), 0.5 * rng.standard_normal(m), rng.standard_normal(m))


def fourier_potential(p: Perceptron, K: int, grid: int = 4096) -> np.ndarray:
    """Phi_k = (1/2 pi) int Phi e^{-ik theta} d theta, k = 0..K (trapezoid rule: spectrally accurate, Phi is
    analytic in a strip)."""
    theta = 2 * np.pi * np.arange(grid) / grid
    return np.fft.rfft(p.potential(theta))[:K + 1] / grid


def constant_first_variation_obstruction(p: Perceptron, beta: float, K: int = 40, floor: float = 1e-11) -> dict:
    """psi_mu constant would need |m_k| = beta |Phi_k| / I_k(beta) <= 1 for all k >= 1. Returns the first k
    whose ratio exceeds 1 (None if none does) among the k with |Phi_k| above ``floor`` (resolved by the
    quadrature), the ratio there, and the largest ratio."""
    phi = np.abs(fourier_potential(p, K))
    ratios = [(float(beta * phi[k] / iv(k, beta)), k) for k in range(1, K + 1) if phi[k] > floor]
    first = next(((r, k) for r, k in ratios if r > 1.0), (None, None))
    return {"first_k_above_1": first[1], "ratio_there": first[0], "max_ratio": max(ratios)[0],
            "resolved_modes": len(ratios)}


def first_variation(theta, atoms: np.ndarray, weights: np.ndarray, beta: float, p: Perceptron | None,
                    order: int = 0) -> np.ndarray:
    """psi_nu and its first two derivatives at ``theta`` for nu = sum_a weights_a delta_{atoms_a}."""
    u = np.asarray(theta, dtype=float)[..., None] - atoms
    e = np.exp(beta * np.cos(u))
    if order == 0:
        att = (weights * e).sum(axis=-1) / beta
        return att + (0 if p is None else p.potential(theta))
    if order == 1:
        return (weights * (-np.sin(u)) * e).sum(axis=-1) + (0 if p is None else p.gradient(theta))
    return (weights * (beta * np.sin(u) ** 2 - np.cos(u)) * e).sum(axis=-1) + (0 if p is None else p.second(theta))


def atom_hessian(atoms: np.ndarray, weights: np.ndarray, beta: float, p: Perceptron) -> np.ndarray:
    """d^2 F / d theta_a d theta_b of F(theta_1..theta_A) = (1/2) sum w_a w_b g(theta_a - theta_b)
    + sum w_a Phi(theta_a), g(u) = e^{beta cos u}/beta, in the metric diag(w) (Wasserstein on atoms)."""
    u = atoms[:, None] - atoms[None, :]
    g2 = (beta * np.sin(u) ** 2 - np.cos(u)) * np.exp(beta * np.cos(u))
    H = -np.outer(weights, weights) * g2
    np.fill_diagonal(H, 0.0)
    off = np.outer(weights, weights) * g2
    np.fill_diagonal(off, 0.0)
    H[np.diag_indices_from(H)] = off.sum(axis=1) + weights * p.second(atoms)
    s = 1 / np.sqrt(weights)
    return s[:, None] * H * s[None, :]


def smooth_random_density_sample(n: int, seed: int, modes: int = 3, amplitude: float = 0.5) -> np.ndarray:
    """n angles iid from rho = (1 + amplitude sum_{k<=modes} c_k cos(k theta + phi_k)) / Z, random c_k in [0, 1]
    / modes and phases (positive: amplitude < 1), by rejection."""
    rng = np.random.default_rng(seed)
    c, ph = rng.uniform(0, 1, modes) / modes, rng.uniform(0, 2 * np.pi, modes)
    k = np.arange(1, modes + 1)
    out = np.empty(0)
    while out.size < n:
        t = rng.uniform(0, 2 * np.pi, 4 * n)
        dens = 1 + amplitude * (c * np.cos(np.outer(t, k) + ph)).sum(axis=1)
        out = np.concatenate([out, t[rng.uniform(0, 1 + amplitude, t.size) < dens]])
    return np.sort(out[:n])


def ascent(theta0: np.ndarray, beta: float, p: Perceptron, t_end: float, rtol: float = 1e-10) -> np.ndarray:
    """The particle discretisation of the Wasserstein gradient ascent of F (equal weights 1/n, the exact
    Lagrangian flow of the empirical measure): d theta_i/dt = psi_mu_n'(theta_i), attention by the circle's
    O(nK) Fourier sums (numerics.circle.fourier, usa, natural time)."""
    from numerics.circle.fourier import fourier_angle_velocity

    def rhs(t, th):
        return fourier_angle_velocity(th, beta, "usa") + p.gradient(th)

    sol = solve_ivp(rhs, (0.0, t_end), theta0, method="RK45", rtol=rtol, atol=1e-12)
    if sol.status != 0:
        raise RuntimeError(f"the ascent stopped: {sol.message}")
    return sol.y[:, -1]


def atoms_of(theta: np.ndarray, gap: float = 1e-3) -> tuple[np.ndarray, np.ndarray, float]:
    """Group angles into atoms (circular gaps > ``gap``): the atoms' circular means, weights, and the largest
    atom diameter."""
    th = np.sort(np.mod(theta, 2 * np.pi))
    gaps = np.diff(np.concatenate([th, [th[0] + 2 * np.pi]]))
    cuts = np.flatnonzero(gaps > gap)
    if cuts.size == 0:
        groups = [th]
    else:
        th = np.roll(th, -(cuts[-1] + 1))     # start after the last gap: no atom wraps around
        th = np.unwrap(th)
        groups = np.split(th, np.flatnonzero(np.diff(th) > gap) + 1)
    atoms = np.array([np.angle(np.mean(np.exp(1j * g))) for g in groups])
    weights = np.array([g.size for g in groups], dtype=float) / theta.size
    diam = max(float(g.max() - g.min()) for g in groups)
    return atoms, weights, diam


def energy(atoms: np.ndarray, weights: np.ndarray, beta: float, p: Perceptron) -> float:
    """F of an atomic measure."""
    u = atoms[:, None] - atoms[None, :]
    return float(0.5 * weights @ (np.exp(beta * np.cos(u)) / beta) @ weights + weights @ p.potential(atoms))


def ascent_study(beta: float = 1.0, m: int = 6, perceptron_seed: int = 7, seeds=(0, 1, 2), n: int = 500,
                 t_end: float = 300.0) -> dict:
    """From ``len(seeds)`` random smooth densities (n particles each) to the end of the ascent: atoms, their
    diameter, the first-variation residual |psi_nu'| at the atoms, psi_nu'' there, the atom Hessian's largest
    eigenvalue, and the energies before and after."""
    p = random_perceptron(m, perceptron_seed)
    runs = []
    for s in seeds:
        th0 = smooth_random_density_sample(n, s)
        th = ascent(th0, beta, p, t_end)
        atoms, w, diam = atoms_of(th)
        F0 = energy(th0, np.full(n, 1 / n), beta, p)
        runs.append({"seed": s, "atoms": atoms.tolist(), "weights": w.tolist(), "diameter": diam,
                     "residual": float(np.max(np.abs(first_variation(atoms, atoms, w, beta, p, 1)))),
                     "psi_second": first_variation(atoms, atoms, w, beta, p, 2).tolist(),
                     "hessian_max": float(np.max(np.linalg.eigvalsh(atom_hessian(atoms, w, beta, p)))),
                     "F_start": F0, "F_end": energy(atoms, w, beta, p)})
    return {"beta": beta, "m": m, "perceptron_seed": perceptron_seed, "n": n, "t_end": t_end,
            "obstruction": constant_first_variation_obstruction(p, beta), "runs": runs}
