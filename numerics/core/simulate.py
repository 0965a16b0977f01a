r"""The one driver: :func:`simulate` runs one system or an ensemble of B systems, :func:`resume` continues a saved run.

The path of every run (one system, a batch, a continuation) is the same :class:`Run`:

1. **prepare** (:meth:`Run.prepare`): validate the start and the time, B (1 for an ``X0`` of shape (n, d), squeezed at
   the API and file boundary; B for (B, n, d)), the field (the one attention pipeline; the normalisation schemes'
   :math:`(\theta, r)` field of :mod:`numerics.core.norms`; the Fourier or harmonic plug-in for one system), the cost
   check and the number of BLAS threads;
2. **integrate** (:meth:`Run.integrate`): one call into the integration loop (:mod:`numerics.core.loop`, through
   its wrappers) for every case: fixed steps, shared adaptive steps, per-member adaptive steps, the stochastic
   schemes (a random stream per member: B = 1 is the single run's generator), the normalisation schemes;
3. **energies** (:meth:`Run.energies`): the energy column (frames,) or (frames, B); a single direct field reads
   its frames' energies off its own tiles (``RowSumMemo``), which keeps today's bits;
4. **metadata** (:meth:`Run.meta`), written once.

The single system keeps its (n, d) fast paths (the one-head score map, ``RowSumMemo``, the Fourier and harmonic
backends), so its bits are those of the releases before; a member of a batch equals its single run bit for bit
where the arithmetic order allows (``docs/guide/ensembles.md``).

Progress: ``progress(t, t_end)`` is called as the integration advances; when the callable also has an attribute
``energy``, ``progress.energy(frames_done, frames)`` is called as the energy column is computed (see
:func:`simulate`). Provenance (the seed of the start, how it was drawn) is the caller's: add it to ``traj.meta``
(:func:`with_provenance`).
"""
from __future__ import annotations

import math
import time as _time
import warnings
from collections.abc import Callable

import numpy as np

from numerics.common.errors import InputError, require_int, require_points, require_real
from numerics.common.limits import check_array, check_work, evaluation_budget, steps_of
from numerics.common.provenance import package_versions
from numerics.core.ensemble import (batch_vector_field, check_batchable, check_ensemble_cost, ensemble_energies,
                                    KERNEL_ENERGY_DEFINITION, _kernel_energies)
from numerics.core.field import ENERGY_ALIASES, ENERGY_DEFINITIONS, energy_normalization_for, interaction_energy
from numerics.core.integrators import ADAPTIVE_METHODS, integrate
from numerics.core.events import event_of
from numerics.core.members import Members, MemberStreams, require_batch, resolve_members
from numerics.core.model import Model, SaveAt, Solver
from numerics.core.norms import check_radial_backend, is_radial, radial_run
from numerics.core.record import Trajectory
from numerics.core.sampling import uniform_sphere
from numerics.core.threads import blas_threads_for, thread_record

#: integration schemes of one system, for the metadata
SCHEMES = {"layer": "projected Euler x <- (x + h v)/|x + h v|",
           "rk4": "classical RK4 on the projected field, renormalised each step",
           "dp5": "Dormand-Prince 5(4), renormalised each accepted step",
           "dop853": "Dormand-Prince 8(5,3) with dense output, outputs renormalised"}
#: integration schemes of an ensemble, for the metadata
ENSEMBLE_SCHEMES = {
    "layer": "projected Euler x <- (x + h v)/|x + h v|, member by member",
    "rk4": "classical RK4 on the projected field, renormalised each step, member by member",
    "dp5": "Dormand-Prince 5(4) with one step shared by all members (max norm over the members)",
    "dop853": "Dormand-Prince 8(5,3) with one step shared by all members (largest member RMS norm)",
    "dp5 per-member": "Dormand-Prince 5(4) with each member's own step and accept/reject (its single run's)"}


