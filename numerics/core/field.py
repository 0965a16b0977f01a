r"""The self-attention vector field on the sphere and the interaction energy, blocked and overflow-safe.

Conventions are those of docs/conventions.md (GLPR, arXiv 2312.10794):

.. math::

    \begin{aligned}
    \texttt{sa}:\quad & v_i = P_{x_i}\Big(\sum_j e^{\beta\langle Qx_i, Kx_j\rangle} V x_j
        \Big/ \sum_k e^{\beta\langle Qx_i, Kx_k\rangle}\Big), \\
    \texttt{usa}:\quad & v_i = P_{x_i}\Big(\frac{1}{n} \sum_j e^{\beta\langle Qx_i, Kx_j\rangle} V x_j\Big), \\
    & E_\beta(X) = \frac{1}{2\beta n^2} \sum_{i,j} \big(e^{\beta\langle x_i, x_j\rangle} - 1\big)
        \quad (Q = K = V = I).
    \end{aligned}

The energy is GLPR's :math:`E_\beta` minus the constant :math:`1/(2\beta)`: the gradient is unchanged and the
limit :math:`\beta \to 0` is :math:`\frac{1}{2n^2} \sum_{ij} \langle x_i, x_j\rangle
= \tfrac{1}{2} \lVert \operatorname{mean}(X)\rVert^2`.

Memory: rows are processed in blocks so that no :math:`n \times n` array is ever allocated. For
:math:`Q = K = I` the weights are symmetric and only the upper block triangle is formed (half the exponentials).
The field's blocks are sized for the cache (:func:`tile_rows`: a block of logits about half the L2 cache, so
that the GEMM writes it, the exp rewrites it and the second GEMM reads it without a trip through DRAM); other
kernels use :func:`block_rows` (about 4 million entries, 32 MB, per block).

Overflow: weights are computed as :math:`e^{\beta s_{ij} - c_i}` with
:math:`c_i = \lvert\beta\rvert\, \lVert M^\top x_i\rVert \ge \beta s_{ij}` (:math:`M = Q^\top K`), so no exponent
is positive. This is exact for ``sa`` (the shift cancels). For ``usa`` the shift is the constant :math:`\beta`
when :math:`Q = K = I`; in the ``rescaled`` time unit (:math:`t' = e^{\beta} t`, docs/conventions.md) the field
is :math:`\frac{1}{n} \sum_j e^{\beta(s_{ij} - 1)} V x_j`, finite for any :math:`\beta`; in the ``natural`` unit
it is :math:`e^{\beta}` times that and an overflow raises :class:`InputError` instead of returning inf.
"""
from __future__ import annotations

import math
import os  # noqa: F401 - l2_cache_bytes reads os (numerics.core.sums); tests replace os.listdir here

import numpy as np

from numerics.common.errors import InputError, require_choice, require_points, require_real, require_square

from numerics.core.names import MODELS, TIME_UNITS  # noqa: E402 - defined without heavy imports for the CLI
ENERGY_NORMALIZATIONS = ("glpr-shifted", "gkpr", "log-mean-exp")
#: accepted on input for files and calls of the first release ("glpr" was the shifted energy all along)
ENERGY_ALIASES = {"glpr": "glpr-shifted"}
#: what each normalisation is, printed with every energy (trajectory metadata, CLI output)
ENERGY_DEFINITIONS = {
    "glpr-shifted": "E = 1/(2 beta n^2) sum_ij (e^{beta s_ij} - 1) = GLPR's E_beta - 1/(2 beta)",
    "gkpr": "E = (1/n^2) sum_ij e^{beta (s_ij - 1)} in (0, 1] (GKPR's normalised energy; beta >= 0)",
    "log-mean-exp": "E = (1/beta) log((1/n^2) sum_ij e^{beta s_ij}) (finite for every beta; increasing in E_beta)",
}
#: beyond this |beta| the shifted GLPR energy overflows float64 (e^{|beta|} near 1e260)
GLPR_ENERGY_MAX_BETA = 600.0

# the block sizes live with the blocked primitive (numerics.core.sums); the names stay importable from here
from numerics.core import sums as _sums  # noqa: E402
from numerics.core.sums import (BLOCK_ENTRIES, L2_FALLBACK_BYTES, SYMMETRIC_MIN_BLOCKS,  # noqa: E402,F401
                                TILE_CACHE_MAX_D, TILE_MIN_ROWS, _parse_cache_size, block_rows, l2_cache_bytes,
                                tile_rows)


