"""The compiled standalone energy (numerics.core._energy_kernels, ``interaction_energy(..., backend="numba")``):
its 2^y - 1 against mpmath, the energy of n = 5 against mpmath, and the NumPy energy within the stated bound."""
from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

pytest.importorskip("numba")

from numerics.common.errors import InputError  # noqa: E402
from numerics.core._energy_kernels import (_C, EXP2M1_ULPS, LOG2E, Z_MAX, exp2m1_inplace, flush_rows,  # noqa: E402
                                           pack, shifted_pair_sum, sum_additions, tile_width)
from numerics.core.claims import mpmath_shifted_energy  # noqa: E402
from numerics.core.engines import choose_energy, energy_rounding_bound  # noqa: E402
from numerics.core.field import interaction_energy  # noqa: E402
from numerics.core.sampling import uniform_sphere  # noqa: E402


def test_exp2m1_within_its_ulps_of_mpmath():
    rng = np.random.default_rng(3)
    top = Z_MAX * LOG2E
    y = np.concatenate([rng.uniform(-1.5, 1.5, 2000), rng.uniform(-1e-6, 1e-6, 200), rng.uniform(-60, 60, 500),
                        rng.uniform(-top, top, 300),
                        [0.0, 5e-324, -1e-300, 0.5, -0.5, 0.5000000000000001, -0.49999999999999994, 0.35, -0.35,
                         top, -top]])
    out = y.copy()
    exp2m1_inplace(out, y.size)
    with mpmath.workdps(40):
        exact = [mpmath.expm1(mpmath.mpf(float(v)) * mpmath.ln2) for v in y]
    for v, got, e in zip(y, out, exact):
        ulp = np.spacing(abs(float(e))) if e != 0 else 5e-324
        assert abs(mpmath.mpf(float(got)) - e) <= EXP2M1_ULPS * ulp, (v, got)


def test_exp2m1_coefficients_are_the_chebyshev_interpolant():
    """_C re-derived: (2^f - 1)/f interpolated at the 12 Chebyshev nodes of [-1/2, 1/2], 40 digits, rounded once."""
    with mpmath.workdps(40):
        nodes = [mpmath.cos(mpmath.pi * (2 * k + 1) / 24) / 2 for k in range(12)]
        A = mpmath.matrix([[x**j for j in range(12)] for x in nodes])
        q = mpmath.lu_solve(A, mpmath.matrix([mpmath.expm1(x * mpmath.ln2) / x for x in nodes]))
    assert tuple(float(v) for v in q) == _C


@pytest.mark.parametrize("beta", [1e-5, -0.3, 1.0, 4.0, -7.5, 30.0])
def test_n5_against_mpmath(beta):
    X = uniform_sphere(5, 3, 11)
    exact = mpmath_shifted_energy(X, beta)
    got = interaction_energy(X, beta, backend="numba")
    numpy = interaction_energy(X, beta)
    scale = math.exp(abs(beta))
    # the compiled energy is as close to the exact value as the NumPy one (both a few eps e^{|beta|})
    assert abs(got - float(exact)) <= 16 * np.finfo(float).eps * scale
    assert abs(numpy - float(exact)) <= 16 * np.finfo(float).eps * scale


@pytest.mark.parametrize("n,d,beta", [(1, 2, 1.0), (7, 2, 0.5), (64, 3, 1.0), (300, 16, -2.0), (1100, 32, 9.0),
                                      (600, 4, 1.5), (530, 7, -1.0), (700, 12, 0.8)])
def test_within_the_bound_of_numpy(n, d, beta):
    X = uniform_sphere(n, d, n + d)
    got = interaction_energy(X, beta, backend="numba")
    ref = interaction_energy(X, beta)
    assert abs(got - ref) <= energy_rounding_bound(beta, n, d)
    assert got != 0.0 or ref == 0.0


@pytest.mark.parametrize("width,rows", [(8, 1), (8, 70), (16, 5), (64, 8), (128, 70)])
def test_tiles_and_flushes_change_only_the_rounding(width, rows):
    """Any column tiling and flush interval (one tile or nine; a flush after every row or none) sums every
    ordered pair once: the energy stays within the bound of NumPy's (coordinates 5: a padded group of four)."""
    n, d, beta = 70, 5, 2.0
    X = uniform_sphere(n, d, 4)
    B, P = pack(X, beta)
    got = 0.5 * (shifted_pair_sum(B, P, d, width, rows) / beta) / n**2
    assert abs(got - interaction_energy(X, beta)) <= energy_rounding_bound(beta, n, d)


def test_tile_and_flush_sizes():
    assert [tile_width(n, 3) for n in (1, 2, 9, 256, 4096)] == [8, 8, 16, 256, 512]
    assert [tile_width(n, d) for n, d in ((4096, 4), (4096, 5), (4096, 64), (100, 64))] == [512, 256, 256, 128]
    assert [flush_rows(n) for n in (1, 3, 4, 4096, 4097)] == [1, 1, 2, 64, 64]


def test_sum_additions_within_the_previous_accounting():
    """Each term's additions in the tiled sums stay within what energy_rounding_bound counts for the kernel's sums
    (n/8 + 3 per row with eight accumulators, log2(n) + 8 for the rows: n/8 + log2(n) + 11), for every n."""
    for d in (2, 3, 5):
        for n in range(1, 20001):
            assert sum_additions(n, d) <= n / 8 + math.log2(max(n, 2)) + 11, (n, d)
    assert sum_additions(4096, 3) == 64 + 64 + 9 + 8


def test_routing_and_refusals():
    assert choose_energy("numpy", "glpr-shifted", 1.0, small_beta=1e-6) == "numpy"
    assert choose_energy("numba", "glpr-shifted", 1.0, small_beta=1e-6) == "compiled"
    for norm, beta in (("gkpr", 1.0), ("log-mean-exp", 1.0), ("glpr-shifted", 1e-9), ("glpr-shifted", 501.0)):
        assert choose_energy("numba", norm, beta, small_beta=1e-6) == "numpy"
    assert choose_energy("numba", "glpr-shifted", 1.0, small_beta=1e-6, d=32) == "compiled"
    assert choose_energy("numba", "glpr-shifted", 1.0, small_beta=1e-6, d=33) == "numpy"
    X = uniform_sphere(9, 3, 0)
    # requests the kernel does not take run on NumPy, bit for bit
    assert interaction_energy(X, 0.0, backend="numba") == interaction_energy(X, 0.0)
    assert interaction_energy(X, 2.0, normalization="gkpr", backend="numba") == interaction_energy(X, 2.0,
                                                                                                    normalization="gkpr")
    with pytest.raises(InputError, match="energy backend"):
        interaction_energy(X, 1.0, backend="fast")
