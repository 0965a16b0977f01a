"""Certificates as claim results: each run proves its statement in ball arithmetic (``theory.certified``) and is
checked against an independent high-precision value (mpmath at 50 digits through ``theory.noise`` /
``theory.meanfield``), then reported as a :class:`numerics.common.verification.CheckResult`.

A run's status is ``certified`` only when every certificate was issued (no :class:`CertificateRefused`, no
:class:`FloatingPointRefused` anywhere in the chain), every enclosure contains its reference value and every
enclosure is tight (relative width at most :data:`TIGHT`); otherwise it is ``failed``, with the reason.
The numbers in ``details`` are decimal strings of the exact rational endpoints, rounded outward.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import mpmath as mp

from numerics.common.verification import CheckResult

#: digits of the independent mpmath reference values
REFERENCE_DPS = 50
#: the reference value must lie in the enclosure widened by this relative amount: mpmath's own error at 50
#: digits is ~1e-49 relative, the enclosures are ~1e-37 wide, a planted error moves a number by >> 1e-10
REFERENCE_SLACK = mp.mpf(10) ** -45
#: an enclosure counts as tight when its width is at most this times max(1, |value|) (128-bit balls give ~1e-36)
TIGHT = mp.mpf(10) ** -30

ROOT_METHOD = ("Arb ball arithmetic at 128 bits (python-flint): certified signs of f at the exact endpoints of "
               "a bracket (existence), an Arb enclosure of f' over the whole bracket excluding 0 (uniqueness), "
               "interval Newton steps X <- X n (m - f(m)/f'(X)) (tight enclosure)")
VALUE_METHOD = ("Arb ball arithmetic at 128 bits (python-flint): the SymPy expression of theory/ evaluated "
                "operation by operation in balls at an exact rational beta")
SIGN_METHOD = ("Arb ball arithmetic at 128 bits (python-flint): adaptive bisection of the beta interval into "
               "pieces on each of which the enclosure of the eigenvalue (or of its derivative, with certified "
               "signs at the ends) excludes 0; exact zeros at rational points by SymPy (f = ... = f^(k-1) = 0 "
               "exactly) with the Arb enclosure of f^(k) on the piece excluding 0 (Taylor)")


def as_mpf(q) -> mp.mpf:
    """An exact rational (fmpq) as an mpmath number at the working digits (rounding ~1e-60 relative)."""
    with mp.workdps(REFERENCE_DPS + 10):
        return mp.mpf(int(q.p)) / int(q.q)


@dataclass
class Ledger:
    """What one run proved and checked: its items (name -> details) and the reasons it cannot be certified."""

    claim_id: str
    items: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)
    widths: list = field(default_factory=list)
    numbers: dict = field(default_factory=dict)   # name_mid / name_width -> decimal string (quotable in notes)
    started: float = field(default_factory=time.perf_counter)

    def attempt(self, name: str, work: Callable[[], dict]) -> dict | None:
        """Run ``work`` (a certificate); a refusal of any kind is recorded as a problem, never swallowed."""
        from theory.certified.balls import CertificateRefused, FloatingPointRefused

        t0 = time.perf_counter()
        try:
            out = work()
        except (CertificateRefused, FloatingPointRefused, ZeroDivisionError, ValueError) as exc:
            self.problems.append(f"{name}: certificate refused ({type(exc).__name__}: {exc})")
            self.items[name] = {"refused": f"{type(exc).__name__}: {exc}"}
            return None
        out["seconds"] = round(time.perf_counter() - t0, 3)
        self.items[name] = out
        return out

    def enclosure(self, name: str, interval, reference, tight=None) -> dict:
        """Check an enclosure (exact Interval) against a reference (mpmath, or an exact rational); ``tight`` (an
        mpmath number) replaces :data:`TIGHT` where the statement itself has a known width (a tail bound)."""
        with mp.workdps(REFERENCE_DPS + 10):  # every comparison at 60 digits (mpmath rounds to the context)
            return self._enclosure(name, interval, reference, TIGHT if tight is None else tight)

    def _enclosure(self, name: str, interval, reference, tight) -> dict:
        from theory.certified.balls import decimal

        lo, hi = as_mpf(interval.lo), as_mpf(interval.hi)
        scale = max(mp.mpf(1), abs(lo), abs(hi))
        rel_width = (hi - lo) / scale
        self.widths.append(rel_width)
        entry = {"enclosure": interval.text(25), "width": decimal(interval.width, 3, "up"),
                 "midpoint": decimal(interval.mid, 25)}
        self.number(name, "mid", entry["midpoint"])
        self.number(name, "width", entry["width"])
        if reference is not None:
            if hasattr(reference, "p") and hasattr(reference, "q"):      # exact rational: exact membership
                inside = interval.contains(reference)
                entry["exact value"] = str(reference)
            else:
                slack = REFERENCE_SLACK * scale
                inside = lo - slack <= reference <= hi + slack
                entry["mpmath (50 digits)"] = mp.nstr(reference, 30)
            entry["contains reference"] = bool(inside)
            if not inside:
                self.problems.append(f"{name}: enclosure {interval.text(20)} misses the reference "
                                     f"{entry.get('mpmath (50 digits)', entry.get('exact value'))}")
        if rel_width > tight:
            self.problems.append(f"{name}: enclosure not tight (relative width {mp.nstr(rel_width, 3)})")
        return entry

    def number(self, name: str, what: str, value) -> None:
        """Record a number under a key without spaces or slashes (a path for the notes' measured markers)."""
        key = "_".join(name.replace(",", " ").replace(":", " ").split()).replace("/", "_over_")
        self.numbers[f"{key}:{what}"] = value

    def result(self, measured: str, expected, tolerance: str, method: str, extra: dict | None = None) -> CheckResult:
        details = {"method": method, "precision_bits": 128, "certificates": self.items,
                   "seconds": round(time.perf_counter() - self.started, 3)}
        if self.widths:
            details["widest relative enclosure"] = mp.nstr(max(self.widths), 3)
        if self.numbers:
            details["numbers"] = self.numbers
        details.update(extra or {})
        if self.problems:
            details["problems"] = self.problems
            return CheckResult(self.claim_id, "failed", measured, expected, tolerance, details)
        return CheckResult(self.claim_id, "certified", measured, expected, tolerance, details)


# -- references by the independent route (mpmath at 50 digits through theory/) -----------------------------------
def reference_noise_threshold(d: int) -> mp.mpf:
    """beta*(d) by mpmath.findroot on theory.noise.bessel_ratio at 50 digits (seeded by the float threshold)."""
    from theory.noise import bessel_ratio, discontinuity_threshold

    with mp.workdps(REFERENCE_DPS):
        return mp.findroot(lambda b: bessel_ratio(d, b, REFERENCE_DPS) - mp.mpf(1) / d,
                           mp.mpf(discontinuity_threshold(d)))


def reference_growth_rate(model: str, d: int, l: int, beta) -> mp.mpf:  # noqa: E741 - degree
    """lambda_l(beta) from theory.meanfield.growth_rate (mpmath closed form through funk_hecke_value)."""
    from theory.meanfield import growth_rate

    with mp.workdps(REFERENCE_DPS):
        return growth_rate(model, d, l, mp.mpf(int(beta.p)) / int(beta.q), dps=REFERENCE_DPS)


def reference_switch_point(d: int, l: int) -> mp.mpf:  # noqa: E741 - degree
    """beta_l by mpmath.findroot on theory.meanfield.growth_rate (l+1 minus l) at 50 digits."""
    from theory.meanfield import growth_rate, switch_point

    with mp.workdps(REFERENCE_DPS):
        return mp.findroot(lambda b: growth_rate("usa", d, l + 1, b, dps=REFERENCE_DPS)
                           - growth_rate("usa", d, l, b, dps=REFERENCE_DPS), mp.mpf(switch_point(d, l)))


def enclose_all(ledger: Ledger, jobs) -> None:
    """Value certificates: for each (name, enclose, reference), the enclosure ``enclose()`` (an exact Interval)
    checked against ``reference()`` (mpmath, computed at 60 digits so the comparison is not rounded)."""
    for name, enclose, reference in jobs:
        def work(name=name, enclose=enclose, reference=reference):
            with mp.workdps(REFERENCE_DPS + 10):
                return ledger.enclosure(name, enclose(), reference())
        ledger.attempt(name, work)


def root_entry(ledger: Ledger, name: str, certificate, reference) -> dict:
    entry = ledger.enclosure(name, certificate.enclosure, reference)
    entry.update({"unique in": certificate.bracket.text(15), "signs at the bracket ends":
                  [certificate.left_sign, certificate.right_sign],
                  "f' on the bracket": certificate.to_dict()["derivative_on_bracket"],
                  "bisections": certificate.bisections, "newton steps": certificate.newton_steps})
    return entry