def _matrices(d, Q, K, V):
    Q = require_square(Q, "Q", d)
    K = require_square(K, "K", d)
    V = require_square(V, "V", d)
    M = None
    if Q is not None or K is not None:
        M = (np.eye(d) if Q is None else Q).T @ (np.eye(d) if K is None else K)
    return M, V


def attention_field(X, beta, model: str = "sa", Q=None, K=None, V=None, *, time_unit: str = "natural",
                    block: int | None = None, normalize: bool = False) -> np.ndarray:
    r"""Velocity of every particle under self-attention dynamics on :math:`\mathbb{S}^{d-1}`.

    Parameters
    ----------
    X : (n, d) array_like
        Rows are unit vectors :math:`x_i` (checked to 1e-8 unless ``normalize``).
    beta : float
        Inverse temperature (any finite real).
    model : {"sa", "usa"}
        ``sa``: :math:`P_{x_i}\big(\sum_j e^{\beta\langle Qx_i, Kx_j\rangle} V x_j / Z_i\big)`,
        :math:`Z_i = \sum_k e^{\beta\langle Qx_i, Kx_k\rangle}`;
        ``usa``: :math:`P_{x_i}\big(\tfrac{1}{n} \sum_j e^{\beta\langle Qx_i, Kx_j\rangle} V x_j\big)`.
    Q, K, V : (d, d) array_like, optional
        Query, key and value matrices; identity when omitted.
    time_unit : {"natural", "rescaled"}
        Only for ``usa``: ``rescaled`` returns the field in the time unit :math:`t' = e^{\beta} t` (finite for any
        :math:`\beta`).
    block : int, optional
        Rows per block (default: :func:`tile_rows`, sized for the L2 cache).

    Returns
    -------
    (n, d) ndarray
        The projected velocities :math:`v_i` (tangent: :math:`\langle v_i, x_i\rangle = 0` up to rounding).

    Notes
    -----
    Source: GLPR (arXiv 2312.10794), models SA and USA; docs/conventions.md.
    Verified by: core.gradient-structure, core.equivariance, core.codegen.
    """
    model = require_choice(model, "model", MODELS)
    time_unit = require_choice(time_unit, "time_unit", TIME_UNITS)
    beta = require_real(beta, "beta")
    X = require_points(X, "X", normalize=normalize)
    field = make_field(X.shape[1], beta, model, Q, K, V, time_unit=time_unit, block=block)
    return field(X)


#: how :func:`make_field` evaluates the sums: NumPy tiles (the default and the reference) or the fused Numba
#: kernel of :mod:`numerics.core.fused` (optional dependency, chosen explicitly)
ENGINES = ("numpy", "numba")


def make_field(d: int, beta: float, model: str = "sa", Q=None, K=None, V=None, *, time_unit: str = "natural",
               block: int | None = None, engine: str = "numpy"):
    r"""Validate the parameters once and return ``field(X) -> (n, d)`` without per-call checks.

    This is what integrators call: ``field`` evaluates the formula of :func:`attention_field` at any
    :math:`X \in \mathbb{R}^{n \times d}`. Stage points of Runge-Kutta methods are slightly off the sphere; there
    the projection is the exact orthogonal one, :math:`y - (\langle x, y\rangle / \lVert x\rVert^2)\, x`, which
    equals :math:`P_x y` on the sphere and keeps every :math:`\lVert x_i\rVert` constant along the extended flow.
    (The literal :math:`y - \langle x, y\rangle x` would add a radial mode, decaying at a rate of about 2 for
    ``sa``, that caps adaptive steps near 1 on long metastable plateaus.)

    ``engine="numba"`` computes the same sums with the fused compiled kernel of :mod:`numerics.core.fused`
    (logits, exp and the second product per L1-sized tile; equal to the NumPy path to rounding); it needs
    Numba (extra ``fast``) and raises :class:`InputError` without it.
    """
    engine = require_choice(engine, "engine", ENGINES)
    if engine == "numba":
        from numerics.core.fused import compile_seconds

        compile_seconds()  # one clear error without Numba, and the compile (or cache load) before any timing
    model = require_choice(model, "model", MODELS)
    time_unit = require_choice(time_unit, "time_unit", TIME_UNITS)
    beta = require_real(beta, "beta")
    M, V = _matrices(d, Q, K, V)
    from numerics.core.attention import Attention

    # one system through the pipeline (X[None] ... [0]); its sums are this module's one-system views of the
    # blocked primitive, looked up when called
    return Attention.one_head(d, beta, model, M, V, time_unit=time_unit, block=block,
                              engine="fused" if engine == "numba" else "numpy",
                              memo=RowSumMemo(beta) if M is None else None, sums=_OneSystemSums).single()


