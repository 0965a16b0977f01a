r"""
Covariance ellipses for softmax, L2 and Sinkhorn attention: blow-up and low-rank collapse (CACP)
================================================================================================

**Paper.** Castin, Ablin, Carrillo, Peyre, *A unified perspective on the dynamics of deep transformers*, arXiv
2501.18322 (CACP): in :math:`\mathbb{R}^d` without normalisation the attention dynamics keep a Gaussian
:math:`N(\alpha, \Sigma)` Gaussian, for softmax, L2 and Sinkhorn attention; with :math:`V = I` softmax attention has
:math:`\Sigma(t) = (\Sigma_0^{-1} - 2t S_A)^{-1}` (:math:`S_A` the symmetric part of :math:`A = K^\top Q`), which
blows up at :math:`t^* = 1/\big(2 \lambda_{\max}(\Sigma_0^{1/2} S_A \Sigma_0^{1/2})\big)` when :math:`S_A` has a
positive eigenvalue and collapses to a low-rank limit when :math:`S_A \preceq 0` is singular (their figures of
covariance ellipses over time).

**Ours.** The moment ODEs derived symbolically (:mod:`theory.gaussian`), integrated by
:func:`attnflow.solve_moment_ode`; ellipses (one standard deviation, centred at 0 so that a drifting mean
does not hide them) at several times for the three attentions
from the same start, and the softmax blow-up time measured by the ODE beside CACP's closed form.

**What matches, what does not.** The softmax blow-up time of the ODE agrees with the closed form (printed below); with
:math:`A = -\operatorname{diag}(1, 0)` the covariance collapses onto a line (the smallest eigenvalue tends to 0 while
the other is constant), as CACP describe. CACP's figures are qualitative; the matrices here are ours. Sinkhorn's mean
moves as :math:`e^{tV} \alpha_0` (no attention term in the mean), also checked by the claim
``gaussian.sinkhorn-mean``.
"""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Ellipse

import attnflow as af

mean0 = np.array([0.5, -0.3])
cov0 = np.array([[1.0, 0.3], [0.3, 0.6]])
A = np.array([[1.0, 0.0], [0.0, 0.5]])
V = np.eye(2)


def ellipse(ax, mean, cov, color, alpha):
    w, U = np.linalg.eigh(cov)
    angle = np.degrees(np.arctan2(U[1, -1], U[0, -1]))
    ax.add_patch(Ellipse(mean, 2 * np.sqrt(w[-1]), 2 * np.sqrt(w[0]), angle=angle, fill=False, color=color,
                         alpha=alpha, linewidth=1.5))


cases = [
    ("softmax", dict(A=A, V=V), 0.45),
    ("l2", dict(Q=np.eye(2), K=0.7 * np.eye(2), V=V), 0.45),
    ("sinkhorn", dict(A=A, V=V), 0.45),
    ("softmax, A = -diag(1, 0)", dict(A=-np.diag([1.0, 0.0]), V=V), 20.0),
]
fig, axes = plt.subplots(1, 4, figsize=(15, 4))
for ax, (name, mats, t_end) in zip(axes, cases):
    model = af.gaussian_attention(name.split(",")[0], 2, **mats)
    save = np.linspace(0.0, t_end, 6)
    sol = af.solve_moment_ode(model, mean0, cov0, t_end, save_times=save)
    for k, S in enumerate(sol.covs):  # centred at 0: the mean can drift far (printed separately)
        ellipse(ax, np.zeros(2), S, plt.cm.viridis(k / max(len(sol.times) - 1, 1)), 0.9)
    w = np.linalg.eigvalsh(sol.covs[-1])
    ax.set_title(f"{name}\n{sol.status} at t = {sol.times[-1]:.3g}; eig(Sigma) = {w[0]:.2g}, {w[1]:.2g}",
                 fontsize=9)
    ax.set_aspect("equal")
    ax.autoscale_view()
    print(f"{name:26s} status {sol.status:10s} t = {sol.times[-1]:.4g}  eigenvalues of Sigma {w}, "
          f"mean {sol.means[-1]}")

t_closed = af.softmax_blowup_time(cov0, A)
sol = af.solve_moment_ode(af.gaussian_attention("softmax", 2, A=A, V=V), mean0, cov0, 1.0)
print(f"softmax blow-up: ODE {sol.blowup_time:.6f}, CACP closed form {t_closed:.6f}")
fig.suptitle(f"CACP arXiv 2501.18322: softmax blow-up at t = {sol.blowup_time:.4f} (closed form "
             f"{t_closed:.4f}); colour = time")
fig.tight_layout()
