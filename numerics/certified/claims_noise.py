"""Certified claims of the noisy transitions (issue 30, second part): the first-order transition of noisy usa
on the sphere, the Landau quartic coefficient and the fold of the clustered branch. Registered from
:mod:`numerics.certified.claims`; notes ``proofs_notes/certified-noise-first-order.md``,
``certified-landau-quartic.md``, ``certified-noise-fold.md``.

- certified.noise-first-order: d = 3, beta = 3: the INFINITE zonal equal-free-energy system has a solution whose
  first L = 16 modes and D lie in a Krawczyk box (unique there given the tail, for every tail in [-1, 1]: the
  tail's weights are bounded rigorously by theory.certified.tail, a Schauder-Tychonoff fixed point closes the
  tail); D_c < D_1st < 41/50, and at D = 41/50 a clustered stationary state exists with Delta F > 0.
- certified.noise-first-order-truncation (slow): the truncated models' certificates at L = 16, 20, 24 and their
  differences (the truncation's measured effect, certified for the three truncated models).
- certified.landau-quartic: the sign of the mode-1 Landau quartic coefficient c_4(beta) at D = D_c on
  [1/10, 20], d = 2..5: one sign change, + to -, whose enclosure contains beta*(d).
- certified.noise-fold: the fold of the clustered branch of the infinite system (d = 3, beta = 3), Krawczyk on
  the extended system.
"""
from __future__ import annotations

from functools import lru_cache

import mpmath as mp

from numerics.certified.runs import REFERENCE_DPS, REFERENCE_SLACK, Ledger, as_mpf, reference_noise_threshold
from numerics.common.verification import CheckResult, claim

_MR = ("Mun-Rosenzweig arXiv 2606.05140 (S^{d-1}): first-order transition, K_c < K_#; free energy of noisy usa "
       "(theory.noise_global)")

KRAWCZYK_METHOD = ("Arb ball arithmetic at 128 bits (python-flint): every E[t^k e^phi] a rigorous Arb integral "
                   "(acb.integral, entire integrand) with ball-valued parameters; Krawczyk test "
                   "K(X) = c - Y F(c) + (I - Y J(X))(X - c) strictly inside the box X (unique zero in X)")


# -- the noisy first-order transition -------------------------------------------------------------------------
FIRST_ORDER_CASE = {"d": 3, "beta": "3", "L": 16, "seed_D": "81/100", "seed_ratio": "7/10", "seed_m1": "4/5",
                    "D_above": "41/50", "infinite": True}
TRUNCATED_WORDING = ("certified for the TRUNCATED model (zonal modes l <= L; the modes l > L set to 0), not the "
                     "infinite system (certified.noise-first-order is the infinite system's statement)")
INFINITE_WORDING = ("the INFINITE zonal system (all modes l >= 1): the first L = 16 modes and D are certified "
                    "uniformly in the tail (m_l)_{l > 16} in [-1, 1] (a rigorous bound S_16 >= sum_{l > 16} w_l, "
                    "Krawczyk with the equations widened by it), and a Schauder-Tychonoff fixed point over the "
                    "tail gives a solution of the full system in the box; uniqueness holds for the first 16 "
                    "modes given the tail, not over all tails")
TAIL_METHOD = (" The tail: S_L >= sum_{l > L} g_l N_l from I_mu(x) <= (x/2)^mu exp(x^2/(4 (mu + 1)))/Gamma(mu + 1) "
               "and a geometric ratio (theory.certified.tail); e^{psi/D} in 1 +/- (e^{S/D} - 1) inside every "
               "average, (1/2) sum_{l > L} w_l m_l^2 in [0, S/2]")


