r"""The Maier-Saupe transition on :math:`\mathbb{S}^2` in closed form: mpmath quadrature and Arb-certified roots.

With :math:`W(s) = P_2(s) = (3 s^2 - 1)/2` on :math:`\mathbb{S}^2` (Funk-Hecke eigenvalue :math:`g_2 = 1/5`,
harmonic dimension :math:`N_2 = 5`, so :math:`g_2 N_2 = 1`) and noise :math:`D`, a head-tail symmetric stationary
density is :math:`\rho = e^{x P_2(t)}/Z(x)`, :math:`t = \langle x, e\rangle` uniform on :math:`[-1, 1]` under the
uniform measure of :math:`\mathbb{S}^2`, with :math:`x = S/D` and the order parameter :math:`S = E_\rho[P_2]`:

.. math::

    Z(x) = \int_0^1 e^{x P_2(t)}\, dt, \qquad S(x) = \frac{Z'(x)}{Z(x)}, \qquad D(x) = \frac{S(x)}{x}.

The free energy difference to the uniform state at such a state is :math:`\Delta F = S^2/2 - D \log Z`
(theory.noise_global), so :math:`\Delta F = 0` reads :math:`h(x) = x S(x)/2 - \log Z(x) = 0` (:math:`x > 0`), and
the fold (the largest :math:`D` on the branch) is :math:`dD/dx = 0`: :math:`k(x) = x V(x) - S(x) = 0` with
:math:`V = S'` the variance of :math:`P_2` under :math:`\rho`. :math:`h' = k/2` and :math:`k' = x \kappa_3` (the
third cumulant of :math:`P_2`). As :math:`x \to 0`, :math:`S \sim x/5`: :math:`D \to 1/5`, the linear-stability
threshold.

Two independent evaluations of :math:`Z` and its moments:

- mpmath quadrature of :math:`\int_0^1 P_2^j e^{x P_2}\, dt` (:func:`reference_point`, 30 digits);
- closed forms in erfi: with :math:`a = 3x/2` and :math:`J_n = \int_0^1 t^{2n} e^{a t^2}\, dt`,
  :math:`J_0 = \sqrt{\pi}\, \operatorname{erfi}(\sqrt{a})/(2 \sqrt{a})` and
  :math:`J_{n+1} = (e^a - (2n + 1) J_n)/(2a)` (integration by parts), :math:`P_2 = (3t^2 - 1)/2`, evaluated in
  Arb ball arithmetic: :func:`certified_points` certifies the roots of :math:`h` and :math:`k` (sign change,
  :math:`f'` bounded away from 0, interval Newton; theory.certified.roots) and encloses :math:`D` and :math:`S`
  there.

Verified by: noise.maier-saupe.
"""
from __future__ import annotations

from dataclasses import dataclass

import mpmath as mp

#: the classical values as usually quoted (Maier-Saupe mean field, U = 1, k T = D): the isotropic spinodal
#: k T = U/5, the transition k T_NI = 0.22019 U and the jump S_NI = 0.4289 (the latter two to the digits quoted)
CLASSICAL = {"spinodal": 0.2, "transition": 0.22019, "jump": 0.4289}


def _moments_mp(x, top: int = 3) -> list:
    """int_0^1 P_2(t)^j e^{x P_2(t)} dt for j = 0..top by mpmath quadrature."""
    p2 = lambda t: (3 * t * t - 1) / 2  # noqa: E731
    return [mp.quad(lambda t, j=j: p2(t) ** j * mp.exp(x * p2(t)), [0, 1]) for j in range(top + 1)]


def _h_mp(x):
    z = _moments_mp(x, 1)
    return x * z[1] / z[0] / 2 - mp.log(z[0])


def _k_mp(x):
    z = _moments_mp(x, 2)
    S = z[1] / z[0]
    return x * (z[2] / z[0] - S * S) - S


@dataclass(frozen=True)
class MaierSaupePoint:
    """:math:`x = S/D`, :math:`D` and :math:`S` at a root (transition or fold)."""

    x: object
    D: object
    S: object


def reference_point(which: str, dps: int = 30) -> MaierSaupePoint:
    """The transition (``which = "transition"``: :math:`h(x) = 0`) or the fold (``"fold"``: :math:`k(x) = 0`) by
    mpmath findroot on quadrature (independent of every numerics.noise routine)."""
    with mp.workdps(dps):
        f, x0 = (_h_mp, mp.mpf("1.95")) if which == "transition" else (_k_mp, mp.mpf("1.45"))
        x = mp.findroot(f, x0)
        z = _moments_mp(x, 1)
        S = z[1] / z[0]
        return MaierSaupePoint(+x, +S / x, +S)


def _arb_moments(x):
    """[Z, E P_2, E P_2^2, E P_2^3] (each times e^{x/2}, which cancels in ratios) in Arb, from erfi."""
    from flint import arb

    a = 3 * x / 2
    ra = a.sqrt()
    J = [arb.pi().sqrt() * ra.erfi() / (2 * ra)]
    ea = a.exp()
    for n in range(3):
        J.append((ea - (2 * n + 1) * J[n]) / (2 * a))
    return [J[0], (3 * J[1] - J[0]) / 2, (9 * J[2] - 6 * J[1] + J[0]) / 4,
            (27 * J[3] - 27 * J[2] + 9 * J[1] - J[0]) / 8]


def _stats(x):
    z = _arb_moments(x)
    S = z[1] / z[0]
    m2, m3 = z[2] / z[0], z[3] / z[0]
    V = m2 - S * S
    k3 = m3 - 3 * S * m2 + 2 * S ** 3
    return z[0], S, V, k3


def h_arb(x):
    r""":math:`h(x) = x S/2 - \log Z` in Arb (:math:`\log Z = \log(e^{x/2} Z) - x/2`)."""
    Z, S, _, _ = _stats(x)
    return x * S / 2 - (Z.log() - x / 2)


def k_arb(x):
    """:math:`k(x) = x V - S` in Arb."""
    _, S, V, _ = _stats(x)
    return x * V - S


def certified_points(prec: int = 128) -> dict:
    """Certified roots of :math:`h` on :math:`[9/5, 21/10]` and of :math:`k` on :math:`[7/5, 3/2]` (unique there),
    and enclosures of :math:`D = S/x` and :math:`S` at each:
    ``{"transition": (RootCertificate, D ball, S ball), "fold": (...)}``."""
    from flint import fmpq

    from theory.certified.balls import Interval, working_precision
    from theory.certified.roots import certify_root

    def h_prime(x):
        return k_arb(x) / 2

    def k_prime(x):
        return x * _stats(x)[3]

    out = {}
    for name, f, fp, lo, hi in (("transition", h_arb, h_prime, fmpq(9, 5), fmpq(21, 10)),
                                ("fold", k_arb, k_prime, fmpq(7, 5), fmpq(3, 2))):
        cert = certify_root(f, fp, Interval(lo, hi), prec=prec)
        with working_precision(prec):
            X = cert.enclosure.ball()
            S = _stats(X)[1]
            out[name] = (cert, S / X, S)
    return out