class Run:
    """One run of the driver: prepared from a model and a start, integrated, its energies and metadata computed.

    Parameters
    ----------
    model : Model
    X0 : (n, d) or (B, n, d) array_like
        Start of one system, or of B members (an ensemble; also when ``members`` is given).
    t_end : float
    solver, save : Solver, SaveAt
    members : Members, optional
        Per-member values of an ensemble.
    t0 : float
        Start time (0, or the last saved time of a resumed run).
    radius : (m, n) array, optional
        Radii of a resumed normalisation scheme's saved frames (the last row is used).
    noise_state : dict or list of dict, optional
        The saved random stream(s) of a resumed noisy run (one per member for an ensemble).
    save_times : array, optional
        Output times of a resumed adaptive run (from ``t0``).
    event : numerics.core.events.Event, optional
        Stop each member when its observable is decided (:func:`simulate`, ``events``).
    """

    #: the normalisation of a resumed single run's energies (the saved file's), else None (chosen from beta)
    saved_norm: str | None = None

    def __init__(self, model, X0, t_end, solver: Solver, save: SaveAt, members: Members | None = None, *,
                 t0: float = 0.0, radius=None, noise_state=None, save_times=None, event=None,
                 decided: dict | None = None):
        if not isinstance(model, Model):
            raise InputError(f"simulate needs a Model, got {type(model).__name__}")
        self.solver, self.save, self.t0 = solver, save, float(t0)
        self.noise_state, self.resume_times = noise_state, save_times
        self.batch = members is not None or np.ndim(X0) == 3
        self.event = event_of(event)
        self.decided = decided  # a resumed run's members decided before (member -> time): they stay stopped
        if self.event is not None:  # refused before any work where its lemma is not proved
            self.event.check_model(model)
        self.prepare(model, X0, t_end, members, radius)
        if self.event is not None and self.batch:
            self.event.check_model(self.model, self.values)

    # -- 1. prepare ------------------------------------------------------------------------------------------------
    def prepare(self, model, X0, t_end, members, radius) -> None:
        """Validate, choose the field and its backend, check the cost and choose the BLAS threads.

        The order of the checks is the order of the releases before (a bad input gets the same first error).
        """
        solver, save = self.solver, self.save
        self.radial = None
        if self.batch:
            X0 = require_batch(X0)
            B, n, d = X0.shape
            model.check_dimension(d)
            check_radial_backend(model, solver.backend)  # the single run's line, before the batch's own checks
            check_batchable(model, solver.backend)
            self.t_end = require_real(t_end, "t_end", minimum=0.0, strict_minimum=True)
            self.values = resolve_members(model, members, B, d, solver.seed)
            self.scaled, self.model = model, model.at_context_length(n)  # beta = gamma log n (else the same)
            self.per_eval = check_ensemble_cost(B, n, d, self.t_end, solver, save, t0=self.t0)
            # a scheme's (theta, r) run: the single run's NormField on (B, n, d + 1), radii (B, n)
            self.radial = radial_run(self.model, X0, radius, beta=self.values["beta"])
            X0 = self.radial.X0 if self.radial else X0
            self.field, self.backend = ((self.radial.field, self.radial.backend) if self.radial else
                                        batch_vector_field(self.model, self.values, d, B, solver.backend, n))
            noise = self.values["noise"]
            if noise is not None and self.model.noise > 0:
                raise InputError("give the noise either in the model (shared) or per member, not both")
            self.noisy = ((self.model.noise > 0) if noise is None else bool(np.any(noise > 0))) \
                or self.model.common_noise > 0
            self.threads = blas_threads_for(self.per_eval / max(B, 1) * B, rows=n * B)
        else:
            X0 = require_points(X0, "X0")
            B, (n, d) = 1, X0.shape
            self.scaled, self.model = model, model.at_context_length(n)  # beta = gamma log n (else the same)
            model = self.model
            model.check_dimension(d)
            self.t_end = require_real(t_end, "t_end", minimum=0.0, strict_minimum=True)
            # None for the sphere flow; else the (theta, r) state of numerics.core.norms
            self.radial = radial_run(model, X0, radius)
            if self.radial:
                check_radial_backend(model, solver.backend)
            X0 = self.radial.X0 if self.radial else X0
            self.field, self.backend = ((self.radial.field, self.radial.backend) if self.radial
                                        else model.vector_field(n, d, solver.backend))
            self.per_eval = evaluation_cost(self.field, self.backend, n, d)
            check_simulation_cost(n, d, self.t_end, solver, save, t0=self.t0, per_eval=self.per_eval)
            self.noisy = model.noise > 0 or model.common_noise > 0
            self.threads = blas_threads_for(self.per_eval)  # one thread on a busy machine or for small fields
        self.X0, self.B, self.n, self.d = X0, B, n, d

    @property
    def adaptive(self) -> bool:
        return self.solver.method in ADAPTIVE_METHODS

    @property
    def per_member(self) -> bool:
        return self.batch and self.solver.step == "per-member" and self.adaptive and not self.noisy

    # -- 2. integrate ----------------------------------------------------------------------------------------------
    def integrate(self, progress=None):
        """``(times, states, stats)`` of the run: the one call into the integration loop for every case."""
        solver, save, field = self.solver, self.save, self.field
        save_times = save.times if self.resume_times is None else self.resume_times
        options = dict(dt=solver.dt, t0=self.t0, save_every=save.every, progress=progress)
        if self.noisy and self.model.common_noise > 0:  # numerics.noise.common: one matrix increment per system
            return self._integrate_common(field, options)
        if self.noisy:  # the SDE schemes of numerics.noise.sde, a random stream per member
            from numerics.core import noise_loader

            sde, scheme = noise_loader.noise_scheme(solver, save)
            if not self.model.attention:
                field = sde.zero_field
            if self.batch:
                noise = self.values["noise"]
                D = self.model.noise if noise is None else noise.reshape(-1, 1, 1)
                stream = (MemberStreams(self.values["seeds"]) if self.noise_state is None
                          else MemberStreams.from_states(self.noise_state))
            else:
                D = self.model.noise
                stream = np.random.default_rng(solver.seed) if self.noise_state is None \
                    else sde.generator_from_state(self.noise_state)
            times, states, stats = integrate(field, self.X0, self.t_end, scheme,
                                             steppers=sde.noisy_steppers(D, stream, scheme), **options)
            weak, strong = sde.SDE_METHODS[scheme]
            stats.update({"scheme": scheme, "weak_order": weak, "strong_order": strong})
            if self.batch:
                self.noise_after = stream.states()
            else:
                stats.update({"noise": D, "noise_state": sde.generator_state(stream)})
            self.scheme_text = sde.SCHEMES[scheme]
            return times, states, stats
        if self.per_member and self.radial:
            raise InputError(f"per-member adaptive steps do not take norm={self.model.norm!r} (its (theta, r) field "
                             "depends on t); use --step shared")
        if self.event is not None and not self.per_member:
            return self._integrate_events(save_times, progress)
        if self.per_member:  # each member its own dp5 step: the loop's per-member controller
            from numerics.core.integrators import adaptive_scheme, output_times
            from numerics.core.member_adaptive import integrate_per_member

            used = adaptive_scheme(solver.rtol) if solver.method == "adaptive" else solver.method
            if used != "dp5":
                raise InputError(f"per-member adaptive steps run dp5 only (method {solver.method} uses {used} "
                                 "here); use --method dp5, or --step shared")
            times = output_times(save.times, self.t_end) if self.resume_times is None else self.resume_times
            self.scheme_text = ENSEMBLE_SCHEMES["dp5 per-member"]
            return integrate_per_member(field, self.X0, times, rtol=solver.rtol, atol=solver.atol, h0=solver.dt,
                                        progress=progress, max_evaluations=evaluation_budget(self.per_eval),
                                        event=self.event, decided=self.decided)
        run = self.radial.integrate if self.radial else integrate
        times, states, stats = run(field, self.radial.y0 if self.radial else self.X0, self.t_end, solver.method,
                                   save_times=save_times, rtol=solver.rtol, atol=solver.atol,
                                   on_save=None if self.batch else getattr(field, "request_energy", None),
                                   max_evaluations=evaluation_budget(self.per_eval), **options)
        used = stats.get("method_used", solver.method)
        self.scheme_text = (self.radial.scheme_text(solver, stats) if self.radial else
                            ENSEMBLE_SCHEMES[used] if self.batch else SCHEMES[used])
        if self.radial and self.batch and self.adaptive:
            self.scheme_text += "; one step shared by the members (worst member's error)"
        return times, states, stats

    def _integrate_events(self, save_times, progress):
        """Fixed steps with an event (:func:`numerics.core.loop.integrate`, section "Events"): the steps, grid and
        saved times of the run without it; decided members leave the batch."""
        from numerics.core import loop
        from numerics.core.controllers import Fixed
        from numerics.core.integrators import output_times
        from numerics.core.solvers import EXPLICIT

        solver = self.solver
        if self.adaptive:
            return self._adaptive_events(save_times, progress)
        if solver.dt is None:
            raise InputError(f"method {solver.method} needs a step dt")
        dt = require_real(solver.dt, "dt", minimum=0.0, strict_minimum=True)
        times = None if save_times is None else output_times(save_times, self.t_end)
        control = Fixed(dt, self.save.every) if times is None else Fixed(dt, save_times=times)
        out_times, states, stats = loop.integrate(
            self.field, self.X0, self.t0, self.t_end, EXPLICIT[solver.method], control, progress=progress,
            on_save=None if self.batch else getattr(self.field, "request_energy", None), event=self.event,
            decided=self.decided)
        stats["step"] = None if times is not None else (self.t_end - self.t0) / steps_of(self.t_end, dt, self.t0)
        self.scheme_text = (ENSEMBLE_SCHEMES if self.batch else SCHEMES)[solver.method]
        return (out_times if times is None else times.copy()), states, stats

    def _integrate_common(self, field, options):
        """The common-noise branch of :meth:`integrate`: a random stream per member (B = 1: the single run's)."""
        from numerics.core import noise_loader

        common, scheme = noise_loader.common_noise_scheme(self.solver, self.save)
        sde = noise_loader.noise_scheme(self.solver, self.save)[0]  # the streams' saved states
        if self.batch and self.values["noise"] is not None:
            raise InputError("common noise with per-member noise levels is not supported")
        if self.batch:
            stream = (MemberStreams(self.values["seeds"]) if self.noise_state is None
                      else MemberStreams.from_states(self.noise_state))
        else:
            stream = np.random.default_rng(self.solver.seed) if self.noise_state is None \
                else sde.generator_from_state(self.noise_state)
        model = self.model
        times, states, stats = integrate(field if model.attention else common.zero_field, self.X0, self.t_end,
                                         scheme, steppers=common.common_steppers(model.common_noise,
                                                                                 model.common_noise_law, stream,
                                                                                 scheme), **options)
        weak, strong = common.METHODS[scheme]
        stats.update({"scheme": scheme, "weak_order": weak, "strong_order": strong})
        if self.batch:
            self.noise_after = stream.states()
        else:
            stats.update({"noise": 0.0, "noise_state": sde.generator_state(stream)})
        self.scheme_text = common.SCHEMES[scheme]
        return times, states, stats

    def _adaptive_events(self, save_times, progress):
        """One system with shared ``dp5`` steps and an event: the run of :func:`numerics.core.integrators.
        integrate_adaptive` (the same controller, so the same steps) that stops after the step that decided it
        (:func:`numerics.core.loop.integrate`, section "Events"). A batch with a shared step, and ``dop853``, are
        refused with one line."""
        from numerics.core import loop
        from numerics.core.controllers import Adaptive
        from numerics.core.integrators import adaptive_scheme, output_times, renormalize
        from numerics.core.member_adaptive import FAC_MAX, FAC_MIN, SAFETY
        from numerics.core.solvers import DP5
        from numerics.core.space import space_of

        solver = self.solver
        if self.batch:
            raise InputError("events with adaptive steps on an ensemble run per-member dp5 steps (a shared step "
                             "would change when a member leaves): use --method dp5 --step per-member")
        used = adaptive_scheme(solver.rtol) if solver.method == "adaptive" else solver.method
        if used != "dp5":
            raise InputError(f"events with adaptive steps run dp5 only (method {solver.method} uses {used} here: "
                             "its dense output interpolates between decisions); use --method dp5")
        rtol = require_real(solver.rtol, "rtol", minimum=0.0, strict_minimum=True)
        atol = require_real(solver.atol, "atol", minimum=0.0, strict_minimum=True)
        h0 = None if solver.dt is None else require_real(solver.dt, "dt", minimum=0.0, strict_minimum=True)
        times = self.resume_times if self.resume_times is not None else output_times(save_times, self.t_end)
        control = Adaptive(rtol, atol, norm="max", safety=SAFETY, fac_min=FAC_MIN, fac_max=FAC_MAX, order=5, h0=h0)
        out, states, st = loop.integrate(self.field, self.X0, float(times[0]), float(times[-1]), DP5, control,
                                         space_of(renormalize), save_times=times, progress=progress,
                                         max_evaluations=evaluation_budget(self.per_eval), event=self.event,
                                         decided=self.decided)
        self.scheme_text = SCHEMES["dp5"]
        return out, states, {"accepted_steps": st.accepted, "rejected_steps": st.rejected,
                             "field_evaluations": st.evaluations, "method_used": "dp5", "events": st.events}

    # -- 3. energies -----------------------------------------------------------------------------------------------
    @property
    def normalizations(self) -> list[str]:
        """The energy normalisation of each member (one for a single system)."""
        if self.model.kernel is not None:
            return ["kernel"] * self.B
        return [energy_normalization_for(float(b)) for b in self.betas]

    @property
    def betas(self) -> np.ndarray:
        beta = self.values["beta"] if self.batch else None
        return np.full(self.B, self.model.beta) if beta is None else beta

    @property
    def deferred(self) -> bool:
        """True when the single run reads X0's energy off its first step's tiles (computed after integrating);
        else X0's energy is computed first where it could fail, so that a run never integrates for nothing."""
        return self.batch or (self.model.kernel is None and getattr(self.field, "tile_energy", None) is not None)

    def energies(self, states, progress=None, normalization: str | None = None) -> np.ndarray:
        """The energy column of ``states`` (frames, n, d) or (frames, B, n, d): (frames,) or (frames, B)."""
        model = self.model
        if self.batch:  # the single run's pair sums, every member and frame at once
            if model.kernel is None:
                return ensemble_energies(states, self.betas, self.normalizations, progress=progress)
            return _kernel_energies(states, self.betas, model.kernel, progress)
        norm = normalization or self.normalizations[0]
        return frame_energies(states, model.beta, model.kernel, norm, self.field, progress)

    # -- 4. metadata -----------------------------------------------------------------------------------------------
    def meta(self, stats: dict, seconds: float, energy_seconds: float, arrays: dict) -> dict:
        """The trajectory metadata (written once, here)."""
        model, solver, save, batch = self.model, self.solver, self.save, self.batch
        norms = self.normalizations
        values = self.values if batch else None
        if batch:
            for name, M in values["matrices"].items():
                if M is not None:
                    arrays[f"members.{name}"] = M
        adaptive = self.adaptive
        meta = {**self.scaled.to_meta(arrays), "beta": model.beta, "n": int(self.n), "d": int(self.d),
                "t_end": self.t_end, "method": solver.method, "dt": solver.dt, "save_every": save.every,
                "seed": None, "init": "given",
                "time_unit_note": ("t' = e^beta t (usa rescaled)" if (model.kind == "usa"
                                                                       and model.time_unit == "rescaled")
                                   else "natural: time = depth"),
                "scheme": self.scheme_text, "method_used": stats.get("method_used", solver.method)}
        if batch:
            meta.update({
                "noise_seed": values["seeds"] if self.noisy else None,
                "noise_state": getattr(self, "noise_after", None),
                "rtol": solver.rtol if adaptive else None, "atol": solver.atol if adaptive else None,
                "energy_normalization": norms[0] if len(set(norms)) == 1 else norms,
                "energy_definition": {k: ENERGY_DEFINITIONS.get(k, KERNEL_ENERGY_DEFINITION)
                                      for k in sorted(set(norms))},
                "energy_is_lyapunov": model.is_gradient_flow and not self.noisy and values["M"] is None
                                      and values["V"] is None,
                "backend": self.backend})
        else:
            meta.update({
                "noise_seed": solver.seed if self.noisy else None,
                "noise_state": stats.pop("noise_state", None),
                "rtol": solver.rtol if adaptive else None, "atol": solver.atol if adaptive else None,
                "energy_normalization": norms[0],
                "energy_definition": ENERGY_DEFINITIONS.get(norms[0], KERNEL_ENERGY_DEFINITION),
                "energy_is_lyapunov": model.is_gradient_flow and not self.noisy, "backend": self.backend,
                "backend_details": getattr(self.field, "details", None)})
        if "events" in stats:  # which members stopped and when (numerics.core.events)
            meta["events"] = stats.pop("events")
        meta.update({"integrator_stats": stats, "seconds": seconds, "versions": package_versions(),
                     "threads": thread_record(self.threads),
                     "timings": {"integrate": seconds, "energy": energy_seconds},
                     "energy_method": ("pair sums of every member and frame (batched), O(B n^2) per frame" if batch
                                       else energy_method(self.field, model.kernel)),
                     "save_times": None if save.times is None else "explicit"})
        if batch:
            meta["batch"] = {
                "B": int(self.B), "beta": None if values["beta"] is None else self.betas.tolist(),
                "noise": None if values["noise"] is None else values["noise"].tolist(),
                "matrices": sorted(k for k, v in values["matrices"].items() if v is not None),
                "step": ("fixed" if not adaptive else "per member (each its own step, as its single run)"
                         if solver.step == "per-member" else "shared by the members (worst member's error)")}
        return meta

    # -- the whole run ---------------------------------------------------------------------------------------------
    def run(self, progress=None, *, with_first_energy: bool = True):
        """Integrate, compute the energies and the metadata: ``(times, states, energy, radius, meta, arrays)``.

        ``with_first_energy=False`` (a resumed run) leaves out the first frame, which the saved run holds.
        """
        energy_progress = getattr(progress, "energy", None)
        energy0 = None
        if with_first_energy and not self.deferred:
            energy0 = self.energies(self.X0[None], normalization=None)
        started = _time.perf_counter()
        with self.threads.limit():
            times, states, stats = self.integrate(progress)
            seconds = _time.perf_counter() - started
            states, radius = self.radial.split(states) if self.radial else (states, None)
            if self.batch:  # a batch's energies are computed with the integration's BLAS threads (as before)
                started = _time.perf_counter()
                energy = self.energies(states if with_first_energy else states[1:], energy_progress)
        if not self.batch:
            started = _time.perf_counter()
            if with_first_energy and energy0 is None:
                energy = self.energies(states, energy_progress)
            else:
                rest = self.energies(states[1:], energy_progress, normalization=self.saved_norm)
                energy = rest if energy0 is None else np.concatenate([energy0, rest])
        energy_seconds = _time.perf_counter() - started
        arrays: dict = {}
        meta = self.meta(stats, seconds, energy_seconds, arrays)
        return times, states, energy, radius, meta, arrays


