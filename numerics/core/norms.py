"""Normalisation schemes on the state (theta, r): the radius is a real state, the direction stays on the sphere.

A token is x_i = r_i theta_i. Every scheme moves the directions by a positive multiple of the tangential
attention output and the radii by a scalar law (derived from each layer's definition in
:mod:`theory.normalization` and emitted through :mod:`theory.codegen`):

    dtheta_i/dt = g_i P_{theta_i} A_i,     dr_i/dt = rdot_i,     (rdot_i, g_i) = laws(r_i, <theta_i, A_i>, |A_i|, t)

with A_i the attention output of the directions (one head (Q, K, V) with scale 1, or the model's heads, MLP and
causal mask; :func:`numerics.core.blocks.block_velocity` with ``project=False``). LayerNorm with centring
(``Model(centering=True)``) replaces A_i by C A_i, C = I - 1 1^T / d, and starts from the centred directions
(theory.normalization explains why that is the whole effect of centring).

How the state goes through the integrators. The state is one ``(n, d + 1)`` array Y = [theta | r] (an augmented
state, so that every existing integrator, adaptive error control included, runs unchanged; a batch of B systems
is ``(B, n, d + 1)`` with radii (B, n) and beta shared or per member, and every operation of :class:`NormField`
acts on the last axes, so each member runs its single run's arithmetic, bit for bit): the field
:class:`NormField` returns [g P_theta A | rdot], the projection after each step renormalises the first d
columns only (:func:`renormalize_directions`, which also refuses a radius that left (0, RADIUS_MAX]), and the
``layer`` method is the scheme's own transformer layer (:meth:`NormField.layer`: x <- x + h A(N(x)) for pre-LN,
and so on), whose h -> 0 limit is the field (checked by architectures.norm-derivation). ``rk4`` is the sphere's
RK4 with that projection. ``Model(norm="post")`` without centring never comes here: it is the existing sphere
flow, bit for bit.

This module imports nothing heavy at the top: the CLI reads :data:`NORMS` for its choices.
"""
from __future__ import annotations

import functools
import math

# the radius bound and the retraction of the (theta, r) state live with the other state spaces (numerics.core.space)
from numerics.core.space import RADIUS_MAX, renormalize_directions  # noqa: F401  (re-exported)

#: the schemes (theory.normalization.SCHEMES, repeated here without importing SymPy; a test keeps them equal)
NORMS = ("post", "pre", "peri", "mix", "ngpt", "sqrt", "lnscale")
#: schemes whose layer ends with the normalisation: the radius stays at 1
UNIT_RADIUS = ("post", "ngpt", "mix")
#: one-line descriptions (CLI help, metadata)
DESCRIPTIONS = {
    "post": "post-LN x <- N(x + h A(x)): the sphere flow",
    "pre": "pre-LN x <- x + h A(N(x)): dr/dt = <theta, A>, dtheta/dt = P A / r",
    "peri": "peri-LN x <- x + h N(A(N(x))): dr/dt = <theta, A>/|A|, dtheta/dt = P A / (r |A|)",
    "mix": "Mix-LN: post-LN for t < norm_switch, pre-LN after (radius 1 at the switch)",
    "ngpt": "nGPT x <- N(x + h alpha (N(A(x)) - x)): dtheta/dt = alpha P A / |A|",
    "sqrt": "pre-LN with the residual branch scaled by (1 + t/norm_scale)^(-1/2)",
    "lnscale": "LayerNorm Scaling x <- x + h A(N(x)/sqrt(l)), l = 1 + t/norm_scale: pre-LN at beta/l, value / sqrt(l)",
}
#: schemes with a depth scale tau (``norm_scale``)
DEPTH_SCALED = ("sqrt", "lnscale")


def is_radial(model) -> bool:
    """True when ``model`` runs on (theta, r) (any scheme but plain post-LN without centring)."""
    return model.norm != "post" or bool(model.centering)


