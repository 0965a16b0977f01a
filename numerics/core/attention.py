"""The attention pipeline: one field for one system and for ensembles, evaluated on (B, n, d).

Built once (:meth:`Attention.from_model`, or the constructors :meth:`Attention.one_head`, :meth:`Attention.heads`,
:meth:`Attention.kernel`), with every option resolved then, it evaluates for each member b of X (B, n, d)

    v_i = P_{x_i}( sum_h out_h( a_i^{[h]} ) ),   a_i^{[h]} = sum_{j in J(i)} w(s_ij^h) x_j / Z_i   (module
                                                  numerics.core.blocks has the whole block formula)

in five parts:

1. **queries, keys, values** per head (one head is ``MultiHead.from_single(Q, K, V)``);
2. **positions** acting on them (:mod:`numerics.core.positions`): RoPE rotates queries and keys, ALiBi subtracts
   lambda_h |p_i - p_j| from the logits of head h, the labels p_i default to the row order;
3. the **causal mask** J(i) = {j <= i};
4. the **weight** w: ``sa`` softmax (Z_i = sum_j w_ij), ``usa`` e^{s}/n, or a user kernel's phi'(s);
5. the **head outputs** W_h^T V_h a^{[h]}, then the MLP; finally the tangent projection
   P_x y = y - (<x, y>/|x|^2) x (the exact orthogonal one, so Runge-Kutta stages off the sphere keep |x_i|).

Two *prepare* options evaluate the exponential weight and keep today's bits (they differ by rounding, up to
3.3e-16): the one-head **score map** M = Q^T K contracted over d, with the bound shift c_i = |beta| |M^T x_i|
and the tiles of :mod:`numerics.core.sums` (symmetric for Q = K = I, with the energy side sums of
:class:`numerics.core.field.RowSumMemo`), chosen for a one-head model without heads, MLP, mask or positions; and
the per-head **block** arithmetic, logits through the (k, d) blocks with the row-maximum shift, for every other
model. A user kernel (Q = K = V = I by the Model's rule) has its own weight and no shift.

Engines (chosen at build time by :func:`numerics.core.engines.choose`, from the one table of what each supports,
:data:`numerics.core.engines.ENGINES`; the compiled kernels are not edited): ``numpy`` (the reference), ``fused``
(one large system, one head: :func:`numerics.core.fused.fused_accumulate`), ``lanes`` and ``identity`` (members as
vector lanes, one head: :func:`numerics.core.lanes.member_sums`, and for Q = K = V = I the identity kernel),
``heads`` (:func:`numerics.core._member_heads.heads_field`, several heads without MLP, mask or positions).

Per-member values: beta (B,) and, for the score map, M and V (B, d, d); everything else is shared. Members are
processed in groups (:func:`numerics.core.sums.member_groups`) so that tile buffers stay bounded; the
grouping changes no member's arithmetic.
"""
from __future__ import annotations

import math
import threading
from collections.abc import Callable

import numpy as np

from numerics.common.errors import InputError, require_choice
from numerics.core import engines as _engines
from numerics.core import sums as sums_module
from numerics.core.engines import NUMBA_SUBSET, numba_heads  # noqa: F401 (the names stay importable from here)
from numerics.core.positions import bias_block
from numerics.core.lanes import _heads_lanes, _identity_lanes, member_sums, warm
from numerics.core.sums import block_rows, member_groups, overflow_error, symmetric_rows, tile_rows

#: evaluation engines of the pipeline (the rows of :data:`numerics.core.engines.ENGINES`)
ENGINES = tuple(_engines.ENGINES)
#: engines that evaluate one system on its (n, d) arrays (the others take it as a batch of one, X[None])
ONE_SYSTEM_ENGINES = ("numpy", "fused")


