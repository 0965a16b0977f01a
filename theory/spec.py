"""The frozen, validated description of a model that every derivation starts from."""
from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from . import symbols as sym
from .kernels import PairKernel

MODELS = ("sa", "usa")


def _as_matrix(value, d: int, name: str) -> sp.ImmutableMatrix:
    if value is None:
        return sp.ImmutableMatrix(sp.eye(d))
    try:
        mat = sp.ImmutableMatrix(value)
    except Exception as exc:  # sympy raises several types for ragged input
        raise ValueError(f"{name} must be a {d} x {d} matrix, got {value!r}") from exc
    if mat.shape != (d, d):
        raise ValueError(f"{name} must be {d} x {d}, got shape {mat.shape}")
    for entry in mat:
        if entry.free_symbols - {sym.beta}:
            raise ValueError(f"{name} may contain numbers only (and beta), got entry {entry}")
        if entry.is_real is False or entry.has(sp.zoo, sp.oo, -sp.oo, sp.nan):
            raise ValueError(f"{name} entries must be finite real numbers, got {entry}")
    return mat


@dataclass(frozen=True)
class ModelSpec:
    r"""A self-attention model on the sphere :math:`\mathbb{S}^{d-1}` (docs/conventions.md).

    Parameters
    ----------
    model : {"sa", "usa"}
        ``sa``: softmax self-attention with layer normalisation,
        :math:`dx_i/dt = P_{x_i}\big(\sum_j e^{\beta\langle Qx_i, Kx_j\rangle} V x_j
        / \sum_k e^{\beta\langle Qx_i, Kx_k\rangle}\big)`.
        ``usa``: unnormalised, :math:`dx_i/dt = P_{x_i}\big(\frac{1}{n} \sum_j e^{\beta\langle Qx_i, Kx_j\rangle}
        V x_j\big)`.
    d : int
        Ambient dimension, :math:`d \ge 2` (particles live on :math:`\mathbb{S}^{d-1}` in :math:`\mathbb{R}^d`).
    beta : sympy expression or number
        Inverse temperature; a real number or the symbol :data:`theory.symbols.beta` (default).
    Q, K, V : d x d matrices, optional
        Query, key and value matrices (default identity). Stored as ``sympy.ImmutableMatrix``.

    Source: Geshkovski, Letrouit, Polyanskiy, Rigollet, arXiv 2312.10794 (GLPR), models SA and USA.
    """

    model: str
    d: int
    beta: sp.Expr = sym.beta
    Q: sp.ImmutableMatrix | None = field(default=None)
    K: sp.ImmutableMatrix | None = field(default=None)
    V: sp.ImmutableMatrix | None = field(default=None)
    #: a user pair kernel :math:`\phi(s)`; ``None`` means the attention kernel
    #: :math:`\phi_\beta(s) = (e^{\beta s} - 1)/\beta`
    kernel: PairKernel | None = field(default=None, hash=False)

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}, got {self.model!r}")
        if isinstance(self.d, bool) or not isinstance(self.d, int) or self.d < 2:
            raise ValueError(f"d must be an integer >= 2, got {self.d!r}")
        beta = sp.sympify(self.beta) if not isinstance(self.beta, sp.Basic) else self.beta
        if beta.free_symbols - {sym.beta}:
            raise ValueError(f"beta must be a real number or the symbol beta, got {self.beta!r}")
        if beta.is_number and (not beta.is_real or not beta.is_finite):
            raise ValueError(f"beta must be finite and real, got {self.beta!r}")
        object.__setattr__(self, "beta", beta)
        for name in ("Q", "K", "V"):
            object.__setattr__(self, name, _as_matrix(getattr(self, name), self.d, name))
        if self.kernel is not None:
            if not isinstance(self.kernel, PairKernel):
                raise ValueError(f"kernel must be a theory.kernels.PairKernel, got {type(self.kernel).__name__}")
            if not self.is_identity:
                raise ValueError("a user kernel acts on <x_i, x_j>: it cannot be combined with Q, K, V")
            unset = [str(p) for p, v in self.kernel.params.items() if not v.is_number]
            if unset:
                raise ValueError(f"kernel parameters need numeric values: {', '.join(unset)}")

    @property
    def A(self) -> sp.ImmutableMatrix:
        r""":math:`A = K^T Q`, so that :math:`\langle Q x, K y\rangle = y^T A x`."""
        return sp.ImmutableMatrix(self.K.T * self.Q)

    @property
    def is_identity(self) -> bool:
        r"""True when :math:`Q = K = V = I` (the case in which ``usa`` is a gradient flow of :math:`E_\beta`)."""
        eye = sp.eye(self.d)
        return self.Q == eye and self.K == eye and self.V == eye

    def energy_kernel(self) -> PairKernel:
        r"""The pair kernel :math:`\phi` of the energy
        :math:`E = \frac{1}{2n^2} \sum_{i,j} \phi(\langle x_i, x_j\rangle)`: the user's, or :math:`\phi_\beta`."""
        from .kernels import exponential_kernel

        return self.kernel if self.kernel is not None else exponential_kernel()

    def pair_kernel(self) -> sp.Expr:
        r"""The attention weight as a function of :math:`s = \langle Qx, Ky\rangle`: :math:`e^{\beta s}`."""
        return sp.exp(self.beta * sym.s)
