"""Configurations whose clusters and energies are known exactly: the yardsticks of the cluster-detection
threshold and of the staircase's reduced energy (claims ``clusters.detection-threshold`` and
``clusters.reduced-energy``).

Random point sets rarely put a pair near the threshold, so an error in the threshold (an arc for the chord, a
missing factor 1/2 in 2 sin(eps/2), cos(eps/2) for cos(eps)) changes the components of few of them. Here
pairs and chains are *planted* at geodesic distances eps (1 -+ delta) in a random rotation, with delta far
above the rounding of the chord, so every such error moves some planted pair to the wrong side; and tight
clusters are collapsed at moderate beta, where the cross terms of the reduced energy are of order one.
"""
from __future__ import annotations

import math

import numpy as np

from numerics.clusters.detection import find_clusters, geodesic_distance
from numerics.clusters.staircase import energy_staircase
from numerics.core.field import interaction_energy

#: relative margin of a planted distance from eps: far above the chord's rounding (|error| <= 1e-16 / eps for
#: eps >= 1e-4, i.e. <= 1e-12 relative) and far below the effect of an arc-for-chord error (eps^2 / 24 >= 4e-8
#: at eps >= 1e-3)
DELTA = 1e-9
THRESHOLDS = (1e-4, 1e-3, 0.05, 0.3, 1.0, 2.0, 3.0)
DIMENSIONS = (2, 3, 5, 12)


def random_rotation(d: int, rng: np.random.Generator) -> np.ndarray:
    """A Haar-random orthogonal d x d matrix (QR of a Gaussian matrix with the signs of R's diagonal fixed)."""
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def great_circle(angles, d: int, rotation: np.ndarray) -> np.ndarray:
    """Points at the given angles along the great circle through e_1 and e_2, rotated: (len(angles), d)."""
    a = np.asarray(angles, float)
    P = np.zeros((a.size, d))
    P[:, 0], P[:, 1] = np.cos(a), np.sin(a)
    return P @ rotation.T


def threshold_cases(seed: int = 0) -> list[dict]:
    """Chains on a great circle with steps eps (1 - delta) (one cluster) and the same chain with one step
    eps (1 + delta) (two clusters), for every threshold, dimension and edge method; diameters are known too."""
    rng = np.random.default_rng(seed)
    rows = []
    for d in DIMENSIONS:
        for eps in THRESHOLDS:
            R = random_rotation(d, rng)
            inside, outside = eps * (1 - DELTA), eps * (1 + DELTA)
            links = max(1, min(4, int(math.pi / eps) - 1))  # the chain stays shorter than pi
            joined = np.cumsum([0.0] + [inside] * links)
            split = np.cumsum([0.0] + [inside] * (links - 1) + [outside]) if links > 1 else np.array([0.0, outside])
            for method in ("kdtree", "gram"):
                one = find_clusters(great_circle(joined, d, R), eps, method=method)
                two = find_clusters(great_circle(split, d, R), eps, method=method)
                expected_diameter = float(joined[-1])
                rows.append({"d": d, "eps": eps, "method": method, "points": int(joined.size),
                             "joined_count": one.count, "split_count": two.count,
                             "diameter_error": abs(float(one.diameters[0]) - expected_diameter) / expected_diameter})
    return rows


def threshold_summary(rows: list[dict]) -> dict:
    wrong = [r for r in rows if r["joined_count"] != 1 or r["split_count"] != 2]
    return {"cases": len(rows), "wrong_components": len(wrong), "first_wrong": wrong[0] if wrong else None,
            "max_diameter_rel_error": max(r["diameter_error"] for r in rows)}


def geodesic_reference_error(seed: int = 1, pairs: int = 200) -> float:
    """Largest relative error of :func:`geodesic_distance` against planted angles in (1e-6, pi - 1e-3)."""
    rng = np.random.default_rng(seed)
    worst = 0.0
    for d in DIMENSIONS:
        angles = np.exp(rng.uniform(math.log(1e-6), math.log(math.pi - 1e-3), pairs))
        R = random_rotation(d, rng)
        x = great_circle(np.zeros(pairs), d, R)
        y = great_circle(angles, d, R)
        worst = max(worst, float(np.max(np.abs(geodesic_distance(x, y) - angles) / angles)))
    return worst


def tight_clusters(masses, centres: np.ndarray, spread: float, rng: np.random.Generator) -> np.ndarray:
    """Particles in groups of sizes ``masses`` within ``spread`` radians of the unit ``centres``."""
    X = np.concatenate([np.repeat(c[None, :], m, axis=0) for m, c in zip(masses, centres)])
    X = X + spread * rng.standard_normal(X.shape) / math.sqrt(X.shape[1])
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def reduced_energy_cases(seed: int = 2) -> list[dict]:
    """Frames of k tight clusters (spread 1e-9) held still over a log time axis: the staircase finds one
    plateau whose ``reduced_energy`` must equal the full O(n^2) normalised energy (same configuration,
    :func:`numerics.core.field.interaction_energy`, ``gkpr``) and whose ``predicted`` must be sum_c (m_c/n)^2.
    Moderate beta, so that the cross terms m_a m_b e^{beta(<y_a, y_b> - 1)} / n^2 are of order one."""
    rng = np.random.default_rng(seed)
    rows = []
    for d, masses, beta in ((2, (3, 5), 0.7), (3, (2, 3, 6), 1.5), (4, (4, 1, 2, 5), 3.0), (3, (7,), 2.0)):
        k = len(masses)
        centres = rng.standard_normal((k, d))
        centres /= np.linalg.norm(centres, axis=1, keepdims=True)
        X = tight_clusters(masses, centres, 1e-9, rng)
        times = np.geomspace(0.1, 100.0, 12)
        frames = np.repeat(X[None], times.size, axis=0)
        plateaus = energy_staircase(times, frames, beta, eps=1e-3, min_ratio=3.0)
        n = X.shape[0]
        full = interaction_energy(X, beta, normalization="gkpr")
        shares = np.array(sorted(masses, reverse=True)) / n
        p = plateaus[0] if plateaus else None
        rows.append({"d": d, "masses": list(masses), "beta": beta, "plateaus": len(plateaus),
                     "reduced_energy": None if p is None else p.reduced_energy, "full_energy": full,
                     "predicted": None if p is None else p.predicted, "sum_squares": float(np.sum(shares**2)),
                     "cross_share": float(full - np.sum(shares**2)),
                     "sizes_ok": p is not None and list(p.sizes) == sorted(map(float, masses), reverse=True)})
    return rows


def reduced_energy_error(rows: list[dict]) -> float:
    """Largest relative error of the reduced energy and of the predicted height (inf when a plateau is missing
    or its cluster sizes are wrong)."""
    worst = 0.0
    for r in rows:
        if r["plateaus"] != 1 or not r["sizes_ok"]:
            return math.inf
        worst = max(worst, abs(r["reduced_energy"] - r["full_energy"]) / r["full_energy"],
                    abs(r["predicted"] - r["sum_squares"]) / r["sum_squares"])
    return worst