# -- the public driver --------------------------------------------------------------------------------------------
def simulate(model, X0=None, t_end=None, /, *legacy, solver: Solver | None = None, save: SaveAt | None = None,
             progress: Callable[[float, float], None] | None = None, members: Members | None = None,
             events=None, **keywords) -> Trajectory:
    r"""Integrate the dynamics of ``model`` from ``X0`` up to ``t_end`` and return the saved frames.

    Parameters
    ----------
    model : Model
        The vector field (:class:`numerics.core.model.Model`: ``sa``/``usa``, :math:`\beta`, Q, K, V, kernel, time
        unit, ...).
    X0 : (n, d) or (B, n, d) array_like
        Initial state, rows on :math:`\mathbb{S}^{d-1}` (see :func:`uniform_sphere`); of shape (B, n, d) an ensemble of
        B systems integrated together.
    t_end : float
        Final time (> 0), in the model's time unit (``usa`` rescaled: :math:`t' = e^{\beta} t`).
    solver : Solver, optional
        Integrator, step, tolerances, field backend, noise seed and (ensembles) ``step="per-member"``
        (default ``Solver("rk4", dt=0.05)``).
    save : SaveAt, optional
        Frames to keep (default every step of a fixed-step method, 101 times for the adaptive methods).
    progress : callable, optional
        ``progress(t, t_end)``, called as the integration advances. If it has an attribute ``energy`` (a
        callable), ``progress.energy(frames_done, frames)`` is called as the energy column is computed
        (:math:`O(n^2)` per frame with the direct sums, :math:`O(nK)` with the circle's Fourier backend).
    members : numerics.core.members.Members, optional
        Per-member :math:`\beta`, Q, K, V, noise and noise seeds of an ensemble (``X0`` then has shape (B, n, d)).
    events : numerics.core.events.Event or str, optional
        Stop each member when its observable is decided (``Event("one-cluster", 1e-3)`` or
        ``"one-cluster:1e-3"``; :mod:`numerics.core.events`): fixed steps (``layer``, ``rk4``), for an
        ensemble per-member ``dp5``, for one system ``dp5`` (``dop853`` and an ensemble's shared adaptive step are
        refused with one line); :func:`resume` continues with the saved event. A decided member leaves the vectorised batch; its later frames (and their
        energies) repeat its decided state; ``meta["events"]`` records the event, the members that stopped
        (``stopped``), each member's decision time (``times``, None: ran to the end) and the member-steps taken.
        A model for which the event's lemma is not proved is refused with one line.

    Returns
    -------
    Trajectory
        ``times``, ``X`` (m, n, d) or (m, B, n, d), ``energy`` (m,) or (m, B), ``meta`` (model, solver,
        backend, versions, timings; ``meta["batch"]`` for an ensemble) and, for the normalisation schemes,
        ``radius``. Provenance of the start is the caller's: :func:`with_provenance`.

    Notes
    -----
    The energy column is :math:`E_\beta` minus :math:`1/(2\beta)` (``glpr``), or the normalised GKPR form above
    :math:`\lvert\beta\rvert = 600` (recorded in ``meta["energy_normalization"]``), or the user kernel's pair energy.
    With the ``fourier`` backend it comes from the order parameters (:func:`numerics.circle.fourier.circle_energy`).
    ``meta["seconds"]`` is the integration time; ``meta["timings"]`` splits integration and energy.

    A string first argument is the keyword form of the first release, ``simulate("sa", beta, t_end, n=...,
    d=..., seed=..., ...)``: it is forwarded to :func:`simulate_keywords` (with a ``DeprecationWarning``) for
    one release; call :func:`simulate_keywords` by its name.

    Verified by: core.energy-identity (energy along trajectories), core.integrator-orders, core.ensemble-members.
    """
    if isinstance(model, str):
        warnings.warn("simulate('sa', beta, t_end, n=..., ...) is the keyword form of the first release: call "
                      "numerics.core.simulate.simulate_keywords (simulate takes a Model)", DeprecationWarning,
                      stacklevel=2)
        given = [a for a in (X0, t_end) if a is not None] + list(legacy)
        return simulate_keywords(model, *given, progress=progress, **keywords)
    # X0 and t_end are positional-only so that the keyword form's X0=... reaches simulate_keywords; for a Model
    # they may still be given by name
    named = {k: keywords.pop(k) for k in ("X0", "t_end") if k in keywords}
    if (X0 is not None and "X0" in named) or (t_end is not None and "t_end" in named):
        keywords.update(named)  # given twice: reported below
    X0, t_end = named.get("X0", X0), named.get("t_end", t_end)
    if legacy or keywords:
        extra = sorted(keywords) or ["a fourth positional argument"]
        raise TypeError(f"simulate(model, X0, t_end, *, solver=None, save=None, progress=None, members=None, "
                        f"events=None): "
                        f"unexpected {', '.join(extra)}")
    if X0 is None or t_end is None:
        raise InputError("simulate(model, X0, t_end, ...) needs X0 and t_end")
    run = Run(model, X0, t_end, Solver(dt=0.05) if solver is None else solver,
              SaveAt() if save is None else save, members, event=events)
    times, states, energy, radius, meta, arrays = run.run(progress)
    return Trajectory(times=times, X=states, energy=energy, meta=meta, arrays=arrays, radius=radius)


