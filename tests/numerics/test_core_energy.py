"""The one pair-sum energy (numerics/core/energy.py): a batch's members equal single systems bit for bit, in every
normalisation and for a user kernel; an mpmath reference for a small system; planted errors are caught."""
import math

import mpmath
import numpy as np
import pytest

import numerics.core.energy as energy_module
from numerics.common.errors import InputError
from numerics.core.energy import pair_energies
from numerics.core.ensemble import ensemble_energies
from numerics.core.field import energy_block, interaction_energy
from numerics.core.kernel_field import _beta_zero_limit, compile_kernel, kernel_energy
from numerics.core.trajectory import uniform_sphere
from theory.kernels import exponential_kernel

NORMALIZATIONS = ["glpr-shifted", "gkpr", "log-mean-exp"]
#: per-member betas reaching every branch: the exprel form (|beta| < 1e-6, 0 and a subnormal), expm1, the
#: log1p form of log-mean-exp (|beta| <= 1) and its running log-sum-exp (|beta| > 1, both signs)
BETAS = {"glpr-shifted": [0.0, 5e-324, 3e-7, 0.7, -2.5, 40.0],
         "gkpr": [0.0, 1e-9, 0.7, 3.0, 40.0, 900.0],
         "log-mean-exp": [0.0, 3e-7, -0.5, 1.0, -3.0, 700.0, -800.0]}


def batch(B, n, d, seed=0):
    return np.stack([uniform_sphere(n, d, seed + b) for b in range(B)])


@pytest.mark.parametrize("normalization", NORMALIZATIONS)
@pytest.mark.parametrize("n,d,block", [(150, 3, None), (150, 3, 7), (5, 3, None), (70, 24, 16)])
def test_members_equal_single_systems_bit_for_bit(normalization, n, d, block):
    betas = BETAS[normalization]
    X = batch(len(betas), n, d)
    got = pair_energies(X, betas, normalization, block=block or energy_block(n, d))
    for b, beta in enumerate(betas):
        assert got[b] == interaction_energy(X[b], beta, normalization=normalization, block=block), (b, beta)
    if block is None and n == 150:
        assert energy_block(n, d) < n  # several block rows: the triangle and its diagonal blocks are exercised


def test_mixed_normalisations_chunks_and_progress_keep_the_bits(monkeypatch):
    """Members of several normalisations in one call, split into chunks of 2 members: still each member's own
    single-system energy, and progress reaches B."""
    monkeypatch.setattr(energy_module, "CHUNK_ENTRIES", 2 * energy_block(90, 3) * 90)
    norms = ["gkpr", "glpr-shifted", "log-mean-exp", "glpr-shifted", "log-mean-exp", "gkpr", "glpr-shifted"]
    betas = [2.0, 0.0, -4.0, 1.5, 0.3, 0.0, -1.0]
    X = batch(len(norms), 90, 3, seed=10)
    seen = []
    got = pair_energies(X, betas, norms, block=energy_block(90, 3),
                        progress=lambda done, total: seen.append((done, total)))
    for b in range(len(norms)):
        assert got[b] == interaction_energy(X[b], betas[b], normalization=norms[b])
    assert seen[-1] == (len(norms), len(norms)) and len(seen) > 3


def test_ensemble_energies_equal_single_runs_bit_for_bit():
    """ensemble_energies (frames, B) is the same pair sum: frame k of member b equals interaction_energy alone."""
    states = np.stack([batch(4, 80, 3, seed=20 + k) for k in range(3)])  # (frames, B, n, d)
    betas = [1.0, -2.0, 1e-8, 700.0]
    norms = ["glpr-shifted", "log-mean-exp", "glpr-shifted", "gkpr"]
    got = ensemble_energies(states, betas, norms)
    assert got.shape == (3, 4)
    for k in range(3):
        for b in range(4):
            assert got[k, b] == interaction_energy(states[k, b], betas[b], normalization=norms[b]), (k, b)


def test_user_kernel_members_equal_kernel_energy_bit_for_bit():
    kernel = exponential_kernel()
    compiled = compile_kernel(kernel)
    limit = _beta_zero_limit(compiled)  # what kernel_energy uses at |beta| below the smallest normal float

    def phi(S, beta):
        return limit(0, S, 0.0) if abs(beta) < np.finfo(float).tiny else compiled(0, S, beta)

    betas = [0.0, 0.5, -2.0, 0.5]  # beta = 0: the beta -> 0 limit; a repeated beta (one group)
    X = batch(len(betas), 100, 3, seed=30)
    got = pair_energies(X, betas, phi=phi, block=9)
    for b, beta in enumerate(betas):
        assert got[b] == kernel_energy(X[b], kernel, beta, block=9)
    # the exponential kernel is (e^{beta s} - 1)/beta: the glpr-shifted energy, to rounding (phi divided by beta
    # per term against one division of the sum)
    assert got[1] == pytest.approx(interaction_energy(X[1], 0.5), rel=1e-13)
    assert got[0] == pytest.approx(interaction_energy(X[0], 0.0), rel=1e-13)


