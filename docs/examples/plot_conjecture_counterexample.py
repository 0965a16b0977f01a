r"""
A counterexample found and replayed by the conjecture lab
=========================================================

**Statement tested.** ":math:`E_\beta` on :math:`\mathbb{S}^{1}` has no spurious local maxima" (a strict local maximum
that is not the synchronised state) for :math:`\beta \in [-2, -0.7]`. PRY (arXiv 2507.22857) prove synchronisation on
:math:`\mathbb{S}^{1}` for :math:`\beta \ge 0` and show that it fails for :math:`\beta < -2/3`; CRMB (arXiv
2405.18273) study which interaction kernels are benign.

**Ours.** :func:`numerics.conjectures.catalogue.landscape_conjecture` draws starting configurations and :math:`\beta`
with Hypothesis, ascends :math:`E_\beta` to a critical point (L-BFGS, then Riemannian Newton), and classifies it with
:func:`attnflow.critical_point_report`. A strict local maximum with more than one cluster is a counterexample; it is
shrunk to a minimal example, saved as JSON and replayed with :func:`attnflow.replay`.

**What matches, what does not.** The search finds three equal clusters at the vertices of a triangle, stable for
:math:`\beta < -2/3`, PRY's spurious maximum (see the Hessian example of this gallery). The search is bounded (30
examples, seed 0): "no counterexample found" on another range would be evidence, never a proof.
"""

import json
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import attnflow as af
from numerics.conjectures.catalogue import landscape_conjecture

conjecture = landscape_conjecture(-2.0, -0.7, max_examples=30)
with tempfile.TemporaryDirectory() as tmp:
    path = Path(tmp) / "counterexample.json"
    result = conjecture.run(seed=0, save=str(path))
    print(f"status: {result.status}, examples tried: {result.examples_tried}")
    saved = json.loads(path.read_text())
    replayed = af.replay(path, {conjecture.id: conjecture})
print("replayed:", replayed.reproduced, "-", replayed.verdict.detail)

beta = float(result.counterexample["inputs"]["beta"])
X = np.asarray(replayed.outcome["X"], dtype=float)
report = af.critical_point_report(X, beta, model="usa")
print(f"beta = {beta:g}: {report.classification}; eigenvalues {np.round(np.sort(report.eigenvalues), 6)}")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4.2))
t = np.linspace(0, 2 * np.pi, 200)
ax1.plot(np.cos(t), np.sin(t), color="0.8")
ax1.plot(X[:, 0], X[:, 1], "ro", markersize=10)
ax1.set_aspect("equal")
ax1.set_axis_off()
ax1.set_title(f"counterexample (replayed): beta = {beta:g}\n{report.classification}", fontsize=10)
ev = np.sort(report.eigenvalues)
ax2.bar(range(len(ev)), ev, color=["r" if abs(e) > report.zero_tolerance else "0.6" for e in ev])
ax2.axhline(0, color="k", linewidth=0.8)
ax2.set_xlabel("index")
ax2.set_ylabel("Hessian eigenvalue")
ax2.set_title("all non-rotational eigenvalues < 0 (grey: rotation mode)", fontsize=10)
fig.tight_layout()