def _tail_bound_check(ledger: Ledger, model) -> dict:
    """The tail bound S_L against the exact sum_{l=L+1}^{L+120} g_l N_l (mpmath Bessel functions at 60 digits; the
    rest is below 1e-100 here): S_L must lie above it and within a factor 1.5."""
    from theory.certified.balls import upper
    from theory.noise_global import harmonic_dimensions

    d, L = model.d, model.L
    with mp.workdps(REFERENCE_DPS + 10):
        b, nu = as_mpf(model.beta), mp.mpf(d) / 2 - 1
        N = harmonic_dimensions(d, L + 120)
        exact_sum = mp.fsum(mp.gamma(mp.mpf(d) / 2) * (2 / b) ** nu * mp.besseli(l + nu, b) / b * N[l - 1]
                            for l in range(L + 1, L + 121))
        S = as_mpf(upper(model.tail))
        ok = exact_sum <= S <= mp.mpf("1.5") * exact_sum
    if not ok:
        ledger.problems.append(f"tail bound S_{L} = {mp.nstr(S, 8)} is not in [exact, 1.5 exact] with the exact "
                               f"tail {mp.nstr(exact_sum, 8)}")
    return {"S_L": mp.nstr(S, 8), "exact tail (mpmath, 120 terms)": mp.nstr(exact_sum, 8), "bound holds": ok}


def _widening_check(ledger: Ledger, model, centre: list) -> dict:
    """The widened equations at the certificate's centre contain the equations of two explicit extreme tails,
    psi = +S and psi = -S (q = S), evaluated in mpmath (96 Gauss-Legendre nodes at 60 digits, Legendre P_l:
    d = 3 only) -- the lemma of the note, checked where the certificate uses it."""
    from flint import arb
    from mpmath.calculus.quadrature import GaussLegendre

    from theory.certified.balls import lower, rational_of, upper, working_precision
    from theory.certified.first_order import FIRST_ORDER_PREC, _equations

    L = model.L
    with working_precision(FIRST_ORDER_PREC):
        balls = [arb(c) for c in centre]
        F_ball, _ = _equations(model, balls[:-1], balls[-1], True, False)
    worst = {}
    with mp.workdps(REFERENCE_DPS + 10):
        m, D = [as_mpf(c) for c in centre[:-1]], as_mpf(centre[-1])
        w = [as_mpf(rational_of(x.mid())) for x in model.weights]   # radius ~1e-36: far below the check
        S = as_mpf(upper(model.tail))
        nodes = GaussLegendre(mp.mp).calc_nodes(6, mp.mp.prec)
        P = [[mp.legendre(i, x) for i in range(1, L + 1)] for x, _ in nodes]
        for sign in (1, -1):
            e = [wk * mp.exp((mp.fsum(w[i] * m[i] * p[i] for i in range(L)) + sign * S) / D)
                 for (_, wk), p in zip(nodes, P)]
            Z = mp.fsum(e)
            F = [m[i] - mp.fsum(a * p[i] for a, p in zip(e, P)) / Z for i in range(L)]
            F.append(mp.fsum(w[i] * m[i] ** 2 for i in range(L)) / 2 + S / 2 - D * mp.log(Z / 2))
            misses = [i for i, (b, v) in enumerate(zip(F_ball, F))
                      if not as_mpf(lower(b)) - REFERENCE_SLACK <= v <= as_mpf(upper(b)) + REFERENCE_SLACK]
            worst[f"psi = {'+' if sign > 0 else '-'}S"] = "inside" if not misses else f"outside in rows {misses}"
            if misses:
                ledger.problems.append(f"the widened equations miss the explicit tail psi = {sign:+d} S in rows "
                                       f"{misses}")
    return worst


def _seed(L: int, case: dict) -> list:
    """The crude starting guess m_l = m_1 ratio^(l-1) (exact rationals; the certificate's Newton starts here)."""
    from theory.certified.balls import exact
    return [exact(case["seed_m1"]) * exact(case["seed_ratio"]) ** (l - 1) for l in range(1, L + 1)]