def with_provenance(traj: Trajectory, **provenance) -> Trajectory:
    """``traj`` with ``provenance`` (for example ``seed=0, init="uniform"``) recorded in its ``meta`` (in place;
    returned for chaining). The driver records ``seed=None, init="given"``: the start is the caller's."""
    traj.meta.update(provenance)
    return traj


def resume(trajectory, t_end: float, *, progress: Callable[[float, float], None] | None = None) -> Trajectory:
    r"""Continue a saved trajectory (a :class:`Trajectory` or the path of its ``.npz``) up to ``t_end``.

    The model (:meth:`Model.from_meta`), the solver, the backend and, for an ensemble, the members (their
    :math:`\beta`, noise, matrices and seeds, ``meta["batch"]``) are read from the trajectory's ``meta``; the run is
    prepared from its last frame at t0 = its last time through the same :class:`Run` as :func:`simulate`. The
    result holds the old frames followed by the new ones, with ``meta["resumed_from"]`` recording where the
    continuation started. Adaptive runs keep the spacing of the original save times; noisy runs continue their
    random streams (``meta["noise_state"]``), so a fixed-step run resumed equals the run in one piece.
    ``progress``: as for :func:`simulate`. A run with an event (``meta["events"]``) continues with it: the
    members decided before stay stopped (their frames repeat the decided state, their decision times are kept),
    the others stop when they are decided; ``meta["events"]`` is the continuation's record (its member-steps are
    those of the continuation).
    """
    from numerics.common.readers import check_metadata
    from numerics.core.meta_schema import TRAJECTORY_META

    source = None
    if not isinstance(trajectory, Trajectory):
        source = str(trajectory)
        trajectory = Trajectory.load(trajectory)
    batch = trajectory.X.ndim == 4
    meta = dict(trajectory.meta)
    missing = {"model", "beta", "method", "time_unit"} - set(meta)
    if missing:
        raise InputError(f"cannot resume: trajectory meta lacks {', '.join(sorted(missing))}")
    where = f"trajectory {source or 'metadata'}"
    record = meta.get("events")
    event, decided = None, None
    if record:  # the saved event continues; its decided members stay stopped
        from numerics.core.events import Event

        if not isinstance(record, dict) or not isinstance(record.get("times"), list):
            raise InputError(f"cannot resume: the {where} has an invalid events record")
        event = Event.parse(str(record.get("event")))
        decided = {b: float(t) for b, t in enumerate(record["times"]) if t is not None}
    if batch:
        _check_batch_meta(meta, trajectory.arrays, trajectory.X.shape[1], where)
    # an ensemble's per-member entries (lists) were checked above; the rest has the single run's types
    check_metadata({k: v for k, v in meta.items() if not (batch and k in PER_MEMBER_META)}, TRAJECTORY_META, where)
    t0 = float(trajectory.times[-1])
    t_end = require_real(t_end, "t_end")
    if t_end <= t0:
        raise InputError(f"t_end={t_end:g} must exceed the saved trajectory's last time {t0:g}")
    model = Model.from_meta(meta, trajectory.arrays)
    members = _saved_members(meta, trajectory.arrays) if batch else None
    noisy = model.noise > 0 or model.common_noise > 0 or (
        batch and members.noise is not None and np.any(np.asarray(members.noise) > 0))
    saved_state = meta.get("noise_state")
    if noisy and not (isinstance(saved_state, list) if batch else isinstance(saved_state, dict)):
        raise InputError("cannot resume this noisy run: its file holds no noise_state (the random stream's state, "
                         "which older files lack); rerun it with a longer t_end and the same seed")
    backend_saved = meta.get("backend", "direct")
    # continue with the scheme the run used: "adaptive" chooses by rtol today, but files written before that
    # choice existed (no "method_used") ran Dormand-Prince 5(4)
    method = meta.get("method_used") or ("dp5" if meta["method"] == "adaptive" else meta["method"])
    step = "per-member" if batch and str(meta["batch"].get("step", "")).startswith("per member") else "shared"
    solver = Solver(method=method, dt=meta.get("dt"), rtol=float(meta.get("rtol") or 1e-9),
                    atol=float(meta.get("atol") or 1e-12),
                    backend="direct" if backend_saved in ("kernel", "blocks") else backend_saved,
                    seed=0 if batch else int(meta.get("noise_seed") or 0), step=step)
    X0 = trajectory.X[-1]
    n, d = X0.shape[-2:]
    if is_radial(model.at_context_length(n)) and trajectory.radius is None:
        raise InputError(f"cannot resume: the trajectory of norm={model.norm!r} holds no radius array")
    save = SaveAt(every=int(meta.get("save_every", 1)))
    save_times = None
    if solver.method in ADAPTIVE_METHODS:
        old = trajectory.times
        spacing = float(old[-1] - old[0]) / max(1, old.size - 1) if old.size > 1 else (t_end - t0) / 100
        wanted = (t_end - t0) / spacing  # the saved run's spacing kept: refuse before allocating the frames
        check_array((wanted + 1, *X0.shape), f"resuming with the saved spacing {spacing:.3g} ({wanted:.3g} new "
                                             "frames)")
        save_times = np.linspace(t0, t_end, max(1, int(round(wanted))) + 1)
    run = Run(model, X0, t_end, solver, save, members, t0=t0,
              radius=trajectory.radius,
              noise_state=saved_state if noisy else None, save_times=save_times, event=event, decided=decided)
    if not batch:
        norm = meta.get("energy_normalization", energy_normalization_for(run.model.beta))
        run.saved_norm = ENERGY_ALIASES.get(norm, norm)
    times, states, energy, radius, new, _ = run.run(progress, with_first_energy=False)
    stats = new["integrator_stats"]
    meta.update({"t_end": t_end, "seconds": float(meta.get("seconds", 0.0)) + new["seconds"],
                 "backend": new["backend"], "timings": new["timings"], "energy_method": new["energy_method"],
                 "resumed_from": {"path": source, "t": t0, "frames": int(trajectory.times.size)},
                 "integrator_stats": {"previous": meta.get("integrator_stats"), "resumed": stats},
                 "versions": package_versions()})
    if noisy:
        meta["noise_state"] = new["noise_state"]
    if record:  # the continuation's record: the members decided before keep their decision times
        meta["events"] = new["events"]
    return Trajectory(times=np.concatenate([trajectory.times, times[1:]]),
                      X=np.concatenate([trajectory.X, states[1:]]),
                      energy=np.concatenate([trajectory.energy, energy]), meta=meta,
                      arrays=dict(trajectory.arrays),
                      radius=None if radius is None else np.concatenate([trajectory.radius, radius[1:]]))


