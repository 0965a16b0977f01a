"""The compiled several-head member kernel (``Solver(backend="numba")`` on a batch of a model with heads;
numerics.core._member_heads, numerics.core.batch_field.make_batch_block_field(engine="numba")): the field
against the NumPy path within :func:`numerics.core.batch_field.heads_rounding_bound`, planted errors that the
comparison catches, members independent of the batch they are in (bit for bit), trajectories against single
``direct`` runs to rounding, and the refusals."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from numerics.common.errors import InputError  # noqa: E402
from numerics.core import batch_field  # noqa: E402
from numerics.core.blocks import MLP, MultiHead  # noqa: E402
from numerics.core.ensemble import Members  # noqa: E402
from numerics.core.model import Model, Solver  # noqa: E402
from numerics.core.trajectory import simulate, uniform_sphere  # noqa: E402

EPS = np.finfo(float).eps


def starts(B, n, d, first=0):
    return np.stack([uniform_sphere(n, d, first + b) for b in range(B)])


def random_heads(H=3, k=2, d=5, seed=4, spread=1.0):
    rng = np.random.default_rng(seed)
    return MultiHead(*(spread * rng.standard_normal((H, k, d)) / np.sqrt(d) for _ in range(4)))


def usa_size(X, heads, beta):
    """max_i (1/n) sum_j e^{s_ij} over the heads, per member: the size of usa's unnormalised sums."""
    out = []
    for b in range(X.shape[0]):
        bt = beta[b] if np.ndim(beta) else beta
        S = [bt * heads.scale * (X[b] @ heads.Q[h].T) @ (X[b] @ heads.K[h].T).T for h in range(heads.H)]
        out.append(max(float(np.exp(s).mean(axis=1).max()) for s in S))
    return np.array(out)[:, None, None]


def deviation(fast, ref, beta, heads, n, kind, X):
    """max |fast - ref| over the stated bound (the bound scaled by usa's sums; plus the projection's roundings)."""
    size = 1.0 if kind == "sa" else usa_size(X, heads, beta)
    bound = batch_field.heads_rounding_bound(beta, heads, n) * size + 16 * EPS * np.abs(ref).max()
    return float(np.max(np.abs(fast - ref) / bound))


@pytest.mark.parametrize("k", [2, 1, 3])
@pytest.mark.parametrize("kind", ["sa", "usa"])
def test_heads_field_within_the_rounding_bound(kind, k):
    """Rank 2 (the issue's heads) takes the kernel's written-out loop; ranks 1 and 3 its general one."""
    rng = np.random.default_rng(5)
    B, n, d = 70, 13, 5  # 70 members: a full block of 64 lanes and a padded one
    heads = random_heads(k=k, d=d, spread=2.0)
    X = starts(B, n, d)
    beta = rng.uniform(-3, 6, B)
    fast = batch_field.make_batch_block_field(beta, kind, heads, engine="numba")(X)
    ref = batch_field.make_batch_block_field(beta, kind, heads)(X)
    assert deviation(fast, ref, beta, heads, n, kind, X) <= 1.0
    assert np.max(np.abs(fast - ref)) > 0  # another order: not the same bits (else this would not test the bound)


@pytest.mark.parametrize("error", ["Q and K swapped", "W of the next head", "scale dropped"])
def test_the_bound_check_catches_planted_errors(error, monkeypatch):
    """The comparison of the field test goes red when the kernel gets a head's Q and K swapped, the output
    matrix W of another head, or no 1/sqrt(k) scale."""
    import numerics.core._member_heads as kernels

    rng = np.random.default_rng(5)
    B, n, d = 9, 11, 5
    heads = random_heads(d=d, spread=2.0)
    X = starts(B, n, d)
    beta = rng.uniform(1, 4, B)
    ref = batch_field.make_batch_block_field(beta, "sa", heads)(X)
    original = kernels.heads_field
    monkeypatch.setattr(kernels, "heads_field", lambda Xl, Q, K, V, W, coef, usa, out, consts:
                        _call_planted(original, error, heads, Xl, coef, usa, out, consts))
    fast = batch_field.make_batch_block_field(beta, "sa", heads, engine="numba")(X)
    assert deviation(fast, ref, beta, heads, n, "sa", X) > 1e6


