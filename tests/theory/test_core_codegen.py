"""theory.codegen: generated model code vs the hand-written numerics and vs sympy evalf (claim 5)."""
import importlib.util

import mpmath

import numpy as np
import pytest
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from numerics.core.field import attention_field, interaction_energy
from numerics.core.taylor import fitted_slope, tangent_direction, taylor_remainders
from numerics.core.trajectory import uniform_sphere
from theory.codegen import exprel, function_source, generate_model, model_key, write_model_module
from theory.energy import empirical_energy
from theory.fields import explicit_field
from theory.spec import ModelSpec


@pytest.mark.parametrize("model", ["sa", "usa"])
@pytest.mark.parametrize("time_unit", ["natural", "rescaled"])
def test_generated_equals_hand_written(model, time_unit, rng):
    gen = generate_model(ModelSpec(model, 3))
    X = uniform_sphere(300, 3, rng)
    for beta in (-4.0, 0.0, 0.3, 6.0):
        ref = attention_field(X, beta, model, time_unit=time_unit)
        assert np.abs(gen.field(X, beta, time_unit, block=37) - ref).max() <= 1e-12 * max(1, np.abs(ref).max())
        assert gen.energy(X, beta) == pytest.approx(interaction_energy(X, beta), rel=1e-12, abs=1e-15)


def test_generated_general_qkv_equals_hand_written(rng):
    Q, K, V = (np.round(rng.standard_normal((4, 4)), 2) for _ in range(3))
    for model in ("sa", "usa"):
        spec = ModelSpec(model, 4, Q=sp.Matrix(Q).applyfunc(sp.nsimplify), K=sp.Matrix(K).applyfunc(sp.nsimplify),
                         V=sp.Matrix(V).applyfunc(sp.nsimplify))
        gen = generate_model(spec)
        X = uniform_sphere(50, 4, rng)
        ref = attention_field(X, 1.2, model, Q, K, V)
        assert np.abs(gen.field(X, 1.2) - ref).max() <= 1e-12 * max(1, np.abs(ref).max())


def test_generated_large_beta_is_finite(rng):
    gen = generate_model(ModelSpec("sa", 3))
    X = uniform_sphere(30, 3, rng)
    with np.errstate(over="raise", invalid="raise"):
        v = gen.field(X, 1e4)
        e = gen.energy(X, 1e4, normalization="gkpr")
    assert np.abs(v - attention_field(X, 1e4, "sa")).max() < 1e-12
    assert e == pytest.approx(interaction_energy(X, 1e4, normalization="gkpr"), rel=1e-12)
    usa = generate_model(ModelSpec("usa", 3))
    with np.errstate(over="raise", invalid="raise"):
        u = usa.field(X, 1e4, "rescaled")
    assert np.abs(u - attention_field(X, 1e4, "usa", time_unit="rescaled")).max() < 1e-12
    with pytest.raises(OverflowError, match="rescaled"):
        usa.field(X, 1e4)


def test_cache_by_derivation_identity():
    a, b = generate_model(ModelSpec("sa", 3)), generate_model(ModelSpec("sa", 3))
    assert a is b
    assert model_key(ModelSpec("sa", 3)) != model_key(ModelSpec("usa", 3))
    assert model_key(ModelSpec("sa", 3)) != model_key(ModelSpec("sa", 3, V=[[2, 0, 0], [0, 1, 0], [0, 0, 1]]))