class RowSumMemo:
    """Energies of the states a field was evaluated at (Q = K = I), keyed by a digest of the state's bytes.

    Two forms, both free or nearly so:

    - **requested states** (:meth:`request`, called by the integrators for every saved frame before the
      field is evaluated there): the field's tiles also sum expm1(beta s_ij) over their upper block
      triangle (one expm1 and one subtraction per tile entry, 0.16-0.29 evaluations at d = 64). These are the
      terms of the pair sum of :func:`interaction_energy` (its blocks are taller: the products come from GEMMs
      of another shape), so the energy equals the pair sum's to rounding, as well conditioned as it;
    - **any other evaluated state**: the log-mean-exp L(X) = log((1/n^2) sum_ij e^{beta <x_i, x_j>}) read off
      the row sums the tiles compute anyway: glpr-shifted E = expm1(L) / (2 beta), gkpr e^{L - beta},
      log-mean-exp L / beta, used only when the estimated relative error is below
      :data:`TILE_ENERGY_MAX_ERROR` (L from exp of logits with absolute error about
      (|beta| (d + 1) + log2 n) eps; expm1(L) / beta amplifies it by e^L / |expm1(L)|, which is large near the
      uniform state: from random starts at d = 64 the row-sum form is rejected).

    Otherwise, and for states never evaluated, ``energy`` returns None and the caller sums the pairs. At most
    ``capacity`` states are remembered (20-byte digests) and at most ``REQUESTS`` requests are pending.
    """

    #: pending requests kept at most (a request whose state is never evaluated, such as the final frame,
    #: must not accumulate)
    REQUESTS = 64

    def __init__(self, beta: float, capacity: int = 200_000):
        self.beta, self.capacity, self.table, self.wanted = beta, capacity, {}, set()
        self.last: tuple[float, float] | None = None  # (L, error) of the latest evaluation

    @staticmethod
    def key(X: np.ndarray) -> bytes:
        """SHA-1 of the shape and the bytes of X, read in place (no copy); SHA-1 runs on the CPU's SHA
        instructions where it has them (0.54 ms per MiB here against 1.1 ms for BLAKE2b plus 0.09 ms for
        ``tobytes``), and only accidental collisions matter here (none is known for SHA-1)."""
        import hashlib

        X = np.ascontiguousarray(X, dtype=float)
        digest = hashlib.sha1(repr(X.shape).encode(), usedforsecurity=False)
        digest.update(X)
        return digest.digest()

    def request(self, X: np.ndarray) -> None:
        """Ask that the next evaluation of the field at X also sums the expm1 pair terms (its energy)."""
        if len(self.wanted) >= self.REQUESTS:
            self.wanted.clear()
        self.wanted.add(self.key(X))

    def wants(self, key: bytes) -> bool:
        """True (once) if the state with this key was requested, pair terms are possible at this beta and
        the row sums are not expected to give its energy: the previous evaluation's row-sum energy missed
        the bound (consecutive states are close; a wrong guess costs speed, never accuracy: a rejected
        row-sum energy falls back to the pair sum). Before any evaluation there is no guess and the answer is
        False: at small d the row sums usually suffice, and the extra pass would cost a whole evaluation there."""
        if key not in self.wanted:
            return False
        self.wanted.discard(key)
        if not EXPREL_MAX_BETA <= abs(self.beta) <= GLPR_ENERGY_MAX_BETA:
            return False
        return self.last is not None and _glpr_row_sum_error(self.beta, *self.last) > TILE_ENERGY_MAX_ERROR

    def store(self, key: bytes, log_mean: float, error: float, expm1_mean: float | None = None) -> None:
        """Remember L (with its estimated error) and, when the tiles summed them, mean_ij expm1(beta s_ij)."""
        if len(self.table) >= self.capacity:
            self.table.pop(next(iter(self.table)))
        self.table[key] = (log_mean, error, expm1_mean)
        self.last = (log_mean, error)

    def energy(self, X: np.ndarray, normalization: str) -> float | None:
        found = self.table.get(self.key(X))
        if found is None:
            return None
        L, err, expm1_mean = found
        beta = self.beta
        if expm1_mean is not None and normalization == "glpr-shifted":
            return expm1_mean / (2.0 * beta)
        if expm1_mean is not None and normalization == "log-mean-exp":
            return math.log1p(expm1_mean) / beta
        if normalization == "glpr-shifted":
            rel = _glpr_row_sum_error(beta, L, err)
            if not rel <= TILE_ENERGY_MAX_ERROR:
                return None
            value = math.expm1(L) / (2.0 * beta)
        elif normalization == "gkpr":
            value, rel = math.exp(L - beta), err
        elif normalization == "log-mean-exp":
            if beta == 0.0 or L == 0.0:
                return None
            value, rel = L / beta, err / abs(L)
        else:
            return None
        return value if rel <= TILE_ENERGY_MAX_ERROR else None


