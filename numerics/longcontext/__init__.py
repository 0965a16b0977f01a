"""Long contexts: attention whose inverse temperature grows with the context length n (beta_n = gamma log n).

- :mod:`numerics.longcontext.simplex`: the simplex layer of arXiv 2510.05554 (the O(1) reduction and the
  O(n^2 d) particle layer it reduces), its transition in gamma over decades of n and the finite-size width;
- :mod:`numerics.longcontext.almost_simplex`: random almost-simplex tokens in R^d (the transition at finite n
  and d; O(n d) per query token);
- :mod:`numerics.longcontext.fixed_query`: one query against n iid uniform keys on S^{d-1} (arXiv 2605.08505;
  O(n) per query, exact order statistics for any n, and the Poisson limit);
- :mod:`numerics.longcontext.gaps`: the gap-counting accumulation scale (arXiv 2605.12697) of four score
  families, unifying the (log n)^{1/2}, log n, (log n)^2 and n^{2/(d-1)} laws;
- :mod:`numerics.longcontext.unit_mass`: the one root finder they share (beta with sum_k e^{-beta g_k} = 1).

The symbolic side (critical gamma, limits, the reduction map, the Poisson constant) is :mod:`theory.longcontext`;
``Model(beta_scaling="log", gamma=...)`` lives in :mod:`numerics.core.beta_scaling`.
"""
