r"""The whole transformer block on the sphere: several heads, an MLP, depth schedules and causal masks.

The field (the notes' continuous-time transformer, in the general head form of a trained network):

.. math::

    \begin{aligned}
    v_i &= P_{x_i}\Big(\sum_h W_h^\top V_h a_i^{[h]}\Big) && (\text{no MLP}), \\
    v_i &= P_{x_i}\Big(\frac{1}{H} \sum_h \mathrm{MLP}^{[h]}\big(H W_h^\top V_h a_i^{[h]}\big)\Big)
        && (\text{with an MLP; } \mathrm{MLP}^{[h]} = \mathrm{MLP} \text{ if shared}),
    \end{aligned}

.. math::

    \begin{aligned}
    \texttt{sa}:\quad & a_i^{[h]} = \sum_{j \in J(i)} p_{ij}^{[h]} x_j, \quad
        p_{ij}^{[h]} = e^{s_{ij}^h} \Big/ \sum_{k \in J(i)} e^{s_{ik}^h}, \\
    \texttt{usa}:\quad & a_i^{[h]} = \frac{1}{n} \sum_{j \in J(i)} e^{s_{ij}^h} x_j, \\
    & s_{ij}^h = \beta c \langle Q_h x_i, K_h x_j\rangle, \quad c = 1/\sqrt{k} \text{ by default}
    \end{aligned}

(:math:`c` is ``MultiHead.scale``) with ``Q_h, K_h, V_h, W_h`` of shape ``(k, d)``,
:math:`J(i) = \{1, \dots, n\}` or, with a causal mask, :math:`\{1, \dots, i\}`, and
:math:`P_x y = y - \langle x, y\rangle x`. ``beta`` is the model's inverse temperature; a trained network has
:math:`\beta = 1`. The notes' form :math:`\frac{1}{H} \sum_h P_x\big(\mathrm{MLP}^{[h]}(V^{[h]} a^{[h]})\big)` is
the special case :math:`W_h^\top V_h = V^{[h]}/H` (so :math:`H W_h^\top V_h = V^{[h]}`). With :math:`H = 1`,
:math:`W = I`, ``scale = 1`` and no MLP the field is the one-head field of :mod:`numerics.core.field`. The MLP is
the two-layer perceptron :math:`\mathrm{MLP}(y) = W_2\, \mathrm{act}(W_1 y + b_1) + b_2`, either shared by the
heads or one per head (:math:`\mathrm{MLP}^{[h]}` in head :math:`h`'s term, weights with a leading head axis; the
notes' form).

A :class:`Schedule` makes the weights depend on depth: layer :math:`l` (heads and optional MLP) acts on
:math:`[t_l, t_{l+1})`; weight sharing (ALBERT) is the constant schedule. A callable
``t -> (MultiHead, MLP | None)`` is the general case. The field of a scheduled model is time dependent: it is
called ``field(X, t)`` and has ``field.time_dependent = True`` (see :mod:`numerics.core.integrators`).

Sources: Geshkovski, Letrouit, Polyanskiy, Rigollet (GLPR, arXiv 2312.10794), the multi-head/MLP form of their
continuous-time transformer; causal attention: Karagodin, Polyanskiy, Rigollet (arXiv 2411.04990).
Notes: ``proofs_notes/architectures-*.md``.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import erf

from numerics.common.errors import InputError, require_choice, require_finite_array, require_real
from numerics.core.field import MODELS
from numerics.core.positions import PositionEncoding
from numerics.core.positions import describe as describe_positions

#: MLP activations by name
ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "identity": lambda z: z,
    "relu": lambda z: np.maximum(z, 0.0),
    "tanh": np.tanh,
    "gelu": lambda z: 0.5 * z * (1.0 + erf(z / math.sqrt(2.0))),
}

HEAD_ARRAYS = ("Q", "K", "V", "W")
MLP_ARRAYS = ("W1", "b1", "W2", "b2")


def _frozen(arr: np.ndarray) -> np.ndarray:
    arr = np.array(arr, dtype=np.float64, copy=True)
    arr.flags.writeable = False
    return arr


def _put(arr: np.ndarray, key: str, arrays: dict | None):
    """Metadata entry of an array: inline list, or a reference ``{"npz": key}`` to ``arrays[key]``."""
    if arrays is None:
        return arr.tolist()
    arrays[key] = np.asarray(arr)
    return {"npz": key}


def _get(entry, arrays: dict | None, what: str):
    if isinstance(entry, dict) and "npz" in entry:
        if arrays is None or entry["npz"] not in arrays:
            raise InputError(f"metadata refers to array {entry['npz']!r} for {what}, which the file does not hold")
        return arrays[entry["npz"]]
    return entry


@dataclass(frozen=True, eq=False)
class MultiHead:
    r""":math:`H` attention heads with blocks ``Q, K, V, W`` of shape ``(H, k, d)`` (read-only copies).

    Head :math:`h` contributes :math:`W_h^\top V_h a_i^{[h]}` with scores
    :math:`s_{ij} = \beta \cdot \mathrm{scale} \cdot \langle Q_h x_i, K_h x_j\rangle`.

    Parameters
    ----------
    Q, K, V, W : (H, k, d) array_like
        Query, key, value and output blocks (the layout of a trained transformer's heads).
    scale : float, optional
        Score scale :math:`c`; default :math:`1/\sqrt{k}` (scaled dot-product attention).
    """

    Q: Any
    K: Any
    V: Any
    W: Any
    scale: float | None = None

    def __post_init__(self) -> None:
        shape = None
        for name in HEAD_ARRAYS:
            arr = require_finite_array(getattr(self, name), f"heads {name}", ndim=3)
            if shape is None:
                shape = arr.shape
            elif arr.shape != shape:
                raise InputError(f"heads Q, K, V, W must share one shape (H, k, d); {name} has {arr.shape}, "
                                 f"Q has {shape}")
            object.__setattr__(self, name, _frozen(arr))
        H, k, d = shape
        if H < 1 or k < 1 or d < 2:
            raise InputError(f"heads need H >= 1, k >= 1 and d >= 2, got shape {shape}")
        scale = 1.0 / math.sqrt(k) if self.scale is None else require_real(self.scale, "heads scale")
        object.__setattr__(self, "scale", scale)

    @property
    def H(self) -> int:
        return int(self.Q.shape[0])

    @property
    def k(self) -> int:
        return int(self.Q.shape[1])

    @property
    def d(self) -> int:
        return int(self.Q.shape[2])

    @property
    def score_maps(self) -> np.ndarray:
        """(H, d, d): scale * Q_h^T K_h (scores are beta <x_i, score_maps[h] x_j>)."""
        return self.scale * (np.transpose(self.Q, (0, 2, 1)) @ self.K)

    @property
    def value_maps(self) -> np.ndarray:
        """(H, d, d): W_h^T V_h (the head's value-output map on R^d)."""
        return np.transpose(self.W, (0, 2, 1)) @ self.V

    # -- constructors -------------------------------------------------------------------------------------
    @classmethod
    def from_single(cls, Q=None, K=None, V=None, d: int | None = None, H: int = 1) -> "MultiHead":
        """H identical copies of the one-head model (Q, K, V) with scale 1 and W_h = I/H: the one-head field.

        ``None`` matrices are the identity (then ``d`` is required).
        """
        mats = [None if M is None else require_finite_array(M, name, ndim=2) for M, name in
                ((Q, "Q"), (K, "K"), (V, "V"))]
        dims = {M.shape[0] for M in mats if M is not None}
        if d is not None:
            dims.add(int(d))
        if len(dims) != 1:
            raise InputError(f"cannot build heads: sizes of Q, K, V and d disagree ({sorted(dims)})")
        d = dims.pop()
        Qm, Km, Vm = (np.eye(d) if M is None else M for M in mats)
        stack = (lambda M: np.repeat(M[None], H, axis=0))
        return cls(stack(Qm), stack(Km), stack(Vm), stack(np.eye(d) / H), scale=1.0)

    @classmethod
    def scaled_identity(cls, betas, d: int, weights=None) -> "MultiHead":
        """Heads with Q_h^T K_h * scale = beta_h I and W_h^T V_h = w_h I (default w_h = 1/H), k = d."""
        betas = require_finite_array(betas, "head betas", ndim=1)
        H = betas.size
        w = np.full(H, 1.0 / H) if weights is None else require_finite_array(weights, "head weights", ndim=1)
        if w.size != H:
            raise InputError(f"{H} head betas but {w.size} head weights")
        eye = np.eye(d)
        return cls(np.stack([b * eye for b in betas]), np.repeat(eye[None], H, 0), np.repeat(eye[None], H, 0),
                   np.stack([c * eye for c in w]), scale=1.0)

    @classmethod
    def from_arrays(cls, arrays: dict, what: str = "heads") -> "MultiHead":
        missing = [k for k in HEAD_ARRAYS if k not in arrays]
        unknown = set(arrays) - set(HEAD_ARRAYS) - {"scale"}
        if missing or unknown:
            raise InputError(f"{what} must hold arrays Q, K, V, W (each (H, k, d)) and optionally scale; "
                             f"missing {missing or 'none'}, unknown {sorted(unknown) or 'none'}")
        scale = arrays.get("scale")
        if scale is not None:
            scale = np.asarray(scale)
            if scale.size != 1:
                raise InputError(f"{what}: scale must be one number, got shape {scale.shape}")
            scale = float(scale.reshape(()))
        return cls(*(arrays[k] for k in HEAD_ARRAYS), scale=scale)

    @classmethod
    def load(cls, path) -> "MultiHead":
        """Heads from an ``.npz`` with arrays Q, K, V, W of shape (H, k, d) (and optionally ``scale``)."""
        return cls.from_arrays(_load_npz(path, "heads"), what=f"heads file {path}")

    def to_meta(self, arrays: dict | None = None, prefix: str = "heads") -> dict:
        out = {name: _put(getattr(self, name), f"{prefix}.{name}", arrays) for name in HEAD_ARRAYS}
        out["scale"] = self.scale
        return out

    @classmethod
    def from_meta(cls, meta: dict, arrays: dict | None = None) -> "MultiHead":
        return cls(*(_get(meta.get(name), arrays, f"heads {name}") for name in HEAD_ARRAYS),
                   scale=meta.get("scale"))


@dataclass(frozen=True, eq=False)
class MLP:
    r"""The two-layer perceptron :math:`\mathrm{MLP}(y) = W_2\, \mathrm{act}(W_1 y + b_1) + b_2` applied to each
    head's output.

    Shared (one MLP for every head; 2-D weights) or per head (:math:`\mathrm{MLP}^{[h]}` for head :math:`h`, the
    notes' form :math:`\frac{1}{H} \sum_h P_x\big(\mathrm{MLP}^{[h]}(V^{[h]} a^h)\big)`; weights with a leading
    head axis :math:`H`).

    Parameters
    ----------
    W1 : (m, d) or (H, m, d) array_like
    b1 : (m,) or (H, m) array_like
    W2 : (d, m) or (H, d, m) array_like
    b2 : (d,) or (H, d) array_like
    activation : {"relu", "gelu", "tanh", "identity"}
        ``gelu`` is the exact one, :math:`z\, \Phi(z)`. One activation for all heads.
    """

    W1: Any
    b1: Any
    W2: Any
    b2: Any
    activation: str = "relu"

    def __post_init__(self) -> None:
        ndim = np.ndim(self.W1)
        if ndim not in (2, 3):
            raise InputError(f"mlp W1 must be (m, d) (shared) or (H, m, d) (one MLP per head), got {ndim} axes")
        lead = ndim - 2  # 1 with a head axis
        W1 = require_finite_array(self.W1, "mlp W1", ndim=2 + lead)
        W2 = require_finite_array(self.W2, "mlp W2", ndim=2 + lead)
        b1 = require_finite_array(self.b1, "mlp b1", ndim=1 + lead)
        b2 = require_finite_array(self.b2, "mlp b2", ndim=1 + lead)
        H = (W1.shape[0],) if lead else ()
        m, d = W1.shape[-2:]
        if (d < 2 or m < 1 or (lead and H[0] < 1) or W2.shape != H + (d, m) or b1.shape != H + (m,)
                or b2.shape != H + (d,)):
            form = "W1 (H, m, d), b1 (H, m), W2 (H, d, m), b2 (H, d)" if lead else "W1 (m, d), b1 (m,), W2 (d, m), b2 (d,)"
            raise InputError(f"mlp shapes must be {form} with d >= 2; got "
                             f"W1 {W1.shape}, b1 {b1.shape}, W2 {W2.shape}, b2 {b2.shape}")
        for name, arr in (("W1", W1), ("b1", b1), ("W2", W2), ("b2", b2)):
            object.__setattr__(self, name, _frozen(arr))
        object.__setattr__(self, "activation", require_choice(self.activation, "mlp activation",
                                                              tuple(ACTIVATIONS)))

    @property
    def d(self) -> int:
        return int(self.W1.shape[-1])

    @property
    def width(self) -> int:
        return int(self.W1.shape[-2])

    @property
    def heads(self) -> int | None:
        """H for per-head MLPs (weights with a leading head axis), ``None`` for one MLP shared by all heads."""
        return int(self.W1.shape[0]) if self.W1.ndim == 3 else None

    def __call__(self, Y: np.ndarray, head: int | None = None) -> np.ndarray:
        """MLP applied to each row of Y (n, d); per-head MLPs need ``head`` (0-based), shared ones ignore it."""
        if self.W1.ndim == 2:
            W1, b1, W2, b2 = self.W1, self.b1, self.W2, self.b2
        else:
            if head is None:
                raise InputError(f"this MLP has one set of weights per head ({self.heads}); say which head")
            W1, b1, W2, b2 = self.W1[head], self.b1[head], self.W2[head], self.b2[head]
        return ACTIVATIONS[self.activation](Y @ W1.T + b1) @ W2.T + b2

    def check_heads(self, H: int, what: str = "mlp") -> None:
        """Raise :class:`InputError` unless the MLP is shared or has exactly ``H`` per-head weight sets."""
        if self.heads is not None and self.heads != H:
            raise InputError(f"{what} has weights for {self.heads} heads, but the attention has {H} heads")

    @classmethod
    def identity(cls, d: int) -> "MLP":
        """The identity map written as an MLP (activation ``identity``, W1 = W2 = I, zero biases)."""
        return cls(np.eye(d), np.zeros(d), np.eye(d), np.zeros(d), activation="identity")

    @classmethod
    def from_arrays(cls, arrays: dict, what: str = "mlp") -> "MLP":
        missing = [k for k in MLP_ARRAYS if k not in arrays]
        unknown = set(arrays) - set(MLP_ARRAYS) - {"activation"}
        if missing or unknown:
            raise InputError(f"{what} must hold arrays W1, b1, W2, b2 and optionally activation; missing "
                             f"{missing or 'none'}, unknown {sorted(unknown) or 'none'}")
        act = arrays.get("activation", "relu")
        act = str(np.asarray(act).reshape(())) if not isinstance(act, str) else act
        return cls(*(arrays[k] for k in MLP_ARRAYS), activation=act)

    @classmethod
    def load(cls, path) -> "MLP":
        """An MLP from an ``.npz`` with arrays W1, b1, W2, b2 and optionally a string array ``activation``."""
        return cls.from_arrays(_load_npz(path, "mlp"), what=f"mlp file {path}")

    def to_meta(self, arrays: dict | None = None, prefix: str = "mlp") -> dict:
        out = {name: _put(getattr(self, name), f"{prefix}.{name}", arrays) for name in MLP_ARRAYS}
        out["activation"] = self.activation
        return out

    @classmethod
    def from_meta(cls, meta: dict, arrays: dict | None = None) -> "MLP":
        return cls(*(_get(meta.get(name), arrays, f"mlp {name}") for name in MLP_ARRAYS),
                   activation=meta.get("activation", "relu"))


@dataclass(frozen=True, eq=False)
class Schedule:
    r"""Weights that change with depth: layer :math:`l` = ``(heads[l], mlps[l])`` acts on
    ``[times[l], times[l+1])``.

    Parameters
    ----------
    times : (L,) array_like
        Layer start times, strictly increasing, ``times[0] = 0``; the last layer acts on [times[-1], inf).
    heads : sequence of MultiHead
        One per layer (same d for all layers).
    mlps : sequence of MLP or None, optional
        One per layer (``None`` entries: no MLP in that layer).
    fn : callable, optional
        Instead of the tables: ``fn(t) -> (MultiHead, MLP | None)`` for every :math:`t \ge 0` (cannot be saved to a
        trajectory file; a run with it cannot be resumed).
    d : int, optional
        Dimension (required with ``fn``).

    Notes
    -----
    With the ``layer`` step, step size 1 and times :math:`0, 1, \dots, L-1`, a simulation is :math:`L`
    applications of the discrete attention map
    :math:`x \leftarrow (x + v^{(l)}(x)) / \lVert x + v^{(l)}(x)\rVert` (claim architectures.schedule).
    """

    times: Any = None
    heads: tuple = ()
    mlps: tuple | None = None
    fn: Callable | None = None
    d: int | None = None

    def __post_init__(self) -> None:
        if self.fn is not None:
            if not callable(self.fn) or self.d is None or self.times is not None or self.heads:
                raise InputError("a callable schedule needs fn callable and d, and no times/heads tables")
            object.__setattr__(self, "d", int(self.d))
            return
        times = require_finite_array(self.times, "schedule times", ndim=1)
        if times.size < 1 or times[0] != 0.0 or np.any(np.diff(times) <= 0):
            raise InputError(f"schedule times must start at 0 and increase strictly, got {times.tolist()[:6]}")
        heads = tuple(self.heads)
        if len(heads) != times.size or not all(isinstance(h, MultiHead) for h in heads):
            raise InputError(f"schedule needs one MultiHead per layer: {times.size} times, {len(heads)} heads")
        mlps = None if self.mlps is None else tuple(self.mlps)
        if mlps is not None and (len(mlps) != times.size or not all(m is None or isinstance(m, MLP) for m in mlps)):
            raise InputError(f"schedule needs one MLP (or None) per layer: {times.size} times, {len(mlps)} mlps")
        for l, (h, m) in enumerate(zip(heads, mlps or (None,) * len(heads))):
            if m is not None:
                m.check_heads(h.H, f"schedule layer {l}: the MLP")
        dims = {h.d for h in heads} | ({m.d for m in mlps if m is not None} if mlps else set())
        if len(dims) != 1:
            raise InputError(f"schedule layers disagree on d: {sorted(dims)}")
        object.__setattr__(self, "times", _frozen(times))
        object.__setattr__(self, "heads", heads)
        object.__setattr__(self, "mlps", mlps)
        object.__setattr__(self, "d", dims.pop())

    @property
    def layers(self) -> int | None:
        return None if self.fn is not None else int(self.times.size)

    def layer_index(self, t: float) -> int:
        """l with times[l] <= t < times[l+1] (0 for t < 0)."""
        return max(0, int(np.searchsorted(self.times, t, side="right")) - 1)

    def at(self, t: float):
        """``(MultiHead, MLP | None)`` acting at time t."""
        if self.fn is not None:
            out = self.fn(t)
            if not (isinstance(out, tuple) and len(out) == 2 and isinstance(out[0], MultiHead)
                    and (out[1] is None or isinstance(out[1], MLP)) and out[0].d == self.d):
                raise InputError(f"schedule fn(t) must return (MultiHead, MLP or None) with d = {self.d}")
            if out[1] is not None:
                out[1].check_heads(out[0].H, f"schedule fn({t:g}): the MLP")
            return out
        l = self.layer_index(t)
        return self.heads[l], (None if self.mlps is None else self.mlps[l])

    @classmethod
    def constant(cls, heads: MultiHead, mlp: MLP | None = None, layers: int = 1, step: float = 1.0) -> "Schedule":
        """The same layer repeated (weight sharing): ``layers`` copies at times 0, step, 2 step, ..."""
        return cls(times=np.arange(layers) * float(step), heads=(heads,) * layers,
                   mlps=None if mlp is None else (mlp,) * layers)

    @classmethod
    def load(cls, path) -> "Schedule":
        """A schedule from an ``.npz``: ``times`` (L,), ``Q, K, V, W`` (L, H, k, d), optionally ``scale``
        (scalar) and MLP arrays ``W1`` (L, m, d), ``b1`` (L, m), ``W2`` (L, d, m), ``b2`` (L, d), ``activation``
        (per-head MLPs: ``W1`` (L, H, m, d), ``b1`` (L, H, m), ``W2`` (L, H, d, m), ``b2`` (L, H, d))."""
        data = _load_npz(path, "schedule")
        what = f"schedule file {path}"
        if "times" not in data:
            raise InputError(f"{what} needs an array 'times' (layer start times)")
        unknown = set(data) - {"times", "scale", "activation", *HEAD_ARRAYS, *MLP_ARRAYS}
        if unknown:
            raise InputError(f"{what}: unknown arrays {sorted(unknown)}")
        times = require_finite_array(data["times"], f"times in {what}", ndim=1)
        L = times.size
        for name in HEAD_ARRAYS:
            if name not in data or np.ndim(data[name]) != 4 or np.shape(data[name])[0] != L:
                raise InputError(f"{what}: {name} must be an (L, H, k, d) array with L = {L} layers")
        heads = tuple(MultiHead.from_arrays({**{k: data[k][l] for k in HEAD_ARRAYS},
                                             **({"scale": data["scale"]} if "scale" in data else {})}, what)
                      for l in range(L))
        mlps = None
        if any(k in data for k in MLP_ARRAYS):
            for name in MLP_ARRAYS:
                if name not in data or np.shape(data[name])[:1] != (L,):
                    raise InputError(f"{what}: MLP array {name} must be given with a leading layer axis of size {L}")
            act = {"activation": data["activation"]} if "activation" in data else {}
            mlps = tuple(MLP.from_arrays({**{k: data[k][l] for k in MLP_ARRAYS}, **act}, what) for l in range(L))
        return cls(times=times, heads=heads, mlps=mlps)

    def to_meta(self, arrays: dict | None = None) -> dict:
        if self.fn is not None:
            return {"callable": repr(self.fn), "d": self.d}
        return {"times": self.times.tolist(),
                "heads": [h.to_meta(arrays, f"schedule.{l}.heads") for l, h in enumerate(self.heads)],
                "mlps": None if self.mlps is None else
                [None if m is None else m.to_meta(arrays, f"schedule.{l}.mlp") for l, m in enumerate(self.mlps)]}

    @classmethod
    def from_meta(cls, meta: dict, arrays: dict | None = None) -> "Schedule":
        if "callable" in meta:
            raise InputError("this trajectory was run with a callable schedule, which cannot be restored from a "
                             "file; rebuild the Model with the same callable")
        mlps = meta.get("mlps")
        return cls(times=meta["times"], heads=tuple(MultiHead.from_meta(h, arrays) for h in meta["heads"]),
                   mlps=None if mlps is None else tuple(None if m is None else MLP.from_meta(m, arrays)
                                                        for m in mlps))


def _load_npz(path, what: str) -> dict:
    from numerics.common.readers import read_npz

    return read_npz(path, f"{what} file")


# -- the field ------------------------------------------------------------------------------------------------
def head_averages(X: np.ndarray, score_map: np.ndarray, beta: float, kind: str, causal: bool = False,
                  block: int | None = None) -> np.ndarray:
    """a_i = sum_j p_ij x_j (``sa``) or (1/n) sum_j e^{s_ij} x_j (``usa``), s_ij = beta <x_i, score_map x_j>.

    Blocked over rows (:func:`numerics.core.field.block_rows`); with ``causal`` the sums run over j <= i only.
    Overflow-safe: logits are shifted by their row maximum (exact for ``sa``; for ``usa`` the shift is
    multiplied back and an overflow raises :class:`InputError`). One system through
    :func:`numerics.core.attention._averages`.
    """
    from numerics.core.attention import _averages

    # a copy: _averages returns its per-thread work buffer
    return _averages(X, beta * (X @ score_map), beta, kind, causal, block).copy()


def block_velocity(X: np.ndarray, heads: MultiHead, beta: float, kind: str = "sa", mlp: MLP | None = None,
                   causal: bool = False, block: int | None = None, project: bool = True,
                   positions: PositionEncoding | None = None) -> np.ndarray:
    r"""The projected velocity :math:`v_i` of the transformer block (module docstring), at any
    :math:`X \in \mathbb{R}^{n \times d}`.

    Per head the query side :math:`\beta c\, (X Q_h^\top) K_h` and the value side :math:`(a V_h^\top) W_h` are computed
    through the ``(k, d)`` blocks (cost :math:`O(nkd)` each, never a :math:`d \times d` matrix), the :math:`n \times n`
    logits blockwise. The projection is the exact orthogonal one,
    :math:`y - (\langle x, y\rangle / \lVert x\rVert^2)\, x` (as in :func:`numerics.core.field.make_field`), so
    Runge-Kutta stage points off the sphere keep :math:`\lVert x_i\rVert` fixed. One system (X[None] ... [0]) through
    the block prepare of :class:`numerics.core.attention.Attention`.
    """
    from numerics.core.attention import Attention

    return Attention.heads(beta, kind, heads, mlp, causal, positions, block=block, project=project)(X[None])[0]


def make_block_field(beta: float, kind: str, heads: MultiHead, mlp: MLP | None = None, causal: bool = False,
                     block: int | None = None,
                     positions: PositionEncoding | None = None) -> Callable[[np.ndarray], np.ndarray]:
    """``field(X) -> (n, d)``: :func:`block_velocity` with the parameters validated once (the pipeline of
    :class:`numerics.core.attention.Attention` built once, one system)."""
    from numerics.core.attention import Attention

    kind = require_choice(kind, "model", MODELS)
    beta = require_real(beta, "beta")
    return Attention.heads(beta, kind, heads, mlp, causal, positions, block=block).single()


class ScheduledField:
    """The time-dependent field of a :class:`Schedule`: ``field(X, t)``, ``time_dependent = True``.

    Per-layer fields are built once and cached by layer index (table schedules). A table schedule is
    *piecewise* (``piecewise = True``): the layer times are breakpoints of the integration loop
    (:meth:`breakpoints`; no step straddles one) and every stage of a step uses :meth:`piece`, the layer of the
    segment the step lies in (:mod:`numerics.core.loop`), so that RK4 keeps its order. A callable schedule
    (``Schedule(fn=...)``) is evaluated at each stage's time.
    """

    time_dependent = True

    @property
    def piecewise(self) -> bool:
        """True for table schedules: autonomous between layer times."""
        return self.schedule.fn is None

    def breakpoints(self, t0: float, t_end: float) -> tuple[float, ...]:
        """The layer times strictly inside (t0, t_end) where the weights change (none for a callable schedule; a
        layer equal to the one before it, as in :meth:`Schedule.constant`, continues the same field)."""
        return self.layer_changes(self.schedule, t0, t_end)

    def piece(self, t: float) -> Callable[[np.ndarray], np.ndarray]:
        """The autonomous field ``piece(X)`` of the layer acting at t (:meth:`at`)."""
        return self.at(t)

    @staticmethod
    def layer_changes(schedule: Schedule, t0: float, t_end: float) -> tuple[float, ...]:
        """The times of ``schedule`` strictly inside (t0, t_end) at which its layer's weights change."""
        if schedule.fn is not None:
            return ()
        heads, mlps = schedule.heads, schedule.mlps or (None,) * len(schedule.heads)
        same = ScheduledField._equal
        return tuple(float(schedule.times[l]) for l in range(1, len(heads)) if t0 < schedule.times[l] < t_end
                     and not (same(heads[l - 1], heads[l]) and same(mlps[l - 1], mlps[l])))

    @staticmethod
    def _equal(a, b) -> bool:
        """Whether two heads (or MLPs, or None) have equal weights; False when unsure (an extra breakpoint only
        costs a shorter step)."""
        if a is b:
            return True
        if a is None or b is None or type(a) is not type(b):
            return False
        try:
            return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in a.__dataclass_fields__)
        except (TypeError, ValueError):
            return False

    def __init__(self, beta: float, kind: str, schedule: Schedule, causal: bool = False, block: int | None = None,
                 positions: PositionEncoding | None = None):
        self.beta, self.kind, self.schedule, self.causal, self.block = beta, kind, schedule, causal, block
        self.positions = positions
        self._cache: dict[int, Callable] = {}

    def at(self, t: float) -> Callable[[np.ndarray], np.ndarray]:
        """The time-independent field of the layer acting at t."""
        if self.schedule.fn is not None:
            heads, mlp = self.schedule.at(t)
            return make_block_field(self.beta, self.kind, heads, mlp, self.causal, self.block, self.positions)
        l = self.schedule.layer_index(t)
        if l not in self._cache:
            heads, mlp = self.schedule.at(t)
            self._cache[l] = make_block_field(self.beta, self.kind, heads, mlp, self.causal, self.block, self.positions)
        return self._cache[l]

    def __call__(self, X: np.ndarray, t: float) -> np.ndarray:
        return self.at(t)(X)


def make_mixed_fourier_field(beta: float, kind: str, heads: MultiHead, fourier_module):
    """d = 2, heads with score maps b_h I and value maps w_h I: sum_h w_h (Fourier field at beta b_h).

    ``usa``: the field of the mixed pair kernel phi'(s) = sum_h w_h e^{beta b_h s}; ``sa``: a weighted sum of
    one-head softmax fields. ``fourier_module`` is :mod:`numerics.circle.fourier` (loaded by the model).
    """
    coeffs = mixed_kernel_coefficients(heads)
    if coeffs is None:
        raise InputError("the fourier backend needs d = 2 heads with Q_h^T K_h and W_h^T V_h multiples of I")
    parts = [(w, fourier_module.make_fourier_field(beta * b, kind)) for b, w in coeffs]

    def field(X: np.ndarray) -> np.ndarray:
        out = np.zeros_like(X)
        for w, f in parts:
            out += w * f(X)
        return out

    return field


def mixed_kernel_coefficients(heads: MultiHead, tol: float = 1e-14) -> list[tuple[float, float]] | None:
    """[(b_h, w_h)] when every score map is b_h I and every value map is w_h I (d = 2), else None."""
    if heads.d != 2:
        return None
    out = []
    eye = np.eye(2)
    for S, M in zip(heads.score_maps, heads.value_maps):
        b, w = S[0, 0], M[0, 0]
        if np.max(np.abs(S - b * eye)) > tol * max(1.0, abs(b)) or np.max(np.abs(M - w * eye)) > tol * max(1.0, abs(w)):
            return None
        out.append((float(b), float(w)))
    return out


def architecture_summary(model) -> str:
    """One line describing a model's heads, MLP, schedule and mask (for CLI tables)."""
    parts = []
    if model.schedule is not None:
        parts.append("callable schedule" if model.schedule.fn is not None
                     else f"schedule of {model.schedule.layers} layers")
    if model.heads is not None:
        parts.append(f"{model.heads.H} heads (k={model.heads.k})")
    if model.mlp is not None:
        per = "" if model.mlp.heads is None else ", one per head"
        parts.append(f"MLP ({model.mlp.activation}, width {model.mlp.width}{per})")
    if model.causal:
        parts.append("causal mask")
    parts += describe_positions(model)
    return ", ".join(parts) or "one head"
