"""The fused Numba kernel (numerics.core.fused) equals the NumPy field to rounding, and the check can fail.

Tolerance (numerics.core.fused.fused_rounding_bound): both paths share the inputs [beta X M, -c], [X, 1] and
[XV, 1]; they differ only in summation order (BLAS vs the kernel's loops) and in the exp (NumPy's vs the
kernel's, each within 2 ulp). Per weight that is a relative error of at most 2 (2 (d + 2) eps |beta| |M| +
4 eps + (n - 1) eps); the field is a weighted mean (``sa``) or sum (``usa``) of V x_j, so its error is at most
that bound times sum_j w_ij |V x_j| / sum_j w_ij (``sa``) or scale / n sum_j w_ij |V x_j| (``usa``), computed
here from the weights in float64 (they are only a scale, not the answer).
"""
import sys

import numpy as np
import pytest

pytest.importorskip("numba")

from numerics.common.errors import InputError  # noqa: E402
from numerics.core import fused  # noqa: E402
from numerics.core.field import make_field  # noqa: E402
from numerics.core.model import Model, SaveAt, Solver  # noqa: E402
from numerics.core.trajectory import simulate, uniform_sphere  # noqa: E402

EPS = np.finfo(float).eps


def _row_scale(X, beta, model, Q, K, V, time_unit):
    """Per row: the magnitude the field's error is measured in (see the module text)."""
    n, d = X.shape
    M = Q.T @ K
    logits = beta * (X @ M) @ X.T
    shift = logits.max(axis=1, keepdims=True) if model == "sa" else beta
    W = np.exp(logits - shift)
    VX = np.linalg.norm(X @ V.T, axis=1)
    if model == "sa":
        return (W @ VX) / W.sum(axis=1)
    scale = np.exp(beta) if time_unit == "natural" else 1.0
    return scale / n * (W @ VX) * np.exp(shift - beta)


def assert_fused_matches(X, beta, model, Q, K, V, time_unit="natural", sums=None):
    """The numba field equals the NumPy field within the rounding bound; ``sums`` plants a wrong kernel."""
    n, d = X.shape
    want = make_field(d, beta, model, Q, K, V, time_unit=time_unit)(X)
    field = make_field(d, beta, model, Q, K, V, time_unit=time_unit, engine="numba")
    if sums is None:
        got = field(X)
    else:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr("numerics.core.field._fused_sums", sums)
            got = field(X)
    bound = fused.fused_rounding_bound(beta, d, n, np.linalg.norm(Q.T @ K, 2))
    scale = _row_scale(X, beta, model, Q, K, V, time_unit)
    err = np.linalg.norm(got - want, axis=1)
    assert np.all(err <= bound * scale + 1e-300), (float(np.max(err / scale)), bound)
    return float(np.max(err / scale)), bound


CASES = [  # (n, d, model, beta, time_unit): n not a multiple of the tile widths 4 and 256, one n > 256
    (37, 3, "sa", 1.0, "natural"), (37, 3, "sa", -4.0, "natural"), (300, 5, "sa", 300.0, "natural"),
    (300, 5, "sa", -300.0, "natural"), (61, 16, "sa", 25.0, "natural"), (37, 3, "usa", 1.0, "natural"),
    (300, 4, "usa", -2.0, "natural"), (61, 7, "usa", 30.0, "rescaled"), (61, 3, "usa", -30.0, "rescaled"),
    (1, 3, "sa", 2.0, "natural"), (5, 64, "usa", 0.5, "natural"),
]


@pytest.mark.parametrize("n, d, model, beta, time_unit", CASES)
def test_fused_field_equals_numpy_field(n, d, model, beta, time_unit):
    rng = np.random.default_rng(n + d)
    Q, K, V = (rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(3))
    X = uniform_sphere(n, d, 1)
    observed, bound = assert_fused_matches(X, beta, model, Q, K, V, time_unit)
    assert observed <= bound


def test_fused_field_identity_matrices_and_energy_memo():
    X = uniform_sphere(200, 3, 2)
    I = np.eye(3)
    assert_fused_matches(X, 5.0, "sa", I, I, I)
    f_np, f_nb = make_field(3, 5.0, "sa"), make_field(3, 5.0, "sa", engine="numba")
    f_np(X), f_nb(X)  # the row sums give the same energy of the evaluated state
    e_np, e_nb = f_np.tile_energy(X, "glpr-shifted"), f_nb.tile_energy(X, "glpr-shifted")
    assert abs(e_np - e_nb) <= 1e-13 * abs(e_np)