def check_norm(model) -> dict:
    """Validated normalisation fields of a :class:`numerics.core.model.Model` (called by its constructor).

    Returns the normalised values (``norm``, ``norm_alpha``, ``norm_switch``, ``norm_scale``, ``radius0``,
    ``centering``); refuses combinations the schemes do not support with one-line errors.
    """
    from numerics.common.errors import InputError, require_choice, require_real

    norm = require_choice(model.norm, "norm", NORMS)
    out = {"norm": norm,
           "norm_alpha": require_real(model.norm_alpha, "norm_alpha", minimum=0.0, strict_minimum=True),
           "norm_scale": require_real(model.norm_scale, "norm_scale", minimum=0.0, strict_minimum=True),
           "radius0": check_radius0(model.radius0),
           "norm_switch": None if model.norm_switch is None else require_real(model.norm_switch, "norm_switch",
                                                                              minimum=0.0, strict_minimum=True)}
    if not isinstance(model.centering, bool):
        raise InputError(f"centering must be True or False, got {model.centering!r}")
    out["centering"] = model.centering
    if norm == "mix" and out["norm_switch"] is None:
        raise InputError("norm='mix' needs norm_switch > 0: the time (depth) at which post-LN gives way to pre-LN")
    if norm != "mix" and out["norm_switch"] is not None:
        raise InputError(f"norm_switch is the Mix-LN switch time; it does not apply to norm={norm!r}")
    if norm in UNIT_RADIUS and not _all_ones(out["radius0"]):
        raise InputError(f"norm={norm!r} normalises every layer's output: its tokens have radius 1, "
                         f"got radius0={_radius_text(out['radius0'])}")
    if norm != "ngpt" and out["norm_alpha"] != 1.0:
        raise InputError(f"norm_alpha is nGPT's step size; it does not apply to norm={norm!r}")
    if norm not in DEPTH_SCALED and out["norm_scale"] != 1.0:
        raise InputError(f"norm_scale is the depth scale of norm='sqrt' and 'lnscale'; it does not apply to "
                         f"norm={norm!r}")
    if norm == "lnscale" and model.mlp is not None:
        raise InputError("norm='lnscale' scales the attention input by 1/sqrt(l): an MLP after the values does not "
                         "commute with that scale, so mlp is not supported with it")
    if norm != "post" or out["centering"]:
        if model.kernel is not None:
            raise InputError("normalisation schemes act on the attention output: a user kernel is not supported")
        if model.noise > 0:
            raise InputError("normalisation schemes are deterministic here: noise > 0 is not supported")
        if model.time_unit != "natural":
            raise InputError("normalisation schemes use the natural time unit (time = depth)")
        if model.schedule is not None:
            raise InputError("normalisation schemes take heads, mlp and causal, not a depth schedule")
    return out


def check_radius0(value):
    """``radius0`` validated: one number in (0, RADIUS_MAX] (returned as a float, as always), or one radius per
    token, an (n,) array with entries in (0, RADIUS_MAX] (returned as a read-only float64 copy; its length is
    checked against the state by :class:`RadialRun`)."""
    import numpy as np

    from numerics.common.errors import InputError, require_finite_array, require_real

    if np.ndim(value) == 0:
        r = require_real(value, "radius0", minimum=0.0, strict_minimum=True)
        if r > RADIUS_MAX:
            raise InputError(f"radius0 must be <= {RADIUS_MAX:g}, got {r:g}")
        return r
    r = require_finite_array(value, "radius0", ndim=1).copy()
    if r.size == 0:
        raise InputError("radius0 must be one number or one radius per token, got an empty array")
    if np.any(r <= 0.0) or np.any(r > RADIUS_MAX):
        i = int(np.argmax((r <= 0.0) | (r > RADIUS_MAX)))
        raise InputError(f"radius0 must lie in (0, {RADIUS_MAX:g}] for every token, got {r[i]:g} at token {i}")
    r.setflags(write=False)
    return r


def initial_radii(radius0, n: int):
    """The (n,) initial radii of ``radius0`` (one number repeated, or the per-token array, whose length must be n)."""
    import numpy as np

    from numerics.common.errors import InputError

    if np.ndim(radius0) == 0:
        return np.full(n, radius0)
    if len(radius0) != n:
        raise InputError(f"radius0 has {len(radius0)} radii, the initial state has {n} tokens")
    return np.array(radius0, dtype=float)


def _all_ones(radius0) -> bool:
    import numpy as np

    return bool(np.all(np.asarray(radius0) == 1.0))


def _radius_text(radius0) -> str:
    import numpy as np

    return f"{radius0:g}" if np.ndim(radius0) == 0 else f"an array with entries in [{min(radius0):g}, {max(radius0):g}]"


