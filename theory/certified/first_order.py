"""Certified first-order (equal free energy) noise of noisy usa: the degree-L truncated zonal model, and the
infinite system through a rigorous bound on the modes l > L.

The system (:func:`theory.noise_global.first_order_noise_mp`, conventions section 13): unknowns m_1..m_L and D,

    F_i = m_i - E[P_i e^phi] / E[e^phi]   (i = 1..L),      F_{L+1} = (1/2) sum_l w_l m_l^2 - D log E[e^phi],

phi(t) = sum_l w_l m_l P_l(t) / D, w_l = g_l N_l (g_l the usa coupling lambda_l/(l (l + d - 2)), N_l = dim H_l),
E the uniform average over S^{d-1} of a function of t = <x, e> (density c_d (1 - t^2)^{(d-3)/2} on [-1, 1]).
Every E[t^k e^phi] is a **rigorous Arb integral** (``acb.integral``: the integrand is entire for odd d, where the
weight is a polynomial) with ball-valued parameters; P_l are theory's exact zonal polynomials, g_l theory's SymPy
Bessel forms compiled to Arb (:mod:`theory.certified.expressions`). Nothing is estimated in floating point.

Existence and uniqueness in a box X (Krawczyk): with c in X, Y any exact matrix (an approximate inverse of
F'(c)) and J(X) a ball enclosure of F' over the whole box,

    K(X) = c - Y F(c) + (I - Y J(X)) (X - c)   strictly inside X   =>   F has exactly one zero in X, lying in K(X).

The truncated model (the modes l > L set to zero) is certified as above. The infinite system ("with tail",
``TruncatedModel.tail`` = S_L >= sum_{l > L} w_l from :mod:`theory.certified.tail`): the tail enters the first L
equations only through psi = sum_{l > L} w_l m_l P_l and q = sum_{l > L} w_l m_l^2, and |m_l| <= 1, |P_l| <= 1
give sup |psi| <= S_L, q in [0, S_L]. For ANY function psi with sup |psi| <= S and f with sup |f| <= 1,
e^{psi/D} = 1 + delta with |delta| <= eta = e^{S/D} - 1, so

    E[f e^{phi_L + psi/D}] in E[f e^{phi_L}] +/- eta E[e^{phi_L}]       (f = 1, P_i, P_i P_j),

the free-energy equation gains + q/2 in [0, S/2], and the Jacobian's D column gains cov_rho(P_i, psi)/D^2 in
+/- 2 S/D^2 (rows i <= L) and E_rho[psi]/D in +/- S/D (last row). With these enclosures the Krawczyk test holds
for every admissible tail at once (Y and the box do not depend on it), so for each tail the first L modes and D
have exactly one zero in the box; a Schauder-Tychonoff fixed point over the tails ([-1, 1]^N, product topology)
gives a solution of the full system (proofs_notes/certified-noise-first-order.md). The box must then be wider
than about S_L (:data:`TAIL_BOX_FACTORS`).
The uniform state m = 0 solves the system at every D; the certificate is for the clustered solution in its box.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import sympy as sp
from flint import acb, arb, arb_mat, fmpq

from .balls import (MAX_DIMENSION, CertificateRefused, Interval, decimal, enclosure_of, exact, rational_of,
                    require_ball, working_precision)
from .expressions import arb_function

#: precision of the first-order certificates (bits): the monomial coefficients of P_16 cancel ~10 digits, which
#: leaves enclosures ~1e-36 wide at 128 bits (160 bits gave 3e-46 at three times the cost)
FIRST_ORDER_PREC = 128
#: the box radii tried (in turn) for an infinite-system certificate, relative, in units of the tail bound S_L:
#: F(c) is only known to within about S_L, and K(X) must fit strictly inside X
TAIL_BOX_FACTORS = (4, 16, 64, 256, 1024, 4096)


@dataclass(frozen=True)
class TruncatedModel:
    """The degree-L zonal model at (d, beta): exact polynomial coefficients, Arb weights w_l = g_l N_l."""

    d: int
    beta: fmpq
    L: int
    coefficients: tuple        # coefficients[l-1][k]: t^k coefficient of P_l (fmpq)
    weights: tuple             # w_l (arb), l = 1..L
    couplings: tuple           # g_l (arb), l = 1..L
    density: tuple             # coefficients of c_d (1 - t^2)^{(d-3)/2} (fmpq)
    tail: arb | None = None    # S_L >= sum_{l > L} w_l (theory.certified.tail): the infinite system; None: truncated


@lru_cache(maxsize=64)
def _coupling_expr(d: int, l: int):  # noqa: E741 - degree
    from theory.noise import laplacian_eigenvalue

    from .statements import BETA, growth_rate_expr
    return arb_function(growth_rate_expr("usa", d, l) / laplacian_eigenvalue(l, d), (BETA,))


def truncated_model(d: int, beta, L: int) -> TruncatedModel:
    """The truncated model (odd d >= 3: the weight is a polynomial, so every integrand is entire)."""
    from theory.noise_global import harmonic_dimensions, zonal_polynomial

    if isinstance(d, bool) or not isinstance(d, int) or d < 3 or d % 2 == 0 or d > MAX_DIMENSION:
        raise ValueError(f"the certified first-order noise needs an odd d in [3, {MAX_DIMENSION}] (entire integrands), "
                         f"got {d!r}")
    if isinstance(L, bool) or not isinstance(L, int) or not 2 <= L <= 40:
        raise ValueError(f"L must be an integer in [2, 40], got {L!r}")
    b = exact(beta)
    if b <= 0:
        raise ValueError(f"beta must be > 0, got {beta!r}")
    from theory import symbols as sym

    t = sym.s
    coefficients = []
    for l in range(1, L + 1):  # noqa: E741 - degree
        poly = sp.Poly(zonal_polynomial(d, l, t), t)
        coefficients.append(tuple(fmpq(int(c.p), int(c.q)) for c in reversed(poly.all_coeffs())))
    c_d = sp.gamma(sp.Rational(d, 2)) / (sp.sqrt(sp.pi) * sp.gamma(sp.Rational(d - 1, 2)))
    weight = sp.Poly(sp.expand(c_d * (1 - t ** 2) ** ((d - 3) // 2)), t)
    density = tuple(fmpq(int(c.p), int(c.q)) for c in reversed(weight.all_coeffs()))
    g = tuple(_coupling_expr(d, l)(arb(b)) for l in range(1, L + 1))  # noqa: E741
    w = tuple(gi * n for gi, n in zip(g, harmonic_dimensions(d, L)))
    return TruncatedModel(d, b, L, tuple(coefficients), w, g, density)


def _poly(coeffs, z):
    out = acb(0)
    for c in reversed(coeffs):
        out = out * z + c
    return out


def moments(model: TruncatedModel, phi: list, top: int) -> list[arb]:
    """E[t^k e^{phi(t)}], k = 0..top, for the polynomial phi (Arb coefficients, low degree first): rigorous
    Arb integrals over [-1, 1] of the entire integrand t^k e^{phi(t)} c_d (1 - t^2)^{(d-3)/2}."""
    coeffs = [acb(require_ball(a, "a coefficient of phi")) for a in phi]
    density = [acb(arb(c)) for c in model.density]
    out = []
    for k in range(top + 1):
        def f(z, analytic, k=k):  # entire in z: no branch cut to report
            return z ** k * _poly(density, z) * _poly(coeffs, z).exp()
        out.append(acb.integral(f, -1, 1).real)
    return out


def _equations(model: TruncatedModel, m: list[arb], D: arb, with_D: bool, jacobian: bool):
    """F (and its Jacobian J as a list of rows) at the balls (m, D): the formulas of the module doc."""
    L, c, w = model.L, model.coefficients, model.weights
    phi = [arb(0)] * (L + 1)
    for l in range(L):  # noqa: E741
        for k, ck in enumerate(c[l]):
            phi[k] = phi[k] + w[l] * m[l] * ck / D
    mu = moments(model, phi, 2 * L if jacobian else L)
    nu = [sum((ck * mu[k] for k, ck in enumerate(c[i])), arb(0)) for i in range(L)]
    M = ([[sum((ci * cj * mu[a + b] for a, ci in enumerate(c[i]) for b, cj in enumerate(c[j])), arb(0))
           for j in range(L)] for i in range(L)] if jacobian else None)
    Z = mu[0]
    if model.tail is not None:  # every admissible tail at once (the module doc's widening lemma)
        Z, nu, M = _tail_widened(model.tail, D, Z, nu, M)
    G = [x / Z for x in nu]
    F = [m[i] - G[i] for i in range(L)]
    if with_D:
        F.append(sum((w[l] * m[l] * m[l] for l in range(L)), arb(0)) / 2 - D * Z.log())
        if model.tail is not None:  # + (1/2) sum_{l > L} w_l m_l^2, in [0, S/2] (w_l > 0, m_l^2 <= 1)
            F[-1] = F[-1] + arb(0).union(model.tail / 2)
    if not jacobian:
        return F, None
    cov = [[M[i][j] / Z - G[i] * G[j] for j in range(L)] for i in range(L)]
    J = [[(1 if i == j else 0) - cov[i][j] * w[j] / D for j in range(L)] for i in range(L)]
    if with_D:
        # the tail psi = sum_{l > L} w_l m_l P_l enters d/dD through phi = (phi_L + psi)/D:
        # + cov_rho(P_i, psi)/D^2 with |cov_rho(P_i, psi)| <= 2 S, and + E_rho[psi]/D with |E_rho[psi]| <= S
        cov_tail, mean_tail = (_pm(2 * model.tail), _pm(model.tail)) if model.tail is not None else (0, 0)
        for i in range(L):
            J[i].append((sum((cov[i][j] * w[j] * m[j] for j in range(L)), arb(0)) + cov_tail) / (D * D))
        J.append([w[j] * (m[j] - G[j]) for j in range(L)]
                 + [-Z.log() + (sum((w[j] * m[j] * G[j] for j in range(L)), arb(0)) + mean_tail) / D])
    return F, J


def _pm(r: arb) -> arb:
    """The ball [-R, R], R the upper end of the ball r."""
    R = arb(abs(r).upper())
    return (-R).union(R)


def tail_error(S: arb, D: arb, bound: arb) -> arb:
    """[-eta B, eta B], eta = e^{S/D} - 1, B the upper end of ``bound`` (sup|f| E[e^{phi_L}]): the change of
    E[f e^{phi_L}] when e^{psi/D} multiplies the integrand, for every psi with sup |psi| <= S."""
    eps = arb((require_ball(S, "the tail bound") / D).upper())
    return _pm((eps.exp() - 1) * bound)


def _tail_widened(S: arb, D: arb, Z: arb, nu: list, M: list | None):
    """Enclosures of E[e^phi], E[P_i e^phi], E[P_i P_j e^phi] for phi = phi_L + psi/D, over every function psi
    with sup |psi| <= S (the tail), from those of psi = 0: e^{psi/D} = 1 + delta with |delta| <= eta = e^eps - 1,
    eps = S/D, so |E[f e^{phi_L} delta]| <= eta sup|f| E[e^{phi_L}] for f = 1, P_i, P_i P_j (|P_l| <= 1)."""
    err = tail_error(S, D, Z)
    return (Z + err, [x + err for x in nu],
            None if M is None else [[x + err for x in row] for row in M])


def free_energy_gap(model: TruncatedModel, m: list, D) -> arb:
    """Delta F = (1/2) sum w_l m_l^2 - D log E[e^phi] on the balls (m, D) (the last equation's left side)."""
    F, _ = _equations(model, [arb(x) if not isinstance(x, arb) else x for x in m], arb(D), True, False)
    return F[-1]


@dataclass(frozen=True)
class KrawczykCertificate:
    """A unique zero of the truncated system in ``box`` (exact rational intervals), enclosed in ``enclosure``."""

    box: tuple                 # Interval per unknown (m_1..m_L[, D])
    enclosure: tuple           # Interval per unknown
    newton_steps: int
    contraction: str           # max |K_i - c_i| / radius_i (< 1 certifies)

    def to_dict(self) -> dict:
        return {"box radius (max)": decimal(max(b.width for b in self.box) / 2, 3, "up"),
                "contraction": self.contraction, "newton_steps": self.newton_steps}


def _mid(x: arb) -> fmpq:
    return rational_of(x.mid())


def _krawczyk(model: TruncatedModel, seed: list[fmpq], fixed_D: fmpq | None, newton: int, radius_bits: int):
    with_D = fixed_D is None

    def system(z: list[arb]):
        m, D = (z[:-1], z[-1]) if with_D else (z, arb(fixed_D))
        return _equations(model, m, D, with_D, True)
    return krawczyk(system, seed, newton, radius_bits, model.tail)


def krawczyk(system, seed: list[fmpq], newton: int, radius_bits: int, tail: arb | None = None) -> KrawczykCertificate:
    """Newton from ``seed`` at exact midpoints (only the centre c; not a proof), then the Krawczyk test on the box
    of relative radius 2^-radius_bits around c (with a tail bound S: the smallest of TAIL_BOX_FACTORS * S that
    passes). ``system(z)`` returns the Arb balls F(z) and the Jacobian rows J(z) for a list of balls z."""
    z = list(seed)
    stop = fmpq(1, 2 ** (radius_bits + 20))
    if tail is not None:  # the centre need not be finer than the tail's widening
        stop = max(stop, rational_of(arb(tail.upper())) / 2 ** 20)
    steps = 0
    for steps in range(1, newton + 1):
        F, J = system([arb(x) for x in z])
        delta = arb_mat([[Jij.mid() for Jij in row] for row in J]).solve(arb_mat([[f.mid()] for f in F]))
        z = [zi - _mid(delta[i, 0]) for i, zi in enumerate(z)]
        if all(abs(_mid(delta[i, 0])) < stop for i in range(len(z))):
            break
    c = z
    Fc, Jc = system([arb(x) for x in c])
    Y = arb_mat([[Jij.mid() for Jij in row] for row in Jc]).inv()
    Y = arb_mat([[Y[i, j].mid() for j in range(Y.ncols())] for i in range(Y.nrows())])
    relative = fmpq(1) / fmpq(2) ** radius_bits
    if tail is None:
        return _krawczyk_test(system, c, Fc, Y, relative, steps)
    # the tail widens F(c) by about S: the box must be wider than ||Y|| S; the smallest that passes is kept
    S = rational_of(arb(tail.upper()))
    for factor in TAIL_BOX_FACTORS:
        try:
            return _krawczyk_test(system, c, Fc, Y, max(relative, factor * S), steps)
        except CertificateRefused:
            if factor == TAIL_BOX_FACTORS[-1]:
                raise


def _krawczyk_test(system, c, Fc, Y, relative, steps):
    """K(X) strictly inside X for the box of radius ``relative`` max(1, |c_i|) around c, or refused."""
    rad = [max(fmpq(1), abs(ci)) * relative for ci in c]
    box = [Interval(ci - ri, ci + ri) for ci, ri in zip(c, rad)]
    _, JX = system([b.ball() for b in box])
    n = len(c)
    YF = Y * arb_mat([[f] for f in Fc])
    YJ = Y * arb_mat(JX)
    dev = arb_mat([[b.ball() - arb(ci)] for b, ci in zip(box, c)])
    K = [arb(ci) - YF[i, 0] for i, ci in enumerate(c)]
    R = (arb_mat([[1 if i == j else 0 for j in range(n)] for i in range(n)]) - YJ) * dev
    K = [K[i] + R[i, 0] for i in range(n)]
    worst = fmpq(0)
    for Ki, b, ci, ri in zip(K, box, c, rad):
        if not Ki.is_finite() or not (rational_of(Ki.lower()) > b.lo and rational_of(Ki.upper()) < b.hi):
            raise CertificateRefused(f"Krawczyk: K(X) is not inside X (component {Ki} vs {b.text(20)}): no "
                                     "certified unique zero in the box")
        worst = max(worst, max(abs(rational_of(Ki.lower()) - ci), abs(rational_of(Ki.upper()) - ci)) / ri)
    return KrawczykCertificate(tuple(box), tuple(enclosure_of(Ki) for Ki in K), steps, decimal(worst, 3, "up"))


def infinite_model(d: int, beta, L: int) -> TruncatedModel:
    """The degree-L model carrying the rigorous tail bound S_L >= sum_{l > L} w_l: its equations are enclosed
    for every tail (m_l)_{l > L} in [-1, 1] at once (the module doc, "The infinite system")."""
    from .tail import tail_weight_bound

    return replace(truncated_model(d, beta, L), tail=tail_weight_bound(d, beta, L).bound)


def first_order_certificate(d: int, beta, L: int, seed_D, seed_m, *, prec: int = FIRST_ORDER_PREC,
                            newton: int = 12, infinite: bool = False) -> tuple[TruncatedModel, KrawczykCertificate]:
    """The certified (m_1..m_L, D_1st): Newton from the exact seed, then Krawczyk, for the truncated model, or
    with ``infinite`` for the infinite system's first L modes, uniformly in the tail.
    The seed is a starting guess only (any rationals near the clustered solution); the proof is the box test."""
    with working_precision(prec):
        model = infinite_model(d, beta, L) if infinite else truncated_model(d, beta, L)
        seed = [exact(x) for x in seed_m] + [exact(seed_D)]
        if len(seed) != L + 1:
            raise ValueError(f"seed_m must have L = {L} entries, got {len(seed) - 1}")
        return model, _krawczyk(model, seed, None, newton, prec - 56)


def stationary_certificate(model: TruncatedModel, D, seed_m, *, prec: int = FIRST_ORDER_PREC,
                           newton: int = 12) -> tuple[KrawczykCertificate, arb]:
    """A certified stationary clustered state m = G(m, D) of the truncated model at the exact noise D, unique in
    its box, and the Arb enclosure of its free-energy gap Delta F over the box."""
    with working_precision(prec):
        cert = _krawczyk(model, [exact(x) for x in seed_m], exact(D), newton, prec - 56)
        gap = free_energy_gap(model, [b.ball() for b in cert.enclosure], arb(exact(D)))
        return cert, gap


def critical_noise_ball(model: TruncatedModel) -> arb:
    """D_c = g_1 (the uniform state's threshold), the Arb ball of the model's first coupling."""
    return model.couplings[0]


__all__ = ["FIRST_ORDER_PREC", "KrawczykCertificate", "TruncatedModel", "critical_noise_ball",
           "first_order_certificate", "free_energy_gap", "infinite_model", "moments", "stationary_certificate",
           "truncated_model"]
