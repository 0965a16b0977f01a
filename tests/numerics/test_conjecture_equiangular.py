"""The equiangular reduction for user kernels: generated particle field vs the symbolic reduced ODE."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from numerics.core.integrators import integrate_adaptive
from numerics.core.kernel_field import make_kernel_field
from theory import symbols as sym
from theory.codegen import compile_function
from theory.expression_parser import parse_kernel
from theory.reductions import equiangular_rate


@pytest.mark.parametrize("model", ["sa", "usa"])
@pytest.mark.parametrize("text, params, beta, rho0", [
    ("cosh(beta*s) + c*s", {"c": 5.0}, 1.5, -0.1),   # phi' = beta sinh(beta s) + c > 0 on [-1, 1]
    ("exp(beta*s) + c*s**3", {"c": 0.5}, 0.7, 0.3),
])
def test_equiangular_rate_matches_particles_for_user_kernels(model, text, params, beta, rho0):
    kernel = parse_kernel(text, params)
    n, d, t_end = 5, 6, 3.0
    rng = np.random.default_rng(4)
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    X0 = np.zeros((n, d))
    X0[:, :n] = np.linalg.cholesky((1 - rho0) * np.eye(n) + rho0 * np.ones((n, n)))
    X0 = X0 @ Q.T
    times = np.linspace(0.0, t_end, 7)
    _, states, _ = integrate_adaptive(make_kernel_field(kernel, beta, model), X0, times, rtol=1e-11, atol=1e-13)
    F = compile_function("equiangular_user_rate", (sym.s, sym.beta, sym.n, *kernel.symbols[2:]),
                         equiangular_rate(kernel, model), arg_names=("s", "beta", "n", "c"))
    sol = solve_ivp(lambda t, y: F(y, beta, n, params["c"]), (0, t_end), [rho0], t_eval=times,
                    method="DOP853", rtol=1e-12, atol=1e-14)
    off = ~np.eye(n, dtype=bool)
    gram = np.einsum("tid,tjd->tij", states, states)[:, off]
    # both sides integrate to ~1e-11 relative accuracy; 1e-8 leaves a margin of 1000 and still fails for any
    # wrong coefficient (a wrong F changes rho(t) at O(1e-2) within t = 3)
    assert np.max(np.abs(gram - sol.y[0][:, None])) < 1e-8
    assert sol.y[0][-1] > rho0 + 0.1  # the check is not vacuous: rho moved