def test_written_module_is_standalone_and_matches(tmp_path, rng):
    path = tmp_path / "gen_usa.py"
    write_model_module(ModelSpec("usa", 3), path)
    text = path.read_text()
    imports = {line.split()[1].split(".")[0] for line in text.splitlines() if line.startswith(("import ", "from "))}
    assert imports == {"numpy", "scipy"}
    spec = importlib.util.spec_from_file_location("gen_usa", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    X = uniform_sphere(64, 3, rng)
    assert np.abs(mod.field(X, 2.0) - attention_field(X, 2.0, "usa")).max() <= 1e-12 * np.exp(2.0)
    assert mod.energy(X, 2.0) == pytest.approx(interaction_energy(X, 2.0), rel=1e-12)


def test_low_level_cse_and_exprel():
    s, b = sp.symbols("s beta", real=True)
    src = function_source("f", (s, b), (sp.exp(b * s) * s, sp.exp(b * s) + 1)).source
    assert src.count("numpy.exp") == 1  # the common subexpression is hoisted
    e = s * exprel(b * s)
    assert sp.simplify(e.rewrite(sp.exp) - (sp.exp(b * s) - 1) / b) == 0
    assert exprel(sp.Integer(0)) == 1


def _evalf_field(spec, X, beta):
    n, d = X.shape
    pts = [sp.Matrix([sp.Symbol(f"x_{i + 1},{c + 1}", real=True) for c in range(d)]) for i in range(n)]
    subs = {pts[i][c]: sp.Float(X[i, c], 30) for i in range(n) for c in range(d)}
    subs[sp.Symbol("beta", real=True)] = sp.Float(beta, 30)
    field = np.array(explicit_field(spec, pts).xreplace(subs).evalf(30).tolist(), dtype=float)
    # Energy through mpmath at 50 digits with expm1: sympy's evalf of (e^{beta s} - 1)/beta cancels
    # catastrophically at tiny beta (Hypothesis found beta = 1e-212); beta = 0 is the limit phi_0(s) = s.
    with mpmath.workdps(50):
        total = mpmath.mpf(0)
        for i in range(n):
            for j in range(n):
                sij = mpmath.fsum(mpmath.mpf(X[i, c]) * mpmath.mpf(X[j, c]) for c in range(d))
                total += sij if beta == 0 else mpmath.expm1(mpmath.mpf(beta) * sij) / mpmath.mpf(beta)
        energy = float(total / (2 * n * n))
    if beta != 0 and abs(beta) > 1e-3:  # and the explicit sympy energy agrees where evalf is reliable
        assert abs(float(empirical_energy(pts).xreplace(subs).evalf(30)) - energy) <= 1e-14 * max(1, abs(energy))
    return field, energy


@settings(max_examples=10)
@given(n=st.integers(1, 3), d=st.integers(2, 3), beta=st.floats(-3, 4), model=st.sampled_from(["sa", "usa"]),
       seed=st.integers(0, 2**31))
def test_generated_equals_evalf_property(n, d, beta, model, seed):
    """Claim 5: generated code = sympy evalf (30 digits) at random points, to double rounding."""
    spec = ModelSpec(model, d)
    X = uniform_sphere(n, d, seed)
    ref_field, ref_energy = _evalf_field(spec, X, beta)
    gen = generate_model(spec)
    assert np.abs(gen.field(X, beta) - ref_field).max() <= 1e-13 * max(1.0, np.abs(ref_field).max())
    assert abs(gen.energy(X, beta) - ref_energy) <= 1e-13 * max(1.0, abs(ref_energy))


def _asymptotic_slope(ts, r, floor):
    """Slope of log r against log t over the lowest half-decade of the points above ``floor`` (>= 3 points)."""
    ts, r = np.asarray(ts), np.asarray(r)
    keep = r > floor
    if keep.sum() < 3:
        return float("nan"), []
    low = keep & (ts <= 10.0 ** 0.5 * ts[keep].min() * (1 + 1e-12))
    if low.sum() < 3:
        low = keep
    return fitted_slope(ts[low], r[low], floor)


def _slopes_fail(gen, X, xi, beta, ts, floor) -> list[str]:
    r1, r2 = taylor_remainders(lambda Y: gen.energy(Y, beta), lambda Y: gen.riemannian_gradient(Y, beta),
                               lambda Y, U: gen.riemannian_hessian_vector(Y, beta, U), X, xi, ts)
    s1, w1 = _asymptotic_slope(ts, r1, floor)
    s2, w2 = _asymptotic_slope(ts, r2, floor)
    failed = []
    if w1 and r1.max() > 1e3 * floor and s1 < 1.7:
        failed.append(f"gradient slope {s1:.3f} < 1.7")
    if w2 and r2.max() > 1e3 * floor and s2 < 2.5:
        failed.append(f"Hessian slope {s2:.3f} < 2.5")
    return failed


@settings(max_examples=10)
@given(n=st.integers(2, 10), d=st.integers(2, 5), beta=st.floats(-2, 3), seed=st.integers(0, 2**31))
@example(n=2, d=4, beta=0.9696210080658414, seed=55205954)  # the whole-window slope was 2.488 here
@example(n=8, d=4, beta=1.625, seed=1471733)  # the lowest-decade slope was 2.483 here (zero of c3 + c4 t at 0.018)
def test_taylor_slopes_property(n, d, beta, seed):
    """Claim 5: Taylor remainders of the generated energy have slopes 2 (gradient) and 3 (Hessian)."""
    rng = np.random.default_rng(seed)
    gen = generate_model(ModelSpec("usa", d))
    X = uniform_sphere(n, d, rng)
    ts = np.logspace(-1, -3.5, 11)
    floor = 1e-13 * np.exp(abs(beta))
    # A wrong gradient leaves r1 ~ t (slope 1), a wrong Hessian r2 ~ t^2 (slope 2). The remainders are analytic,
    # r2(t) = |c3 t^3 + c4 t^4 + O(t^5)|: the log-slope tends to 3 as t -> 0 but takes any value near the zero
    # t0 = -c3/c4 of c3 + c4 t (Hypothesis found n=2, d=4, beta=0.9696, seed=55205954: r2/t^3 = 4e-5 at t = 0.1
    # and 9e-3 below t = 0.01, whole-window slope 2.488; and n=8, d=4, beta=1.625, seed=1471733: t0 = 0.018
    # inside the lowest decade, slope 2.483). So the slope is fitted on the lowest half-decade of the usable
    # window (the asymptotic regime), and t0 depends on the direction: if one direction's slope is low, a second
    # independent direction must pass. A wrong derivative fails along every direction but a set of measure zero
    # (its error term c1 or c2 vanishes there), so it cannot pass on the second draw; the thresholds 1.7 and 2.5
    # keep a margin to the wrong-derivative slopes 1 and 2. (Measured on 402 random cases, 2026-11-26: the
    # lowest decade gave 2 + 3 low slopes, the lowest half-decade 1 + 0, with the second direction 0.) Directions
    # along which the remainder stays at round-off leave nothing to fit.
    failed = _slopes_fail(gen, X, tangent_direction(X, rng), beta, ts, floor)
    if failed:
        second = _slopes_fail(gen, X, tangent_direction(X, rng), beta, ts, floor)
        assert not second, (failed, second)


def test_hessian_vector_matches_sympy_closed_form(rng):
    from theory.hessian import closed_form_riemannian_hessian
    from theory.kernels import exponential_kernel

    n, d, beta = 3, 3, 0.8
    X = uniform_sphere(n, d, rng)
    U = rng.standard_normal((n, d))
    U -= np.sum(X * U, axis=1, keepdims=True) * X
    H = closed_form_riemannian_hessian(exponential_kernel(), [sp.Matrix(x) for x in X.tolist()])
    H = np.array(H.subs(sp.Symbol("beta", real=True), beta).evalf().tolist(), dtype=float)
    P = np.zeros((n * d, n * d))
    for i in range(n):
        P[i * d:(i + 1) * d, i * d:(i + 1) * d] = np.eye(d) - np.outer(X[i], X[i])
    ref = (P @ H @ U.reshape(-1)).reshape(n, d)
    got = generate_model(ModelSpec("usa", d)).riemannian_hessian_vector(X, beta, U)
    assert np.abs(got - ref).max() < 1e-12
