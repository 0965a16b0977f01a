r"""Clusters over a trajectory: identities across time, the merge tree, merge events and their times.

At every saved frame the eps-clusters are computed (:func:`numerics.clusters.find_clusters`). Identities are
carried across frames with a union-find over particles: two particles belong to the same *tracked cluster*
once they have been in one eps-cluster at some frame. The tracked partition therefore only coarsens, and its
history is a tree:

- nodes: tracked clusters, with ``birth`` (first frame time), ``death`` (time it merged into its parent, or
  ``inf`` if alive at the end), ``members`` (sorted particle indices), ``size`` and ``centre`` (normalised mean
  of the members at birth); the clusters of the first frame are the leaves, numbered like their labels;
- edges child -> parent, with attribute ``time``.

Self-attention dynamics are expected to merge monotonically (GLPR arXiv 2312.10794, GKPR arXiv 2410.06833). When
a tracked cluster is not one eps-cluster at a later frame (it split again), this is reported as a
:class:`Violation` with its first and last frame times; the tree is not edited to hide it.

Merge times: a merge is first seen at a frame :math:`t_k`; the true time lies in the bracket
:math:`(t_{k-1}, t_k]`. With a ``reintegrate`` callable, :func:`refine_frames` re-integrates each bracket from the
earlier frame at a finer output resolution (``substeps`` equal sub-intervals), keeps the sub-frames, and repeats
on the sub-brackets that still contain a merge until every bracket width is :math:`\le`
``time_atol + time_rtol * t``. Each merge time is then known to that tolerance (the bracket is reported with the
event). Simultaneous merges in a coarse frame split into their pairwise order when they happen at times farther
apart than the tolerance.

Verified by: clusters.pairwise-merging, clusters.two-cluster-merge-time.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from numerics.clusters.detection import clusters_from_labels, component_labels, eps_graph_edges
from numerics.common.errors import InputError, require_finite_array, require_int, require_real
from numerics.core.field import make_field
from numerics.core.model import Model
from numerics.core.integrators import integrate_adaptive

#: re-integrates from a state at save_times[0] and returns the states at every save time, shape (m, n, d)
Reintegrator = Callable[[np.ndarray, np.ndarray], np.ndarray]

#: tolerances of the adaptive re-integration used to refine merge times (Dormand-Prince 5(4))
REFINE_RTOL, REFINE_ATOL = 1e-10, 1e-12


@dataclass(frozen=True)
class MergeEvent:
    """Tracked clusters ``clusters`` (sizes ``sizes``) became one eps-cluster ``new`` at ``time``.

    ``bracket`` = (last frame time at which they were apart, first frame time at which they were joined);
    ``time`` is the right end of the bracket, so the true merge time is within ``bracket[1] - bracket[0]``.
    """

    time: float
    bracket: tuple[float, float]
    clusters: tuple[int, ...]
    sizes: tuple[float, ...]
    new: int

    def to_dict(self) -> dict:
        return {"time": self.time, "bracket": list(self.bracket), "clusters": list(self.clusters),
                "sizes": list(self.sizes), "new": self.new}


@dataclass(frozen=True)
class Violation:
    """Tracked cluster ``cluster`` was split into eps-clusters of sizes ``pieces`` from ``start`` to ``end``
    (frame times; ``end`` is the last frame at which it was seen split)."""

    cluster: int
    start: float
    end: float
    pieces: tuple[float, ...]

    def to_dict(self) -> dict:
        return {"cluster": self.cluster, "start": self.start, "end": self.end, "pieces": list(self.pieces)}


@dataclass
class MergeHistory:
    """Output of :func:`merge_history`.

    Attributes: ``times`` (frames used, including refinement sub-frames), ``counts`` (number of eps-clusters
    at each frame), ``tree`` (NetworkX DiGraph, see the module docstring), ``merges`` (list of
    :class:`MergeEvent`, in time order), ``violations`` (list of :class:`Violation`), ``eps``, ``n``,
    ``refined`` (whether brackets were refined) and ``info`` (refinement tolerances and diagnostics).
    """

    times: np.ndarray
    counts: np.ndarray
    tree: nx.DiGraph
    merges: list[MergeEvent]
    violations: list[Violation]
    eps: float
    n: int
    refined: bool = False
    info: dict = field(default_factory=dict)

    @property
    def pairwise(self) -> bool:
        """True when every merge event joined exactly two tracked clusters."""
        return all(len(e.clusters) == 2 for e in self.merges)

    @property
    def pairwise_fraction(self) -> float:
        """Fraction of merge events that joined exactly two clusters (1.0 when there are none)."""
        return (sum(len(e.clusters) == 2 for e in self.merges) / len(self.merges)) if self.merges else 1.0

    def roots(self) -> list[int]:
        """Tracked clusters alive at the end (nodes without parent)."""
        return sorted(v for v in self.tree if self.tree.out_degree(v) == 0)

    def linkage(self, top: float | None = None) -> np.ndarray:
        """The tree in SciPy linkage format over the n particles (an (n-1, 4) array).

        Leaves are particles; a first-frame cluster of m particles is a chain of m-1 merges at height
        times[0]; a merge of r clusters at time t is r-1 rows at height t. If more than one cluster survives,
        the survivors are joined at height ``top`` (required then, and must be >= the last merge time), which
        a plot should mark as "not merged". Heights are non-decreasing along every path (valid for
        ``scipy.cluster.hierarchy.dendrogram``).
        """
        n = self.n
        rows: list[list[float]] = []
        index: dict[int, int] = {}  # tree node -> linkage cluster index
        count: dict[int, int] = {}

        def join(parts: list[int], sizes: list[int], height: float) -> tuple[int, int]:
            a, ca = parts[0], sizes[0]
            for b, cb in zip(parts[1:], sizes[1:]):
                rows.append([a, b, height, ca + cb])
                a, ca = n + len(rows) - 1, ca + cb
            return a, ca

        for v in sorted(self.tree, key=lambda v: (self.tree.nodes[v]["birth"], v)):
            attrs = self.tree.nodes[v]
            children = sorted(self.tree.predecessors(v))
            if children:
                index[v], count[v] = join([index[c] for c in children], [count[c] for c in children],
                                          attrs["birth"])
            else:
                members = list(attrs["members"])
                index[v], count[v] = join(members, [1] * len(members), attrs["birth"])
        roots = self.roots()
        if len(roots) > 1:
            last = max((e.time for e in self.merges), default=float(self.times[0]))
            if top is None or not math.isfinite(top) or top < last:
                raise InputError(f"{len(roots)} clusters never merge: give top >= {last:g} to join them, got {top!r}")
            join([index[r] for r in roots], [count[r] for r in roots], float(top))
        return np.array(rows, dtype=float).reshape(-1, 4)


def frame_labels(X: np.ndarray, eps: float) -> np.ndarray:
    """eps-cluster labels of one frame (no validation)."""
    return component_labels(X.shape[0], eps_graph_edges(X, eps))


def merge_history(times, X, eps: float, *, reintegrate: Reintegrator | None = None, time_rtol: float = 1e-6,
                  time_atol: float = 1e-9, substeps: int = 16, max_rounds: int = 40,
                  progress: Callable[[float, float], None] | None = None,
                  refine_progress: Callable[[float, float], None] | None = None) -> MergeHistory:
    r"""Track eps-clusters over saved frames and build the merge tree.

    Parameters
    ----------
    times : (m,) array_like
        Increasing frame times.
    X : (m, n, d) array_like
        States (unit rows).
    eps : float
        Cluster threshold in radians (see :func:`numerics.clusters.find_clusters`).
    reintegrate : callable, optional
        ``reintegrate(X_start, save_times) -> states`` (e.g. :func:`reintegrator`); when given, merge brackets
        are refined with :func:`refine_frames` to width :math:`\le` ``time_atol + time_rtol * t``.
    substeps : int
        Sub-intervals per refinement round.
    progress, refine_progress : callable, optional
        ``progress(frames_done, frames)`` as the saved frames are clustered; ``refine_progress(brackets_done,
        brackets)`` within each refinement round (the re-integrations dominate the cost of ``--refine``).

    Returns
    -------
    MergeHistory
    """
    times = require_finite_array(times, "times", ndim=1)
    X = require_finite_array(X, "X", ndim=3)
    if X.shape[0] != times.shape[0] or X.shape[0] < 1:
        raise InputError(f"times {times.shape} and X {X.shape} must have the same non-zero length")
    if np.any(np.diff(times) <= 0):
        raise InputError("times must increase strictly")
    eps = require_real(eps, "eps", minimum=0.0)
    frames_t, frames_x = list(times), list(X)
    labels = []
    for k, Xk in enumerate(frames_x):
        labels.append(frame_labels(Xk, eps))
        if progress is not None:
            progress(k + 1, len(frames_x))
    info: dict = {}
    if reintegrate is not None:
        time_rtol = require_real(time_rtol, "time_rtol", minimum=0.0)
        time_atol = require_real(time_atol, "time_atol", minimum=0.0)
        if time_rtol == 0 and time_atol == 0:
            raise InputError("time_rtol and time_atol cannot both be 0")
        substeps = require_int(substeps, "substeps", minimum=2)
        info = refine_frames(frames_t, frames_x, labels, eps, reintegrate, time_rtol, time_atol, substeps,
                             max_rounds, progress=refine_progress)
    history = _build(np.array(frames_t), frames_x, labels, eps)
    history.refined = reintegrate is not None
    history.info = info
    return history


def _joins(prev: np.ndarray, cur: np.ndarray) -> bool:
    """Does some cluster of ``cur`` contain particles of two clusters of ``prev``?"""
    k = int(cur.max()) + 1
    first = np.full(k, -1)
    first[cur[::-1]] = prev[::-1]  # one prev-label per cur-cluster
    return bool(np.any(first[cur] != prev))


def refine_frames(times: list, states: list, labels: list, eps: float, reintegrate: Reintegrator,
                  time_rtol: float, time_atol: float, substeps: int = 16, max_rounds: int = 40,
                  progress: Callable[[float, float], None] | None = None) -> dict:
    """Insert re-integrated sub-frames (in place) into every bracket (t_{k-1}, t_k] in which clusters join,
    until each such bracket is narrower than time_atol + time_rtol * t_k.

    Returns diagnostics: ``rounds``, ``inserted`` frames and ``max_mismatch``, the largest distance between a
    re-integrated end state and the stored frame t_k (large values mean the stored trajectory was produced by a
    different scheme, e.g. ``layer`` steps; the refined times are then those of the ODE).
    """
    inserted, mismatch, rounds = 0, 0.0, 0
    while rounds < max_rounds:
        todo = [k for k in range(1, len(times)) if _joins(labels[k - 1], labels[k])
                and times[k] - times[k - 1] > time_atol + time_rtol * abs(times[k])]
        if not todo:
            break
        rounds += 1
        for done, k in enumerate(reversed(todo)):
            if progress is not None:
                progress(done, len(todo))
            sub = np.linspace(times[k - 1], times[k], substeps + 1)
            new_states = np.asarray(reintegrate(states[k - 1], sub))
            mismatch = max(mismatch, float(np.max(np.abs(new_states[-1] - states[k]))))
            times[k:k] = list(sub[1:-1])
            states[k:k] = list(new_states[1:-1])
            labels[k:k] = [frame_labels(Y, eps) for Y in new_states[1:-1]]
            inserted += substeps - 1
        if progress is not None:
            progress(len(todo), len(todo))
    return {"rounds": rounds, "inserted": inserted, "max_mismatch": mismatch, "time_rtol": time_rtol,
            "time_atol": time_atol, "converged": rounds < max_rounds,
            "integrator": f"Dormand-Prince 5(4) rtol={REFINE_RTOL:g} atol={REFINE_ATOL:g}"}


def _build(times: np.ndarray, states: list, labels: list, eps: float) -> MergeHistory:
    n = states[0].shape[0]
    tree = nx.DiGraph()
    root = np.array(labels[0])  # union-find: representative tracked-cluster node of every particle
    first = clusters_from_labels(states[0], labels[0], eps)
    for c in range(first.count):
        members = tuple(int(i) for i in first.members(c))
        tree.add_node(c, birth=float(times[0]), death=math.inf, members=members, size=len(members),
                      centre=first.centres[c])
    merges: list[MergeEvent] = []
    violations: list[Violation] = []
    open_split: dict[int, Violation] = {}
    counts = [first.count]
    for k in range(1, len(times)):
        lab, t = labels[k], float(times[k])
        counts.append(int(lab.max()) + 1)
        # tracked clusters touched by each eps-cluster: pairs (label, node) present in this frame
        pairs = np.unique(np.column_stack([lab, root]), axis=0)
        labs, per_label = np.unique(pairs[:, 0], return_counts=True)
        for c in labs[per_label > 1]:
            nodes = [int(v) for v in np.unique(root[lab == c])]  # fresh: earlier joins of this frame relabel
            if len(nodes) < 2:
                continue
            new = tree.number_of_nodes()
            mask = np.isin(root, nodes)
            members = tuple(int(i) for i in np.flatnonzero(mask))
            mean = states[k][mask].sum(axis=0)
            tree.add_node(new, birth=t, death=math.inf, members=members, size=len(members),
                          centre=mean / np.linalg.norm(mean) if np.linalg.norm(mean) > 0 else mean * np.nan)
            for v in nodes:
                tree.nodes[v]["death"] = t
                tree.add_edge(v, new, time=t)
            root[mask] = new
            merges.append(MergeEvent(time=t, bracket=(float(times[k - 1]), t), clusters=tuple(nodes),
                                     sizes=tuple(float(tree.nodes[v]["size"]) for v in nodes), new=new))
        # violations: a tracked cluster spread over several eps-clusters
        split_now = {}
        pairs = np.unique(np.column_stack([root, lab]), axis=0)
        nodes, per_node = np.unique(pairs[:, 0], return_counts=True)
        for v in nodes[per_node > 1]:
            pieces = pairs[pairs[:, 0] == v, 1]
            split_now[int(v)] = tuple(float(np.sum((root == v) & (lab == p))) for p in pieces)
        for v, pieces in split_now.items():
            if v in open_split:
                open_split[v] = Violation(v, open_split[v].start, t, open_split[v].pieces)
            else:
                open_split[v] = Violation(v, t, t, pieces)
        for v in [v for v in open_split if v not in split_now]:
            violations.append(open_split.pop(v))
    violations += open_split.values()
    violations.sort(key=lambda v: (v.start, v.cluster))
    return MergeHistory(times=times, counts=np.array(counts), tree=tree, merges=merges, violations=violations,
                        eps=float(eps), n=n)


def reintegrator(field: Callable[[np.ndarray], np.ndarray], rtol: float = REFINE_RTOL,
                 atol: float = REFINE_ATOL) -> Reintegrator:
    """A :data:`Reintegrator` for ``field`` with the adaptive Dormand-Prince integrator."""

    def run(X0: np.ndarray, save_times: np.ndarray) -> np.ndarray:
        # the field is autonomous: integrate in time since save_times[0], so that short brackets at large t are
        # not limited by the float64 spacing of t (and the integrator's step floor 1e-14 t)
        save_times = np.asarray(save_times, dtype=float)
        return integrate_adaptive(field, X0, save_times - save_times[0], rtol=rtol, atol=atol)[1]

    return run


def reintegrator_from_meta(meta: dict, arrays: dict | None = None) -> Reintegrator:
    """The :data:`Reintegrator` of the ODE that produced a :class:`numerics.core.trajectory.Trajectory` (the model
    of its ``meta``, :meth:`numerics.core.model.Model.from_meta`, with the weight ``arrays`` of heads, MLP or
    schedule). Refined times are ODE times, in the file's time unit. A time-dependent model (depth schedule) is
    re-integrated on the true time axis (no shift of the time origin)."""
    missing = [k for k in ("model", "beta", "d") if k not in meta]
    if missing:
        raise InputError(f"trajectory meta lacks {', '.join(missing)}: cannot re-integrate to refine merge times")
    model = Model.from_meta(meta, arrays).at_context_length(meta.get("n"), "a trajectory file without n")
    if model.noise > 0:
        raise InputError("cannot refine merge times of a noisy trajectory (noise = "
                         f"{model.noise:g}): the Brownian path between saved frames is not stored, and the ODE "
                         "without noise is another dynamics; analyse the saved frames (no --refine)")
    d = int(meta["d"])
    if not model.has_architecture and model.kernel is None:
        return reintegrator(make_field(d, model.beta, model.kind, model.Q, model.K, model.V,
                                       time_unit=model.time_unit))
    f, _ = model.vector_field(int(meta.get("n", 2)), d, "direct")
    if not model.time_dependent:
        return reintegrator(f)

    def run(X0: np.ndarray, save_times: np.ndarray) -> np.ndarray:
        return integrate_adaptive(f, X0, np.asarray(save_times, dtype=float), rtol=REFINE_RTOL, atol=REFINE_ATOL)[1]

    return run


def history_payload(history: MergeHistory) -> dict:
    """JSON-ready summary: times, counts, merges, pairwise, violations (the CLI's ``clusters`` output)."""
    return {"eps": history.eps, "n": history.n, "times": history.times, "counts": history.counts,
            "merges": [e.to_dict() for e in history.merges], "pairwise": history.pairwise,
            "pairwise_fraction": history.pairwise_fraction,
            "violations": [v.to_dict() for v in history.violations], "refined": history.refined,
            "refinement": history.info, "final_clusters": len(history.roots())}


__all__ = ["MergeEvent", "MergeHistory", "Reintegrator", "Violation", "history_payload", "merge_history",
           "refine_frames", "reintegrator", "reintegrator_from_meta"]