def _first_order(ledger: Ledger, case: dict, reference: bool = True):
    """Certify D_1st (the infinite system's with ``case["infinite"]``, else the truncated model's) and check it
    against first_order_noise_mp at 50 digits (the truncated model's root: a zero tail is admissible, so the
    infinite system's enclosure must contain it too)."""
    from theory.certified.balls import exact, upper
    from theory.certified.first_order import first_order_certificate
    from theory.noise import coupling
    from theory.noise_global import first_order_noise_mp

    d, L, infinite = case["d"], case["L"], case.get("infinite", False)
    name = f"D_1st(L={L}, infinite)" if infinite else f"D_1st(L={L})"
    out = {"name": name}

    def work():
        model, cert = first_order_certificate(d, case["beta"], L, case["seed_D"], _seed(L, case),
                                              infinite=infinite)
        out["model"], out["cert"] = model, cert
        ref = None
        if reference:  # theory.noise.coupling divides at the caller's precision: 60 digits here
            with mp.workdps(REFERENCE_DPS + 10):
                g = [coupling(d, l, as_mpf(exact(case["beta"])), dps=REFERENCE_DPS + 10) for l in range(1, L + 1)]
                # mpmath's own Newton from the certified centre rounded to 10 digits (2-3 steps instead of 6
                # from the crude seed); it converges to the root of ITS equations, so a wrong certificate shows
                seed = [mp.mpf(mp.nstr(as_mpf(b.mid), 10)) for b in cert.enclosure]
            pt = first_order_noise_mp(d, g, seed[-1], seed[:-1], dps=REFERENCE_DPS, degree=6)
            ref = pt.D
            out["ref_m1"] = pt.moments[0]
        tight = None
        if infinite:  # the statement is only as sharp as the tail: width <= 4 S_L (relative)
            tight = 4 * as_mpf(upper(model.tail))
        entry = ledger.enclosure(name, cert.enclosure[-1], ref, tight)
        entry.update(cert.to_dict())
        entry["m_1 enclosure"] = cert.enclosure[0].text(25)
        entry["unique in"] = {"D": cert.box[-1].text(30), "m_1": cert.box[0].text(30)}
        if infinite:
            entry["tail bound S_L >= sum_{l > L} w_l"] = model.tail.upper().str(6, radius=False)
            ledger.number(name, "tail", entry["tail bound S_L >= sum_{l > L} w_l"])
            entry["tail bound vs the exact tail"] = _tail_bound_check(ledger, model)
            if d == 3:
                entry["explicit tails (mpmath)"] = _widening_check(ledger, model,
                                                                   [b.mid for b in cert.enclosure])
        return entry
    ledger.attempt(name, work)
    return out


@claim(id="certified.noise-first-order",
       title="noisy usa, d = 3, beta = 3, the infinite zonal system (tail beyond L = 16 bounded rigorously): "
             "D_1st enclosed (Krawczyk uniformly in the tail); D_c < D_1st < 41/50, a clustered state at 41/50 "
             "with Delta F > 0",
       source=_MR, note="certified-noise-first-order.md")
