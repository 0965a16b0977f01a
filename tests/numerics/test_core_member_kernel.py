"""The compiled member kernel of ensembles (``Solver(backend="numba")`` on a batch; numerics.core.batch_field,
numerics.core._member_kernels): its exp against NumPy's, the batched field against the NumPy tiles within
:func:`numerics.core.batch_field.member_rounding_bound`, members independent of the batch they are in (bit for
bit), and whole trajectories against single ``direct`` runs to rounding."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from numerics.common.errors import InputError  # noqa: E402
from numerics.core import batch_field  # noqa: E402
from numerics.core.ensemble import Members  # noqa: E402
from numerics.core.model import Model, Solver  # noqa: E402
from numerics.core.trajectory import simulate, uniform_sphere  # noqa: E402

EPS = np.finfo(float).eps


def starts(B, n, d, first=0):
    return np.stack([uniform_sphere(n, d, first + b) for b in range(B)])


def test_exp_is_within_two_ulp_of_numpys_and_saturates():
    from numerics.core._member_kernels import exp_array

    x = np.concatenate([np.linspace(-706.9, 709.7, 20_001), np.random.default_rng(0).uniform(-40, 5, 10_000)])
    got, ref = exp_array(x), np.exp(x)
    assert np.max(np.abs(got - ref) / ref) <= 2 * EPS
    edges = exp_array(np.array([-800.0, -707.5, 709.79, 1000.0, 0.0]))
    assert edges.tolist() == [0.0, 0.0, np.inf, np.inf, 1.0]


def weighted_scale(X, beta, kind, M, V, scale):
    """sum_j w_ij |V x_j| / sum_j w_ij (sa) or scale/n sum_j w_ij |V x_j| (usa), w the shifted weights: the size
    of the sums that the two engines add in different orders (the bound is relative to it)."""
    out = []
    for b in range(X.shape[0]):
        x = X[b]
        bt = beta[b] if np.ndim(beta) else beta
        m = np.eye(x.shape[1]) if M is None else (M[b] if np.ndim(M) == 3 else M)
        v = np.eye(x.shape[1]) if V is None else (V[b] if np.ndim(V) == 3 else V)
        logits = bt * (x @ m) @ x.T
        c = np.abs(bt) * np.linalg.norm(x @ m, axis=1) if kind == "sa" else np.full(len(x), bt)
        w = np.exp(logits - c[:, None])
        size = np.abs(x @ v.T).max(axis=1)
        total = w @ size
        out.append(total / w.sum(axis=1) if kind == "sa" else total * scale / len(x))
    return np.array(out)[:, :, None]


@pytest.mark.parametrize("kind", ["sa", "usa"])
@pytest.mark.parametrize("matrices", ["identity", "V only", "per-member Q K V"])
def test_batched_field_within_the_rounding_bound(kind, matrices):
    rng = np.random.default_rng(3)
    B, n, d = 70, 23, 4  # 70 members: a full block of 64 lanes and a padded one
    X = starts(B, n, d)
    beta = rng.uniform(-3, 6, B)
    M = V = None
    if matrices == "V only":
        V = 0.7 * rng.standard_normal((d, d))
    elif matrices == "per-member Q K V":
        Q, K = (0.6 * rng.standard_normal((B, d, d)) for _ in range(2))
        M = np.swapaxes(Q, 1, 2) @ K
        V = 0.7 * rng.standard_normal((B, d, d))
    fast = batch_field.make_batch_field(d, beta, kind, M, V, engine="numba")(X)
    ref = batch_field.make_batch_field(d, beta, kind, M, V)(X)
    m_norm = 1.0 if M is None else float(np.max(np.linalg.norm(M, 2, axis=(1, 2))))
    bound = batch_field.member_rounding_bound(beta, d, n, m_norm)
    size = weighted_scale(X, beta, kind, M, V, 1.0)
    err = np.abs(fast - ref)
    # the bound on the sums, twice (numerator and denominator of sa), and the projection's few roundings
    assert np.all(err <= 2 * bound * size + 16 * EPS * np.abs(ref).max()), float(np.max(err / (bound * size)))
    assert np.max(err) > 0  # another order: not the same bits (else this test would not test the bound)


def test_members_do_not_depend_on_the_batch_they_are_in():
    """A member's arithmetic is that of its lane: the same bits alone, in a block of 64 or in a padded block."""
    X0 = starts(130, 12, 3)
    betas = np.linspace(0.5, 6.0, 130)
    solver = Solver("rk4", dt=0.05, backend="numba")
    whole = simulate(Model("sa", 1.0), X0, 0.5, solver=solver, members=Members(beta=betas))
    for b in (0, 70, 129):
        alone = simulate(Model("sa", betas[b]), X0[b:b + 1], 0.5, solver=solver)
        np.testing.assert_array_equal(whole.X[:, b], alone.X[:, 0])


def test_trajectories_agree_with_single_direct_runs_to_rounding():
    """240 field evaluations at beta = 4: members of a numba batch against single direct runs (measured about
    1e-15; the stated bound 1e-12 leaves room for the growth of rounding along a contracting flow)."""
    X0 = starts(3, 32, 3)
    ens = simulate(Model("sa", 4.0), X0, 3.0, solver=Solver("rk4", dt=0.05, backend="numba"))
    assert ens.meta["backend"] == "numba"
    worst = max(float(np.abs(ens.X[:, b] - simulate(Model("sa", 4.0), X0[b], 3.0,
                                                      solver=Solver("rk4", dt=0.05)).X).max()) for b in range(3))
    assert worst <= 1e-12


def test_overflow_and_underflow_rows():
    X = starts(2, 6, 3)
    with pytest.raises(InputError, match="overflow"):
        batch_field.make_batch_field(3, -800.0, "usa", time_unit="rescaled", engine="numba")(X)
    # sa at a huge beta: rows whose shifted weights all underflow fall back to the NumPy path's exact maximum
    X2 = np.stack([np.eye(3)[[0, 1]], np.eye(3)[[0, 1]]])
    beta = 800.0
    fast = batch_field.make_batch_field(3, beta, "sa", engine="numba")(X2)
    np.testing.assert_array_equal(fast, batch_field.make_batch_field(3, beta, "sa")(X2))
