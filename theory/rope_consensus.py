r"""The consensus under rotary positions (RoPE) with :math:`V = I`: its transverse Jacobian, derived with SymPy.

Tokens :math:`x_i` with position labels :math:`p_i`, logits
:math:`s_{ij} = \beta \langle R(p_i) Q x_i, R(p_j) K x_j\rangle = \beta \langle Q x_i, R(p_j - p_i) K x_j\rangle`
(:math:`R` block diagonal, the coordinate pairs :math:`(2m, 2m + 1)` rotated by the angle :math:`p\,\theta_m`, an
odd last coordinate fixed), values unrotated (:math:`V = I`). At a consensus :math:`x_i = x` the field vanishes:
every :math:`V x_j = x` is normal to the sphere at :math:`x`. Perturb :math:`x_i = x + \varepsilon_i`,
:math:`\varepsilon_i` orthogonal to :math:`x`. With :math:`y_i = \sum_j w_{ij} x_j` and
:math:`W_i = \sum_j w_{ij}`,

.. math::

    v_i = y_i - \langle x_i, y_i\rangle x_i = \sum_j w_{ij}^0 \varepsilon_j - W_i^0 \varepsilon_i
    + O(\varepsilon^2),

because the first-order change of the weights multiplies :math:`x` and is removed with the normal part of
:math:`y_i` (the terms in :math:`x` cancel against :math:`\langle x_i, y_i\rangle x_i`). So the transverse
Jacobian is :math:`(A - \operatorname{diag}(A \mathbf{1})) \otimes I_{d-1}`, with :math:`A_{ij} = w_{ij}^0` the
weights of the consensus: :math:`\operatorname{softmax}_j(s_{ij}^0)` for ``sa`` (rows sum to 1),
:math:`e^{s_{ij}^0}/n` for ``usa``. Only the logits of the consensus enter:

.. math::

    s_{ij}^0 = \beta \sum_m \big[\alpha_m \cos((p_j - p_i) \theta_m) + \omega_m \sin((p_j - p_i) \theta_m)\big]
    + \beta c_0,

with, in rotary plane :math:`m`, :math:`q = (Qx)_m`, :math:`k = (Kx)_m`, :math:`\alpha_m = q \cdot k` and
:math:`\omega_m = q_1 k_0 - q_0 k_1`, and :math:`c_0` the product of the unrotated coordinates. For
:math:`Q = K = I`, :math:`\alpha_m = \lvert x_m\rvert^2` (the consensus point's energy in plane :math:`m`),
:math:`\omega_m = 0` and :math:`c_0 = x_{\text{last}}^2`: the spectrum depends on :math:`x` only through how its
energy splits across the rotary planes.

:func:`consensus_jacobian_identity` checks the formula symbolically for three tokens in :math:`d = 3` (one rotary
plane of frequency :math:`\theta` and one fixed coordinate; :math:`Q = K = I`; the consensus at polar angle
:math:`\psi`, which sets the split :math:`\sin^2\psi : \cos^2\psi`) by differentiating the field itself.
"""
from __future__ import annotations

import sympy as sp

beta, theta, psi = sp.symbols("beta theta psi", real=True)


def _rotation(angle: sp.Expr) -> sp.Matrix:
    """R on R^3: the plane (0, 1) rotated by ``angle``, coordinate 2 fixed."""
    c, s = sp.cos(angle), sp.sin(angle)
    return sp.Matrix([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def field(X: list[sp.Matrix], labels, kind: str = "sa") -> list[sp.Matrix]:
    r"""The RoPE field (:math:`Q = K = V = I`, :math:`d = 3`) of the column vectors ``X``:
    :math:`v_i = y_i - \langle x_i, y_i\rangle x_i`.
    """
    if kind not in ("sa", "usa"):
        raise ValueError(f"kind must be sa or usa, got {kind!r}")
    n = len(X)
    out = []
    for i in range(n):
        # <R(p_i) x_i, R(p_j) x_j> = <x_i, R(p_j - p_i) x_j>
        w = [sp.exp(beta * (X[i].T * _rotation((labels[j] - labels[i]) * theta) * X[j])[0, 0]) for j in range(n)]
        norm = sum(w) if kind == "sa" else sp.Integer(n)
        y = sum((w[j] * X[j] for j in range(n)), sp.zeros(3, 1)) / norm
        out.append(y - (X[i].T * y)[0, 0] * X[i])
    return out


def consensus_weights(labels, kind: str = "sa") -> sp.Matrix:
    r""":math:`A_{ij}` of the module docstring at the consensus :math:`x = (\sin\psi, 0, \cos\psi)`."""
    n = len(labels)
    s = sp.Matrix(n, n, lambda i, j: beta * (sp.sin(psi) ** 2 * sp.cos((labels[j] - labels[i]) * theta)
                                             + sp.cos(psi) ** 2))
    E = s.applyfunc(sp.exp)
    if kind == "sa":
        return sp.Matrix(n, n, lambda i, j: E[i, j] / sum(E.row(i)))
    return E / n


def consensus_jacobian_identity(labels=(0, 1, 3), kind: str = "sa") -> bool:
    r"""True when the tangent Jacobian of :func:`field` at the consensus equals
    :math:`(A - \operatorname{diag}(A \mathbf{1})) \otimes I_2` exactly (every entry of the difference simplifies
    to 0).
    """
    n = len(labels)
    syms = sp.symbols(f"z0:{3 * n}", real=True)
    X = [sp.Matrix(syms[3 * i:3 * i + 3]) for i in range(n)]
    V = field(X, labels, kind)
    x = sp.Matrix([sp.sin(psi), 0, sp.cos(psi)])
    # an orthonormal basis of the tangent plane at x
    T = [sp.Matrix([0, 1, 0]), sp.Matrix([sp.cos(psi), 0, -sp.sin(psi)])]
    point = {syms[3 * i + c]: x[c] for i in range(n) for c in range(3)}
    A = consensus_weights(labels, kind)
    L = A - sp.diag(*[sum(A.row(i)) for i in range(n)])
    for i in range(n):
        for k in range(n):
            for a, ta in enumerate(T):
                # derivative of v_i along the tangent direction T[a] of token k, read in the basis T
                dv = sum((sp.diff(V[i], syms[3 * k + c]) * ta[c] for c in range(3)), sp.zeros(3, 1)).subs(point)
                for b, tb in enumerate(T):
                    want = L[i, k] if a == b else 0
                    if sp.simplify((tb.T * dv)[0, 0] - want) != 0:
                        return False
    return True
