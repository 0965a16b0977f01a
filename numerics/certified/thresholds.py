"""One threshold certified at the user's own dimension (and inverse temperature): ``attnflow certify THRESHOLD``.

The registered claims (:mod:`numerics.certified.claims`) certify beta*(d), D_c(beta) and the switch points at
a fixed list of (d, beta); this module certifies one of them at any admissible (d, beta, l), through the same
statements of :mod:`theory.certified.statements` and the same check as the claims
(:class:`numerics.certified.runs.Ledger`): the enclosure must contain the independent 50-digit mpmath value
and be tight, or the verdict is ``failed``.

- ``beta-star``: beta*(d), the root of I_{d/2+1}(beta)/I_{d/2}(beta) = 1/d (usa's noisy transition turns
  discontinuous above it); needs ``d`` only.
- ``critical-noise``: D_c(beta) = lambda_1(beta)/(d-1) (usa), the noise below which the uniform measure is
  linearly unstable; needs ``d`` and ``beta``.
- ``switch-point``: beta_l, the root of lambda_{l+1}(beta) = lambda_l(beta) (where the fastest-growing mode of
  the mean-field linearisation changes from l to l + 1); needs ``d`` and ``l`` (1 if not given).

Bad input (an unknown name, d < 2, beta <= 0, a beta or an l where the threshold has none) raises
:class:`numerics.common.InputError` before any certificate is built.
"""
from __future__ import annotations

from dataclasses import dataclass

from numerics.common.errors import InputError
from numerics.common.verification import CheckResult

#: the largest beta accepted: D_c grows like e^beta (about 1e426 at beta = 1000), and far beyond that the exact
#: endpoints of the enclosure have more digits than Python converts to text by default
MAX_BETA = 1000
#: the largest dimension accepted (the statements' own range, theory.certified.balls.MAX_DIMENSION)
MAX_D = 1000
#: the largest switch-point degree accepted: beyond ~100 the mpmath reference's hypergeometric series stops
#: converging at 50 digits for large d (l = d = 999 raised NoConvergence), and beta_l grows like l^2
MAX_L = 100
#: a beta is typed by a person: longer strings are refused before parsing (a 10^6-digit fraction is no input)
MAX_BETA_CHARS = 60


@dataclass(frozen=True)
class Threshold:
    """One certifiable threshold: its CLI name, what it is, and which parameters it takes."""

    name: str
    symbol: str
    statement: str
    takes_beta: bool
    takes_l: bool


THRESHOLDS: dict[str, Threshold] = {
    "beta-star": Threshold("beta-star", "beta*(d)",
                           "the root of I_{d/2+1}(beta)/I_{d/2}(beta) = 1/d (usa's noisy transition turns "
                           "discontinuous above it)", takes_beta=False, takes_l=False),
    "critical-noise": Threshold("critical-noise", "D_c(d, beta)",
                                "D_c(beta) = lambda_1(beta)/(d-1) (usa): below it the uniform measure is linearly "
                                "unstable", takes_beta=True, takes_l=False),
    "switch-point": Threshold("switch-point", "beta_l(d)",
                              "the root of lambda_{l+1}(beta) = lambda_l(beta) (usa; the fastest-growing mode "
                              "changes from l to l + 1)", takes_beta=False, takes_l=True),
}


def _dimension(d) -> int:
    if d is None:
        raise InputError("--d is required (the dimension of the sphere's ambient space, an integer >= 2)")
    if isinstance(d, bool) or not isinstance(d, int) or not 2 <= d <= MAX_D:
        raise InputError(f"--d must be an integer in [2, {MAX_D}], got {d!r}")
    return d


