r"""The model object: everything that defines the vector field, separate from how it is integrated and saved.

A simulation is ``simulate(model, X0, t_end, solver=Solver(...), save=SaveAt(...))`` (the layout of Diffrax's
``diffeqsolve(terms, solver, saveat=...)``):

- :class:`Model` says *what* is integrated: the attention model (``sa`` or ``usa``), :math:`\beta`, Q, K, V, an optional
  user pair kernel and the time unit. It is frozen and validated on construction; areas that add model
  features (several heads, MLP, depth schedules, causal masks, noise) add fields here, so that every layer of
  attnflow that takes a model accepts them.
- :class:`Solver` says *how*: integrator, step, tolerances and the field backend.
- :class:`SaveAt` says *what is kept*: every k-th step or explicit output times.

The symbolic counterpart of :class:`Model` is :class:`theory.spec.ModelSpec` (sympy matrices, used by the
derivations); :meth:`Model.to_spec` converts.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from numerics.common.errors import InputError, require_choice, require_finite_array, require_int, require_real
from numerics.core.beta_scaling import check_scaling, effective_beta, scaling_meta
from numerics.core.blocks import MLP, MultiHead, Schedule, ScheduledField
from numerics.core.field import MODELS, TIME_UNITS, make_field
from numerics.core.integrators import ADAPTIVE_METHODS, METHODS
from numerics.core.norms import check_norm, is_radial

#: field backends: blocked direct O(n^2) sums, the S^1 Fourier series, or ``auto`` (Fourier where it applies
#: and is faster). A comparison of two code paths pins both; ``auto`` is for users who want the fast one.
from numerics.core.names import BACKENDS  # noqa: E402 - defined without heavy imports for the CLI

#: laws of the common matrix Brownian motion (numerics.noise.common.LAWS; the core imports no area)
COMMON_NOISE_LAWS = ("goe", "values")


def _matrix(M, name: str) -> np.ndarray | None:
    if M is None:
        return None
    arr = require_finite_array(M, name, ndim=2)
    if arr.shape[0] != arr.shape[1] or arr.shape[0] < 2:
        raise InputError(f"{name} must be a square d x d matrix with d >= 2, got shape {arr.shape}")
    arr = arr.copy()
    arr.flags.writeable = False
    return arr


@dataclass(frozen=True, eq=False)
class Model:
    r"""A self-attention dynamics on the sphere :math:`\mathbb{S}^{d-1}`: the vector field and nothing else.

    Parameters
    ----------
    kind : {"sa", "usa"}
        ``sa``: :math:`\dot x_i = P_{x_i}\big(\sum_j e^{\beta\langle Qx_i, Kx_j\rangle} V x_j
        / \sum_k e^{\beta\langle Qx_i, Kx_k\rangle}\big)`;
        ``usa``: :math:`\dot x_i = P_{x_i}\big(\tfrac{1}{n} \sum_j e^{\beta\langle Qx_i, Kx_j\rangle} V x_j\big)`,
        with :math:`P_x y = y - \langle x, y\rangle x` (GLPR, arXiv 2312.10794, the models SA and USA).
    beta : float
        Inverse temperature (any real; negative :math:`\beta` is meaningful).
    Q, K, V : (d, d) array_like, optional
        Query, key and value matrices; ``None`` is the identity. Stored read-only.
    kernel : theory.kernels.PairKernel, optional
        A user pair kernel :math:`\phi(s)` instead of the attention weight: ``usa`` is then
        :math:`v_i = P_{x_i}\big(\tfrac{1}{n} \sum_j \phi'(s_{ij}) x_j\big)` and ``sa`` normalises the weights
        :math:`\phi'(s_{ij})`; needs :math:`Q = K = V = I` and natural time.
    time_unit : {"natural", "rescaled"}
        ``rescaled`` (``usa`` only) integrates in :math:`t' = e^{\beta} t`, the overflow-safe unit.
    noise : float
        :math:`D \ge 0`: each token also diffuses, :math:`dx_i = v_i\,dt + \sqrt{2D}\, P_{x_i} \circ dB_i`
        (Stratonovich; Brownian motion on :math:`\mathbb{S}^{d-1}` with generator :math:`D \Delta_S`).
        ``simulate`` then runs the stochastic integrators of :mod:`numerics.noise.sde` with ``Solver.seed``
        (see ``proofs_notes/noise-brownian-moments.md``).
    heads : numerics.core.blocks.MultiHead, optional
        :math:`H` heads with blocks Q, K, V, W of shape ``(H, k, d)`` instead of Q, K, V: head :math:`h`
        contributes :math:`W_h^\top V_h a_i^{[h]}` with scores
        :math:`\beta \cdot \mathrm{scale} \cdot \langle Q_h x_i, K_h x_j\rangle` (:math:`\mathrm{scale} = 1/\sqrt{k}`
        by default; :math:`\beta = 1` for a trained network). See :mod:`numerics.core.blocks`.
    mlp : numerics.core.blocks.MLP, optional
        Two-layer perceptron applied to each head's output:
        :math:`v_i = P_{x_i}\big(\tfrac{1}{H} \sum_h \mathrm{MLP}^{[h]}(H W_h^\top V_h a_i^h)\big)`,
        shared by the heads (2-D weights) or one per head (weights with a leading axis of size :math:`H`).
        With Q, K, V (or none) and no ``heads``, the one head (Q, K, V) with scale 1 is used.
    schedule : numerics.core.blocks.Schedule, optional
        Depth-dependent heads and MLPs (replaces ``heads``/``mlp``); the field is then time dependent.
    causal : bool
        Causal mask: token :math:`i` attends to tokens :math:`j \le i` only (row order of X).
    norm : {"post", "pre", "peri", "mix", "ngpt", "sqrt", "lnscale"}
        Normalisation scheme (Karagodin, Ge, Polyanskiy, Rigollet, arXiv 2510.22026). ``post`` (default) is the
        sphere flow above, bit for bit; the others move tokens :math:`x_i = r_i \theta_i` with a radius
        (:mod:`numerics.core.norms`, laws derived in :mod:`theory.normalization`); ``simulate`` then also
        returns the radii (``Trajectory.radius``).
    norm_alpha : float
        nGPT's step size :math:`\alpha > 0` (``norm="ngpt"`` only; default 1).
    norm_switch : float, optional
        Mix-LN: the time (depth) :math:`T > 0` at which post-LN layers give way to pre-LN ones (``norm="mix"``,
        required).
    norm_scale : float
        ``norm="sqrt"``: the residual branch is scaled by :math:`(1 + t / \mathrm{norm\_scale})^{-1/2}` (default 1:
        layer :math:`l` at :math:`t = l - 1` gets :math:`1/\sqrt{l}`); ``norm="lnscale"`` (LayerNorm Scaling): the
        LN output is scaled by :math:`1/\sqrt{l}`, :math:`l = 1 + t / \mathrm{norm\_scale}`, i.e. attention at
        :math:`\beta / l` with values divided by :math:`\sqrt{l}`.
    radius0 : float or (n,) array_like
        Initial radius of every token, or one radius per token (> 0; pre, peri, sqrt, lnscale; the schemes that
        normalise each layer need 1). An array's length is checked against X0 by ``simulate``.
    centering : bool
        LayerNorm with centring (subtract the coordinate mean first) instead of RMSNorm (default False); see
        :mod:`theory.normalization` for what centring does on the sphere.
    alibi : float or sequence of float, optional
        ALiBi: the logits of head :math:`h` get :math:`-\lambda_h \lvert p_i - p_j\rvert` (:math:`\lambda \ge 0`; a
        scalar :math:`\lambda` gives the geometric slopes :math:`\lambda\, 2^{-8(h-1)/H}` over :math:`H` heads, a
        sequence one slope per head). See :mod:`numerics.core.positions`.
    rope : float, optional
        Rotary positions with this base: scores :math:`\langle R(p_i) Q_h x_i, R(p_j) K_h x_j\rangle`, frequencies
        :math:`\mathrm{base}^{-2m/k}`.
    positions : (n,) array_like, optional
        Position labels :math:`p_i` of ALiBi and RoPE (default the row order :math:`p_i = i`).
    beta_scaling : {"fixed", "log"}
        ``log``: :math:`\beta = \gamma \log n` with :math:`n` the number of tokens (arXiv 2510.05554); ``beta`` is
        then None and every layer reads :meth:`effective_beta` (:mod:`numerics.core.beta_scaling`).
    gamma : float, optional
        The constant :math:`\gamma` of ``beta_scaling="log"`` (> 0).
    common_noise : float
        :math:`\sigma \ge 0`: every token also feels the same matrix Brownian motion,
        :math:`dx_i = v_i\,dt - \sigma P_{x_i} \circ dQ\, x_i` (Stratonovich; one increment :math:`dQ` per system
        and step, an ensemble member its own). ``simulate`` then runs the schemes of :mod:`numerics.noise.common`
        with ``Solver.seed`` (``layer``: projected Euler-Maruyama, ``rk4``: stochastic Heun). Not combined with
        ``noise``, a normalisation scheme or the rescaled time unit.
    common_noise_law : {"goe", "values"}
        ``goe``: :math:`dQ = (dB + dB^\top)/\sqrt{2}` (symmetric,
        :math:`\mathbb{E}[dQ_{ab}\, dQ_{ce}] = (\delta_{ac}\delta_{be} + \delta_{ae}\delta_{bc})\, dt`;
        Engel-Shalova, arXiv 2603.06187, is :math:`\sigma = 1/\sqrt{2}`); ``values``: :math:`dQ = dB/\sqrt{d}`,
        independent entries (the random value matrices of arXiv 2601.21942 with the RMS normalisation
        :math:`\mathbb{E}\lvert dQ\, x\rvert^2 = \lvert x\rvert^2 dt`). One token is then a Brownian motion with
        generator :math:`c \Delta_S`, :math:`c = \sigma^2/2` (goe), :math:`\sigma^2/(2d)` (values)
        (:mod:`theory.common_noise`).
        False switches the attention field off (v = 0): the noise alone moves the tokens. Needs noise or
        common_noise > 0.

    Notes
    -----
    Verified by: core.energy-identity, core.equivariance (the field it builds); see
    ``proofs_notes/core-gradient-structure.md`` for the gradient structure.
    """

    kind: str
    beta: float | None = None
    Q: Any = None
    K: Any = None
    V: Any = None
    kernel: Any = None
    time_unit: str = "natural"
    noise: float = 0.0
    heads: MultiHead | None = None
    mlp: MLP | None = None
    schedule: Schedule | None = None
    causal: bool = False
    norm: str = "post"
    norm_alpha: float = 1.0
    norm_switch: float | None = None
    norm_scale: float = 1.0
    radius0: float = 1.0
    centering: bool = False
    alibi: Any = None
    rope: float | None = None
    positions: Any = None
    beta_scaling: str = "fixed"
    gamma: float | None = None
    common_noise: float = 0.0
    common_noise_law: str = "goe"
    attention: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", require_choice(self.kind, "model", MODELS))
        object.__setattr__(self, "noise", require_real(self.noise, "noise", minimum=0.0))
        beta, scaling, gamma = check_scaling(self.beta, self.beta_scaling, self.gamma)
        for name, value in (("beta", beta), ("beta_scaling", scaling), ("gamma", gamma)):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "time_unit", require_choice(self.time_unit, "time_unit", TIME_UNITS))
        dims = set()
        for name in ("Q", "K", "V"):
            M = _matrix(getattr(self, name), name)
            object.__setattr__(self, name, M)
            if M is not None:
                dims.add(M.shape[0])
        if len(dims) > 1:
            raise InputError(f"Q, K and V must have the same size, got sizes {sorted(dims)}")
        if self.kernel is not None:
            if not self.has_identity_matrices:
                raise InputError("a user kernel acts on <x_i, x_j> directly: it cannot be combined with Q, K, V")
            if self.time_unit != "natural":
                raise InputError("the rescaled time unit is defined for the exponential kernel only")
        self._check_architecture(dims)
        for key, value in check_norm(self).items():
            object.__setattr__(self, key, value)
        self._check_common_noise()

    def _check_common_noise(self) -> None:
        """Validate common_noise, its law and the attention switch against the other fields."""
        object.__setattr__(self, "common_noise", require_real(self.common_noise, "common noise", minimum=0.0))
        object.__setattr__(self, "common_noise_law",
                           require_choice(self.common_noise_law, "common noise law", COMMON_NOISE_LAWS))
        if not isinstance(self.attention, (bool, np.bool_)):
            raise InputError(f"attention must be True or False, got {self.attention!r}")
        object.__setattr__(self, "attention", bool(self.attention))
        if not self.attention and self.noise == 0 and self.common_noise == 0:
            raise InputError("attention off leaves nothing to integrate: give noise or common noise > 0")
        if self.common_noise == 0:
            return
        if self.noise > 0:
            raise InputError("common noise and per-token noise together are not supported: give one of them")
        if is_radial(self):
            raise InputError(f"common noise moves points of the sphere: norm={self.norm!r} is not supported")
        if self.time_unit != "natural":
            raise InputError("common noise runs in the natural time unit (not rescaled)")

    def _check_architecture(self, dims: set) -> None:
        """Validate heads, mlp, schedule and causal against each other and against Q, K, V, kernel."""
        for name, cls in (("heads", MultiHead), ("mlp", MLP), ("schedule", Schedule)):
            value = getattr(self, name)
            if value is not None and not isinstance(value, cls):
                raise InputError(f"{name} must be a numerics.core.blocks.{cls.__name__}, got {type(value).__name__}")
        if not isinstance(self.causal, (bool, np.bool_)):
            raise InputError(f"causal must be True or False, got {self.causal!r}")
        object.__setattr__(self, "causal", bool(self.causal))
        self._check_positions()
        if not self.has_architecture:
            return
        if self.kernel is not None:
            raise InputError("a user kernel cannot be combined with heads, mlp, schedule, causal or positions")
        if self.time_unit != "natural":
            raise InputError("heads, mlp, schedule and causal use the natural time unit")
        if (self.heads is not None or self.schedule is not None) and dims:
            raise InputError("give either Q, K, V (one head) or heads/schedule, not both")
        if self.schedule is not None and (self.heads is not None or self.mlp is not None):
            raise InputError("a schedule carries its own heads and MLPs: do not also pass heads or mlp")
        sizes = set(dims)
        for part in (self.heads, self.mlp, self.schedule):
            if part is not None:
                sizes.add(part.d)
        if len(sizes) > 1:
            raise InputError(f"heads, mlp, schedule and Q, K, V disagree on d: {sorted(sizes)}")
        if self.mlp is not None:
            self.mlp.check_heads(1 if self.heads is None else self.heads.H)

    def _check_positions(self) -> None:
        """Validate alibi, rope and the position labels (:mod:`numerics.core.positions`)."""
        from numerics.core.positions import validate_alibi, validate_labels, validate_rope

        object.__setattr__(self, "alibi", validate_alibi(self.alibi))
        object.__setattr__(self, "rope", validate_rope(self.rope))
        object.__setattr__(self, "positions", validate_labels(self.positions))
        if self.positions is not None and self.alibi is None and self.rope is None:
            raise InputError("position labels need a position mechanism: give alibi or rope as well")
        if np.ndim(self.alibi) == 1:
            H = self.heads.H if self.heads is not None else (None if self.schedule is not None else 1)
            if H is not None and self.alibi.size != H:
                raise InputError(f"alibi gives {self.alibi.size} slopes, but the attention has {H} heads")

    @property
    def has_positions(self) -> bool:
        """True when the model uses ALiBi or rotary positions."""
        return self.alibi is not None or self.rope is not None

    def position_encoding(self):
        """The :class:`numerics.core.positions.PositionEncoding` of the model, or ``None``."""
        if not self.has_positions:
            return None
        from numerics.core.positions import PositionEncoding

        return PositionEncoding(self.alibi, self.rope, self.positions)

    # -- what the model is --------------------------------------------------------------------------------
    @property
    def dimension(self) -> int | None:
        """d fixed by Q, K, V, heads, mlp or schedule, or ``None`` when the model is defined in every d."""
        for M in (self.Q, self.K, self.V):
            if M is not None:
                return int(M.shape[0])
        for part in (self.heads, self.mlp, self.schedule):
            if part is not None:
                return int(part.d)
        return None

    @property
    def has_architecture(self) -> bool:
        """True when the model uses heads, an MLP, a depth schedule, a causal mask or positions."""
        return (self.heads is not None or self.mlp is not None or self.schedule is not None
                or bool(self.causal) or self.has_positions)

    @property
    def time_dependent(self) -> bool:
        """True when the weights depend on t (a schedule): the field is then called ``field(X, t)``."""
        return self.schedule is not None

    def block_heads(self, d: int) -> MultiHead:
        """The heads of a time-independent model: ``heads``, or the one head (Q, K, V) with scale 1."""
        if self.heads is not None:
            return self.heads
        return MultiHead.from_single(self.Q, self.K, self.V, d=d)

    @property
    def has_identity_matrices(self) -> bool:
        """True when Q, K and V are all the identity (given as ``None`` or as the identity matrix)."""
        return all(M is None or np.array_equal(M, np.eye(M.shape[0])) for M in (self.Q, self.K, self.V))

    @property
    def is_gradient_flow(self) -> bool:
        """True when the energy of the saved frames is a Lyapunov function (Q = K = V = I; GLPR)."""
        # lnscale moves along the gradient of E at beta(t) = beta / l, not of the saved frames' E at beta
        return (self.Q is None and self.K is None and self.V is None and not self.has_architecture
                and self.norm != "lnscale")

    def check_dimension(self, d: int) -> int:
        """``d`` validated against the matrices' size."""
        d = require_int(d, "d", minimum=2)
        if self.dimension is not None and self.dimension != d:
            if self.Q is not None or self.K is not None or self.V is not None:
                raise InputError(f"the model's matrices are {self.dimension} x {self.dimension}, "
                                 f"but the particles live in R^{d}")
            raise InputError(f"the model's heads, MLP or schedule act on R^{self.dimension}, "
                             f"but the particles live in R^{d}")
        return d

    def effective_beta(self, n: int | None, what: str = "this computation") -> float:
        """The beta used with n tokens: ``beta``, or gamma log n for ``beta_scaling="log"`` (refused when ``n``
        is None: ``what`` names the computation without a number of tokens)."""
        return effective_beta(self.beta, self.beta_scaling, self.gamma, n, what)

    def at_context_length(self, n: int | None, what: str = "this computation") -> "Model":
        """The fixed-beta model with beta = :meth:`effective_beta` (n) (the model itself when beta is fixed)."""
        if self.beta_scaling == "fixed":
            return self
        return replace(self, beta=self.effective_beta(n, what), beta_scaling="fixed", gamma=None)

    # -- the vector field ---------------------------------------------------------------------------------
    def vector_field(self, n: int, d: int, backend: str = "auto"):
        """The field callable ``f(X) -> (n, d)`` and the name of the backend that provides it.

        Every direct field is the attention pipeline of :mod:`numerics.core.attention` on one system.
        ``direct``: :func:`numerics.core.field.make_field` (blocked O(n^2) sums). ``fourier``: the S^1
        Fourier-series field of :mod:`numerics.circle.fourier` (d = 2, Q = K = V = I only). ``auto``:
        ``fourier`` when it applies and is faster (:func:`numerics.circle.fourier.fourier_is_faster`), else
        ``direct``. ``numba``: the same sums as ``direct`` with the fused compiled kernel of
        :mod:`numerics.core.fused` (needs Numba, extra ``fast``; never chosen by ``auto``; one head, no user
        kernel), or for several heads without MLP, mask or positions the several-head member kernel of ensembles
        on one system (:func:`numerics.core._member_heads.heads_field`). A user kernel has its own backend,
        ``kernel`` (:mod:`numerics.core.kernel_field`).
        ``harmonic``: the O(n L^2) spherical-harmonic field of :mod:`numerics.harmonic` (d = 3, Q^T K = a I,
        V = b I, one head); ``auto`` chooses it when its cost model predicts it faster than ``direct``.
        """
        if self.beta_scaling != "fixed":  # beta = gamma log n: the field of the fixed-beta model at this n
            return self.at_context_length(n, "a field without a number of tokens").vector_field(n, d, backend)
        backend = require_choice(backend, "backend", BACKENDS)
        d = self.check_dimension(d)
        if is_radial(self):
            raise InputError(f"norm={self.norm!r} moves (theta, r), not points of the sphere: its field is "
                             "numerics.core.norms.NormField (simulate uses it)")
        harmonic = _harmonic_module() if backend in ("harmonic", "auto") else None
        if backend == "harmonic":  # the S^2 spherical-harmonic field (numerics.harmonic, loaded by name)
            if harmonic is None:
                raise InputError("harmonic backend not available (numerics.harmonic is not part of this build); "
                                 "use --backend direct")
            return harmonic.model_field(self, n, d), "harmonic"
        if backend == "numba":  # the compiled engine of the table (numerics.core.engines), or its one-line refusal
            from numerics.core.engines import choose_for_model

            engine = choose_for_model(self, backend, batch=False)
            if engine == "heads":  # several heads: the member kernel of ensembles, one system as B = 1
                from numerics.core.attention import Attention

                return Attention.from_model(self, n, d, engine=engine).single(), "numba"
            return make_field(d, self.beta, self.kind, self.Q, self.K, self.V, time_unit=self.time_unit,
                              engine="numba"), "numba"
        if self.has_architecture:
            return self._architecture_field(n, d, backend)
        if self.kernel is not None:
            if backend == "fourier":
                raise InputError("the fourier backend is specific to the exponential kernel; use --backend direct")
            from numerics.core.attention import Attention

            return Attention.from_model(self, n, d).single(), "kernel"
        direct = (lambda: make_field(d, self.beta, self.kind, self.Q, self.K, self.V, time_unit=self.time_unit))
        if backend == "direct":
            return direct(), "direct"
        eligible = d == 2 and self.has_identity_matrices
        fourier = _fourier_module()
        if backend == "fourier":
            if fourier is None:
                raise InputError("fourier backend not available (numerics.circle.fourier is not part of this "
                                 "build); use --backend direct")
            if not eligible:
                raise InputError(f"fourier backend needs d = 2 and Q = K = V = I, got d={d}"
                                 + ("" if self.has_identity_matrices else " with general Q, K, V"))
            return fourier.make_fourier_field(self.beta, self.kind, time_unit=self.time_unit), "fourier"
        if fourier is not None and eligible and fourier.fourier_is_faster(n, self.beta):
            return fourier.make_fourier_field(self.beta, self.kind, time_unit=self.time_unit), "fourier"
        if harmonic is not None and harmonic.harmonic_is_faster(self, n, d):
            return harmonic.model_field(self, n, d), "harmonic"
        return direct(), "direct"

    def _architecture_field(self, n: int, d: int, backend: str):
        """Field of a model with heads/MLP/schedule/causal mask (:mod:`numerics.core.blocks`).

        ``direct``: ``blocks`` (blocked sums per head). ``fourier``: d = 2, several heads whose score and value
        maps are multiples of I, no MLP, schedule or mask: the sum of one-head Fourier fields (for ``usa`` the
        field of the mixed kernel sum_h w_h e^{beta b_h s}). ``auto``: ``fourier`` when eligible and faster.
        A schedule gives a time-dependent field ``f(X, t)`` (``f.time_dependent`` is True).
        """
        if self.schedule is not None:
            if backend == "fourier":
                raise InputError("the fourier backend does not take a depth schedule; use --backend direct")
            return ScheduledField(self.beta, self.kind, self.schedule, self.causal,
                                  positions=self.position_encoding()), "blocks"
        heads = self.block_heads(d)
        from numerics.core.blocks import make_mixed_fourier_field, mixed_kernel_coefficients

        coeffs = None if (self.mlp is not None or self.causal or self.has_positions) else \
            mixed_kernel_coefficients(heads)
        fourier = _fourier_module() if backend != "direct" else None
        if backend == "fourier":
            if fourier is None:
                raise InputError("fourier backend not available (numerics.circle.fourier is not part of this "
                                 "build); use --backend direct")
            if coeffs is None:
                raise InputError("fourier backend needs d = 2, heads with Q_h^T K_h and W_h^T V_h multiples of I, "
                                 "no MLP, no causal mask and no positions")
            return make_mixed_fourier_field(self.beta, self.kind, heads, fourier), "fourier"
        if (backend == "auto" and fourier is not None and coeffs is not None
                and fourier.fourier_is_faster(n, max(abs(self.beta * b) for b, _ in coeffs))):
            return make_mixed_fourier_field(self.beta, self.kind, heads, fourier), "fourier"
        from numerics.core.attention import Attention

        return Attention.from_model(self, n, d).single(), "blocks"  # the block prepare (labels checked against n)

    # -- conversions --------------------------------------------------------------------------------------
    def to_meta(self, arrays: dict | None = None) -> dict:
        """The JSON-ready description stored in trajectory metadata (read back by :meth:`from_meta`).

        Arrays of heads, MLP and schedule are written inline as nested lists when ``arrays`` is None; given a
        dict, they are put in it (keys such as ``"heads.Q"``, ``"schedule.3.mlp.W1"``) and the metadata holds
        references ``{"npz": key}`` (trajectory files store these arrays next to ``X``, as ``arch.<key>``).
        """
        meta = {"model": self.kind, "beta": self.beta, "time_unit": self.time_unit,
                "Q": None if self.Q is None else self.Q.tolist(),
                "K": None if self.K is None else self.K.tolist(),
                "V": None if self.V is None else self.V.tolist(),
                "kernel": kernel_metadata(self.kernel), "noise": self.noise}
        if self.has_architecture:
            meta.update({"heads": None if self.heads is None else self.heads.to_meta(arrays),
                         "mlp": None if self.mlp is None else self.mlp.to_meta(arrays),
                         "schedule": None if self.schedule is None else self.schedule.to_meta(arrays),
                         "causal": self.causal})
        if is_radial(self):
            meta.update({"norm": self.norm, "norm_alpha": self.norm_alpha, "norm_switch": self.norm_switch,
                         "norm_scale": self.norm_scale, "centering": self.centering,
                         "radius0": self.radius0 if np.ndim(self.radius0) == 0 else self.radius0.tolist()})
        if self.has_positions:
            meta.update({"alibi": self.alibi if np.ndim(self.alibi) == 0 else self.alibi.tolist(), "rope": self.rope,
                         "positions": None if self.positions is None else self.positions.tolist()})
        meta.update(scaling_meta(self.beta_scaling, self.gamma))
        if self.common_noise > 0:  # only then: the metadata of every other run keeps its keys
            meta.update({"common_noise": self.common_noise, "common_noise_law": self.common_noise_law})
        if not self.attention:
            meta["attention"] = False
        return meta

    @classmethod
    def from_meta(cls, meta: dict, arrays: dict | None = None) -> "Model":
        """The model recorded by :meth:`to_meta` (kernels re-parsed by the whitelist parser, never eval);
        ``arrays`` resolves the ``{"npz": key}`` references of heads, MLP and schedule."""
        missing = {"model", "beta", "time_unit"} - set(meta)
        if missing:
            raise InputError(f"metadata lacks {', '.join(sorted(missing))}")
        heads, mlp, schedule = meta.get("heads"), meta.get("mlp"), meta.get("schedule")
        scaling = meta.get("beta_scaling", "fixed")  # log: meta["beta"] is the beta of the run's n, not a parameter
        return cls(kind=meta["model"], beta=meta["beta"] if scaling == "fixed" else None,
                   beta_scaling=scaling, gamma=meta.get("gamma"), time_unit=meta["time_unit"],
                   Q=meta.get("Q"), K=meta.get("K"), V=meta.get("V"),
                   kernel=kernel_from_metadata(meta.get("kernel")),
                   heads=None if heads is None else MultiHead.from_meta(heads, arrays),
                   mlp=None if mlp is None else MLP.from_meta(mlp, arrays),
                   schedule=None if schedule is None else Schedule.from_meta(schedule, arrays),
                   causal=bool(meta.get("causal", False)), noise=meta.get("noise", 0.0),
                   norm=meta.get("norm", "post"), norm_alpha=meta.get("norm_alpha", 1.0),
                   norm_switch=meta.get("norm_switch"), norm_scale=meta.get("norm_scale", 1.0),
                   radius0=meta.get("radius0", 1.0), centering=meta.get("centering", False),
                   alibi=meta.get("alibi"), rope=meta.get("rope"), positions=meta.get("positions"),
                   common_noise=meta.get("common_noise", 0.0), common_noise_law=meta.get("common_noise_law", "goe"),
                   attention=meta.get("attention", True))

    def to_spec(self, d: int | None = None):
        """The symbolic :class:`theory.spec.ModelSpec` of this model (imports sympy)."""
        from theory.spec import ModelSpec

        d = self.check_dimension(d if d is not None else (self.dimension or 0))
        if self.beta_scaling != "fixed":  # refused: the spec has no number of tokens
            self.effective_beta(None, "the symbolic ModelSpec")
        if self.has_architecture:
            raise InputError("the symbolic ModelSpec describes one head without MLP, schedule or mask; "
                             "see theory.architectures for the block field")
        return ModelSpec(self.kind, d, beta=self.beta, Q=self.Q, K=self.K, V=self.V, kernel=self.kernel)