def _planted(kind):
    """Wrong fused kernels: each must make the equality check fail."""
    from numerics.core.field import _fused_sums as good

    def sums(lhs, right, rhs, beta):
        if kind == "drop-last-column":  # forgets the last particle (a tile-tail bug)
            return good(lhs, right[:, :-1], rhs[:-1], beta)
        if kind == "transposed-logits":  # <M x_j, x_i> instead of <M^T x_i, x_j>
            return np.exp(right.T[:, :-1] @ lhs[:, :-1].T + lhs[:, -1:]) @ rhs
        if kind == "exp-ulps":  # an exp 1e-11 too large (relative)
            return good(lhs, right, rhs, beta) * (1 + 1e-11)
        if kind == "no-shift":  # the usa shift dropped: e^{beta s} instead of e^{beta (s - 1)}
            lhs = lhs.copy()
            lhs[:, -1] = 0.0
            return good(lhs, right, rhs, beta)
        raise AssertionError(kind)

    return sums


@pytest.mark.parametrize("kind", ["drop-last-column", "transposed-logits", "exp-ulps", "no-shift"])
def test_planted_wrong_kernel_is_caught(kind):
    rng = np.random.default_rng(7)
    d = 4
    Q, K, V = (rng.standard_normal((d, d)) / 2 for _ in range(3))
    X = uniform_sphere(270, d, 3)
    with pytest.raises(AssertionError):
        assert_fused_matches(X, 3.0, "usa", Q, K, V, "rescaled", sums=_planted(kind))


def test_kernel_exp_within_two_ulp_of_numpy():
    x = np.concatenate([np.linspace(-707.0, 709.78, 400_001), np.linspace(-1.0, 1.0, 10_001)])
    got, want = fused.fused_exp(x), np.exp(x)
    assert np.max(np.abs(got - want) / want) <= 2 * EPS
    assert fused.fused_exp(np.array([-708.0, -1e4]))[0] == 0.0
    assert np.all(np.isinf(fused.fused_exp(np.array([709.8, 1e4]))))


def test_overflow_is_an_input_error_on_both_engines():
    d = 3
    V = np.eye(d)
    Q = 3.0 * np.eye(d)
    X = uniform_sphere(10, d, 0)
    for engine in ("numpy", "numba"):
        with pytest.raises(InputError, match="overflow"):
            make_field(d, 400.0, "usa", Q, None, V, time_unit="rescaled", engine=engine)(X)  # e^{400 (3 - 1)}


def test_numba_backend_simulates_like_direct_and_is_recorded():
    model = Model("sa", 2.0)
    X0 = uniform_sphere(40, 3, 5)
    runs = {b: simulate(model, X0, 1.0, solver=Solver("rk4", dt=0.1, backend=b), save=SaveAt(every=5))
            for b in ("direct", "numba")}
    assert runs["numba"].meta["backend"] == "numba"
    assert np.max(np.abs(runs["numba"].X - runs["direct"].X)) <= 1e-12


def test_missing_numba_is_one_clear_error(monkeypatch):
    monkeypatch.setattr(fused, "_KERNELS", {})
    monkeypatch.setitem(sys.modules, "numba", None)  # import numba -> ImportError
    with pytest.raises(InputError, match=r"pip install 'attnflow\[fast\]'"):
        make_field(3, 1.0, "sa", engine="numba")
    with pytest.raises(InputError, match="numba"):
        Model("sa", 1.0).vector_field(10, 3, "numba")


def test_cli_backend_numba_and_its_missing_dependency(capsys, monkeypatch, tmp_path):
    from tests.cli.helpers import bad, run_json

    argv = ["simulate", "--model", "sa", "--n", "20", "--d", "3", "--beta", "1", "--t-end", "0.2",
            "--backend", "numba", "--out", str(tmp_path / "t.npz")]
    assert run_json(capsys, argv)["backend"] == "numba"
    monkeypatch.setattr(fused, "_KERNELS", {})
    monkeypatch.setitem(sys.modules, "numba", None)
    assert "attnflow[fast]" in bad(capsys, argv)


@pytest.mark.slow
def test_parallel_kernel_equals_the_one_thread_kernel():
    """Threads split the rows, not the sums: the parallel kernel gives the same bits (slow: compiles prange)."""
    rng = np.random.default_rng(4)
    lhs, right, rhs = rng.standard_normal((101, 4)) / 4, rng.standard_normal((300, 4)) / 4, rng.standard_normal((300, 5))
    assert np.array_equal(fused.fused_accumulate(lhs, right, rhs), fused.fused_accumulate(lhs, right, rhs, threads=2))