class _ModuleSums:
    """The blocked primitive as the pipeline calls it: :mod:`numerics.core.sums` on (B, ...) operands, looked up
    when called. :func:`numerics.core.field.make_field` passes its one-system view instead (same arithmetic)."""

    @staticmethod
    def general(lhs, right, rhs, b, beta):
        return sums_module.tile_sums(lhs, right, rhs, b, beta)

    @staticmethod
    def symmetric(lhs, right, rhs, b, beta, energy_shift=None):
        return sums_module.symmetric_tile_sums(lhs, right, rhs, b, beta, energy_shift)

    @staticmethod
    def fused(lhs, right, rhs, beta):
        from numerics.core.fused import fused_accumulate

        try:
            if lhs.ndim == 2:  # one system
                return fused_accumulate(lhs, right.T, rhs)
            return np.stack([fused_accumulate(lhs[m], right[m].T, rhs[m]) for m in range(lhs.shape[0])])
        except FloatingPointError:
            raise overflow_error(beta) from None


#: largest work buffer kept between calls (numbers): 2^21 doubles = 16 MiB, a group's tile
#: (:data:`numerics.core.sums.BATCH_TILE_ENTRIES`); larger temporaries are allocated per call
WORK_MAX_ENTRIES = 1 << 21
_work = threading.local()


def _buffer(role: str, shape: tuple) -> np.ndarray:
    """A work array of ``shape`` for ``role``, kept per thread between calls (its contents are garbage).

    Why: the block prepare of a batch forms temporaries of 0.5-16 MB per head and block ((G, b, n) logits, the
    (G, n, d) query side, values and head output). glibc serves such sizes either from fresh mmap pages or from a
    heap it trims, depending on what the process freed before (its adaptive mmap threshold), so the same field
    ran 0.9-3.6 s a round in the 8-head ensemble benchmark (``benchmarks/bench_gate.py --fixed-malloc``). Kept
    buffers take the allocator out of the steady state. One per role and thread: a pipeline is not re-entered
    while it runs, and every buffer is consumed before the next call that asks for its role."""
    pool = _work.__dict__.setdefault("pool", {})
    buf = pool.get(role)
    if buf is None or buf.shape != shape:
        buf = np.empty(shape)
        if buf.size <= WORK_MAX_ENTRIES:
            pool[role] = buf
    return buf


def _column(values, B: int):
    """A per-member scalar as a (B, 1, 1) array (broadcasts over rows and columns); a shared scalar as a float."""
    if np.ndim(values) == 0:
        return float(values)
    return np.asarray(values, dtype=float).reshape(B, 1, 1)


def _part(value, g: slice, full_ndim: int = 1):
    """The members ``g`` of a per-member value (leading axis), or the shared value itself."""
    if value is None or np.ndim(value) < full_ndim or (full_ndim == 1 and np.ndim(value) == 0):
        return value
    return value[g]


def _largest(beta) -> float:
    return float(np.max(np.abs(beta)))


def project(X: np.ndarray, out: np.ndarray, work: np.ndarray | None = None) -> np.ndarray:
    """out <- P_X out row by row (in place): v - (<x, v>/|x|^2) x, which equals P_x v on the sphere and keeps every
    |x_i| constant along the extended flow off it (see :func:`numerics.core.field.make_field`). X is (B, n, d) or
    one system's (n, d); ``work`` (X's shape) receives the radial part (else a temporary)."""
    rows = "ij,ij->i" if X.ndim == 2 else "bij,bij->bi"
    out -= np.multiply((np.einsum(rows, X, out) / np.einsum(rows, X, X))[..., None], X, out=work)
    return out