@dataclass(frozen=True)
class Solver:
    r"""How a :class:`Model` is integrated.

    Parameters
    ----------
    method : {"layer", "rk4", "adaptive", "dp5", "dop853"}
        ``layer``: the projected Euler step :math:`x \leftarrow (x + hv)/\lvert x + hv\rvert` (one transformer
        layer per step);
        ``rk4``: classical Runge-Kutta on the projected field, renormalised; ``dp5``: Dormand-Prince
        5(4) with error control; ``dop853``: Dormand-Prince 8(5,3) with dense output; ``adaptive``: ``dop853``
        for ``rtol`` :math:`\le 10^{-3}` and ``dp5`` above (fewer field evaluations; recorded as ``method_used``;
        see :mod:`numerics.core.integrators`).
    dt : float, optional
        Step of ``layer`` and ``rk4`` (required for them); initial-step hint for ``adaptive``, ``dp5`` and
        ``dop853`` (default: their own initial step).
    rtol, atol : float
        Tolerances of ``adaptive``, ``dp5`` and ``dop853``.
    backend : {"auto", "direct", "fourier", "numba", "harmonic"}
        How the field is evaluated (:meth:`Model.vector_field`); ``numba`` is the fused compiled kernel
        (optional dependency; equal to ``direct`` to rounding), chosen only explicitly; ``harmonic`` the
        :math:`\mathbb{S}^2` spherical-harmonic field (tolerance 1e-10 relative to the field's scale).
    seed : int
        Seed of the noise (``numpy.random.default_rng(seed)``), used only when ``Model.noise > 0``; recorded in
        the trajectory metadata as ``noise_seed``. With noise, ``layer`` runs projected Euler-Maruyama and
        ``rk4`` the weak-order-2 geodesic splitting (:mod:`numerics.noise.sde`); ``adaptive`` is refused.
    step : {"shared", "per-member"}
        Adaptive steps of an ensemble (X0 of shape (B, n, d)): ``shared``, one step for all members controlled
        by the worst member's error (the default), or ``per-member``, each member its own step size and
        accept/reject, exactly as its single run (``dp5`` only; :mod:`numerics.core.member_adaptive`). The API
        ignores it for one system, so that one Solver serves both; ``simulate --step per-member`` refuses one
        system, fixed steps and noise.
    """

    method: str = "rk4"
    dt: float | None = None
    rtol: float = 1e-9
    atol: float = 1e-12
    backend: str = "auto"
    seed: int = 0
    step: str = "shared"

    def __post_init__(self) -> None:
        object.__setattr__(self, "method", require_choice(self.method, "method", METHODS))
        object.__setattr__(self, "seed", require_int(self.seed, "seed", minimum=0))
        object.__setattr__(self, "backend", require_choice(self.backend, "backend", BACKENDS))
        if self.dt is not None:
            object.__setattr__(self, "dt", require_real(self.dt, "dt", minimum=0.0, strict_minimum=True))
        elif self.method not in ADAPTIVE_METHODS:
            raise InputError(f"method {self.method} needs a step dt")
        object.__setattr__(self, "rtol", require_real(self.rtol, "rtol", minimum=0.0, strict_minimum=True))
        object.__setattr__(self, "atol", require_real(self.atol, "atol", minimum=0.0, strict_minimum=True))
        object.__setattr__(self, "step", require_choice(self.step, "step", ("shared", "per-member")))


