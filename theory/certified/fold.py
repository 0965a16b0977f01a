"""The certified fold (saddle-node) of the clustered branch of noisy usa: the extended system

    F(m, D) = m - G(m, D) = 0,    H = F_m(m, D) v = 0,    v_1 - 1 = 0         (2L + 1 equations),

unknowns m_1..m_L, v_1..v_L and D, with G_i = E_rho[P_i], rho ~ e^phi, phi = sum_l w_l m_l P_l / D (the
stationary equations of :mod:`theory.certified.first_order`). A zero is a point of the branch where F_m is
singular with kernel v (v_1 = 1 fixes its scale; v_1 != 0 because mode 1 carries the branch). Krawczyk
(:func:`theory.certified.first_order.krawczyk`) proves it unique in a box.

Derivatives (u_j = w_j v_j, U = sum_j u_j P_j, kappa_ijk = the third joint cumulant of P_i, P_j, P_k under rho):

    H_i = v_i - sum_j cov_ij u_j / D,
    dH_i/dm_k = -Kv_ik w_k / D^2,      Kv_ik = sum_j kappa_ijk u_j
              = E[P_i P_k U] - E[P_i P_k] E[U] - E[P_i U] G_k - E[P_k U] G_i + 2 G_i G_k E[U],
    dH_i/dv_j = dF_i/dm_j = delta_ij - cov_ij w_j / D,
    dH_i/dD  = sum_j cov_ij u_j / D^2 + sum_k Kv_ik w_k m_k / D^3,

from d cov(X, Y)/d phi [h] = kappa_3(X, Y, h) and d phi/dm_k = w_k P_k / D, d phi/dD = -phi/D.

The infinite system (``model.tail`` = S_L): as in first_order, every average is widened by
eta = e^{S/D} - 1 times E[e^{phi_L}] times the sup of its integrand (1 for P_i, P_i P_j; sum |u_j| for
P_i P_k U), dF_i/dD gains +/- 2 S/D^2 and dH_i/dD gains kappa_3(P_i, U, psi)/D^3 in +/- 8 S sum|u_j| / D^3
(|P_i - G_i| <= 2, |U - E U| <= 2 sum |u_j|, |psi - E psi| <= 2 S). Then for every tail the first L modes,
v and D of the fold are unique in the box; the fold of the full system is D_fold = max D along the branch only
if the full branch is smooth there, which this does not add: what is proved is the zero of the extended
system (a singular point of the branch's first L equations, for each tail), see the note.
"""
from __future__ import annotations

from flint import arb, arb_mat, fmpq

from .balls import CertificateRefused, exact, require_ball, working_precision
from .first_order import (FIRST_ORDER_PREC, KrawczykCertificate, TruncatedModel, _pm, _tail_widened, krawczyk,
                          moments, tail_error)


def _hankel(values: list, size: int) -> arb_mat:
    return arb_mat([[values[a + b] for b in range(size)] for a in range(size)])