#: metadata entries that an ensemble's file may hold per member (a list of B values)
PER_MEMBER_META = ("noise_seed", "noise_state", "energy_normalization", "energy_definition", "seed")


def _check_batch_meta(meta: dict, arrays: dict, B: int, where: str) -> None:
    """The ensemble's own metadata (its batch record and per-member lists), with one-line errors."""
    batch = meta.get("batch")
    if not isinstance(batch, dict) or batch.get("B") != B:
        raise InputError(f"cannot resume: the ensemble {where} lacks a batch record for its {B} members")
    kinds = {"noise_seed": int, "noise_state": dict, "energy_normalization": str, "seed": int}
    for key, kind in kinds.items():
        value = meta.get(key)
        if isinstance(value, list) and (len(value) != B or not all(isinstance(v, kind) for v in value)):
            raise InputError(f"invalid {where}: {key} must be a list of {B} values of type {kind.__name__}")
    for key in ("beta", "noise"):
        value = batch.get(key)
        if value is not None and (not isinstance(value, list) or len(value) != B):
            raise InputError(f"invalid {where}: batch {key} must be a list of {B} numbers")
    for name in batch.get("matrices") or ():
        if name not in ("Q", "K", "V") or f"members.{name}" not in arrays:
            raise InputError(f"invalid {where}: per-member matrix {name!r} is not in the file")