@dataclass(frozen=True)
class SaveAt:
    """Which states a simulation keeps: every ``every``-th fixed step, or the explicit ``times``.

    ``times`` (increasing, in the model's time unit, ending at or before ``t_end``) works with every method;
    the default for ``adaptive`` is 101 equally spaced times in [0, t_end].
    """

    every: int = 1
    times: Any = field(default=None)

    def __post_init__(self) -> None:
        object.__setattr__(self, "every", require_int(self.every, "save_every", minimum=1))
        if self.times is not None:
            t = require_finite_array(self.times, "save_times", ndim=1)
            t.flags.writeable = False
            object.__setattr__(self, "times", t)


def kernel_metadata(kernel) -> dict | None:
    """JSON form of a PairKernel for trajectory metadata (re-parsed by :func:`kernel_from_metadata`)."""
    if kernel is None:
        return None
    import sympy as sp

    return {"expr": sp.sstr(kernel.expr), "name": kernel.name,
            "params": {str(k): float(v) for k, v in kernel.params.items()}}


def kernel_from_metadata(meta: dict | None):
    """The PairKernel recorded by :func:`kernel_metadata`, through the whitelist parser (never eval)."""
    if not meta:
        return None
    from theory.expression_parser import parse_kernel

    try:
        return parse_kernel(str(meta["expr"]), dict(meta.get("params") or {}), name=meta.get("name"))
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"metadata holds an unusable kernel: {exc}") from None


def _fourier_module():
    """:mod:`numerics.circle.fourier` (the S^1 Fourier backend) if it is part of this build, else None."""
    from numerics.core.plugins import load_plugin

    return load_plugin("numerics.circle.fourier")


def _harmonic_module():
    """:mod:`numerics.harmonic.backend` (the S^2 spherical-harmonic backend) if it is part of this build, else None."""
    from numerics.core.plugins import load_plugin

    return load_plugin("numerics.harmonic.backend")
