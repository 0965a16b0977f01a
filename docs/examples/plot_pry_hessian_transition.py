r"""
Hessian spectrum against β: the -2/3 transition on the circle (PRY)
===================================================================

**Paper.** Polyanskiy, Rigollet, Yao, *Synchronization on circles and spheres with nonlinear interactions*, arXiv
2507.22857 (PRY): on :math:`\mathbb{S}^{1}`, for :math:`\beta \ge 0` every configuration other than the synchronised
one is unstable, but for :math:`\beta < -2/3` three equal clusters at the vertices of an equilateral triangle become a
strict local maximum of :math:`E_\beta`, a spurious stable state (their result on the threshold -2/3).

**Ours.** Three particles at the vertices of an equilateral triangle (:func:`attnflow.circle_clusters`), the spectrum
of the Riemannian Hessian of :math:`E_\beta` (rotation mode removed) for :math:`\beta` from -2 to 1
(:func:`attnflow.critical_point_report`; the closed-form branches are in
:func:`theory.structured.circle_cluster_spectrum` and ``attnflow critical --closed-form``). ``usa`` is gradient ascent
of :math:`E_\beta`, so a configuration is stable when every non-rotational eigenvalue is negative.

**What matches, what does not.** The non-rotational eigenvalue changes sign at :math:`\beta^* = -2/3` (the crossing
printed below: within about :math:`10^{-8}` of -2/3 here, where eigenvalues below the zero threshold are left out; the
claim ``critical.circle-polygons`` pins it to :math:`10^{-9}`), PRY's threshold. PRY state the threshold, not a
spectrum figure, so there are no published eigenvalues to compare.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy.optimize import brentq

import attnflow as af

X = af.circle_clusters(2, k=3, n=3)
betas = np.linspace(-2.0, 1.0, 121)
spectra = np.array([np.sort(af.critical_point_report(X, float(b), model="usa").eigenvalues) for b in betas])


def top_eigenvalue(beta):
    # the largest eigenvalue after removing the rotation zero mode(s): drop the symmetry_zero_modes eigenvalues of
    # smallest magnitude (a tolerance would also drop the crossing mode itself near beta*, where it is ~0)
    r = af.critical_point_report(X, beta, model="usa")
    ev = np.asarray(r.eigenvalues)
    kept = ev[np.argsort(np.abs(ev))[r.symmetry_zero_modes:]]
    return kept.max()


beta_star = brentq(top_eigenvalue, -1.5, -0.1, xtol=1e-13)
print(f"transition: beta* = {beta_star:.12f} (PRY: -2/3 = {-2 / 3:.12f})")

fig, ax = plt.subplots(figsize=(7, 4.2))
for k in range(spectra.shape[1]):
    ax.plot(betas, spectra[:, k], "k.", markersize=3)
ax.axhline(0, color="0.6", linewidth=0.8)
ax.axvline(-2 / 3, color="r", linestyle="--", label="beta = -2/3 (PRY)")
ax.plot([beta_star], [0], "ro", label=f"measured crossing {beta_star:.6f}")
ax.set_xlabel("beta")
ax.set_ylabel("Riemannian Hessian eigenvalues of E_beta")
ax.set_title("three equal clusters on S^1: stable (all < 0) for beta < -2/3")
ax.legend(fontsize=8)
fig.tight_layout()
