"""Self-attention in R^d without normalisation (GLPR arXiv 2305.05465; CACP arXiv 2501.18322).

model (RdModel), dynamics (rescaled integration z = e^{-tV} x), geometry (leaders, Boolean limit, hyperplanes,
codimension), stability (radius and Wasserstein bounds, exact OT), conjectures (what is proved and what is not),
plots, claims and the ``rd`` / ``rd-stability`` commands. Guide: ``docs/guide/rd.md``.
"""