def check_noise_first_order() -> CheckResult:
    from theory.certified.balls import decimal, enclosure_of, exact, sign_of, working_precision
    from theory.certified.first_order import FIRST_ORDER_PREC, critical_noise_ball, stationary_certificate
    from theory.noise import coupling

    case = FIRST_ORDER_CASE
    ledger = Ledger("certified.noise-first-order")
    got = _first_order(ledger, case)
    order = {}
    if "cert" in got:
        model, cert = got["model"], got["cert"]
        with working_precision(FIRST_ORDER_PREC):
            Dc = enclosure_of(critical_noise_ball(model))

        def critical():
            with mp.workdps(REFERENCE_DPS + 10):  # coupling divides at the caller's precision
                ref = coupling(case["d"], 1, as_mpf(exact(case["beta"])), dps=REFERENCE_DPS + 10)
            return ledger.enclosure("D_c", Dc, ref)
        ledger.attempt("D_c", critical)
        D1 = cert.enclosure[-1]
        above = exact(case["D_above"])

        def state():
            s, gap = stationary_certificate(model, above, [b.mid for b in cert.enclosure[:-1]])
            order["gap"] = sign_of(gap)
            with working_precision(FIRST_ORDER_PREC):
                gap_int = enclosure_of(gap)
            entry = {"m_1 enclosure": s.enclosure[0].text(25), **s.to_dict(),
                     "Delta F enclosure": gap_int.text(15), "Delta F sign": order["gap"]}
            ledger.number("state_above", "m1", decimal(s.enclosure[0].mid, 12))
            ledger.number("state_above", "m1width", decimal(s.enclosure[0].width, 3, "up"))
            ledger.number("state_above", "gap", decimal(gap_int.mid, 8))
            ledger.number("state_above", "gapwidth", decimal(gap_int.width, 3, "up"))
            return entry
        ledger.attempt(f"stationary state at D = {case['D_above']}", state)
        order["D_c < D_1st"] = Dc.hi < D1.lo
        order["D_1st < D_above"] = D1.hi < above
        if not order["D_c < D_1st"] or not order["D_1st < D_above"]:
            ledger.problems.append(f"ordering not certified: {order}")
        if order.get("gap") != 1:
            ledger.problems.append("the free-energy gap at D_above is not certified > 0")
        with working_precision(FIRST_ORDER_PREC):
            order["w_L (the last kept weight g_L N_L)"] = enclosure_of(model.weights[-1]).text(6)
    first = ledger.items.get(got["name"], {}).get("enclosure", "refused")
    return ledger.result(f"D_1st in {first}",
                         "first_order_noise_mp (mpmath, 50 digits, Gauss-Legendre; the zero tail) inside; "
                         "D_c < D_1st < 41/50",
                         "relative width <= 4 S_16 (the tail bound)", KRAWCZYK_METHOD + "." + TAIL_METHOD,
                         {"case": case, "ordering": order,
                          "statement": "the full equal-free-energy system (every zonal mode) has a solution with "
                                       "(m_1..m_16, D) in the box 'unique in', D in the enclosure; for each tail "
                                       "(m_l)_{l > 16} in [-1, 1] the first 16 modes and D are unique in the box; "
                                       "D_c = g_1(3) lies below D_1st; at D = 41/50 > D_1st the full stationary "
                                       "equations have a clustered solution (first 16 modes unique in their box "
                                       "given the tail) whose free energy exceeds the uniform state's "
                                       "(Delta F > 0)",
                          "scope": INFINITE_WORDING})


@claim(id="certified.noise-first-order-truncation",
       title="D_1st of the truncated model at L = 16, 20, 24 (d = 3, beta = 3): certified enclosures and their "
             "differences (slow)",
       source=_MR, note="certified-noise-first-order.md", default=False)
def check_noise_first_order_truncation() -> CheckResult:
    from theory.certified.balls import decimal

    ledger = Ledger("certified.noise-first-order-truncation")
    enclosures = {}
    for L in (16, 20, 24):
        got = _first_order(ledger, {**FIRST_ORDER_CASE, "L": L, "infinite": False}, reference=(L == 16))
        if "cert" in got:
            enclosures[L] = got["cert"].enclosure[-1]
    diffs = {}
    if 16 in enclosures and 24 in enclosures:
        for L in (16, 20):
            a, b = enclosures[L], enclosures[24]
            diffs[f"D(L={L}) - D(L=24)"] = f"[{decimal(a.lo - b.hi, 4, 'down')}, {decimal(a.hi - b.lo, 4, 'up')}]"
            ledger.number(f"L{L}", "diff", decimal(abs(a.mid - b.mid), 3, "up"))
    return ledger.result(diffs or "refused", "the truncated models' D_1st agree to far below the float accuracy",
                         "relative width <= 1e-30", KRAWCZYK_METHOD,
                         {"differences (certified, between truncated models)": diffs, "scope": TRUNCATED_WORDING})


# -- the Landau quartic coefficient --------------------------------------------------------------------------
QUARTIC_METHOD = ("Arb ball arithmetic (python-flint): the zero of c_4 a certified root (sign change, c_4' bounded "
                  "away from 0 on its bracket, interval Newton at 128 bits); elsewhere c_4 enclosed on whole pieces "
                  "(64 bits) bisected until every enclosure excludes 0")