#: largest estimated relative error at which an energy is read off the field's row sums (else: pair sum)
TILE_ENERGY_MAX_ERROR = 1e-12


def _glpr_row_sum_error(beta: float, L: float, err: float) -> float:
    """Estimated relative error of expm1(L) / (2 beta) from L with absolute error ``err`` (inf where unusable:
    beta = 0, L = 0, L not finite or e^L near overflow)."""
    if beta == 0.0 or L == 0.0 or not abs(L) <= 700:
        return math.inf
    return err * math.exp(L) / abs(math.expm1(L))


class _OneSystemSums:
    """The blocked primitive of :mod:`numerics.core.sums` as one system's pipeline calls it: through this module's
    (n, p) views :func:`_tile_sums`, :func:`_symmetric_tile_sums` and :func:`_fused_sums`, looked up when called
    (one system's pipeline passes its (n, p) arrays; a (1, n, p) stack is its B = 1 form, the same arithmetic;
    tests plant errors in the views)."""

    @staticmethod
    def general(lhs, right, rhs, b, beta):
        if lhs.ndim == 3:
            return _tile_sums(lhs[0], right[0], rhs[0], b, beta)[None]
        return _tile_sums(lhs, right, rhs, b, beta)

    @staticmethod
    def symmetric(lhs, right, rhs, b, beta, energy_shift=None):
        if lhs.ndim == 3:
            acc, expm1_total = _symmetric_tile_sums(lhs[0], right[0], rhs[0], b, beta, energy_shift)
            return acc[None], None if expm1_total is None else [expm1_total]
        return _symmetric_tile_sums(lhs, right, rhs, b, beta, energy_shift)

    @staticmethod
    def fused(lhs, right, rhs, beta):
        if lhs.ndim == 3:
            return _fused_sums(lhs[0], right[0], rhs[0], beta)[None]
        return _fused_sums(lhs, right, rhs, beta)


def _tile_sums(lhs: np.ndarray, right: np.ndarray, rhs: np.ndarray, b: int, beta: float) -> np.ndarray:
    """acc = exp(lhs right) rhs in tiles of b rows (right is (d + 1) x n): :func:`numerics.core.sums.tile_sums`
    of one system."""
    return _sums.tile_sums(lhs, right, rhs, b, beta)


def _symmetric_tile_sums(lhs: np.ndarray, right: np.ndarray, rhs: np.ndarray, b: int, beta: float,
                         energy_shift: float | None = None) -> tuple[np.ndarray, float | None]:
    """The sums of :func:`_tile_sums` for symmetric weights (upper block triangle, each tile used twice) and,
    with ``energy_shift``, the total of the tiles' expm1 terms: :func:`numerics.core.sums.symmetric_tile_sums`
    of one system."""
    return _sums.symmetric_tile_sums(lhs, right, rhs, b, beta, energy_shift)


def _fused_sums(lhs: np.ndarray, right: np.ndarray, rhs: np.ndarray, beta: float) -> np.ndarray:
    """The same sums with the fused Numba kernel (:func:`numerics.core.fused.fused_accumulate`)."""
    from numerics.core.fused import fused_accumulate

    try:
        return fused_accumulate(lhs, right.T, rhs)
    except FloatingPointError:
        raise _overflow(beta) from None


def _overflow(beta: float) -> InputError:
    return _sums.overflow_error(beta)