def _beta(text: str):
    """The exact rational beta a user typed (``"3/2"``, ``"0.25"``, ``"2"``), in (0, MAX_BETA]."""
    from theory.certified.balls import exact

    text = str(text).strip()
    if len(text) > MAX_BETA_CHARS:
        raise InputError(f"--beta is {len(text)} characters long; write it in at most {MAX_BETA_CHARS} "
                         "(an integer, a decimal such as 0.25 or a fraction such as 3/2)")
    try:
        value = exact(text)
    except ValueError:
        raise InputError(f"--beta must be an exact rational such as 2, 0.25, 1e-3 or 3/2, got {text!r}") from None
    if value <= 0:
        raise InputError(f"--beta must be > 0 (the Bessel form; D_c(0) = 1/d is a limit), got {text!r}")
    if value > MAX_BETA:
        raise InputError(f"--beta must be at most {MAX_BETA} (D_c grows like e^beta), got {text!r}")
    return value


def resolve(name: str, d, beta: str | None = None, l: int | None = None) -> tuple[Threshold, dict]:  # noqa: E741
    """Check a request; return the threshold and its exact parameters (``d``, and ``beta`` or ``l``).

    Raises
    ------
    InputError
        for an unknown name, a dimension outside [2, MAX_D], a beta that is not an exact rational in
        (0, MAX_BETA], or a parameter the threshold does not take.
    """
    name = str(name).strip()
    if name not in THRESHOLDS:
        raise InputError(f"unknown threshold {name!r} (known: {', '.join(THRESHOLDS)})")
    t = THRESHOLDS[name]
    params: dict = {"d": _dimension(d)}
    if t.takes_beta:
        if beta is None:
            raise InputError(f"{name} needs --beta (an exact rational > 0 such as 3/2)")
        params["beta"] = _beta(beta)
    elif beta is not None:
        raise InputError(f"{name} takes no --beta ({t.symbol} is a value of beta itself)")
    if t.takes_l:
        degree = 1 if l is None else l
        if isinstance(degree, bool) or not isinstance(degree, int) or not 1 <= degree <= MAX_L:
            raise InputError(f"--l must be an integer in [1, {MAX_L}], got {degree!r}")
        params["l"] = degree
    elif l is not None:
        raise InputError(f"{name} takes no --l (only switch-point has a degree)")
    return t, params


def label(t: Threshold, params: dict) -> str:
    """The certificate's name, e.g. ``beta*(7)``, ``D_c(d=4, beta=3/2)``, ``beta_2(d=3)``."""
    if t.name == "beta-star":
        return f"beta*({params['d']})"
    if t.name == "critical-noise":
        return f"D_c(d={params['d']}, beta={params['beta']})"
    return f"beta_{params['l']}(d={params['d']})"


#: the working precisions tried in turn: a large d or l loses digits to cancellation at 128 bits (beta_5(d=300) is
#: enclosed only to 3e-24 there), so a certificate that is not tight is recomputed at twice the precision
PRECISIONS = (128, 256, 512)


def _relative_width(interval) -> float:
    from numerics.certified.runs import as_mpf

    lo, hi = as_mpf(interval.lo), as_mpf(interval.hi)
    return float((hi - lo) / max(1, abs(lo), abs(hi)))


def _tightest(make, enclosure_of=lambda c: c):
    """``make(prec)`` at the first precision of :data:`PRECISIONS` whose enclosure is tight (else the last), and
    that precision."""
    from numerics.certified.runs import TIGHT

    for prec in PRECISIONS:
        cert = make(prec)
        if _relative_width(enclosure_of(cert)) <= TIGHT:
            break
    return cert, prec


def _reference_root(f, seed):
    """The root of the mpmath function ``f`` (50 digits) by the secant method from ``seed`` cut to 12 digits.

    The seed is the certificate's midpoint only so that the iteration starts in the right basin (the float
    thresholds of theory/ lose the basin for large d or l); the 12-digit start leaves the last 38 digits to
    the independent function, so an enclosure off the true root by more than its width still misses it.
    """
    import mpmath as mp

    from numerics.certified.runs import REFERENCE_DPS

    with mp.workdps(REFERENCE_DPS):
        try:
            return mp.findroot(f, mp.mpf(mp.nstr(seed, 12)))
        except (mp.libmp.libhyper.NoConvergence, ZeroDivisionError) as exc:  # noqa: B904 - reported as refusal
            raise ValueError(f"the mpmath reference did not converge ({type(exc).__name__}: {exc})") from None


