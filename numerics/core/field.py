"""The self-attention vector field on the sphere and the interaction energy, blocked and overflow-safe.

Conventions are those of docs/conventions.md (GLPR, arXiv 2312.10794):

- ``sa``:  v_i = P_{x_i}( sum_j e^{beta<Qx_i,Kx_j>} V x_j / sum_k e^{beta<Qx_i,Kx_k>} )
- ``usa``: v_i = P_{x_i}( (1/n) sum_j e^{beta<Qx_i,Kx_j>} V x_j )
- E_beta(X) = 1/(2 beta n^2) sum_{i,j} (e^{beta<x_i,x_j>} - 1)   (Q = K = V = I)

The energy is GLPR's E_beta minus the constant 1/(2 beta): the gradient is unchanged and the limit beta -> 0 is
(1/(2 n^2)) sum_{ij} <x_i, x_j> = |mean(X)|^2 / 2.

Memory: rows are processed in blocks so that no n x n array is ever allocated. For Q = K = I the weights are
symmetric and only the upper block triangle is formed (half the exponentials). The field's blocks are sized
for the cache (:func:`tile_rows`: a block of logits about half the L2 cache, so that the GEMM writes it, the
exp rewrites it and the second GEMM reads it without a trip through DRAM); other kernels use
:func:`block_rows` (about 4 million entries, 32 MB, per block).

Overflow: weights are computed as e^{beta s_ij - c_i} with c_i = |beta| |M^T x_i| >= beta s_ij (M = Q^T K), so
no exponent is positive. This is exact for ``sa`` (the shift cancels). For ``usa`` the shift is the constant
beta when Q = K = I; in the ``rescaled`` time unit (t' = e^{beta} t, docs/conventions.md) the field is
(1/n) sum_j e^{beta(s_ij - 1)} V x_j, finite for any beta; in the ``natural`` unit it is e^{beta} times that
and an overflow raises :class:`InputError` instead of returning inf.
"""
from __future__ import annotations

import functools
import math
import os

import numpy as np
from scipy.special import exprel

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

#: default number of kernel entries per block (block rows * n)
BLOCK_ENTRIES = 1 << 22
#: L2 cache size assumed when the machine does not report one (bytes)
L2_FALLBACK_BYTES = 1 << 20
#: fewest rows per cache-sized tile: below this the GEMMs of a tile run far under the dgemm rate
TILE_MIN_ROWS = 8
#: from this dimension on the field's GEMMs dominate its exp and tiles are tall (:func:`block_rows`)
TILE_CACHE_MAX_D = 8
#: fewest block rows of the symmetric (Q = K = I) field: with k block rows the upper block triangle holds
#: (k + 1) / (2 k) of the pairs (16: 53%; measured at n = 4096, d = 64: 256 rows 162 ms vs 1024 rows 175 ms)
SYMMETRIC_MIN_BLOCKS = 16


