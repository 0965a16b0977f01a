"""The one integration loop (numerics.core.loop): breakpoints of a depth schedule and the bits of the wrappers.

- With a depth schedule, RK4 keeps its order 4 (layer times on the step grid and off it) and dp5 meets its
  tolerance: no step straddles a layer time and every stage of a step uses the layer the step lies in. Before
  the loop (a21ec2a) the observed order was 0.9-1.2 and dp5 missed rtol by 10-20x (the last stage of a step
  ending at a layer time used the next layer); the planted-timing test below reproduces that.
- The loop gives the bits of the step functions it replaced (fixed steps, one system and a batch).
"""
from __future__ import annotations

import numpy as np
import pytest

import numerics.core.integrators as integ
from numerics.core import controllers, loop
from numerics.core.blocks import MultiHead, Schedule
from numerics.core.field import make_field
from numerics.core.model import Model, SaveAt, Solver
from numerics.core.trajectory import simulate, uniform_sphere

T_END = 1.2
DTS = [0.05, 0.025, 0.0125]


def schedule(step: float) -> Schedule:
    """Three layers with distinct random score and value maps at times 0, step, 2 step."""
    rng = np.random.default_rng(5)
    heads = tuple(MultiHead.from_single(np.eye(3) + 0.5 * rng.standard_normal((3, 3)), np.eye(3),
                                        np.eye(3) + 0.5 * rng.standard_normal((3, 3))) for _ in range(3))
    return Schedule(times=np.arange(3) * step, heads=heads)


@pytest.fixture(scope="module", params=[0.5, 0.37], ids=["on-grid", "off-grid"])
def scheduled(request):
    """(model, X0, reference at T_END): layer times on the step grids of DTS (0.5) or off them (0.37)."""
    model, X0 = Model("sa", 1.5, schedule=schedule(request.param)), uniform_sphere(8, 3, 3)
    ref = simulate(model, X0, T_END, solver=Solver("dop853", rtol=1e-13, atol=1e-15)).X[-1]
    return model, X0, ref


def rk4_order(model, X0, ref) -> tuple[float, list[float]]:
    errors = [float(np.abs(simulate(model, X0, T_END, solver=Solver("rk4", dt=dt)).X[-1] - ref).max())
              for dt in DTS]
    return float(np.polyfit(np.log(DTS), np.log(errors), 1)[0]), errors


def test_rk4_keeps_order_four_with_a_schedule(scheduled):
    slope, errors = rk4_order(*scheduled)
    assert slope >= 3.8, errors


def test_rk4_order_check_fails_with_the_old_stage_timing(scheduled, monkeypatch):
    """Planted: every stage evaluated at its own time (the layer acting there), as before the loop."""
    monkeypatch.setattr(integ, "_timed", lambda field, t: field if loop.is_time_dependent(field)
                        else (lambda X, tau: field(X)))
    slope, errors = rk4_order(*scheduled)
    assert slope < 2.0, errors


@pytest.mark.parametrize("rtol", [1e-5, 1e-7])
def test_dp5_meets_its_tolerance_and_lands_on_layer_times(scheduled, rtol):
    model, X0, ref = scheduled
    ends = []
    tr = simulate(model, X0, T_END, solver=Solver("dp5", rtol=rtol, atol=rtol * 1e-2),
                  save=SaveAt(times=[0.0, 0.6, T_END]), progress=lambda t, _end: ends.append(t))
    assert np.abs(tr.X[-1] - ref).max() <= rtol
    for b in model.schedule.times[1:]:
        assert b in ends, (b, ends)


def test_dop853_lands_on_layer_times():
    model, X0 = Model("sa", 1.5, schedule=schedule(0.37)), uniform_sphere(8, 3, 3)
    ends = []
    simulate(model, X0, T_END, solver=Solver("dop853", rtol=1e-8), progress=lambda t, _end: ends.append(t))
    assert 0.37 in ends and 0.74 in ends


def test_equal_consecutive_layers_are_no_breakpoints():
    heads = schedule(1.0).heads[0]
    field = Model("sa", 1.0, schedule=Schedule.constant(heads, layers=4, step=0.3)).vector_field(5, 3)[0]
    assert field.breakpoints(0.0, 2.0) == ()
    field = Model("sa", 1.0, schedule=schedule(0.3)).vector_field(5, 3)[0]
    assert field.breakpoints(0.0, 2.0) == (0.3, 0.6) and field.breakpoints(0.3, 0.5) == ()