def certify_threshold(name: str, d, beta: str | None = None, l: int | None = None) -> CheckResult:  # noqa: E741
    """Certify one threshold and check it against the independent mpmath value (50 digits).

    Parameters
    ----------
    name : str
        ``beta-star``, ``critical-noise`` or ``switch-point`` (:data:`THRESHOLDS`).
    d : int
        The dimension, 2 <= d <= :data:`MAX_D`.
    beta : str, optional
        An exact rational in (0, :data:`MAX_BETA`] (``critical-noise`` only), e.g. ``"3/2"``.
    l : int, optional
        The degree of a switch point (``switch-point`` only; 1 when omitted, at most :data:`MAX_L`).

    Returns
    -------
    CheckResult
        Status ``certified`` when the certificate was issued, contains the reference and is tight; ``failed``
        otherwise (the reason in ``details["problems"]``). ``details["certificates"]`` holds the one entry
        (enclosure, width, midpoint, the mpmath value, and for a root its bracket and Newton steps);
        ``details["precision_bits"]`` the working precision that made it tight.
    """
    import mpmath as mp  # here, not at the top: building the CLI's parser imports this module

    from theory.meanfield import growth_rate as mp_rate
    from theory.noise import bessel_ratio

    from numerics.certified.runs import (REFERENCE_DPS, ROOT_METHOD, VALUE_METHOD, Ledger, as_mpf,
                                         reference_growth_rate, root_entry)

    t, params = resolve(name, d, beta, l)
    ledger = Ledger(f"threshold.{t.name}")
    key = label(t, params)
    dim = params["d"]
    used = {"prec": PRECISIONS[0]}

    def root(certify, f):
        def work():
            cert, used["prec"] = _tightest(certify, lambda c: c.enclosure)
            return root_entry(ledger, key, cert, _reference_root(f, as_mpf(cert.enclosure.lo)))
        ledger.attempt(key, work)

    if t.name == "beta-star":
        from theory.certified.statements import noise_threshold

        root(lambda prec: noise_threshold(dim, prec),
             lambda b: bessel_ratio(dim, b, REFERENCE_DPS) - mp.mpf(1) / dim)
        method = ROOT_METHOD
    elif t.name == "critical-noise":
        from theory.certified.statements import critical_noise

        b = params["beta"]

        def value():
            interval, used["prec"] = _tightest(lambda prec: critical_noise(dim, b, prec))
            with mp.workdps(REFERENCE_DPS + 10):  # the comparison at 60 digits (mpmath rounds to the context)
                return ledger.enclosure(key, interval, reference_growth_rate("usa", dim, 1, b) / (dim - 1))
        ledger.attempt(key, value)
        method = VALUE_METHOD
    else:
        from theory.certified.statements import switch_point

        degree = params["l"]
        root(lambda prec: switch_point(dim, degree, prec),
             lambda b: (mp_rate("usa", dim, degree + 1, b, dps=REFERENCE_DPS)
                        - mp_rate("usa", dim, degree, b, dps=REFERENCE_DPS)))
        method = ROOT_METHOD
    entry = ledger.items.get(key, {})
    shown = {k: (str(v) if k == "beta" else v) for k, v in params.items()}
    return ledger.result(f"{key} in {entry.get('enclosure', 'refused')}",
                         "mpmath 50-digit value inside the enclosure", "relative width <= 1e-30",
                         method.replace("128 bits", f"{used['prec']} bits"),
                         {"threshold": t.name, "statement": t.statement, "precision_bits": used["prec"], **shown})


__all__ = ["MAX_BETA", "MAX_D", "MAX_L", "THRESHOLDS", "Threshold", "certify_threshold", "label", "resolve"]
