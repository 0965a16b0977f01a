"""The shared RK4 stepper of the reduced systems: save times hit exactly, fourth order on y' = -y."""
import numpy as np

from numerics.common.stepping import rk4_at_times


def test_save_times_are_hit_and_the_order_is_four():
    times = [0.0, 0.3, 1.0, 2.5]
    saved = list(rk4_at_times(lambda y: -y, np.array([1.0]), times, 0.1))
    assert [t for t, _ in saved] == times[1:]
    errors = []
    for dt in (0.1, 0.05):
        (_, y_end), = list(rk4_at_times(lambda y: -y, np.array([1.0]), [0.0, 2.0], dt))
        errors.append(abs(y_end[0] - np.exp(-2.0)))
    assert 3.8 < np.log2(errors[0] / errors[1]) < 4.2


def test_a_wrong_stage_weight_lowers_the_order():
    """Shown to fail: Heun-like weights (k1 + k4)/2 give order 2, which the slope test above would reject."""
    def bad(f, y, h):
        k1 = f(y)
        k4 = f(y + h * k1)
        return y + 0.5 * h * (k1 + k4)
    errs = []
    for h in (0.1, 0.05):
        y = np.array([1.0])
        for _ in range(round(2.0 / h)):
            y = bad(lambda z: -z, y, h)
        errs.append(abs(y[0] - np.exp(-2.0)))
    assert np.log2(errs[0] / errs[1]) < 3.0
