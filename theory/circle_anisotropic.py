r"""The two-cluster (bipodal) state on :math:`\mathbb{S}^1` with :math:`Q = V = I`,
:math:`K = \operatorname{diag}(a, b)`: its Jacobian, derived symbolically.

:math:`m` tokens sit at angle :math:`\phi` and :math:`m` at :math:`\phi + \pi`. In angles the field is
:math:`d\theta_i/dt = \sum_j w_{ij} \sin(\theta_j - \theta_i)` with
:math:`w_{ij} = e^{\beta \langle x_i, K x_j\rangle} / Z_i` (``sa``) or :math:`/ n` (``usa``). At the bipodal state
every sine vanishes, so the Jacobian is :math:`J_{ik} = w_{ik} \cos(\theta_k - \theta_i)` for :math:`k \ne i` and
:math:`J_{ii} = -\sum_{j \ne i} w_{ij} \cos(\theta_j - \theta_i)`: the derivatives of the weights multiply
:math:`\sin(\theta_j - \theta_i) = 0`. The logits are :math:`\pm\beta\gamma` with
:math:`\gamma(\phi) = a \cos^2\phi + b \sin^2\phi` (same cluster :math:`+`, opposite :math:`-`). The spectrum
(:math:`\beta = 1`) is

- ``sa``: :math:`e^{-\gamma}/\cosh(\gamma)` (the two clusters rotating against each other, unstable), 0 (a rigid
  rotation), :math:`-\tanh(\gamma)` (:math:`2m - 2` times, the tokens of one cluster spreading);
- ``usa``: :math:`e^{-\gamma}`, 0, :math:`-\sinh(\gamma)` (:math:`2m - 2` times).

:func:`bipodal_spectrum` builds the Jacobian with SymPy for a given :math:`m` (:math:`\gamma` a symbol) and
returns its eigenvalues with multiplicities, simplified; the tests compare them with the closed forms above.
Menon and Murray's web paper "Metastability in transformer attention" states :math:`e^{-\gamma}` for the unstable
eigenvalue with the softmax (:math:`1/Z_i`) written in its model: that is the ``usa`` value; for ``sa`` it is
:math:`e^{-\gamma}/\cosh\gamma`.
"""
from __future__ import annotations

import sympy as sp

gamma = sp.Symbol("gamma", positive=True)


def bipodal_jacobian(m: int, kind: str = "sa", beta: sp.Expr = sp.Integer(1)) -> sp.Matrix:
    r"""The :math:`(2m, 2m)` Jacobian of the angle field at :math:`m` tokens on each of two antipodal points
    (:math:`\gamma` symbolic).
    """
    if kind not in ("sa", "usa"):
        raise ValueError(f"kind must be sa or usa, got {kind!r}")
    n = 2 * m
    side = [0] * m + [1] * m
    # the logit beta <x_i, K x_j> is +beta gamma within a cluster and -beta gamma across
    W = sp.Matrix(n, n, lambda i, j: sp.exp(beta * gamma * (1 if side[i] == side[j] else -1)))
    norm = [sum(W.row(i)) if kind == "sa" else sp.Integer(n) for i in range(n)]
    cos = sp.Matrix(n, n, lambda i, j: 1 if side[i] == side[j] else -1)
    J = sp.zeros(n, n)
    for i in range(n):
        for k in range(n):
            if k != i:
                J[i, k] = W[i, k] * cos[i, k] / norm[i]
        J[i, i] = -sum(W[i, j] * cos[i, j] for j in range(n) if j != i) / norm[i]
    return J


def bipodal_spectrum(m: int, kind: str = "sa") -> dict:
    r"""{eigenvalue: multiplicity} of :func:`bipodal_jacobian` (:math:`\beta = 1`), each eigenvalue simplified."""
    out: dict = {}
    for ev, mult in bipodal_jacobian(m, kind).eigenvals().items():
        key = sp.simplify(ev.rewrite(sp.exp))
        out[key] = out.get(key, 0) + mult
    return out


def closed_form(kind: str = "sa") -> dict:
    r"""The unstable, neutral and stable eigenvalues of the module docstring (:math:`\beta = 1`)."""
    if kind == "sa":
        return {"unstable": sp.exp(-gamma) / sp.cosh(gamma), "neutral": sp.Integer(0), "stable": -sp.tanh(gamma)}
    return {"unstable": sp.exp(-gamma), "neutral": sp.Integer(0), "stable": -sp.sinh(gamma)}


def matches_closed_form(m: int, kind: str = "sa") -> bool:
    """True when the symbolic spectrum is {unstable: 1, 0: 1, stable: :math:`2m - 2`} (each difference simplifies
    to 0).
    """
    spec = bipodal_spectrum(m, kind)
    want = closed_form(kind)
    counts = {"unstable": 1, "neutral": 1, "stable": 2 * m - 2}
    for name, value in want.items():
        hits = [mult for ev, mult in spec.items() if sp.simplify((ev - value).rewrite(sp.exp)) == 0]
        if hits != [counts[name]]:
            return False
    return sum(spec.values()) == 2 * m