def _call_planted(kernel, error, heads, Xl, coef, usa, out, consts):
    """The kernel called with one planted error in its arguments."""
    Q, K, V, W = heads.Q, heads.K, heads.V, heads.W
    if error == "Q and K swapped":
        Q, K = K, Q
    elif error == "W of the next head":
        W = np.roll(W, 1, axis=0)
        W.flags.writeable = False  # read-only as the heads' own arrays: the kernel's compiled signature is reused
    elif error == "scale dropped":
        coef = coef / heads.scale
    kernel(Xl, Q, K, V, W, coef, usa, out, consts)


def test_members_do_not_depend_on_the_batch_they_are_in():
    """A member's arithmetic is that of its lane: the same bits alone, in a block of 64 or in a padded block."""
    heads = random_heads(H=2, d=4)
    X0 = starts(130, 9, 4)
    betas = np.linspace(0.5, 6.0, 130)
    solver = Solver("rk4", dt=0.05, backend="numba")
    whole = simulate(Model("sa", 1.0, heads=heads), X0, 0.3, solver=solver, members=Members(beta=betas))
    assert whole.meta["backend"] == "numba"
    for b in (0, 70, 129):
        alone = simulate(Model("sa", betas[b], heads=heads), X0[b:b + 1], 0.3, solver=solver)
        np.testing.assert_array_equal(whole.X[:, b], alone.X[:, 0])


@pytest.mark.parametrize("kind", ["sa", "usa"])
def test_trajectories_agree_with_single_direct_runs_to_rounding(kind):
    """60 field evaluations: members of a numba batch against single direct runs (measured about 1e-16; the
    stated 1e-12 leaves room for the growth of rounding along the flow)."""
    heads = random_heads(H=4, d=6)
    X0 = starts(3, 16, 6)
    model = Model(kind, 2.0, heads=heads)
    ens = simulate(model, X0, 0.75, solver=Solver("rk4", dt=0.05, backend="numba"))
    worst = max(float(np.abs(ens.X[:, b] - simulate(model, X0[b], 0.75, solver=Solver("rk4", dt=0.05)).X).max())
                for b in range(3))
    assert worst <= 1e-12


@pytest.mark.parametrize("extra", [
    {"mlp": MLP.identity(4)}, {"causal": True}, {"schedule": "layers"}])
def test_numba_refuses_what_the_heads_kernel_cannot_do(extra):
    from numerics.core.blocks import Schedule

    heads = random_heads(H=2, d=4)
    if extra.get("schedule"):
        extra = {"schedule": Schedule(times=[0.0, 1.0], heads=(heads, heads)), "heads": None}
    model = Model("sa", 1.0, **{"heads": heads, **extra})
    with pytest.raises(InputError, match="numba backend of a batch") as err:
        simulate(model, starts(2, 5, 4), 0.1, solver=Solver("rk4", dt=0.05, backend="numba"))
    assert "\n" not in str(err.value)


def test_usa_overflow_is_one_line():
    heads = MultiHead.scaled_identity([1.0, 1.0], 3)
    X = starts(2, 6, 3)
    with pytest.raises(InputError, match="overflow"):
        batch_field.make_batch_block_field(800.0, "usa", heads, engine="numba")(X)


