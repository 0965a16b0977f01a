"""Laws known in closed form, against which the noise area's outputs are measured (claims
``noise.sphere-order-parameter`` and ``noise.weak2-with-drift``).

- von Mises-Fisher densities on S^2, u ~ e^{kappa <x, e>}: E x = (coth kappa - 1/kappa) e. A faint one
  (kappa = 3e-6: E x = kappa/3 e to 1e-12 relative) is a degree-1 perturbation of the uniform state, which the
  Fokker-Planck equation (usa, beta) grows at lambda_1(beta) - 2 D (linear theory; the next correction is
  O(kappa) relative), so the solver's order parameter must be r(t) = r(0) e^{(lambda_1 - 2D) t}, along e.
- Brownian motion on S^{d-1} with a rotation drift v(x) = A x (A skew: tangent, and commuting with the Laplacian):
  x(t) = e^{tA} B(t), so E<x(t), e^{tA} x(0)> = e^{-D (d-1) t}. On S^1 the law is exact in the angle,
  E e^{i theta(t)} = e^{(i omega - D) t} e^{i theta_0}, and the weak-order-2 step's mean is linear in x (the
  renormalised midpoint drift is a rotation, the geodesic noise step has mean e^{-D h} x): E x_N = M^N x_0 with
  M computed from the scheme's own step function by Gauss-Hermite quadrature, free of sampling noise.
"""
from __future__ import annotations

import math

import numpy as np

#: von Mises-Fisher concentration, axis (off every grid plane) and degree of the planted densities
KAPPA, L, AXIS = 2.0, 20, np.array([0.3, -0.5, 0.8]) / math.sqrt(0.98)


def vmf_mean_length(kappa: float) -> float:
    return 1.0 / math.tanh(kappa) - 1.0 / kappa


def sphere_order_parameter_errors(beta: float = 1.0, D: float = 0.4, t_end: float = 1.0) -> dict:
    """(a) ``SphereHistory.order_parameter``/``mean_vector`` of the analysed vMF density (kappa = 2) against the
    closed form; (b) the solver from a faint vMF (kappa = 3e-6) against r(0) e^{(lambda_1 - 2D) t} along the axis."""
    from numerics.noise.sphere import SphereHistory, clustered_coefficients, solve_sphere
    from theory.meanfield import growth_rate

    c0 = clustered_coefficients(L, KAPPA, AXIS)
    r0 = vmf_mean_length(KAPPA)
    still = SphereHistory(np.array([0.0]), c0[None, :], L)
    static_r = abs(float(still.order_parameter[0]) - r0) / r0
    static_vec = float(np.abs(still.mean_vector(0) - r0 * AXIS).max()) / r0
    faint = 3e-6
    h = solve_sphere(beta, D, L=8, t_end=t_end, c0=clustered_coefficients(8, faint, AXIS), dt=0.05, saves=5)
    rate = float(growth_rate("usa", 3, 1, beta)) - 2.0 * D
    expected = (faint / 3.0) * np.exp(rate * h.times)
    dynamic_r = float(np.max(np.abs(h.order_parameter - expected) / expected))
    dynamic_vec = max(float(np.abs(h.mean_vector(k) - e * AXIS).max() / e) for k, e in enumerate(expected))
    return {"static_r": static_r, "static_vector": static_vec, "dynamic_r": dynamic_r, "dynamic_vector": dynamic_vec,
            "r_vmf": r0, "kappa": KAPPA, "L": L, "faint_kappa": faint, "beta": beta, "D": D,
            "rate": rate, "times": h.times.tolist(), "r_solver": h.order_parameter.tolist()}


def _rotation_field(omega: float):
    J = np.array([[0.0, -omega], [omega, 0.0]])
    return lambda X: X @ J.T