class Attention:
    """The attention field of a model, built once and evaluated on (B, n, d) states (module docstring).

    Do not call the constructor: use :meth:`from_model`, :meth:`one_head`, :meth:`heads` or :meth:`kernel`.
    ``attention(X)`` maps (B, n, d) to (B, n, d); :meth:`single` gives the (n, d) -> (n, d) callable of one
    system (``X[None]`` ... ``[0]``) with the energy memo's hooks; :meth:`take` the field of some members.
    """

    def __init__(self, prepare: str, kind: str, beta, *, engine: str = "numpy", block: int | None = None,
                 M=None, V=None, scale=1.0, memo=None, sums=None, heads=None, mlp=None, causal: bool = False,
                 positions=None, project: bool = True, weight=None):
        self.prepare, self.kind, self.beta, self.engine, self.block = prepare, kind, beta, engine, block
        self.M, self.V, self.scale, self.memo, self.sums = M, V, scale, memo, sums or _ModuleSums
        self.heads, self.mlp, self.causal, self.positions, self.project = heads, mlp, causal, positions, project
        self.weight = weight
        self._group = {"score": self._score_group, "block": self._block_group, "kernel": self._kernel_group}[prepare]
        self._groups: dict = {}  # member groups by state shape (:meth:`_plan`)
        # positions resolved once: per-head slopes (labels depend on n and are read per call)
        self.slopes = None if positions is None or heads is None else positions.slopes(heads.H)
        self.rope = None if positions is None else positions.rope

    # -- constructors ---------------------------------------------------------------------------------------------
    @classmethod
    def one_head(cls, d: int, beta, kind: str = "sa", M=None, V=None, *, time_unit: str = "natural",
                 block: int | None = None, engine: str = "numpy", memo=None, sums=None) -> "Attention":
        """The score-map prepare: one head with score map M = Q^T K (``None``: Q = K = I) and values V, beta shared
        or per member ((B,)), M and V shared ((d, d)) or per member ((B, d, d)). ``memo``: a
        :class:`numerics.core.field.RowSumMemo` (one system, M = I) that reads energies off the tiles."""
        engine = _engines.choose(require_choice(engine, "engine", ENGINES), "identity" if M is None and V is None
                                 else "one", batch=engine != "fused")
        betas = np.atleast_1d(np.asarray(beta, dtype=float))
        natural_usa = kind == "usa" and time_unit == "natural"
        if natural_usa and np.any(betas > 700):
            bad = float(betas[betas > 700][0])
            raise InputError(f"usa field overflows in the natural time unit at beta={bad:g}; "
                             "use time_unit='rescaled' (t' = e^beta t)")
        if np.ndim(beta) == 0:
            scale = math.exp(float(beta)) if natural_usa else 1.0
        else:
            scale = np.exp(betas).reshape(-1, 1, 1) if natural_usa else 1.0
        out = cls("score", kind, beta, engine=engine, block=block, M=M, V=V, scale=scale, memo=memo, sums=sums)
        out.d, out.time_unit = d, time_unit
        return out

    @classmethod
    def heads(cls, beta, kind: str, heads, mlp=None, causal: bool = False, positions=None, *,
              block: int | None = None, project: bool = True, engine: str = "numpy") -> "Attention":
        """The block prepare: H heads (a :class:`numerics.core.blocks.MultiHead`), an optional MLP, the causal
        mask and positions (a :class:`numerics.core.positions.PositionEncoding`); beta shared or per member.
        ``project=False`` returns the attention output itself (the normalisation schemes). A compiled ``engine``
        (``heads``; ``lanes`` and ``fused`` name it too): the several-head member kernel (heads only)."""
        features = [name for name, present in (("mlp", mlp is not None), ("causal", causal),
                                               ("positions", positions is not None), ("norm", not project))
                    if present]
        engine = _engines.choose(require_choice(engine, "engine", ENGINES), "several", features, batch=True)
        return cls("block", kind, beta, engine=engine, block=block, heads=heads, mlp=mlp, causal=causal,
                   positions=positions, project=project)

    @classmethod
    def kernel(cls, compiled, beta, kind: str, *, block: int | None = None) -> "Attention":
        """The weight phi'(s) of a compiled user kernel (:class:`numerics.core.kernel_field.CompiledKernel`),
        Q = K = V = I, natural time; beta shared or per member (each checked on [-1, 1])."""
        from numerics.core.kernels import check_kernel_on_interval

        for b in np.unique(np.atleast_1d(np.asarray(beta, dtype=float))):
            check_kernel_on_interval(compiled, float(b), kind)
        return cls("kernel", kind, beta, block=block, weight=compiled)

    @classmethod
    def from_model(cls, model, n: int, d: int, *, members: dict | None = None, engine: str = "numpy",
                   memo=None, sums=None) -> "Attention":
        """The pipeline of a time-independent ``model`` for n tokens in R^d, every option resolved here.

        ``members``: per-member values of :func:`numerics.core.ensemble.resolve_members` (``beta``, ``M``,
        ``V``). ``engine``: ``numpy``, or a compiled request (``fused``: the one-system path; ``lanes``,
        ``identity``, ``heads``: members as vector lanes), resolved by :func:`numerics.core.engines.choose`.
        ``memo``: a :class:`numerics.core.field.RowSumMemo` that reads frame energies off the tiles (one system,
        Q = K = I; ignored otherwise); ``sums``: the blocked primitive's entry points (default
        :mod:`numerics.core.sums`). The prepare is chosen as before the
        pipeline existed: a one-head model without heads, MLP, mask or positions uses the score map, every other
        model the per-head blocks, a user kernel its own weight.
        """
        model = model.at_context_length(n, "a field without a number of tokens")
        members = members or {}
        beta = model.beta if members.get("beta") is None else members["beta"]
        engine = _engines.choose_for_model(model, require_choice(engine, "engine", ENGINES), members=members,
                                           batch=engine != "fused")
        if model.schedule is not None:
            raise InputError("a depth schedule's field depends on t: build one Attention per layer "
                             "(numerics.core.blocks.ScheduledField)")
        warm(engine)  # one clear error without Numba, and the compile (or cache load) before any timing
        if model.kernel is not None:
            from numerics.core.kernels import compile_kernel

            return cls.kernel(compile_kernel(model.kernel), beta, model.kind)
        if model.has_architecture:
            if model.positions is not None and model.positions.size != n:
                raise InputError(f"{model.positions.size} position labels for {n} tokens")
            return cls.heads(beta, model.kind, model.block_heads(d), model.mlp, model.causal,
                             model.position_encoding(), engine=engine)
        if "M" in members:
            M, V = members["M"], members["V"]
        else:
            M = None
            if model.Q is not None or model.K is not None:
                eye = np.eye(d)
                M = (eye if model.Q is None else model.Q).T @ (eye if model.K is None else model.K)
            V = model.V
        return cls.one_head(d, beta, model.kind, M, V, time_unit=model.time_unit, engine=engine,
                            memo=memo if M is None else None, sums=sums)

    # -- evaluation -----------------------------------------------------------------------------------------------
    def __call__(self, X: np.ndarray) -> np.ndarray:
        """The field of every member of X (B, n, d), shape (B, n, d); of one system X (n, d), shape (n, d) (the
        NumPy and fused engines evaluate its (n, d) arrays themselves: the arithmetic of B = 1 without the
        member axis; the member engines take X[None])."""
        if X.ndim == 2:
            if self.engine in ONE_SYSTEM_ENGINES:
                return self._group(X, self.beta, self.M, self.V, self.scale)
            return self(X[None])[0]
        groups = self._groups.get(X.shape)
        if groups is None:  # the member groups of this shape, planned once (a field is called many times)
            groups = self._groups[X.shape] = self._plan(*X.shape)
        if len(groups) == 1 and self.engine != "heads":
            return self._group(X, self.beta, self.M, self.V, self.scale)
        out = np.empty(X.shape)  # C order: the heads kernel writes each group in place
        for g in groups:
            if self.engine == "heads":
                self._heads_lanes(X[g], _part(self.beta, g), out[g])
            else:
                out[g] = self._group(X[g], _part(self.beta, g), _part(self.M, g, 3), _part(self.V, g, 3),
                                     _part(self.scale, g))
        return out

    def _plan(self, B: int, n: int, d: int) -> list[slice]:
        """Member groups whose tile buffers stay bounded (:func:`numerics.core.sums.member_groups`)."""
        rows = (self.block or tile_rows(n, d)) if self.prepare == "score" else (self.block or block_rows(n))
        return member_groups(B, rows * n)

    def single(self) -> Callable[[np.ndarray], np.ndarray]:
        """``field(X) -> (n, d)`` of one system (its (n, d) arrays through the pipeline, see :meth:`__call__`), with
        ``tile_energy`` and ``request_energy`` when the pipeline reads energies off its tiles (the integrators'
        hooks)."""
        if self.engine in ONE_SYSTEM_ENGINES:  # the prepared group itself: no per-call dispatch
            group, beta, M, V, scale = self._group, self.beta, self.M, self.V, self.scale

            def field(X: np.ndarray) -> np.ndarray:
                return group(X, beta, M, V, scale)
        else:
            def field(X: np.ndarray) -> np.ndarray:
                return self(X[None])[0]

        if self.memo is not None:
            field.tile_energy = self.memo.energy  # energies of states the field was evaluated at, from its tiles
            if self.engine == "numpy":  # the fused kernel sums no energy terms: no requests to make
                field.request_energy = self.memo.request  # the integrators ask for the energy of saved frames
        field.attention = self
        return field

    def batched(self) -> Callable[[np.ndarray], np.ndarray]:
        """``field(X) -> (B, n, d)`` with ``batched = True`` and ``take(idx)`` (the integrators' ensemble hooks)."""
        def field(X: np.ndarray) -> np.ndarray:
            return self(X)

        field.batched = True
        field.take = lambda idx: self.take(idx).batched()
        field.attention = self
        return field

    def take(self, idx) -> "Attention":
        """The pipeline of the members ``idx`` only (per-member adaptive steps evaluate the members still moving)."""
        pick = (lambda v, full: v if v is None or np.ndim(v) < full else np.asarray(v)[idx])
        out = object.__new__(Attention)
        out.__dict__.update(self.__dict__)
        out.beta = self.beta if np.ndim(self.beta) == 0 else np.asarray(self.beta)[idx]
        out.M, out.V = pick(self.M, 3), pick(self.V, 3)
        out.scale = self.scale if np.ndim(self.scale) == 0 else np.asarray(self.scale)[idx]
        out._group = {"score": out._score_group, "block": out._block_group, "kernel": out._kernel_group}[out.prepare]
        out._groups = {}
        return out

    # -- the score-map prepare (one head) -------------------------------------------------------------------------
    def _score_group(self, X, beta, M, V, scale):
        # X is (G, n, d), or one system's (n, d): every array below keeps X's leading axes (one system has none,
        # and runs the B = 1 arithmetic without the member axis)
        n, d = X.shape[-2:]
        one = X.ndim == 2
        kind = self.kind
        if self.engine == "identity":  # Q = K = V = I (M and V are None: the table's identity row)
            out = _identity_lanes(X, beta, kind, scale)
            if out is not None:
                return out
        bcol = beta if one else _column(beta, X.shape[0])
        ones = np.ones(X.shape[:-1] + (1,))
        XV = X if V is None else X @ np.swapaxes(V, -1, -2)
        left = bcol * (X if M is None else X @ M)
        if kind == "sa":
            # c_i = |beta| |M^T x_i| bounds beta <M^T x_i, x_j> over unit x_j; the shift cancels in the ratio.
            shift = np.abs(bcol) * (ones if M is None else np.linalg.norm(X @ M, axis=-1)[..., None])
        else:
            shift = bcol * ones  # usa: e^{beta (s - 1)} defines the rescaled time unit t' = e^beta t
        memo = self.memo if (one or X.shape[0] == 1) and n > 0 else None
        key = memo.key(X if one else X[0]) if memo is not None else None
        # a saved frame whose energy the integrator requested: the tiles also sum the pair sum's terms expm1(beta s)
        energy_terms = key is not None and self.engine == "numpy" and memo.wants(key)
        c = float(shift.flat[0]) if memo is not None else None  # M = I: the constant shift
        # Logits beta <Q x_i, K x_j> - c_i come from one GEMM with an extra column: [beta X M, -c] @ [X, 1]^T,
        # and numerator and row sums from another: W @ [XV, 1].
        lhs = np.concatenate([left, np.zeros_like(ones) if energy_terms else -shift], axis=-1)
        right = np.ascontiguousarray(np.concatenate([X, ones], axis=-1).swapaxes(-1, -2))
        rhs = np.concatenate([XV, ones], axis=-1)
        expm1_totals = None
        if self.engine == "fused":
            acc = self.sums.fused(lhs, right, rhs, beta)
        elif self.engine in ("lanes", "identity"):  # (identity: rows whose weights all underflow)
            try:
                with np.errstate(over="raise", under="ignore"):
                    acc = member_sums(lhs, right, rhs, symmetric=M is None)
            except FloatingPointError:
                raise overflow_error(beta) from None
        elif M is None:  # Q = K = I: the weights e^{beta <x_i, x_j> - c} (c constant) are symmetric in (i, j)
            acc, expm1_totals = self.sums.symmetric(lhs, right, rhs, symmetric_rows(n, self.block, d), beta,
                                                    c if energy_terms else None)
        else:
            acc = self.sums.general(lhs, right, rhs, min(self.block or tile_rows(n, d), n), beta)
        if key is not None:
            total = expm1_totals if one or expm1_totals is None else expm1_totals[0]
            _store_energy(memo, key, acc if one else acc[0], c, float(beta), n, d, total)
        if kind == "sa":
            low = acc[..., d] < 1e-280
            if low.any():  # c_i far above every logit: redo those rows with the exact max
                for row in map(tuple, np.argwhere(low)):
                    member = row[:-1]  # () for one system
                    logits = lhs[row][:d] @ right[member][:d]
                    acc[row] = np.exp(logits - logits.max()) @ rhs[member]
            out = acc[..., :d] / acc[..., d:]
        else:
            out = acc[..., :d] * (scale / n)
        return project(X, out)

    # -- the block prepare (heads, positions, mask, MLP) ----------------------------------------------------------
    def _block_group(self, X, beta, M=None, V=None, scale=None):
        # X is (G, n, d) or one system's (n, d) (no member axis: the B = 1 arithmetic)
        n = X.shape[-2]
        heads, mlp, H = self.heads, self.mlp, self.heads.H
        bcol = beta if X.ndim == 2 else _column(beta, X.shape[0])
        total = np.zeros_like(X)
        labels = None
        if self.positions is not None and (self.slopes is not None or self.rope is not None):
            labels = self.positions.labels_for(n)
        coef = bcol * heads.scale
        for h in range(H):
            keys = None
            if self.rope is None:  # coef (X Q_h^T) K_h, formed in a kept buffer (the same products)
                left = np.matmul(X @ heads.Q[h].T, heads.K[h], out=_buffer("left", X.shape))
                left *= coef
            else:  # RoPE: rotated queries and keys in the head space R^k
                left, keys = self.positions.head_inputs(X if X.ndim == 2 else X[0], coef * (X @ heads.Q[h].T),
                                                        X @ heads.K[h].T)
            bias = None if self.slopes is None else (self.slopes[h], labels)
            y = np.matmul(_averages(X, left, beta, self.kind, self.causal, self.block, keys, bias) @ heads.V[h].T,
                          heads.W[h], out=_buffer("head", X.shape))
            total += y if mlp is None else mlp(H * y, h) / H
        if self.project:  # project=False: the attention output itself (the normalisation schemes)
            project(X, total, _buffer("radial", X.shape))
        return total

    def _heads_lanes(self, X, beta, out) -> None:
        """out <- the projected several-head field of a group of members with the member kernel."""
        _heads_lanes(X, self.heads, beta, self.kind, out)

    # -- a user kernel's weight -----------------------------------------------------------------------------------
    def _kernel_group(self, X, beta, M=None, V=None, scale=None):
        # X is (G, n, d) or one system's (n, d)
        n, d = X.shape[-2:]
        b = self.block or block_rows(n)
        out = np.empty(X.shape)
        compiled = self.weight
        keys = X.swapaxes(-1, -2)
        for start in range(0, n, b):
            S = X[..., start:start + b, :] @ keys
            if np.ndim(beta) == 0:
                W = compiled(1, S, beta)
            else:  # the compiled phi' takes one beta
                W = np.stack([compiled(1, S[m], float(beta[m])) for m in range(X.shape[0])])
            acc = W @ X
            out[..., start:start + b, :] = acc / W.sum(axis=-1, keepdims=True) if self.kind == "sa" else acc / n
        return project(X, out)


