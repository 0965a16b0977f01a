"""The engines that evaluate the attention pipeline: one table of what each supports, one capability check, one
choice, and the rounding bounds of the compiled ones.

The pipeline (:mod:`numerics.core.attention`) computes the same weighted double sums with one of five engines:

========== ============================================== ================== ========= ======================
engine     evaluates                                      heads              systems   pays (measured)
========== ============================================== ================== ========= ======================
numpy      BLAS tiles of :mod:`numerics.core.sums`        every model        both      the reference
fused      :func:`numerics.core.fused.fused_accumulate`    one head           one       see :data:`ENGINES`
lanes      :func:`numerics.core.lanes.member_sums`         one head           members   see :data:`ENGINES`
identity   ``_member_kernels.identity_sums``              Q = K = V = I      members   see :data:`ENGINES`
heads      ``_member_heads.heads_field``                  several heads      both      see :data:`ENGINES`
========== ============================================== ================== ========= ======================

The compiled engines (``backend="numba"``) evaluate no MLP, depth schedule, causal mask, positions (ALiBi, RoPE),
normalisation scheme or user kernel; such a request is refused with the one line :data:`NUMBA_SUBSET`, the same
for one system and for a batch. ``auto`` and ``direct`` never choose a compiled engine: the choice is the user's
(``--backend numba``), and :func:`choose` then picks the engine from the request's heads, features and whether it
is the batch path. A routing mistake would cost speed without changing a result beyond rounding, so the tests
check the engine reached for every case (tests/numerics/test_core_support_matrix.py) and
``benchmarks/bench_gate.py`` times the ensembles before and after a change.

The compiled kernels' arithmetic is not changed by this module; it only decides which one runs. The rounding
bounds of the compiled engines against the NumPy sums are written here once (:func:`weight_rounding_bound`, under
its old names :func:`fused_rounding_bound` and :func:`member_rounding_bound`, and :func:`heads_rounding_bound`);
``proofs_notes/core-fused-kernel.md`` and ``proofs_notes/core-ensemble-members.md`` derive them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from numerics.common.errors import InputError

#: the one line with which the compiled engines refuse what they do not evaluate (one system and batches alike)
NUMBA_SUBSET = ("the numba backend of a batch evaluates one attention head (Q, K, V) or several heads (--heads), as "
                "for one system: no MLP, schedule, mask, positions or user kernel; use --backend direct")

#: the heads of a request: Q = K = V = I, one head with general Q, K, V, or several heads (MultiHead)
SHAPES = ("identity", "one", "several")
#: the features of a request besides its heads (a compiled engine supports none of them)
FEATURES = ("mlp", "causal", "positions", "schedule", "kernel", "norm")


@dataclass(frozen=True)
class Engine:
    """One row of the engine table: what the engine evaluates and where it pays.

    Attributes
    ----------
    name : str
        The engine's name (``Attention.engine``).
    evaluates : str
        The function that computes the sums.
    shapes : tuple of str
        The heads it evaluates (:data:`SHAPES`).
    features : tuple of str
        The features of :data:`FEATURES` it evaluates.
    single, members : bool
        Whether it serves the one-system path (``Model.vector_field``) and the batch path (ensembles).
    compiled : bool
        A Numba kernel (``backend="numba"``; needs the extra ``fast``).
    pays : str
        Where it is faster than ``numpy`` (measured; the compiled engines are chosen by the user, never by
        ``auto``).
    """

    name: str
    evaluates: str
    shapes: tuple[str, ...]
    features: tuple[str, ...]
    single: bool
    members: bool
    compiled: bool
    pays: str

    def supports(self, shape: str, features: frozenset[str], batch: bool) -> bool:
        """True when the engine evaluates a request with these heads and features on this path."""
        return (shape in self.shapes and features <= set(self.features)
                and (self.members if batch else self.single))


#: the engine table; for a compiled request, :func:`choose` takes the first compiled row that supports it
ENGINES: dict[str, Engine] = {e.name: e for e in (
    Engine("numpy", "numerics.core.sums (BLAS tiles; symmetric for Q = K = I) or the per-head blocks",
           SHAPES, FEATURES, single=True, members=True, compiled=False, pays="the reference; the default"),
    Engine("identity", "numerics.core._member_kernels.identity_sums (members as 64 vector lanes, operands inlined, "
           "projection in the lane layout)", ("identity",), (), single=False, members=True, compiled=True,
           pays="ensembles of small n and d: about 5x the NumPy batch at B = 1024, n = 32, d = 3"),
    Engine("lanes", "numerics.core._member_kernels.member_sums (members as 64 vector lanes)", ("identity", "one"),
           (), single=False, members=True, compiled=True,
           pays="ensembles with a general score map: about 1.1x the NumPy batch at B = 1024, n = 32, d = 3"),
    Engine("heads", "numerics.core._member_heads.heads_field (all heads, rank-k factors and the projection in one "
           "kernel; never split into per-head calls)", ("several",), (), single=True, members=True, compiled=True,
           pays="several heads: about 16x the NumPy batch at B = 256, n = 64, d = 16, 8 heads of k = 2"),
    Engine("fused", "numerics.core.fused.fused_accumulate (logits, exp and the second product per L1 tile)",
           ("identity", "one"), (), single=True, members=False, compiled=True,
           pays="one large system without BLAS threads; the NumPy tiles are as fast or faster at n = 4096"),
)}

#: requests for the compiled engines: ``numba`` (the backend) and the engine names the pipeline's constructors
#: take (``fused``: the one-system path; ``lanes``, ``identity``, ``heads``: members as vector lanes)
COMPILED_REQUESTS = ("numba", "fused", "lanes", "identity", "heads")


def choose(backend: str, shape: str, features=(), *, batch: bool) -> str:
    """The engine that evaluates a request: the one choice point of the core.

    Parameters
    ----------
    backend : str
        ``numba`` (or a compiled engine's name, :data:`COMPILED_REQUESTS`) asks for a compiled engine; anything
        else (``direct``, ``auto``, ``numpy``) gets ``numpy``.
    shape : {"identity", "one", "several"}
        The heads of the request (:data:`SHAPES`).
    features : iterable of str
        The request's features among :data:`FEATURES`.
    batch : bool
        The batch path (ensembles; member lanes) rather than one system. ``fused`` as ``backend`` means the
        one-system path, the lane engines' names the batch path, whatever ``batch`` says.

    Returns
    -------
    str
        A key of :data:`ENGINES`.

    Raises
    ------
    InputError
        :data:`NUMBA_SUBSET` when no compiled engine evaluates the request.
    """
    if backend not in COMPILED_REQUESTS:
        return "numpy"
    if backend == "fused":
        batch = False
    elif backend != "numba":
        batch = True
    wanted = frozenset(features)
    for engine in ENGINES.values():
        if engine.compiled and engine.supports(shape, wanted, batch):
            return engine.name
    raise InputError(NUMBA_SUBSET)


def model_shape(model, identity: bool | None = None) -> str:
    """The heads of ``model`` (:data:`SHAPES`): ``several`` with a MultiHead, else ``identity`` when Q = K = V = I
    (``identity``: the caller's answer once per-member matrices are resolved), else ``one``."""
    if model.heads is not None:
        return "several"
    if identity is None:
        identity = model.Q is None and model.K is None and model.V is None
    return "identity" if identity else "one"


def model_features(model) -> frozenset[str]:
    """The features of ``model`` among :data:`FEATURES` that decide its engine. (A normalisation scheme is refused
    before an engine is chosen: one system's field is :class:`numerics.core.norms.NormField`, batches refuse it
    in :func:`numerics.core.ensemble.check_batchable`; ``norm`` is the request of the scheme's unprojected
    attention output, :meth:`numerics.core.attention.Attention.heads` with ``project=False``.)"""
    found = {"mlp": model.mlp is not None, "causal": bool(model.causal), "positions": model.has_positions,
             "schedule": model.schedule is not None, "kernel": model.kernel is not None}
    return frozenset(name for name, present in found.items() if present)


def choose_for_model(model, backend: str, *, batch: bool, members: dict | None = None) -> str:
    """:func:`choose` for a :class:`numerics.core.model.Model` (its heads and features); ``members``: the per-member
    values of :func:`numerics.core.ensemble.resolve_members`, whose resolved M = Q^T K and V decide the identity
    case (per-member matrices make a model without its own Q, K, V a general one-head model)."""
    identity = None if not members or "M" not in members else members["M"] is None and members.get("V") is None
    return choose(backend, model_shape(model, identity), model_features(model), batch=batch)


def check_backend(model, backend: str, *, batch: bool) -> None:
    """The capability check: :class:`InputError` (:data:`NUMBA_SUBSET`, one line) when ``backend`` asks for a
    compiled engine that does not evaluate ``model``; nothing otherwise."""
    choose_for_model(model, backend, batch=batch)


def numba_heads(model) -> bool:
    """True when the model's only architecture is its heads (the several-head kernel's case)."""
    return model.heads is not None and not model_features(model) - {"kernel"}


# -- the standalone energy's engines (numerics.core.energy) ------------------------------------------------------------
#: the standalone energy's engines: ``numpy`` (the pair sums of :mod:`numerics.core.energy`, upper block triangle of
#: BLAS tiles; the default, and every batch) and ``compiled`` (``numerics.core._energy_kernels.shifted_pair_sum``:
#: one exponential per unordered pair in column tiles, the inner products formed in the kernel; ``glpr-shifted`` at
#: EXPREL_MAX_BETA <= |beta| <= 500 and d <= 32 only). Measured by CPU time (2026-12-07, load average 3.5-10.5, two
#: runs; proofs_notes/core-energy-kernel.md): 0.15-0.48 of a field evaluation at n = 256..4096, d = 3 and 16
#: (the first compiled kernel 0.28-0.92, NumPy 0.48-1.20).
ENERGY_ENGINES = ("numpy", "compiled")
#: the largest |beta| of the compiled energy (its 2^k stays a normal number; E overflows at |beta| ~ 600 anyway)
COMPILED_ENERGY_MAX_BETA = 500.0
#: the largest d of the compiled energy: it forms the inner products as d axpy passes, slower than the BLAS tiles
#: beyond (measured: 0.51-0.88 of a field at d = 64 against NumPy's 0.42-0.49)
COMPILED_ENERGY_MAX_D = 32


def choose_energy(backend: str, normalization: str, beta: float, *, small_beta: float, d: int = 2) -> str:
    """The engine of one system's standalone energy: ``compiled`` only when asked for (``backend="numba"``) and
    the request is the kernel's (``glpr-shifted``, small_beta <= |beta| <= :data:`COMPILED_ENERGY_MAX_BETA`,
    d <= :data:`COMPILED_ENERGY_MAX_D`), else
    ``numpy``. Never the default: the NumPy sums are what a batch member gets bit for bit (the compiled sums
    differ in the last bits, :func:`energy_rounding_bound`) and the kernel is slower at large n d.

    Raises
    ------
    InputError
        An unknown backend, or ``numba`` without Numba installed.
    """
    if backend not in ("numpy", "numba"):
        raise InputError(f"energy backend must be 'numpy' or 'numba', got {backend!r}")
    if backend == "numpy":
        return "numpy"
    import importlib.util

    if importlib.util.find_spec("numba") is None:
        raise InputError("the numba backend needs Numba: pip install 'attnflow[fast]' (or pip install numba)")
    if (normalization != "glpr-shifted" or not small_beta <= abs(beta) <= COMPILED_ENERGY_MAX_BETA
            or d > COMPILED_ENERGY_MAX_D):
        return "numpy"
    return "compiled"


def energy_rounding_bound(beta: float, n: int, d: int) -> float:
    """Bound on |E_compiled - E_numpy| of the ``glpr-shifted`` energy (both computed in double, |x_i| <= 1 + 1e-12).

    A pair's term t = (e^{beta s} - 1)/beta has |t| <= |s| e^{|beta s|} <= e^{|beta|} and dt/ds = e^{beta s}: the
    inner product, d products summed in another order on each side (plus the rounding of beta x_i), moves t by at
    most (d + 1) eps e^{|beta|} per side; each expm1 is within 4 ulp (the kernel, against mpmath) and 1 ulp (NumPy);
    the kernel sums a row with 8 accumulators (n/8 + 3 additions), the rows pairwise (log2 n + 8), NumPy's blocks
    pairwise (log2 n + 16 each, and the blocks' sums log2 n); the final division by beta and 2 n^2 is one rounding
    on each side. In all, over the n^2 terms of E = (1/(2 n^2)) sum t:
    |dE| <= eps e^{|beta|} (2 (d + 1) + 5 + n/8 + 3 log2 n + 30) / 2.
    """
    eps = np.finfo(float).eps
    return eps * math.exp(abs(beta)) * (2.0 * (d + 1) + 5.0 + n / 8.0 + 3.0 * math.log2(max(n, 2)) + 30.0) / 2.0


# -- rounding bounds of the compiled engines against the NumPy sums ---------------------------------------------------
def _weight_sums(logit_error: float, n: int) -> float:
    """Relative bound on a weight sum from a logit's absolute error: e^{logit} turns it into a relative error of
    each weight, both exps are within 2 ulp, sums of n positive terms in another order add (n - 1) eps; doubled
    for the two sides."""
    eps = np.finfo(float).eps
    return 2.0 * (logit_error + 4.0 * eps + (n - 1) * eps)


def weight_rounding_bound(beta, d: int, n: int, m_norm: float = 1.0) -> float:
    """Bound on the relative difference of each compiled weight sum (one head: the fused kernel, the member lanes)
    from the NumPy path's, in units of the sum of |terms|.

    A logit <l_i, r_j> of d + 2 products (beta M^T x_i . x_j and the shift c_i) summed in another order differs
    by at most (d + 2) eps (|beta| |M| + |c_i|) <= 2 (d + 2) eps |beta| |M| (the largest |beta| of the members);
    the rest is :func:`_weight_sums`: 2 (2 (d + 2) eps |beta| |M| + 4 eps + (n - 1) eps) in all (a crude worst
    case for the order of the sums: log2 n for BLAS's blocked sums).
    """
    eps = np.finfo(float).eps
    return _weight_sums(2.0 * (d + 2) * eps * float(np.max(np.abs(beta))) * m_norm, n)


#: the fused kernel's bound (:mod:`numerics.core.fused`, ``proofs_notes/core-fused-kernel.md``)
fused_rounding_bound = weight_rounding_bound
#: the member kernels' bound (:mod:`numerics.core.lanes`, ``proofs_notes/core-ensemble-members.md``)
member_rounding_bound = weight_rounding_bound


def heads_rounding_bound(beta, heads, n: int) -> float:
    """Bound on the difference of each component of the several-head field of the member kernel
    (:func:`numerics.core._member_heads.heads_field`) from the NumPy path's
    (:func:`numerics.core.batch_field.make_batch_block_field`), sa; for usa multiply by the largest
    (1/n) sum_j e^{s_ij} of the member (the size of its unnormalised sums).

    Per head h (both paths, |x| = 1): a logit is a chain of at most 2d + k + 2 roundings of terms bounded by
    |beta| c |x_i|^T |Q_h|^T |K_h| |x_j| <= |beta| c m_h, m_h = || |Q_h|^T |K_h| ||_2 (the NumPy path forms
    beta c K_h^T Q_h x_i and dots it with x_j, the kernel dots log2(e) beta c Q_h x_i with K_h x_j: one rounding
    more); subtracting the shift adds a rounding of a number <= |beta| c (m_h + max(m_h, n_h)),
    n_h = ||Q_h||_2 ||K_h||_2 (the NumPy path's shift is the row maximum, <= |beta| c m_h; the kernel's is the
    bound |q_i| max_j |k_j| <= |beta| c n_h or the row maximum; which shift is used cancels up to these
    roundings, and usa's e^{shift ln 2} rounds a number <= |beta| c max(m_h, n_h) once more). The weight sums
    are then within rho_h = :func:`_weight_sums` of that logit error (the kernel's clamp at 2^-1020 changes
    weights below 2^-1020 of the largest, by less than n 2^-1020 of the sum): rho_h = 2 (((2d + k + 3) m_h +
    2 max(m_h, n_h)) eps |beta| c + 4 eps + (n - 1) eps), relative to the sum of |terms| (both sides counted).
    The head's average (numerator and denominator: 2 rho_h) then goes through V_h and W_h (d + k + 2 roundings
    on each side) into components bounded by w_h = max_c sum_e (|W_h|^T |V_h|)_{ce} (the averaged
    |x_e| <= 1). Heads are added in order (H eps) and the tangent projection x -> v - <x, v> x moves an error e
    of v by at most (1 + sqrt(d)) |e|_max.
    """
    eps = np.finfo(float).eps
    H, k, d = heads.H, heads.k, heads.d
    b = float(np.max(np.abs(beta))) * abs(heads.scale)
    total = 0.0
    for h in range(H):
        m_h = float(np.linalg.norm(np.abs(heads.Q[h]).T @ np.abs(heads.K[h]), 2))
        n_h = float(np.linalg.norm(heads.Q[h], 2) * np.linalg.norm(heads.K[h], 2))
        w_h = float(np.max((np.abs(heads.W[h]).T @ np.abs(heads.V[h])).sum(axis=1)))
        rho = _weight_sums(((2 * d + k + 3) * m_h + 2.0 * max(m_h, n_h)) * eps * b, n)
        total += w_h * (2.0 * rho + 2.0 * (d + k + 2) * eps + H * eps)
    return (1.0 + math.sqrt(d)) * total