def _landau(cid: str, dimensions) -> CheckResult:
    from theory.certified.balls import decimal
    from theory.certified.landau import quartic_sign_map

    ledger = Ledger(cid)
    for d in dimensions:
        def work(d=d):
            signs = quartic_sign_map(d, "1/10", "20")
            entry = signs.to_dict()
            entry["sign pieces"] = entry.pop("runs")
            entry["enclosure"], entry["width"] = entry.pop("zero"), decimal(signs.zero.enclosure.width, 3, "up")
            ledger.number(f"c_4(d={d})", "pieces", signs.pieces)
            if [s for _, s, _ in signs.runs] != [1, -1]:
                ledger.problems.append(f"d={d}: c_4 is not + then - on [1/10, 20]: {entry['runs']}")
            entry["beta*"] = ledger.enclosure(f"beta*(d={d}) from c_4", signs.zero.enclosure,
                                              reference_noise_threshold(d))
            return entry
        ledger.attempt(f"c_4(d={d})", work)
    d0 = dimensions[0]
    first = ledger.items.get(f"c_4(d={d0})", {}).get("enclosure", "refused")
    return ledger.result(f"c_4 changes sign (+ to -) exactly once, at beta*({d0}) in {first}",
                         "beta*(d) (mpmath root of I_{d/2+1}/I_{d/2} = 1/d) inside the zero's enclosure",
                         "certified signs on the whole interval; relative width <= 1e-30", QUARTIC_METHOD,
                         {"d": list(dimensions), "beta interval": "[1/10, 20]",
                          "statement": "c_4(beta) = D<P_1^4>/12 - D^2 <P_1^2 P_2>^2/(8 (D - g_2) <P_2^2>) at "
                                       "D = g_1(beta) is > 0 (continuous transition) on [1/10, beta*) and < 0 "
                                       "(first order) on (beta*, 20], its only zero in the enclosure"})


@claim(id="certified.landau-quartic",
       title="mode-1 Landau quartic c_4(beta) at D = D_c, d = 3: > 0 on [1/10, beta*), < 0 on (beta*, 20], one "
             "certified sign change containing beta*(3)",
       source=_MR + "; theory.noise_global.quartic_coefficient_expr", note="certified-landau-quartic.md")
def check_landau_quartic() -> CheckResult:
    return _landau("certified.landau-quartic", (3,))


@claim(id="certified.landau-quartic-full", title="the same sign map of c_4 for d = 2..5 (slow)",
       source=_MR + "; theory.noise_global.quartic_coefficient_expr", note="certified-landau-quartic.md",
       default=False)
def check_landau_quartic_full() -> CheckResult:
    return _landau("certified.landau-quartic-full", (2, 3, 4, 5))


# -- the fold of the clustered branch -----------------------------------------------------------------------------
FOLD_CASE = {"d": 3, "L": 20, "seed_D": "8275/10000", "seed_m1": "7/10", "seed_ratio": "7/10",
             "D_state": "41/50", "beta": "3"}
FOLD_METHOD = (KRAWCZYK_METHOD + " applied to the extended system (F(m, D) = 0, F_m v = 0, v_1 = 1; third "
               "cumulants from Hankel moment matrices)." + TAIL_METHOD + "; the kernel vector's tail |v_l| <= R "
               "with R = 2 sum_{j <= L} w_j |v_j| / (D - 2 S) checked on the box")
#: the extended system's residual at the certificate's centre, by the independent mpmath path: the centre solves
#: the zero-tail system to ~1e-21 (Newton stops at S_20 / 2^20), 96 Gauss-Legendre nodes are exact to ~1e-50
FOLD_RESIDUAL = mp.mpf(10) ** -18