def _averages(X: np.ndarray, left: np.ndarray, beta, kind: str, causal: bool, block: int | None,
              keys: np.ndarray | None = None, bias=None) -> np.ndarray:
    """a_i = sum_j p_ij x_j (``sa``) or (1/n) sum_j e^{s_ij} x_j (``usa``) per member, s_ij = <left_i, keys_j>
    (keys = X without RoPE) minus the ALiBi bias lambda |p_i - p_j| (``bias = (lambda, labels)``), over j <= i
    with ``causal``. Blocked over rows (:func:`numerics.core.sums.block_rows`); overflow-safe: logits are shifted
    by their row maximum (exact for ``sa``; for ``usa`` the shift is multiplied back and an overflow raises
    :class:`InputError`). X is (G, n, d), or one system's (n, d) (the same loop on its arrays: ``...`` indexing).
    The result is a per-thread work buffer (:func:`_buffer`): use it before the next call, or copy it."""
    n, d = X.shape[-2:]
    b = min(n, block or block_rows(n))
    lead = X.shape[:-2]
    out = _buffer("averages", X.shape)  # consumed by the caller before the next call (the head's values)
    rhs = _buffer("values", lead + (n, d + 1))
    rhs[..., :d] = X
    rhs[..., d] = 1.0
    right = X if keys is None else keys
    tiles, sums = _buffer("logits", lead + (b, n)), _buffer("sums", lead + (b, d + 1))
    for start in range(0, n, b):
        stop = min(n, start + b)
        cols = stop if causal else n
        L = np.matmul(left[..., start:stop, :], right[..., :cols, :].swapaxes(-1, -2),
                      out=tiles[..., :stop - start, :cols])
        if bias is not None:
            L -= bias_block(bias[0], bias[1], start, stop, cols)
        if causal:
            rows = np.arange(start, stop)[:, None]
            L[..., np.arange(cols)[None, :] > rows] = -np.inf
        shift = L.max(axis=-1, keepdims=True)
        # in place: the same values as exp(L - shift), one tile of (G, b, n) per block instead of three (fresh
        # multi-MB tiles per head and block cost page faults: 60 % of the several-head NumPy field's CPU time)
        L -= shift
        E = np.exp(L, out=L)
        acc = np.matmul(E, rhs[..., :cols, :], out=sums[..., :stop - start, :])
        if kind == "sa":
            np.divide(acc[..., :d], acc[..., d:], out=out[..., start:stop, :])
        else:
            with np.errstate(over="raise"):
                try:
                    out[..., start:stop, :] = acc[..., :d] * (np.exp(shift) / n)
                except FloatingPointError:
                    raise InputError(f"usa attention weights overflow for beta={_largest(beta):g}") from None
    return out


def _store_energy(memo, key: bytes, acc: np.ndarray, c: float, beta: float, n: int, d: int,
                  expm1_total: float | None) -> None:
    """Give the memo L = log((1/n^2) sum_ij e^{beta s_ij}) read off the row sums (M = I: acc[:, d] =
    sum_j e^{beta s_ij - c} with the constant c), with its error estimate, and the tiles' expm1 total if summed."""
    total = float(acc[:, d].sum())
    if total > 1e-280 * n and not np.any(acc[:, d] < 1e-280):
        L = c + math.log(total) - 2.0 * math.log(n)
        memo.store(key, L, 16.0 * np.finfo(float).eps * (1.0 + abs(beta) * (d + 1) + math.log2(n) + abs(L)),
                   None if expm1_total is None else expm1_total / n**2)
    elif expm1_total is not None:
        memo.store(key, math.nan, math.inf, expm1_total / n**2)