def _saved_members(meta: dict, arrays: dict) -> Members:
    """The :class:`Members` of a saved ensemble (its ``meta["batch"]``, ``noise_seed`` list, ``members.*`` arrays)."""
    batch = meta["batch"]
    seeds = meta.get("noise_seed")
    return Members(beta=batch.get("beta"), noise=batch.get("noise"),
                   seeds=seeds if isinstance(seeds, list) else None,
                   **{name: arrays[f"members.{name}"] for name in batch.get("matrices") or ()})


def simulate_ensemble(model, X0, t_end: float, solver, save, members: Members | None = None, progress=None) -> dict:
    """Shim for one release: the fields of the ensemble's :class:`Trajectory` as a dict (``times``, ``X``,
    ``energy``, ``meta``, ``arrays``), from the one driver (:func:`simulate` with ``X0`` of shape (B, n, d))."""
    traj = simulate(model, require_batch(X0), t_end, solver=solver, save=save, progress=progress, members=members)
    return {"times": traj.times, "X": traj.X, "energy": traj.energy, "meta": traj.meta, "arrays": traj.arrays}


# -- energies of one system ---------------------------------------------------------------------------------------
def frame_energies(states, beta, kernel, normalization, field_fn=None, progress=None) -> np.ndarray:
    """Energy of each saved state of one system: E_beta (GLPR or GKPR normalisation) or the user kernel's pair
    energy.

    A field that knows a cheaper form of its energy carries it as ``field_fn.energy(X, normalization)`` (the
    circle's Fourier field: O(n K) from the order parameters instead of the O(n^2) pair sum) and it is used.
    ``progress(done, total)`` is called after each frame (the direct form costs O(n^2) per frame).
    """
    if kernel is not None:
        from numerics.core.kernel_field import kernel_energy

        def one(Xk):
            return kernel_energy(Xk, kernel, beta)
    elif getattr(field_fn, "energy", None) is not None:
        def one(Xk):
            return field_fn.energy(Xk, normalization)
    elif getattr(field_fn, "tile_energy", None) is not None:
        def one(Xk):  # from the field's tiles where it was evaluated at this frame, else the pair sum
            value = field_fn.tile_energy(Xk, normalization)
            return interaction_energy(Xk, beta, normalization=normalization) if value is None else value
    else:
        def one(Xk):
            return interaction_energy(Xk, beta, normalization=normalization)
    out = np.empty(len(states))
    for k, Xk in enumerate(states):
        out[k] = one(Xk)
        if progress is not None:
            progress(k + 1, len(states))
    return out