def test_fixed_steps_split_at_a_breakpoint_bit_for_bit():
    """rk4 with a layer time inside a step = the two pieces' RK4 steps [t, b] and [b, t + h], by hand."""
    model, X0 = Model("sa", 1.5, schedule=schedule(0.37)), uniform_sphere(8, 3, 3)
    field = model.vector_field(8, 3)[0]
    times, states, stats = integ.integrate(field, X0, 0.5, "rk4", dt=0.1)
    X = X0
    for k in range(5):
        a, b = k * 0.1, (k + 1) * 0.1
        if a < 0.37 < b:
            X = integ.step_rk4(field.piece(a), X, 0.37 - a)
            X = integ.step_rk4(field.piece(0.37), X, b - 0.37)
        else:
            X = integ.step_rk4(field.piece(a), X, 0.1)
        assert np.array_equal(states[k + 1], X), k
    assert stats["steps"] == 6 and np.array_equal(times, 0.1 * np.arange(6))


@pytest.mark.parametrize("shape", [(9, 3), (3, 7, 8)])
@pytest.mark.parametrize("method", ["layer", "rk4"])
def test_fixed_loop_equals_the_steppers_bit_for_bit(shape, method):
    field = make_field(shape[-1], 2.0, "sa")
    if len(shape) == 3:
        from numerics.core.batch_field import make_batch_field

        field = make_batch_field(shape[-1], np.array([0.5, 2.0, 4.0]), "sa")
    X0 = uniform_sphere(int(np.prod(shape[:-1])), shape[-1], 4).reshape(shape)
    times, states, _ = integ.integrate(field, X0, 0.7, method, dt=0.1, t0=0.1, save_every=2)
    X, step, h = X0, integ.FIXED_STEPPERS[method], (0.7 - 0.1) / 6
    for k in range(1, 7):
        X = step(field, X, h)
        if k % 2 == 0:
            assert np.array_equal(states[k // 2], X), k
    assert len(times) == 4 and np.array_equal(times, 0.1 + h * np.arange(0, 7, 2))


def test_one_controller_for_dp5_dop853_and_per_member():
    """The adaptive entry points share :class:`numerics.core.controllers.Adaptive` (no copy of the control)."""
    import inspect

    from numerics.core import member_adaptive

    for source in (inspect.getsource(loop), inspect.getsource(member_adaptive), inspect.getsource(integ)):
        assert "err ** (-1" not in source
    ctl = controllers.Adaptive(1e-6, 1e-9)
    assert ctl.accept(0.0, 0.1, 0.1, False) == pytest.approx(0.5)             # fac_max
    assert ctl.accept(1.0, 0.1, 0.1, False) == pytest.approx(0.09)            # safety
    assert ctl.accept(1e-10, 0.05, 0.1, True) == 0.1                          # a landed step keeps h
    assert ctl.reject(1e10, 0.1, 0.0, "x") == pytest.approx(0.02)             # fac_min
    assert ctl.reject(2.0, 0.1, 0.0, "x") == pytest.approx(0.09 * 2 ** -0.2)  # safety err^(-1/5)
    capped = controllers.Adaptive(1e-6, 1e-9, **controllers.DOP853_CONTROL)
    assert capped.accept(1e-10, 0.1, 0.1, False, rejected_last=True) == 0.1


@pytest.mark.parametrize("method, options", [("rk4", {"dt": 0.1}), ("layer", {"dt": 0.07}),
                                             ("dp5", {"rtol": 1e-7}), ("dop853", {"rtol": 1e-8})])
def test_mix_switch_restart_equals_two_runs_bit_for_bit(method, options):
    """Mix-LN's switch T is a restarting breakpoint: one loop run = post-LN to T, then pre-LN from T's state
    (fresh step grid or initial step), states bit for bit and T a frame (the segmented run it replaced)."""
    from numerics.core.norms import NormField, RadialRun

    model, T, t_end = Model("sa", 1.0, norm="mix", norm_switch=0.55), 0.55, 1.3
    run = RadialRun(model, uniform_sphere(9, 4, 2))
    kw = dict(options, steppers=run.steppers, project=run.project)
    adaptive = method in integ.ADAPTIVE_METHODS
    times, states, _ = run.integrate(run.field, run.y0, t_end, method,
                                     **(dict(kw, save_times=[0.0, t_end]) if adaptive else kw))
    first = integ.integrate(NormField(model, 4, "post"), run.y0, T, method,
                            **(dict(kw, save_times=[0.0, T]) if adaptive else kw))
    second = integ.integrate(NormField(model, 4, "pre"), first[1][-1], t_end, method, t0=T,
                             **(dict(kw, save_times=[T, t_end]) if adaptive else kw))
    assert T in times
    assert np.array_equal(states[list(times).index(T)], first[1][-1])
    assert np.array_equal(states[-1], second[1][-1])
