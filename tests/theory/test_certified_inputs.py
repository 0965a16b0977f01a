"""Issue 43: the certify API refuses degenerate input with one ``ValueError`` line (the CLI's exit 2), never a raw
SymPy or Python error: a huge dimension used to end in a RecursionError inside SymPy (d = 10**400) or Python's
"Exceeds the limit (4300 digits)" (kappa_d, d = 10**4, after seconds), and a degree given as a string such as
"3/0" in a TypeError from ``l + 1``. Each case is decided in well under a second."""
from __future__ import annotations

import time

import pytest

from theory.certified import longcontext as LC
from theory.certified import statements as S
from theory.certified import tail as T
from theory.certified.balls import MAX_DIMENSION, require_integer
from theory.certified.first_order import truncated_model

HUGE = 10**400
CASES = [
    ("critical_noise huge d", lambda: S.critical_noise(HUGE, 1), "d must be an integer in [2, 1000]"),
    ("growth_rate huge d", lambda: S.growth_rate("sa", HUGE, 1, 1), "d must be an integer in [2, 1000]"),
    ("growth_rate huge l", lambda: S.growth_rate("usa", 3, HUGE, 1), "l must be an integer in [1, 1000]"),
    ("noise_threshold_expr huge d", lambda: S.noise_threshold_expr(HUGE), "d must be an integer"),
    ("switch_point huge d", lambda: S.switch_point(HUGE, 1), "d must be an integer"),
    ("switch_point l '3/0'", lambda: S.switch_point(3, "3/0"), "l must be an integer"),
    ("switch_point_expr l None", lambda: S.switch_point_expr(3, None), "l must be an integer"),
    ("poisson_constant huge d", lambda: LC.poisson_constant(HUGE), "d must be an integer in [2, 1000]"),
    ("poisson_constant 10^4", lambda: LC.poisson_constant(10**4), "d must be an integer in [2, 1000]"),
    ("poisson_constant_closed huge d", lambda: LC.poisson_constant_closed(HUGE), "d must be an integer"),
    ("coupling_upper_bound l '3/0'", lambda: T.coupling_upper_bound(3, 1, "3/0"), "l must be an integer"),
    ("tail_weight_bound huge d", lambda: T.tail_weight_bound(HUGE, 1, 3), "d must be an integer"),
    ("truncated_model huge odd d", lambda: truncated_model(10**401 + 1, 1, 4), "odd d in [3, 1000]"),
    ("critical_noise beta 3/0", lambda: S.critical_noise(3, "3/0"), "zero denominator"),
    ("critical_noise beta 0", lambda: S.critical_noise(3, 0), "beta must be > 0"),
]


@pytest.mark.parametrize("call, fragment", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_degenerate_input_is_one_value_error(call, fragment):
    start = time.perf_counter()
    with pytest.raises(ValueError, match=fragment.replace("[", r"\[").replace("]", r"\]")) as info:
        call()
    assert type(info.value) is ValueError and "\n" not in str(info.value)
    assert time.perf_counter() - start < 5


def test_the_range_ends_are_accepted():
    assert require_integer("d", MAX_DIMENSION, 2, MAX_DIMENSION) == MAX_DIMENSION
    for bad in (True, 1, MAX_DIMENSION + 1, 2.0, "3"):
        with pytest.raises(ValueError):
            require_integer("d", bad, 2, MAX_DIMENSION)
    assert S.switch_point_expr(3, 1) is not None