def energy_method(field_fn, kernel) -> str:
    """How :func:`frame_energies` computes the energy column (recorded in the metadata)."""
    if kernel is not None:
        return "kernel pair sum, O(n^2) per frame"
    if getattr(field_fn, "energy", None) is not None:
        return getattr(field_fn, "energy_method", "order parameters, O(n K) per frame")
    if getattr(field_fn, "request_energy", None) is not None:
        return "tile terms at saved frames (fixed steps), else row sums (rel. error <= 1e-12), else pair sum"
    if getattr(field_fn, "tile_energy", None) is not None:
        return "row sums at evaluated frames (rel. error <= 1e-12), else pair sum"
    return "pair sum, O(n^2) per frame"


# -- cost of one system -------------------------------------------------------------------------------------------
def evaluation_cost(field_fn, backend: str, n: int, d: int) -> float:
    """Operations of one field evaluation for the work limits: O(n K) for the circle's Fourier field (K
    harmonics), O(n^2 d) for the direct sums and the other backends."""
    if backend == "fourier":
        return float(n) * (getattr(field_fn, "harmonics", 64) + 8)
    if backend == "harmonic":  # O(n L^2) spherical harmonics (numerics.harmonic)
        return float(n) * field_fn.work
    return float(n) * n * (2 * d + 8)