@lru_cache(maxsize=4)
def _gauss_legendre(degree: int, prec: int) -> list:
    """mpmath's Gauss-Legendre nodes and weights on [-1, 1] (3 2^(degree-1) of them) at ``prec`` bits."""
    from mpmath.calculus.quadrature import GaussLegendre

    with mp.workprec(prec):
        return GaussLegendre(mp.mp).calc_nodes(degree, prec)


def _mp_extended(model, z: list, degree: int = 6) -> list:
    """m - G(m, D) and v - cov(P, U)/D at z = (m, v, D) (mpmath numbers), with U = sum w_j v_j P_j: mpmath,
    Legendre P_l (d = 3 only) and 3 2^(degree-1) Gauss-Legendre nodes (96 by default) -- not the certificate's
    monomial moments and Hankel products."""
    from theory.certified.balls import rational_of

    L = model.L
    m, v, D = z[:L], z[L:2 * L], z[2 * L]
    w = [as_mpf(rational_of(x.mid())) for x in model.weights]
    nodes = _gauss_legendre(degree, mp.mp.prec)
    P = [[mp.legendre(i, x) for i in range(1, L + 1)] for x, _ in nodes]
    e = [wk * mp.exp(mp.fsum(w[i] * m[i] * p[i] for i in range(L)) / D) for (_, wk), p in zip(nodes, P)]
    Z = mp.fsum(e)
    G = [mp.fsum(a * p[i] for a, p in zip(e, P)) / Z for i in range(L)]
    U = [mp.fsum(w[j] * v[j] * p[j] for j in range(L)) for p in P]
    EU = mp.fsum(a * u for a, u in zip(e, U)) / Z
    H = [v[i] - (mp.fsum(a * p[i] * u for a, p, u in zip(e, P, U)) / Z - G[i] * EU) / D for i in range(L)]
    return [m[i] - G[i] for i in range(L)] + H


def _fold_residual(model, centre: list) -> mp.mpf:
    """max |F|, |H| at the certificate's centre (exact rationals) by :func:`_mp_extended`."""
    with mp.workdps(REFERENCE_DPS + 10):
        return max(abs(x) for x in _mp_extended(model, [as_mpf(c) for c in centre]))


#: the degree-4 point where the extended system's Jacobian is compared with mpmath's central differences
FOLD_JACOBIAN_POINT = ("7/10", "2/5", "3/20", "1/20", "1", "7/5", "3/5", "1/5", "4/5")


def _fold_jacobian_check(ledger: Ledger) -> str:
    """The Arb Jacobian of the extended system (truncated L = 4, exact point) against central differences of
    :func:`_mp_extended` (48 nodes, h = 1e-13 at 40 digits: error ~1e-26): every entry inside its ball widened by
    1e-20 (a planted error in a derivative moves an entry by > 1e-4)."""
    from flint import arb

    from theory.certified.balls import exact, lower, upper, working_precision
    from theory.certified.first_order import FIRST_ORDER_PREC, truncated_model
    from theory.certified.fold import extended_system

    with working_precision(FIRST_ORDER_PREC):
        model = truncated_model(3, "3", 4)
        _, J = extended_system(model, [arb(exact(x)) for x in FOLD_JACOBIAN_POINT])
    worst = mp.mpf(0)
    with mp.workdps(40):
        z0 = [as_mpf(exact(x)) for x in FOLD_JACOBIAN_POINT]
        h = mp.mpf(10) ** -13
        for j in range(len(z0)):
            up, dn = list(z0), list(z0)
            up[j] += h
            dn[j] -= h
            Fu, Fd = _mp_extended(model, up, 5), _mp_extended(model, dn, 5)
            for i in range(2 * model.L):
                value = (Fu[i] - Fd[i]) / (2 * h)
                lo, hi = as_mpf(lower(J[i][j])), as_mpf(upper(J[i][j]))
                worst = max(worst, lo - value, value - hi)
    if worst > mp.mpf(10) ** -20:
        ledger.problems.append(f"the extended system's Jacobian misses mpmath's central differences by "
                               f"{mp.nstr(worst, 3)}")
    return "inside" if worst <= mp.mpf(10) ** -20 else f"outside by {mp.nstr(worst, 3)}"