def weak2_circle_errors(omega: float = 2.0, D: float = 0.5, t: float = 1.0, steps=(10, 20, 40),
                        nodes: int = 24) -> dict:
    """Weak errors |E e^{i theta_N} - e^{(i omega - D) t}| of :func:`numerics.noise.sde.step_geodesic_weak2` on
    S^1 with the rotation drift, exact in expectation (Gauss-Hermite over the two normal draws), and the
    fitted order; also the same for :func:`numerics.noise.sde.step_euler_maruyama` (weak order 1)."""
    from numerics.noise.sde import step_euler_maruyama, step_geodesic_weak2

    g, w = np.polynomial.hermite_e.hermegauss(nodes)      # weight e^{-x^2/2}
    w = w / w.sum()
    xa, xb = np.meshgrid(g, g, indexing="ij")
    xi = np.stack([xa.ravel(), xb.ravel()], axis=1)
    weights = np.outer(w, w).ravel()
    field = _rotation_field(omega)
    exact = complex(math.cos(omega * t), math.sin(omega * t)) * math.exp(-D * t)
    out = {}
    for name, step in (("geodesic-weak2", step_geodesic_weak2), ("euler-maruyama", step_euler_maruyama)):
        errors = []
        for N in steps:
            h = t / N
            X = np.tile([1.0, 0.0], (xi.shape[0], 1))
            moved = step(field, X, h, D, xi)
            m = weights @ moved                      # M e_1; M = [[m0, -m1], [m1, m0]] by rotation equivariance
            errors.append(abs(complex(m[0], m[1]) ** N - exact))
        slope = float(np.polyfit(np.log(t / np.array(steps)), np.log(errors), 1)[0])
        out[name] = {"errors": errors, "order": slope}
    return {"steps": list(steps), "omega": omega, "D": D, "t": t, **out}


def weak2_deterministic_order(steps=(8, 16, 32), t: float = 1.0) -> dict:
    """At D = 0 the weak-order-2 step is a deterministic Strang splitting of two renormalised midpoint half steps:
    its order on a nonlinear field (the ``sa`` attention field, n = 5, d = 3, beta = 2) must be 2. Reference:
    Dormand-Prince 8 at rtol 1e-13."""
    from numerics.core.field import make_field
    from numerics.core.integrators import integrate
    from numerics.core.trajectory import uniform_sphere
    from numerics.noise.sde import step_geodesic_weak2

    field = make_field(3, 2.0, "sa")
    X0 = uniform_sphere(5, 3, 4)
    _, ref, _ = integrate(field, X0, t, "dop853", rtol=1e-13, atol=1e-13, save_times=np.array([0.0, t]))
    errors = []
    for N in steps:
        X = X0.copy()
        for _ in range(N):
            X = step_geodesic_weak2(field, X, t / N, 0.0, np.zeros_like(X))
        errors.append(float(np.abs(X - ref[-1]).max()))
    return {"steps": list(steps), "errors": errors,
            "order": float(np.polyfit(np.log(t / np.array(steps)), np.log(errors), 1)[0])}


def weak2_sphere_mc(d: int = 3, D: float = 0.5, t: float = 0.5, dt: float = 0.05, samples: int = 20000,
                    seed: int = 11) -> dict:
    """Monte Carlo through :func:`numerics.noise.sde.integrate_sde` (weak-order-2 scheme, rotation drift in the
    (e_1, e_2) plane): E<x(t), e^{tA} x(0)> against e^{-D (d-1) t}, with its standard error."""
    from scipy.linalg import expm

    from numerics.noise.sde import integrate_sde

    A = np.zeros((d, d))
    A[0, 1], A[1, 0] = -3.0, 3.0
    rng = np.random.default_rng(seed)
    X0 = rng.standard_normal((samples, d))
    X0 /= np.linalg.norm(X0, axis=1, keepdims=True)
    _, states, _ = integrate_sde(lambda X: X @ A.T, X0, t, dt, D, seed=seed + 1, scheme="geodesic-weak2",
                                 save_every=10**9)
    c = np.sum(states[-1] * (X0 @ expm(t * A).T), axis=1)
    mean, se = float(c.mean()), float(c.std(ddof=1) / math.sqrt(samples))
    exact = math.exp(-D * (d - 1) * t)
    return {"d": d, "mean": mean, "stderr": se, "exact": exact, "z": abs(mean - exact) / se, "samples": samples}