@functools.lru_cache(maxsize=None)
def _laws(norm: str):
    """The generated ``laws(r, a, m, c, alpha, t, switch, tau) -> (rdot, g)`` (theory.normalization)."""
    from theory.normalization import law_function

    return law_function(norm)


class NormField:
    """``F(Y, t)`` on the augmented state Y = [theta | r] of shape (n, d + 1) (module docstring).

    ``output(U)`` is the attention output A(U) of unit directions U (centred when the model centres). The field
    is time dependent only for ``mix`` and ``sqrt``; it is always called with t (``time_dependent = True``).
    """

    time_dependent = True

    def __init__(self, model, d: int, phase: str | None = None, beta=None):
        import numpy as np

        from numerics.core.attention import Attention

        self.model, self.d = model, d
        # phase pins a Mix-LN field to its post or pre part (RadialRun.integrate splits a run at the switch)
        self.phase = phase
        self.laws = _laws(phase or model.norm)
        # beta: the model's, or one per member of a batch ((B,): the pipeline's per-member column)
        beta = model.beta if beta is None else beta
        heads, kind, mlp, causal = model.block_heads(d), model.kind, model.mlp, model.causal
        centre = model.centering
        positions = model.position_encoding()  # ALiBi / RoPE act on the attention output like on the sphere flow

        def build(b):  # the block prepare of the one pipeline, unprojected (the attention output itself)
            return Attention.heads(b, kind, heads, mlp, causal, positions, project=False)

        fixed = build(beta)

        def output(U, beta_t=None):  # beta_t: the layer's inverse temperature (lnscale: beta(t), depth_beta)
            attention = fixed if beta_t is None else build(beta_t)
            # one system's (n, d) arrays or a batch's (B, n, d): the same pipeline, a member runs its single run's
            # arithmetic
            A = attention(U)
            return A - A.mean(axis=-1, keepdims=True) if centre else A

        self.output = output
        self._np = np
        self.switch = math.inf if model.norm_switch is None else float(model.norm_switch)
        self.beta = beta

    def depth_beta(self, t: float):
        """``lnscale``: beta / (1 + t/tau), the logits of the LN output scaled by 1/sqrt(l) (theory.normalization
        .depth_beta; one per member for per-member betas); None for the other schemes (their attention keeps
        beta)."""
        if self.model.norm != "lnscale":
            return None
        return self.beta / (1.0 + t / self.model.norm_scale)

    def _parts(self, Y, t: float):
        # Y is (n, d + 1) or (B, n, d + 1): every operation acts on the last axes (one shared implementation)
        np = self._np
        theta, r = Y[..., :self.d], Y[..., self.d]
        U = theta / np.linalg.norm(theta, axis=-1, keepdims=True)
        beta_t = self.depth_beta(float(t))
        A = self.output(U) if beta_t is None else self.output(U, beta_t)
        a = np.einsum("...ij,...ij->...i", U, A)
        m = np.linalg.norm(A, axis=-1)
        return U, r, A, a, m

    def __call__(self, Y, t: float):
        np = self._np
        U, r, A, a, m = self._parts(Y, t)
        rdot, g = self.laws(r, a, m, 1.0, self.model.norm_alpha, float(t), self.switch, self.model.norm_scale)
        out = np.empty_like(Y)
        # the exact orthogonal projection A - <U, A> U keeps |theta_i| constant off the sphere (RK stages)
        tangent = A - a[..., None] * U
        out[..., :self.d] = np.asarray(g)[..., None] * tangent if np.ndim(g) else g * tangent
        out[..., self.d] = rdot
        return out

    def layer(self, Y, h: float, t: float):
        """One transformer layer of the scheme (its definition, not the field): the ``layer`` method.

        post x <- N(x + h A), pre x <- x + h A(N(x)), peri x <- x + h N(A(N(x))),
        ngpt x <- N(x + h alpha (N(A) - x)), mix post before the switch and pre after, sqrt pre with
        h (1 + t/tau)^(-1/2); lnscale x <- x + h A(N(x)/sqrt(l)) = x + h (1 + t/tau)^(-1/2) A_{beta/l}(N(x)),
        l = 1 + t/tau; t is the layer's start time.
        """
        np = self._np
        U, r, A, a, m = self._parts(Y, t)
        norm = self.phase or self.model.norm
        if norm == "mix":
            norm = "post" if t < self.switch else "pre"
        if norm in DEPTH_SCALED:  # sqrt; lnscale (whose A from _parts is already at beta / l) falls to pre below
            h = h / math.sqrt(1.0 + t / self.model.norm_scale)
        if norm == "post":
            X = U + h * A
        elif norm == "ngpt":
            X = U + (h * self.model.norm_alpha) * (A / m[..., None] - U)
        elif norm == "peri":
            X = r[..., None] * U + h * A / m[..., None]
        else:  # pre, sqrt
            X = r[..., None] * U + h * A
        radius = np.linalg.norm(X, axis=-1)
        out = np.empty_like(Y)
        out[..., :self.d] = X / radius[..., None]
        out[..., self.d] = r if norm in ("post", "ngpt") else radius
        return renormalize_directions(out)