def block_rows(n: int, entries: int = BLOCK_ENTRIES) -> int:
    """Rows per block so that a block of the n x n kernel holds about ``entries`` numbers."""
    return max(1, min(n, entries // max(n, 1)))


@functools.lru_cache(maxsize=1)
def l2_cache_bytes() -> int:
    """Size of the L2 cache of cpu0 in bytes, from ``/sys/devices/system/cpu/cpu0/cache/index*/``
    (the level-2 data or unified cache); :data:`L2_FALLBACK_BYTES` where the system does not say."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for entry in sorted(os.listdir(base)):
            path = os.path.join(base, entry)
            with open(os.path.join(path, "level")) as fh:
                level = fh.read().strip()
            with open(os.path.join(path, "type")) as fh:
                kind = fh.read().strip()
            if level == "2" and kind in ("Data", "Unified"):
                with open(os.path.join(path, "size")) as fh:
                    return _parse_cache_size(fh.read())
    except (OSError, ValueError):
        pass
    return L2_FALLBACK_BYTES


def _parse_cache_size(text: str) -> int:
    """``"1024K"`` -> 1048576 (suffixes K, M, G as the kernel writes them)."""
    text = text.strip().upper()
    factor = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    value = int(text.rstrip("KMG"))
    if value <= 0:
        raise ValueError(text)
    return value * factor


def tile_rows(n: int, d: int, cache_bytes: int | None = None) -> int:
    """Rows per tile of the field: cache-sized for small d, large for large d.

    Per row the field does 4 n (d + 1) GEMM flops and n exponentials; with dgemm near 80 GFLOP/s and exp near
    1.5 G/s on one core the exp dominates while d + 1 < ~14. There the tile of logits is kept in the L2 cache
    (b rows with 8 b (n + 2 (d + 1)) bytes in half of :func:`l2_cache_bytes`, at least ``TILE_MIN_ROWS``),
    so that GEMM, exp and GEMM pass over it without DRAM traffic. For d >= ``TILE_CACHE_MAX_D`` the GEMMs
    dominate and their efficiency needs tall tiles: :func:`block_rows` (about 4 million entries).
    Measured at n = 4096 (2 shared cores under heavy load, minimum of 4 interleaved rounds): d = 3, 32 rows
    40 ms vs 1024 rows 260 ms; d = 64, 128 rows 649 ms vs 1024 rows 394 ms.
    """
    if d >= TILE_CACHE_MAX_D:
        return block_rows(n)
    cache = l2_cache_bytes() if cache_bytes is None else int(cache_bytes)
    rows = (cache // 2) // (8 * (max(n, 1) + 2 * (d + 1)))
    return max(1, min(n, max(rows, TILE_MIN_ROWS)))


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
    """Velocity of every particle under self-attention dynamics on S^{d-1}.

    Parameters
    ----------
    X : (n, d) array_like
        Rows are unit vectors x_i (checked to 1e-8 unless ``normalize``).
    beta : float
        Inverse temperature (any finite real).
    model : {"sa", "usa"}
        ``sa``: P_{x_i}( sum_j e^{beta<Qx_i,Kx_j>} V x_j / Z_i ), Z_i = sum_k e^{beta<Qx_i,Kx_k>};
        ``usa``: P_{x_i}( (1/n) sum_j e^{beta<Qx_i,Kx_j>} V x_j ).
    Q, K, V : (d, d) array_like, optional
        Query, key and value matrices; identity when omitted.
    time_unit : {"natural", "rescaled"}
        Only for ``usa``: ``rescaled`` returns the field in the time unit t' = e^{beta} t (finite for any beta).
    block : int, optional
        Rows per block (default: :func:`tile_rows`, sized for the L2 cache).

    Returns
    -------
    (n, d) ndarray
        The projected velocities v_i (tangent: <v_i, x_i> = 0 up to rounding).

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
    """Validate the parameters once and return ``field(X) -> (n, d)`` without per-call checks.

    This is what integrators call: ``field`` evaluates the formula of :func:`attention_field` at any X in
    R^{n x d}. Stage points of Runge-Kutta methods are slightly off the sphere; there the projection is the
    exact orthogonal one, y - (<x, y>/|x|^2) x, which equals P_x y on the sphere and keeps every |x_i|
    constant along the extended flow. (The literal y - <x, y> x would add a radial mode, decaying at a rate
    of about 2 for ``sa``, that caps adaptive steps near 1 on long metastable plateaus.)

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
    if model == "usa" and time_unit == "natural" and beta > 700:
        raise InputError(f"usa field overflows in the natural time unit at beta={beta:g}; "
                         "use time_unit='rescaled' (t' = e^beta t)")
    scale = math.exp(beta) if (model == "usa" and time_unit == "natural") else 1.0

    memo = RowSumMemo(beta) if M is None else None

    def field(X: np.ndarray) -> np.ndarray:
        return _projected_field(X, beta, model, M, V, scale, block, memo, engine)

    if memo is not None:
        field.tile_energy = memo.energy  # energies of states the field was evaluated at, from its tiles
        if engine == "numpy":  # the fused kernel sums no energy terms: no requests to make
            field.request_energy = memo.request  # the integrators ask for the energy of each saved frame
    return field


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


def _projected_field(X, beta, model, M, V, scale, block, memo=None, engine="numpy"):
    n, d = X.shape
    XV = X if V is None else X @ V.T
    b = block or tile_rows(n, d)
    left = beta * (X if M is None else X @ M)
    if model == "sa":
        # c_i = |beta| |M^T x_i| bounds beta <M^T x_i, x_j> over unit x_j; the shift cancels in the ratio.
        shift = abs(beta) * (np.ones(n) if M is None else np.linalg.norm(X @ M, axis=1))
    else:
        shift = np.full(n, beta)  # usa: e^{beta (s - 1)} defines the rescaled time unit t' = e^{beta} t
    # Logits beta <Q x_i, K x_j> - c_i come from one GEMM with an extra column: [beta X M, -c] @ [X, 1]^T,
    # and numerator and row sums from another: W @ [XV, 1]. The block buffers are allocated once and every
    # GEMM and the exp write into them (no fresh n-wide arrays per block: page faults cost as much as the exp).
    key = memo.key(X) if memo is not None and n > 0 else None
    # a saved frame whose energy the integrator requested: the tiles also sum the pair sum's terms expm1(beta s)
    energy_terms = key is not None and engine != "numba" and memo.wants(key)
    lhs = np.hstack([left, np.zeros((n, 1)) if energy_terms else -shift[:, None]])
    right = np.hstack([X, np.ones((n, 1))]).T.copy()
    rhs = np.hstack([XV, np.ones((n, 1))])
    expm1_total = None
    if engine == "numba":
        acc = _fused_sums(lhs, right, rhs, beta)
    elif M is None:  # Q = K = I: the weights e^{beta <x_i, x_j> - c} (c constant) are symmetric in (i, j)
        # at least SYMMETRIC_MIN_BLOCKS block rows, so that the upper block triangle skips about half the pairs
        rows = block or min(b, max(TILE_MIN_ROWS, -(-n // SYMMETRIC_MIN_BLOCKS)))
        acc, expm1_total = _symmetric_tile_sums(lhs, right, rhs, min(rows, n), beta,
                                                shift[0] if energy_terms else None)
    else:
        acc = _tile_sums(lhs, right, rhs, min(b, n), beta)
    if key is not None:
        # M = I: acc[:, d] = sum_j e^{beta s_ij - c} with the constant c = shift[0] (|beta| for sa, beta for usa)
        total = float(acc[:, d].sum())
        if total > 1e-280 * n and not np.any(acc[:, d] < 1e-280):
            L = shift[0] + math.log(total) - 2.0 * math.log(n)
            memo.store(key, L, 16.0 * np.finfo(float).eps * (1.0 + abs(beta) * (d + 1) + math.log2(n) + abs(L)),
                       None if expm1_total is None else expm1_total / n**2)
        elif expm1_total is not None:
            memo.store(key, math.nan, math.inf, expm1_total / n**2)
    if model == "sa":
        for r in np.flatnonzero(acc[:, d] < 1e-280):  # c_i far above every logit: redo the row with the exact max
            logits = left[r] @ right[:d]
            acc[r] = np.exp(logits - logits.max()) @ rhs
        out = acc[:, :d] / acc[:, d:]
    else:
        out = acc[:, :d] * (scale / n)
    # P_{x_i} v = v - <x_i, v> x_i / |x_i|^2 (= v - <x_i, v> x_i on the sphere; see make_field for off it)
    out -= (np.einsum("ij,ij->i", X, out) / np.einsum("ij,ij->i", X, X))[:, None] * X
    return out


def _tile_sums(lhs: np.ndarray, right: np.ndarray, rhs: np.ndarray, b: int, beta: float) -> np.ndarray:
    """acc = exp(lhs right) rhs in tiles of b rows (right is (d + 1) x n): GEMM, exp in place, GEMM."""
    n, q = lhs.shape[0], rhs.shape[1]
    W_buf = np.empty((b, n))
    acc = np.empty((n, q))
    # the tile loop does three calls per tile and nothing else (no per-tile errstate, checks or divisions:
    # at d = 3 the cache-sized tiles are about 15 rows, so per-tile Python overhead would show)
    with np.errstate(over="raise", under="ignore"):
        try:
            for start in range(0, n, b):
                stop = min(n, start + b)
                W = W_buf[:stop - start]
                np.matmul(lhs[start:stop], right, out=W)
                np.exp(W, out=W)
                np.matmul(W, rhs, out=acc[start:stop])
        except FloatingPointError:
            raise _overflow(beta) from None
    return acc


def _symmetric_tile_sums(lhs: np.ndarray, right: np.ndarray, rhs: np.ndarray, b: int, beta: float,
                         energy_shift: float | None = None) -> tuple[np.ndarray, float | None]:
    """The sums of :func:`_tile_sums` for symmetric weights W_ij = W_ji (Q = K = I, a constant shift c): only the
    upper block triangle is formed and exponentiated, each tile W = W[a:e, a:] once, and used twice:
    acc[a:e] += W rhs[a:] (rows) and acc[e:] += W[:, e - a:]^T rhs[a:e] (the mirrored columns; the diagonal
    block counts once). Half the exponentials and half the first GEMM of the full sum; the second GEMM is
    the same work in two halves. Equal to the full sum to rounding (summation order only).

    With ``energy_shift = c`` the logits of ``lhs right`` are the unshifted beta s_ij (the caller puts 0 in
    the shift column): each tile's expm1(beta s_ij) is summed as in :func:`_pair_sum` (off-diagonal entries
    twice, the diagonal block once) before c is subtracted and the exp taken, and the total
    sum_ij expm1(beta s_ij) is returned second (else None).
    """
    n, q = lhs.shape[0], rhs.shape[1]
    buf = np.empty(b * n)
    terms = None if energy_shift is None else np.empty(b * n)
    expm1_total = None if energy_shift is None else 0.0
    acc = np.zeros((n, q))
    cols = np.empty((n, q))  # the mirrored contributions of one tile, before they are added (no allocation)
    with np.errstate(over="raise", under="ignore"):
        try:
            for start in range(0, n, b):
                stop = min(n, start + b)
                m = stop - start
                W = buf[:m * (n - start)].reshape(m, n - start)
                np.matmul(lhs[start:stop], right[:, start:], out=W)
                if terms is not None:
                    F = np.expm1(W, out=terms[:W.size].reshape(W.shape))
                    expm1_total += 2.0 * float(F.sum()) - float(F[:, :m].sum())
                    W -= energy_shift
                np.exp(W, out=W)
                acc[start:stop] += W @ rhs[start:]
                if stop < n:
                    np.matmul(W[:, m:].T, rhs[start:stop], out=cols[stop:])
                    acc[stop:] += cols[stop:]
        except FloatingPointError:
            raise _overflow(beta) from None
    return acc, expm1_total


def _fused_sums(lhs: np.ndarray, right: np.ndarray, rhs: np.ndarray, beta: float) -> np.ndarray:
    """The same sums with the fused Numba kernel (:func:`numerics.core.fused.fused_accumulate`)."""
    from numerics.core.fused import fused_accumulate

    try:
        return fused_accumulate(lhs, right.T, rhs)
    except FloatingPointError:
        raise _overflow(beta) from None


def _overflow(beta: float) -> InputError:
    return InputError(f"attention weights overflow for beta={beta:g} (use smaller |beta|, or model='sa')")


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
                       normalize: bool = False) -> float:
    """Interaction energy of the configuration (Q = K = V = I).

    Parameters
    ----------
    X : (n, d) array_like
        Unit vectors.
    beta : float
        Inverse temperature.
    normalization : {"glpr-shifted", "gkpr", "log-mean-exp"}
        ``glpr-shifted`` (alias ``glpr``): E(X) = 1/(2 beta n^2) sum_{i,j} (e^{beta<x_i,x_j>} - 1), GLPR's E_beta
        minus the constant 1/(2 beta); at beta = 0 the limit |mean(X)|^2 / 2. Increases along ``usa`` and
        ``sa``; overflows for |beta| > 600.
        ``gkpr``: (1/n^2) sum_{i,j} e^{beta(<x_i,x_j> - 1)} in (0, 1] (GKPR, arXiv 2410.06833), finite for any
        beta >= 0; for beta > 0 it is an increasing affine function of E_beta.
        ``log-mean-exp``: L(X) = (1/beta) log((1/n^2) sum_{i,j} e^{beta<x_i,x_j>}), finite for every real beta
        (|mean X|^2 at beta = 0). E_glpr-shifted = (e^{beta L} - 1)/(2 beta), so L increases with E_beta
        for either sign of beta.

    Returns
    -------
    float

    Notes
    -----
    The pair sum of :func:`numerics.core.energy.pair_energies` for a batch of one (upper block triangle, rows in
    blocks of :func:`energy_block` unless ``block`` is given): a member of a batch gets this energy bit for bit.

    Source: GLPR (arXiv 2312.10794) energy E_beta; GKPR normalised energy. Verified by: core.energy-identity.
    """
    beta = require_real(beta, "beta")
    normalization = require_choice(ENERGY_ALIASES.get(normalization, normalization), "normalization",
                                   ENERGY_NORMALIZATIONS)
    X = require_points(X, "X", normalize=normalize)
    n, d = X.shape
    return float(batch_energies(X[None], np.array([beta]), normalization, block=block or energy_block(n, d))[0])


def energy_block(n: int, d: int) -> int:
    """Rows per block of the energy's pair sum (:mod:`numerics.core.energy`): the field's cache-sized tiles
    (:func:`tile_rows`), but at least ``min(64, n)`` rows and at least n / 8, so that the upper block triangle
    skips about 7/16 of the pairs. The block size fixes the summation order, hence the energy's last bits: one
    system, an ensemble's members and a user kernel's energy all use it."""
    return max(1, min(tile_rows(n, d), max(64, -(-n // 8)), n))


# the pair sums live in numerics.core.energy (one implementation for one system and for batches); the names are
# kept here for the callers and the row-sum memo above (EXPREL_MAX_BETA)
from numerics.core.energy import EXPREL_MAX_BETA, batch_energies, pair_energies  # noqa: E402