def energy_normalization_for(beta: float) -> str:
    """The normalisation trajectories record for ``beta``, chosen before a run from beta alone.

    ``glpr-shifted`` for |beta| <= 600; ``gkpr`` above (finite for beta >= 0); ``log-mean-exp`` below -600
    (finite for every beta). All three increase along the dynamics (Q = K = V = I); the choice is recorded in
    the output with its definition (:data:`ENERGY_DEFINITIONS`), never made silently.
    """
    if abs(beta) <= GLPR_ENERGY_MAX_BETA:
        return "glpr-shifted"
    return "gkpr" if beta > 0 else "log-mean-exp"


def interaction_energy(X, beta, *, normalization: str = "glpr-shifted", block: int | None = None,
                       normalize: bool = False, backend: str = "numpy") -> float:
    r"""Interaction energy of the configuration (:math:`Q = K = V = I`).

    Parameters
    ----------
    X : (n, d) array_like
        Unit vectors.
    beta : float
        Inverse temperature.
    normalization : {"glpr-shifted", "gkpr", "log-mean-exp"}
        ``glpr-shifted`` (alias ``glpr``):
        :math:`E(X) = \frac{1}{2\beta n^2} \sum_{i,j} \big(e^{\beta\langle x_i, x_j\rangle} - 1\big)`, GLPR's
        :math:`E_\beta` minus the constant :math:`1/(2\beta)`; at :math:`\beta = 0` the limit
        :math:`\tfrac{1}{2} \lVert \operatorname{mean}(X)\rVert^2`. Increases along ``usa`` and ``sa``; overflows
        for :math:`\lvert\beta\rvert > 600`.
        ``gkpr``: :math:`\frac{1}{n^2} \sum_{i,j} e^{\beta(\langle x_i, x_j\rangle - 1)} \in (0, 1]` (GKPR,
        arXiv 2410.06833), finite for any :math:`\beta \ge 0`; for :math:`\beta > 0` it is an increasing affine
        function of :math:`E_\beta`.
        ``log-mean-exp``:
        :math:`L(X) = \frac{1}{\beta} \log\big(\frac{1}{n^2} \sum_{i,j} e^{\beta\langle x_i, x_j\rangle}\big)`,
        finite for every real :math:`\beta` (:math:`\lVert \operatorname{mean} X\rVert^2` at :math:`\beta = 0`).
        :math:`E_{\text{glpr-shifted}} = (e^{\beta L} - 1)/(2\beta)`, so :math:`L` increases with
        :math:`E_\beta` for either sign of :math:`\beta`.
    backend : {"numpy", "numba"}
        ``numpy`` (default): the bits a batch member gets. ``numba``: the compiled pair sum for ``glpr-shifted``
        (:func:`numerics.core.energy.standalone_energy`), within
        :func:`numerics.core.engines.energy_rounding_bound` of the default.

    Returns
    -------
    float

    Notes
    -----
    The pair sum of :func:`numerics.core.energy.pair_energies` for a batch of one (upper block triangle, rows in
    blocks of :func:`energy_block` unless ``block`` is given): a member of a batch gets this energy bit for bit.

    Source: GLPR (arXiv 2312.10794) energy :math:`E_\beta`; GKPR normalised energy. Verified by:
    core.energy-identity.
    """
    beta = require_real(beta, "beta")
    normalization = require_choice(ENERGY_ALIASES.get(normalization, normalization), "normalization",
                                   ENERGY_NORMALIZATIONS)
    X = require_points(X, "X", normalize=normalize)
    n, d = X.shape
    return standalone_energy(X, beta, normalization, block=block or energy_block(n, d), backend=backend)


def energy_block(n: int, d: int) -> int:
    """Rows per block of the energy's pair sum (:mod:`numerics.core.energy`): the field's cache-sized tiles
    (:func:`tile_rows`), but at least ``min(64, n)`` rows and at least n / 8, so that the upper block triangle
    skips about 7/16 of the pairs. The block size fixes the summation order, hence the energy's last bits: one
    system, an ensemble's members and a user kernel's energy all use it."""
    return max(1, min(tile_rows(n, d), max(64, -(-n // 8)), n))


# the pair sums live in numerics.core.energy (one implementation for one system and for batches); the names are
# kept here for the callers and the row-sum memo above (EXPREL_MAX_BETA)
from numerics.core.energy import EXPREL_MAX_BETA, batch_energies, pair_energies, standalone_energy  # noqa: E402