class SwitchedField:
    """Mix-LN's field as a piecewise field of the integration loop (:mod:`numerics.core.loop`): the post-LN
    field before the switch T, the pre-LN field from T on (each a :class:`NormField` pinned to its phase), with
    T a breakpoint at which the run restarts (``restarts = True``)."""

    time_dependent = True
    piecewise = True
    restarts = True

    def __init__(self, field: NormField):
        self.switch = field.switch
        self._pieces = {phase: NormField(field.model, field.d, phase, field.beta) for phase in ("post", "pre")}

    def breakpoints(self, t0: float, t_end: float) -> tuple[float, ...]:
        """The switch, if it lies strictly inside (t0, t_end)."""
        return (self.switch,) if t0 < self.switch < t_end else ()

    def piece(self, t: float) -> NormField:
        """The phase's field acting at t (time-dependent: ``piece(Y, t)``)."""
        return self._pieces["pre" if t >= self.switch else "post"]

    def __call__(self, Y, t: float):
        return self.piece(t)(Y, t)

    def layer(self, Y, h: float, t: float):
        """The layer of the phase acting at the layer's start time t."""
        return self.piece(t).layer(Y, h, t)


class RadialRun:
    """What the driver (:class:`numerics.core.simulate.Run`) needs to run a scheme on (theta, r): the field, the
    augmented initial state, the steppers and projection for the integrators, and the split of the result.

    One system has directions ``X0`` (n, d) and the state [theta | r] (n, d + 1); a batch has ``X0`` (B, n, d),
    the state (B, n, d + 1) (its radii (B, n)) and optionally one beta per member (``beta``, (B,)). Both run the
    same :class:`NormField` (one system is the batch of one inside the attention pipeline).
    """

    backend = "blocks"

    def __init__(self, model, X0, radius0=None, beta=None):
        import numpy as np

        from numerics.common.errors import InputError
        from numerics.core.integrators import step_rk4

        n, d = X0.shape[-2:]
        if model.centering:
            if d < 3:
                raise InputError("centering (LayerNorm) leaves the sphere of 1^perp, S^{d-2}: it needs d >= 3")
            C = X0 - X0.mean(axis=-1, keepdims=True)
            size = np.linalg.norm(C, axis=-1)
            if np.any(size < 1e-8):
                where = np.unravel_index(int(np.argmin(size)), size.shape)
                who = f"token {where[-1]}" if size.ndim == 1 else f"member {where[0]} token {where[1]}"
                raise InputError(f"centering: {who} is parallel to (1, ..., 1); its centred direction is undefined")
            X0 = C / size[..., None]
        self.X0 = X0
        self.field = NormField(model, d, beta=beta)
        self.d = d
        r0 = initial_radii(model.radius0, n) if radius0 is None else np.asarray(radius0, dtype=float)
        if r0.shape != X0.shape[:-1]:  # a batch: the model's radii for every member (or one saved row per member)
            r0 = np.broadcast_to(r0, X0.shape[:-1])
        self.y0 = np.concatenate([X0, r0[..., None]], axis=-1)
        self.project = renormalize_directions
        self.steppers = {
            "layer": lambda field, Y, h, t=None: field.layer(Y, h, 0.0 if t is None else t),
            "rk4": functools.partial(step_rk4, project=renormalize_directions),
        }

    def integrate(self, field, Y0, t_end: float, method: str, *, t0: float = 0.0, save_every: int = 1,
                  save_times=None, **options):
        """:func:`numerics.core.integrators.integrate` on the augmented state (same arguments and result).

        Mix-LN's field jumps at the switch time T (dr/dt goes from 0 to <theta, A>): a step across T would lose
        its order (an RK stage at T would see the pre-LN law on a post-LN step), so T is a breakpoint of the
        integration loop that restarts the run (:class:`SwitchedField`): post-LN on [t0, T], pre-LN on
        [T, t_end], each with its own fixed-step grid or initial adaptive step, and T is a saved frame.
        """
        from numerics.common.limits import steps_of
        from numerics.core import integrators as core

        options.update(steppers=self.steppers, project=self.project)
        T = self.field.switch
        if not (self.field.model.norm == "mix" and t0 < T < t_end):
            return core.integrate(field, Y0, t_end, method, t0=t0, save_every=save_every, save_times=save_times,
                                  **options)
        np = self.field._np
        switched = SwitchedField(field)
        adaptive = method in core.ADAPTIVE_METHODS
        if save_times is None and adaptive:
            save_times = core.output_times(None, t_end)  # (t0 != 0 without times is refused by integrate)
        if save_times is None:  # fixed steps, every save_every-th step of each segment
            times, states, stats = core.integrate(switched, Y0, t_end, method, t0=t0, save_every=save_every,
                                                  **options)
            stats["step"] = (T - t0) / steps_of(T, options["dt"], t0)
        else:
            inside = np.asarray(save_times, float)
            times = np.concatenate([[t0], inside[(inside > t0) & (inside < T)], [T],
                                    inside[(inside > T) & (inside < t_end)], [t_end]])
            if adaptive:
                times, states, stats = core.integrate(switched, Y0, t_end, method, t0=t0, save_times=times,
                                                      **options)
            else:
                times, states, stats = core._fixed_at_times(switched, Y0, times, options["dt"], method,
                                                            options.get("progress"), self.steppers)
        stats["segments"] = [{"phase": "post", "until": T}, {"phase": "pre", "from": T}]
        return times, states, stats

    def scheme_text(self, solver, stats) -> str:
        """The integration scheme, for the trajectory metadata."""
        method = stats.get("method_used", solver.method)
        what = {"layer": "the scheme's own transformer layer with step h",
                "rk4": "classical RK4 on (theta, r), directions renormalised each step"}
        return (f"{DESCRIPTIONS[self.field.model.norm]}; "
                + what.get(method, f"{method} on (theta, r), directions renormalised after accepted steps"))

    @staticmethod
    def split(states):
        """(X, radius): the unit directions (m, n, d) and the radii (m, n) of augmented states (a batch:
        (m, B, n, d) and (m, B, n))."""
        return states[..., :-1], states[..., -1]