@claim(id="certified.noise-fold",
       title="noisy usa, d = 3, beta = 3, infinite zonal system: the fold of the clustered branch enclosed "
             "(extended system, Krawczyk uniformly in the tail beyond L = 20), above 41/50",
       source=_MR + "; the extended system evaluated independently in mpmath", note="certified-noise-fold.md")
def check_noise_fold() -> CheckResult:
    from theory.certified.balls import exact, upper, working_precision
    from theory.certified.first_order import FIRST_ORDER_PREC, infinite_model
    from theory.certified.fold import fold_certificate

    case = FOLD_CASE
    ledger = Ledger("certified.noise-fold")

    def work():
        with working_precision(FIRST_ORDER_PREC):  # the weights are balls at the certificate's precision
            model = infinite_model(case["d"], case["beta"], case["L"])
        cert, R = fold_certificate(model, _seed(case["L"], case), exact(case["seed_D"]))
        entry = ledger.enclosure("D_fold", cert.enclosure[-1], None, 64 * as_mpf(upper(model.tail)))
        entry.update(cert.to_dict())
        residual = _fold_residual(model, [b.mid for b in cert.box])
        entry["residual of F = 0, F_m v = 0 at the centre (mpmath path)"] = mp.nstr(residual, 3)
        if not residual <= FOLD_RESIDUAL:
            ledger.problems.append(f"D_fold: the independent mpmath residual at the centre is {mp.nstr(residual, 3)}"
                                   f" > {mp.nstr(FOLD_RESIDUAL, 3)}")
        entry["Jacobian vs mpmath central differences (L = 4 point)"] = _fold_jacobian_check(ledger)
        entry["m_1 enclosure"] = cert.enclosure[0].text(20)
        entry["v_2 enclosure (v_1 = 1)"] = cert.enclosure[case["L"] + 1].text(12)
        entry["tail bound S_L"] = model.tail.upper().str(6, radius=False)
        entry["tail bound vs the exact tail"] = _tail_bound_check(ledger, model)
        entry["kernel tail bound R"] = R.upper().str(6, radius=False)
        entry["unique in"] = {"D": cert.box[-1].text(25), "m_1": cert.box[0].text(25)}
        ledger.number("D_fold", "tail", entry["tail bound S_L"])
        ledger.number("D_fold", "residual", mp.nstr(residual, 3))
        above = exact(case["D_state"])
        entry["D_state < D_fold"] = bool(above < cert.enclosure[-1].lo)
        if not entry["D_state < D_fold"]:
            ledger.problems.append("the fold is not certified above 41/50")
        return entry
    ledger.attempt("D_fold", work)
    fold = ledger.items.get("D_fold", {}).get("enclosure", "refused")
    return ledger.result(f"D_fold in {fold}",
                         "the extended system's residual at the centre by the independent mpmath path <= 1e-18; "
                         "41/50 below the enclosure",
                         "relative width <= 64 S_20 (the tail bound)", FOLD_METHOD,
                         {"case": case,
                          "paths": {"certificate": "theory.certified.fold (Arb monomial moments, Hankel products)",
                                    "residual": "mpmath, Legendre P_l, 96 Gauss-Legendre nodes (this module)",
                                    "float fold": "numerics.noise continuation: compared in the slow test "
                                                  "test_fold_contains_the_continuation_fold (the certified area "
                                                  "does not import numerics.noise)"},
                          "statement": "the full stationary system (every zonal mode) has a solution (m, D) and a "
                                       "nonzero kernel vector v of its linearisation (v_1 = 1, |v_l| <= R for "
                                       "l > 20) with (m_1..m_20, v_1..v_20, D) in the box 'unique in' (unique "
                                       "there given the tails): D_fold lies in the enclosure and above 41/50",
                          "not proved": "that this singular point is a quadratic fold (D maximal along the branch) "
                                        "and that the branch through the certified state at 41/50 reaches it "
                                        "(no validated continuation between them)"})