def reference(X, beta, normalization):
    """The energy in 50-digit arithmetic from the float64 rows (exact products), with the scale of its terms:
    sum |term| normalised like the energy (the size against which rounding is measured)."""
    n = len(X)
    with mpmath.workdps(50):
        rows = [[mpmath.mpf(float(v)) for v in x] for x in X]
        S = [[mpmath.fsum(a * b for a, b in zip(x, y)) for y in rows] for x in rows]
        b = mpmath.mpf(beta)
        if normalization == "gkpr":
            terms = [mpmath.exp(b * (s - 1)) for r in S for s in r]
            value = mpmath.fsum(terms) / n**2
            scale = value
        elif normalization == "glpr-shifted":
            terms = [s if beta == 0 else mpmath.expm1(b * s) / b for r in S for s in r]
            value = mpmath.fsum(terms) / (2 * n**2)
            scale = mpmath.fsum(abs(t) for t in terms) / (2 * n**2)
        else:
            mean = mpmath.fsum(mpmath.exp(b * s) for r in S for s in r) / n**2
            value = mpmath.fsum(s for r in S for s in r) / n**2 if beta == 0 else mpmath.log(mean) / b
            scale = abs(value) + 1 / max(1.0, abs(beta))
        return float(value), float(scale)


#: agreement with the 50-digit reference, relative to the terms' scale: each pair term carries the rounding of
#: s_ij (d = 3 products, ~3 ulp, amplified by |beta| through the exponential) and of expm1/exp (1-2 ulp), and the
#: sum of n^2 = 25 terms adds up to ~25 ulp; 64 (1 + 3 |beta|) eps bounds this (measured: at most 1/40 of it over
#: 20 random 5-point systems, every beta and normalisation below) while a missing pair or a doubled diagonal
#: block (relative size >= ~1/25 of the scale) is off by ten orders of magnitude more
def tolerance(beta):
    return 64 * (1 + 3 * abs(beta)) * np.finfo(float).eps


SMALL = uniform_sphere(5, 3, 11)


@pytest.mark.parametrize("normalization", NORMALIZATIONS)
@pytest.mark.parametrize("beta", [0.0, 1e-8, 0.7, -3.0, 12.0])
def test_small_system_against_mpmath(normalization, beta):
    if normalization == "gkpr" and beta < 0:
        return
    want, scale = reference(SMALL, beta, normalization)
    # the default rows (one block: n = 5) and blocks of 2 rows (off-diagonal blocks counted twice)
    for block in (energy_block(5, 3), 2):
        got = pair_energies(SMALL[None], beta, normalization, block=block)[0]
        assert abs(got - want) <= tolerance(beta) * scale, (block, got, want)


@pytest.mark.parametrize("plant", ["diagonal-twice", "mirror-missing"])
def test_mpmath_check_catches_planted_errors(plant, monkeypatch):
    """A factor 2 on the diagonal blocks, or the mirrored (j < i) pairs left out, fails the reference check in
    every normalisation (the block of 2 rows leaves pairs outside the diagonal blocks)."""
    def planted(left, right, terms, b):
        C, n, _ = left.shape
        total = np.zeros(C)
        for start in range(0, n, b):
            m = min(n, start + b) - start
            F = terms(left[:, start:start + m] @ right[:, start:].transpose(0, 2, 1))
            diag = F[:, :, :m].sum(axis=(1, 2))
            total += (2.0 * F.sum(axis=(1, 2)) if plant == "diagonal-twice" else F.sum(axis=(1, 2)) + 0 * diag)
        return total

    monkeypatch.setattr(energy_module, "_pair_sums", planted)
    for normalization in NORMALIZATIONS:
        want, scale = reference(SMALL, 0.7, normalization)
        got = pair_energies(SMALL[None], 0.7, normalization, block=2)[0]
        assert abs(got - want) > 1e3 * tolerance(0.7) * scale, normalization


def test_bad_input_is_refused_in_one_line():
    X = batch(2, 6, 3)
    rows = energy_block(6, 3)
    with pytest.raises(InputError, match="3 dimensions"):
        pair_energies(X[0], 1.0, block=rows)
    with pytest.raises(InputError, match="member 1 row 2 is off the unit sphere"):
        bad = X.copy()
        bad[1, 2] *= 1.1
        pair_energies(bad, 1.0, block=rows)
    with pytest.raises(InputError, match="one per member"):
        pair_energies(X, [1.0, 2.0, 3.0], block=rows)
    with pytest.raises(InputError, match="one name or one per member"):
        pair_energies(X, 1.0, ["gkpr"], block=rows)
    with pytest.raises(InputError, match="normalization must be one of"):
        pair_energies(X, 1.0, "glpr-plain", block=rows)
    with pytest.raises(InputError, match="block must be"):
        pair_energies(X, 1.0, block=0)
    with pytest.raises(InputError, match="gkpr normalisation needs beta >= 0, got -2"):
        pair_energies(X, [1.0, -2.0], "gkpr", block=rows)
    with pytest.raises(InputError, match="E_beta overflows at beta=800"):
        pair_energies(X, [1.0, 800.0], block=rows)
    assert pair_energies(X, [1.0, 800.0], ["glpr-shifted", "gkpr"], block=rows)[0] == interaction_energy(X[0], 1.0)
    assert math.isfinite(pair_energies(X, 800.0, "log-mean-exp", block=rows)[1])


def test_energy_benchmark_reports_interleaved_minima_and_medians():
    """The bench suite's record (no timing is asserted): one row per size with both contenders and the ratios."""
    from numerics.bench.energy_cost import benchmark_energy

    (row,) = benchmark_energy(sizes=[(32, 3)], repeats=2)
    assert (row["n"], row["d"], row["block"]) == (32, 3, energy_block(32, 3))
    assert row["ratio"] == row["energy_seconds"] / row["field_seconds"] and row["ratio_median"] > 0
    assert row["within_target"] == (row["ratio"] <= row["target"])
    assert row["ratio_cpu"] > 0 and (row["compiled_ratio_cpu"] is None or row["compiled_ratio_cpu"] > 0)