def extended_system(model: TruncatedModel, z: list[arb], v_tail: arb | None = None):
    """F, H, v_1 - 1 and their Jacobian (rows) at the balls z = (m_1..m_L, v_1..v_L, D); with ``model.tail``,
    ``v_tail`` = R bounds the kernel vector's tail |v_l| <= R (l > L), so chi = sum_{l > L} w_l v_l P_l has
    sup |chi| <= R S (the module doc)."""
    L, w = model.L, model.weights
    m, v, D = z[:L], z[L:2 * L], z[2 * L]
    C = arb_mat([[arb(c[k]) if k < len(c) else arb(0) for k in range(L + 1)] for c in model.coefficients])
    phi = [arb(0)] * (L + 1)
    for l in range(L):  # noqa: E741
        for k, ck in enumerate(model.coefficients[l]):
            phi[k] = phi[k] + w[l] * m[l] * ck / D
    mu = moments(model, phi, 3 * L)
    u = [w[j] * v[j] for j in range(L)]
    Uc = [sum((u[j] * C[j, k] for j in range(L)), arb(0)) for k in range(L + 1)]
    nu_U = [sum((Uc[c] * mu[n + c] for c in range(L + 1)), arb(0)) for n in range(2 * L + 1)]
    Z = mu[0]
    nu = [sum((C[i, k] * mu[k] for k in range(L + 1)), arb(0)) for i in range(L)]
    Mm = C * _hankel(mu, L + 1) * C.transpose()
    Tm = C * _hankel(nu_U, L + 1) * C.transpose()
    M = [[Mm[i, j] for j in range(L)] for i in range(L)]
    T = [[Tm[i, j] for j in range(L)] for i in range(L)]
    cov_tail = kappa_tail = chi_H = chi_m = 0
    if model.tail is not None:
        S = model.tail
        usum = sum((abs(x) for x in u), arb(0))
        err = tail_error(S, D, Z * usum)                       # sup |P_i P_k U| <= sum |u_j|
        T = [[x + err for x in row] for row in T]
        Z, nu, M = _tail_widened(S, D, Z, nu, M)
        msum = sum((w[k] * abs(m[k]) for k in range(L)), arb(0))
        chi = require_ball(v_tail, "the kernel tail bound R") * S          # sup |chi|
        cov_tail, kappa_tail = _pm(2 * S), _pm(8 * S * usum + 2 * chi * D + 8 * chi * (msum + S))
        chi_H, chi_m = _pm(2 * chi / D), _pm(8 * chi / (D * D))
    G = [x / Z for x in nu]
    E2 = [[x / Z for x in row] for row in M]
    E3U = [[x / Z for x in row] for row in T]
    cov = [[E2[i][j] - G[i] * G[j] for j in range(L)] for i in range(L)]
    EU = sum((u[j] * G[j] for j in range(L)), arb(0))
    EPU = [sum((u[j] * E2[i][j] for j in range(L)), arb(0)) for i in range(L)]
    Kv = [[E3U[i][k] - E2[i][k] * EU - EPU[i] * G[k] - EPU[k] * G[i] + 2 * G[i] * G[k] * EU for k in range(L)]
          for i in range(L)]
    A = [[(1 if i == j else 0) - cov[i][j] * w[j] / D for j in range(L)] for i in range(L)]
    F = [m[i] - G[i] for i in range(L)]
    H = [v[i] - sum((cov[i][j] * u[j] for j in range(L)), arb(0)) / D + chi_H for i in range(L)]
    zeros = [arb(0)] * L
    rows = []
    for i in range(L):
        dD = (sum((cov[i][j] * w[j] * m[j] for j in range(L)), arb(0)) + cov_tail) / (D * D)
        rows.append(A[i] + zeros + [dD])
    for i in range(L):
        dm = [-Kv[i][k] * w[k] / (D * D) + chi_m * w[k] for k in range(L)]
        dD = (sum((cov[i][j] * u[j] for j in range(L)), arb(0)) / (D * D)
              + (sum((Kv[i][k] * w[k] * m[k] for k in range(L)), arb(0)) + kappa_tail) / (D * D * D))
        rows.append(dm + A[i] + [dD])
    rows.append(zeros + [arb(1)] + [arb(0)] * (L - 1) + [arb(0)])
    return F + H + [v[0] - 1], rows


def null_vector_seed(model: TruncatedModel, m: list, D) -> list[fmpq]:
    """An approximate kernel vector of F_m at (m, D), scaled to v_1 = 1: two inverse-iteration steps at the
    midpoint (only a starting guess for Newton; not part of the proof)."""
    from .first_order import _equations, _mid

    F, J = _equations(model, [arb(x) for x in m], arb(exact(D)), False, True)
    A = arb_mat([[x.mid() for x in row] for row in J])
    x = arb_mat([[1]] + [[0]] * (model.L - 1))
    for _ in range(2):
        x = A.solve(x)
        x = arb_mat([[x[i, 0] / x[0, 0]] for i in range(model.L)])
    return [_mid(x[i, 0]) for i in range(model.L)]


def kernel_tail_bound(model: TruncatedModel, v: list, D: arb) -> arb:
    """2 V/(D - 2 S), V = sum_{j <= L} w_j |v_j| (balls): every v_l, l > L, of a kernel vector whose tail is
    bounded by this R is again bounded by R (|cov(P_l, W)| <= 2 sup |W|, sup |W| <= V + R S)."""
    L = model.L
    V = sum((model.weights[j] * abs(v[j]) for j in range(L)), arb(0))
    return 2 * V / (D - 2 * model.tail)


def fold_certificate(model: TruncatedModel, seed_m: list, seed_D, *, prec: int = FIRST_ORDER_PREC,
                     newton: int = 20) -> tuple[KrawczykCertificate, arb | None]:
    """The certified zero (m, v, D_fold) of the extended system near the seed (exact rationals), and the kernel
    tail bound R used (None for the truncated model; checked self-consistent on the final box)."""
    with working_precision(prec):
        v0 = null_vector_seed(model, [exact(x) for x in seed_m], seed_D)
        seed = [exact(x) for x in seed_m] + v0 + [exact(seed_D)]
        R = None
        if model.tail is not None:  # twice the seed's self-consistent bound; verified on the box below
            R = arb((2 * kernel_tail_bound(model, [arb(x) for x in v0], arb(exact(seed_D)))).upper())
        cert = krawczyk(lambda z: extended_system(model, z, R), seed, newton, prec - 56, model.tail)
        if R is not None:
            L = model.L
            need = kernel_tail_bound(model, [b.ball() for b in cert.box[L:2 * L]], cert.box[-1].ball())
            if not need < R:
                raise CertificateRefused(f"fold: the kernel tail bound R = {R} is not self-consistent on the box "
                                         f"(needs {need})")
        return cert, R


__all__ = ["extended_system", "fold_certificate", "kernel_tail_bound", "null_vector_seed"]