def test_cli_runs_heads_with_numba_and_refuses_a_mask_in_one_line(tmp_path, capsys):
    from numerics.cli import main

    rng = np.random.default_rng(0)
    np.savez(tmp_path / "heads.npz", **{name: rng.standard_normal((2, 2, 4)) / 2 for name in "QKVW"})
    base = ["simulate", "--model", "sa", "--beta", "1", "--batch", "3", "--n", "6", "--d", "4", "--heads",
            str(tmp_path / "heads.npz"), "--backend", "numba", "--method", "rk4", "--dt", "0.05", "--t-end", "0.2"]
    assert main(base + ["--out", str(tmp_path / "ok.npz"), "--json"]) == 0
    assert '"backend": "numba"' in capsys.readouterr().out
    assert main(base + ["--causal", "--out", str(tmp_path / "no.npz")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: the numba backend of a batch") and "\n" not in err
    assert not (tmp_path / "no.npz").exists()


def test_exp2_nonpos_within_one_ulp_of_mpmath():
    """The inlined 2^z of the several-head kernel (z = k + f by the shifter, e^{f ln 2} by the degree-9 fit of
    t(r) = (e^r - 1 - r) / r^2 summed by Estrin's scheme, 2^k from the bits) against mpmath at 120 bits, over the
    ranges the kernel feeds it: the weights' logits (to -866), tiny arguments, the rounding boundaries at half
    integers and the clamp at -1020. Measured 1.00 ulp; heads_rounding_bound allows 2."""
    import mpmath

    from numerics.core._member_kernels import exp2_nonpos_array

    rng = np.random.default_rng(3)
    zs = np.concatenate([-rng.random(6000) * 40, -rng.random(2000) * 866, -rng.random(1000) * 1e-6, [0.0, -0.0],
                         -0.5 + rng.uniform(-1e-12, 1e-12, 200), -7.5 + rng.uniform(-1e-12, 1e-12, 200),
                         -rng.uniform(1000, 1020, 200)])
    with mpmath.workprec(120):
        exact = np.array([float(mpmath.power(2, mpmath.mpf(float(v)))) for v in zs])
    ulps = np.abs(exp2_nonpos_array(zs) - exact) / np.spacing(exact)
    assert ulps.max() <= 1.0, f"measured {ulps.max():.2f} ulp, allowed 1"
    # below the clamp: 2^-1020 (a normal double), not 0
    assert exp2_nonpos_array(np.array([-1500.0]))[0] == 2.0 ** -1020


def test_exp_fit_coefficients_reproduce_and_meet_their_error():
    """EXP_T is mpmath's degree-9 Chebyshev fit of t(r) = (e^r - 1 - r) / r^2 on |r| <= 1.0001 ln(2) / 2,
    rounded to doubles (recomputed here), and its error on that interval, measured at 4001 points in mpmath, is
    below 1.2e-16 (1.3e-17 relative to e^r after the factor r^2)."""
    import mpmath

    from numerics.core._member_kernels import EXP_T

    with mpmath.workdps(40):
        def t(r):
            return mpmath.mpf(1) / 2 + r / 6 + r ** 2 / 24 if abs(r) < mpmath.mpf("1e-10") else \
                (mpmath.exp(r) - 1 - r) / r ** 2
        a = mpmath.log(2) / 2 * mpmath.mpf("1.0001")
        fit, _ = mpmath.chebyfit(t, [-a, a], 10, error=True)
        assert tuple(float(c) for c in reversed(fit)) == EXP_T
        worst = max(abs(mpmath.polyval([mpmath.mpf(c) for c in reversed(EXP_T)], r) - t(r))
                    for r in mpmath.linspace(-a, a, 4001))
    assert worst < 1.2e-16, f"fit error {float(worst):.3g}"


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("kind", ["sa", "usa"])
def test_members_past_the_gap_take_the_exact_maximum(kind, k):
    """Members whose shift bound 2 |q_i| max_j |k_j| (natural units) exceeds GAP (600) take their row's exact
    maximum: next to small-beta members in the same block, with beta large enough that the bound's weights
    e^{s - c_i} would all underflow (sa: beta 900, 2 c_i between 6e3 and 1.2e4), the field stays within the
    rounding bound of the NumPy path and every member has the bits it has alone."""
    from numerics.core._member_heads import GAP

    heads = random_heads(H=2, k=k, d=4, spread=2.0)
    X = starts(12, 9, 4)
    beta = np.where(np.arange(12) % 3 == 0, 900.0 if kind == "sa" else 60.0, 1.5)
    scale = heads.scale * np.array([max(np.linalg.norm(X[b] @ heads.Q[h].T, axis=1).max()
                                        * np.linalg.norm(X[b] @ heads.K[h].T, axis=1).max()
                                        for h in range(heads.H)) for b in range(12)])
    past = 2 * beta * scale > GAP
    assert past.any() and not past.all()
    if kind == "usa":  # usa at this size: the exact maximum's e^{top} must stay finite
        assert np.all(np.isfinite(usa_size(X, heads, beta)))
    fast = batch_field.make_batch_block_field(beta, kind, heads, engine="numba")(X)
    ref = batch_field.make_batch_block_field(beta, kind, heads)(X)
    assert np.all(np.isfinite(fast))
    assert deviation(fast, ref, beta, heads, 9, kind, X) <= 1.0
    for b in (0, 1):
        alone = batch_field.make_batch_block_field(beta[b], kind, heads, engine="numba")(X[b:b + 1])
        np.testing.assert_array_equal(fast[b], alone[0])