def radial_run(model, X0, radius=None, beta=None) -> RadialRun | None:
    """The (theta, r) run of a normalisation scheme from directions ``X0`` ((n, d), or (B, n, d) for a batch;
    and the radii of a saved trajectory, (m, n) or (m, B, n), whose last frame is used; ``beta``: one per member
    or None), or None for the sphere flow (:func:`is_radial`)."""
    if not is_radial(model):
        return None
    if radius is not None:
        return RadialRun(model, X0, radius[-1], beta)
    return RadialRun(model, X0, beta=beta)


def check_radial_backend(model, backend: str) -> None:
    """Refuse, with the same one line for one system and a batch, a backend other than the NumPy pipeline for a
    normalisation scheme (its field is the attention output of the block prepare)."""
    from numerics.common.errors import InputError

    if is_radial(model) and backend not in ("auto", "direct"):
        raise InputError(f"norm={model.norm!r} evaluates the attention output with the block field; the "
                         f"{backend} backend is not available for it: use --backend direct (or auto)")


def load_radius(values, shape, where: str):
    """The ``radius`` array of a trajectory file, validated: shape ``shape`` (the states' shape without d: (m, n),
    or (m, B, n) for a batch), finite, in (0, RADIUS_MAX]."""
    import numpy as np

    from numerics.common.errors import InputError, require_finite_array

    radius = require_finite_array(values, f"radius of {where}", ndim=len(shape))
    if radius.shape != tuple(shape):
        raise InputError(f"invalid {where}: radius has shape {radius.shape}, the states need {tuple(shape)}")
    if np.any(radius <= 0) or np.any(radius > RADIUS_MAX):
        raise InputError(f"invalid {where}: radii must lie in (0, {RADIUS_MAX:g}]")
    return radius