def check_simulation_cost(n: int, d: int, t_end: float, solver: Solver, save: SaveAt, t0: float = 0.0,
                          per_eval: float | None = None) -> None:
    """Refuse, before integrating, a run whose saved frames do not fit in memory or whose field evaluations
    (``per_eval`` operations each: O(n^2 d) with the direct sums by default, plus an O(n^2) energy per saved
    frame) would take absurdly long."""
    if solver.method in ADAPTIVE_METHODS:
        steps = None
        frames = 101 if save.times is None else save.times.size
    else:
        steps = steps_of(t_end, solver.dt, t0)
        if not math.isfinite(steps):
            raise InputError(f"t_end/dt = {t_end - t0:g}/{solver.dt:g} steps is not a finite number of steps")
        frames = (steps // save.every + 2) if save.times is None else save.times.size
    what = f"a simulation with n={n}, d={d}" + (f", {steps:.3g} steps" if steps is not None else "")
    check_array((frames, n, d), what + f" ({frames:.3g} saved frames)")
    check_array((n, d), what, copies=8)  # the state and the Runge-Kutta stages
    per_eval = evaluation_cost(None, "direct", n, d) if per_eval is None else per_eval
    evals = 0.0 if steps is None else steps * {"layer": 1, "rk4": 4}.get(solver.method, 4)
    check_work(evals * per_eval + frames * float(n) * n * 4, what)


# -- the keyword form of the first release ------------------------------------------------------------------------
def simulate_keywords(model: str, beta: float, t_end: float, *, n: int | None = None, d: int | None = None,
                      X0=None, seed: int | None = None, method: str = "rk4", dt: float | None = None,
                      save_every: int = 1, save_times=None, Q=None, K=None, V=None, time_unit: str = "natural",
                      rtol: float = 1e-9, atol: float = 1e-12, normalize: bool = False,
                      progress: Callable[[float, float], None] | None = None, backend: str = "auto",
                      kernel=None, noise: float = 0.0, noise_seed: int = 0) -> Trajectory:
    """The keyword form of the first release: ``simulate_keywords("sa", beta, t_end, n=..., d=..., seed=...)``.

    It builds ``Model(model, beta, Q, K, V, kernel, time_unit)``, ``Solver(method, dt, rtol, atol, backend)``
    and ``SaveAt(save_every, save_times)``, draws ``X0`` iid uniform from ``seed`` when it is not given
    (``n`` and ``d`` then required; checked against ``X0`` otherwise), calls :func:`simulate` and records
    ``seed`` and ``init`` in the metadata.
    """
    spec = Model(kind=model, beta=beta, Q=Q, K=K, V=V, kernel=kernel, time_unit=time_unit, noise=noise)
    solver = Solver(method=method, dt=dt, rtol=rtol, atol=atol, backend=backend, seed=noise_seed)
    save = SaveAt(every=save_every, times=save_times)
    t_end = require_real(t_end, "t_end", minimum=0.0, strict_minimum=True)
    X0, init = initial_state(n, d, X0, seed, normalize)
    traj = simulate(spec, X0, t_end, solver=solver, save=save, progress=progress)
    return with_provenance(traj, seed=seed, init=init)


def initial_state(n: int | None, d: int | None, X0=None, seed=None, normalize: bool = False):
    """``(X0, how)``: the given state (validated; ``n``, ``d`` checked against it) or iid uniform from ``seed``."""
    if X0 is None:
        if n is None or d is None:
            raise InputError("give n and d, or an initial state X0")
        n = require_int(n, "n", minimum=1)
        d = require_int(d, "d", minimum=2)
        return uniform_sphere(n, d, seed), "uniform"
    X0 = require_points(X0, "X0", normalize=normalize)
    if n is not None and require_int(n, "n", minimum=1) != X0.shape[0]:
        raise InputError(f"n={n} does not match the initial state with {X0.shape[0]} rows")
    if d is not None and require_int(d, "d", minimum=2) != X0.shape[1]:
        raise InputError(f"d={d} does not match the initial state with {X0.shape[1]} columns")
    return X0, "given"


__all__ = ["Run", "check_simulation_cost", "energy_method", "evaluation_cost", "frame_energies", "initial_state",
           "resume", "simulate", "simulate_ensemble", "simulate_keywords", "with_provenance"]
