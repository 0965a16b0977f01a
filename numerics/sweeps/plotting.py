"""Phase diagrams and curves from a sweep store, with confidence bands and the theory where attnflow has it.

Values are aggregated over the ``seed`` axis, over finished cells only (pending and failed cells are left out
and the number of seeds used is reported):

- ``p_<var>`` for a 0/1 output ``var`` (``p_one_cluster``): the fraction of seeds with ``var = 1``, with the
  Wilson score interval (95%; Wilson 1927) as its band;
- any other output (``clusters``, ``metastable_clusters``, ``first_merge_time``, ...): the mean over seeds,
  with mean +- 1.96 standard errors as its band (NaN values, e.g. "never merged", are left out).

Theory overlay: for a cluster count against ``beta`` the mean-field prediction l_max(beta) of the store's
model and dimension (:func:`theory.meanfield.dominant_degree`; BPA arXiv 2410.23228) is drawn over the data.
For a noisy sweep (a ``noise`` axis) the noise transitions are drawn: over (beta, noise) D_c(beta), the fold and
the first-order noise (usa), against noise at a fixed beta vertical lines at the same noises
(:func:`numerics.noise.diagram.sweep_overlay`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from numerics.common.errors import InputError
from numerics.common.provenance import atomic_write
from numerics.sweeps.spec import SEED_AXIS

Z95 = 1.959963984540054
#: outputs compared with l_max(beta) when plotted against beta
CLUSTER_COUNTS = ("clusters", "metastable_clusters")


def wilson_interval(successes, trials, z: float = Z95):
    """Wilson score interval for a binomial proportion (arrays broadcast); NaN where ``trials`` is 0."""
    k = np.asarray(successes, float)
    m = np.asarray(trials, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / m
        centre = (p + z * z / (2 * m)) / (1 + z * z / m)
        half = z * np.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / (1 + z * z / m)
    return centre - half, centre + half


@dataclass(frozen=True)
class Aggregate:
    """A value over the kept axes: estimate, lower and upper band, seeds used per point, how it was made."""

    dims: tuple[str, ...]
    coords: dict
    value: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    seeds: np.ndarray
    kind: str  # "probability" or "mean"
    name: str


def parse_selection(items) -> dict:
    """``["d=3", "model=sa"]`` -> ``{"d": "3", "model": "sa"}`` (values matched to coordinates later)."""
    out = {}
    for item in items or []:
        if "=" not in item:
            raise InputError(f"--sel takes NAME=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def _select(ds, selection: dict):
    for name, raw in selection.items():
        if name not in ds.dims or name == "time":
            raise InputError(f"--sel {name}: not an axis of the store; axes: {', '.join(_axes(ds))}")
        coord = ds[name].values
        match = [i for i, c in enumerate(coord) if str(c) == raw or _close(c, raw)]
        if len(match) != 1:
            raise InputError(f"--sel {name}={raw}: not one of {', '.join(map(str, coord))}")
        ds = ds.isel({name: match[0]})
    return ds


def _close(c, raw) -> bool:
    try:
        return math.isclose(float(c), float(raw), rel_tol=1e-9)
    except (TypeError, ValueError):
        return False


def _axes(ds) -> list[str]:
    return [d for d in ds["status"].dims]


def aggregate(ds, value: str, keep, selection: dict | None = None) -> Aggregate:
    """``value`` (an output or ``p_<output>``) over the axes ``keep``, aggregated over seeds."""
    keep = tuple(keep)
    ds = _select(ds, selection or {})
    probability = value.startswith("p_") and value not in ds.data_vars
    var = value[2:] if probability else value
    if var not in ds.data_vars or "time" in ds[var].dims or var in ("status", "error", "versions"):
        names = [v for v in ds.data_vars if "time" not in ds[v].dims and v not in ("status", "error", "versions")]
        raise InputError(f"--value {value}: the store's scalar outputs are {', '.join(names)} "
                         "(prefix a 0/1 output with p_ for its probability)")
    for k in keep:
        if k not in _axes(ds) or k == SEED_AXIS:
            raise InputError(f"{k!r} is not an axis of the store (axes: {', '.join(_axes(ds))}; seeds are "
                             "aggregated)")
    rest = [d for d in _axes(ds) if d not in keep and d != SEED_AXIS]
    extra = [d for d in rest if ds.sizes[d] > 1]
    if extra:
        raise InputError(f"axes {', '.join(extra)} have several values: fix them with --sel NAME=VALUE")
    ds = ds.isel({d: 0 for d in rest})
    data = ds[var].load()
    done = ds["status"].load() == 1
    x = data.where(done).transpose(*keep, SEED_AXIS).values
    finite = np.isfinite(x)
    m = finite.sum(axis=-1)
    if probability:
        ok = np.isin(x[finite], (0.0, 1.0)).all()
        if not ok:
            raise InputError(f"--value {value}: {var} is not a 0/1 output")
        k = np.nansum(x, axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            est = k / m
        lo, hi = wilson_interval(k, m)
        kind = "probability"
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            est = np.nansum(x, axis=-1) / m
            sd = np.sqrt(np.nansum((x - est[..., None]) ** 2, axis=-1) / np.maximum(m - 1, 1))
        half = Z95 * sd / np.sqrt(np.maximum(m, 1))
        lo, hi = est - half, est + half
        kind = "mean"
    coords = {k: ds[k].values for k in keep}
    return Aggregate(keep, coords, est, lo, hi, m, kind, value)


def lmax_curve(model: str, d: int, betas) -> tuple[np.ndarray, np.ndarray]:
    """l_max(beta) over the span of ``betas`` as a step function (x, l) for ``step(where="post")``.

    For beta > 0, l_max = 1 + (number of switch points below beta) (:func:`theory.meanfield.switch_points`,
    the same for sa and usa); otherwise :func:`theory.meanfield.dominant_degree` on a grid.
    """
    from theory.meanfield import dominant_degree, switch_points

    lo, hi = float(np.min(betas)), float(np.max(betas))
    if lo <= 0:
        grid = np.linspace(lo, hi, 200) if hi > lo else np.array([lo])
        return grid, np.array([dominant_degree(model, d, b).l_max for b in grid])
    points = [b for b, _, _ in switch_points(d, hi)]
    inside = [b for b in points if b > lo]
    xs = [lo] + inside + [hi]
    start = 1 + sum(b <= lo for b in points)
    ls = [start + k for k in range(len(inside) + 1)]
    return np.array(xs), np.array(ls + [ls[-1]])


def _fixed(ds, name):
    if name in ds.dims:
        if ds.sizes[name] != 1:
            return None
        return ds[name].values[0]
    from numerics.common.readers import parse_json

    fixed = parse_json(str(ds.attrs.get("fixed", "{}")), "the store's fixed model keys", kind="JSON")
    return fixed.get(name) if isinstance(fixed, dict) else None


def plot_phase_diagram(ds, x: str, y: str, value: str, path, selection: dict | None = None,
                       theory: bool = True) -> str:
    """Heat map of ``value`` over (x, y), one square per grid point, annotated with its value; over
    (beta, noise) the noise transitions (with ``theory``)."""
    import matplotlib.pyplot as plt

    agg = aggregate(ds, value, (y, x), selection)
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    vmin, vmax = (0.0, 1.0) if agg.kind == "probability" else (None, None)
    im = ax.imshow(agg.value, origin="lower", aspect="auto", cmap="viridis", vmin=vmin, vmax=vmax)
    ny, nx = agg.value.shape
    for i in range(ny):
        for j in range(nx):
            v = agg.value[i, j]
            label = "-" if not np.isfinite(v) else f"{v:.2f}"
            ax.text(j, i, label, ha="center", va="center", fontsize=8,
                    color="white" if np.isfinite(v) and v < np.nanmean(agg.value) else "black")
    ax.set_xticks(range(nx), [_tick(v) for v in agg.coords[x]])
    ax.set_yticks(range(ny), [_tick(v) for v in agg.coords[y]])
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    seeds = f"{int(agg.seeds.min())}-{int(agg.seeds.max())}" if agg.seeds.min() != agg.seeds.max() else str(
        int(agg.seeds.min()))
    what = "fraction of seeds" if agg.kind == "probability" else "mean over seeds"
    ax.set_title(f"{value} ({what}, {seeds} seeds per point){_selection_text(selection)}", fontsize=10)
    fig.colorbar(im, ax=ax, label=value)
    if theory and {x, y} == {"beta", "noise"}:
        _noise_overlay(ax, ds, selection, beta_coords=agg.coords["beta"], noise_coords=agg.coords["noise"],
                       beta_is_x=x == "beta")
    fig.tight_layout()
    return _save(fig, path)


#: markers and dashes of the successive --hue curves (curves that coincide are drawn one over the other)
HUE_MARKERS = ("o", "s", "^", "D", "v", "P", "X")
HUE_DASHES = ("-", "--", ":", "-.")


def plot_curves(ds, x: str, value: str, path, hue: str | None = None, selection: dict | None = None,
                theory: bool = True) -> str:
    """``value`` against ``x`` (one curve per ``hue`` value) with its confidence band; l_max(beta) over
    cluster counts against beta."""
    import matplotlib.pyplot as plt

    keep = (x,) if hue is None else (hue, x)
    agg = aggregate(ds, value, keep, selection)
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    xs = np.asarray(agg.coords[x], float)
    rows = [(None, agg.value, agg.lower, agg.upper)] if hue is None else [
        (h, agg.value[i], agg.lower[i], agg.upper[i]) for i, h in enumerate(agg.coords[hue])]
    drawn = []  # (label, values) of the curves so far
    for k, (h, v, lo, hi) in enumerate(rows):
        label = value if h is None else f"{hue} = {_tick(h)}"
        same = [lab for lab, w in drawn if np.array_equal(np.asarray(v, float), w, equal_nan=True)]
        if same:  # exactly under an earlier curve: say so, or the reader counts one curve too few
            label += f" (same as {same[0]})"
        drawn.append((label, np.asarray(v, float)))
        # distinct marker, size and dash per curve, so that coinciding curves stay visible one over the other
        line, = ax.plot(xs, v, marker=HUE_MARKERS[k % len(HUE_MARKERS)], ls=HUE_DASHES[k % len(HUE_DASHES)],
                        ms=max(3.0, 8.0 - 1.5 * k), mfc="none" if k % 2 else None, label=label)
        ax.fill_between(xs, lo, hi, color=line.get_color(), alpha=0.2)
    band = "Wilson 95% interval" if agg.kind == "probability" else "mean +- 1.96 s.e."
    if theory and x == "beta" and value in CLUSTER_COUNTS:
        model, d = _fixed(ds, "model"), _fixed(ds, "d")
        if model is not None and d is not None:
            grid, lm = lmax_curve(str(model), int(d), xs)
            ax.step(grid, lm, where="post", color="black", lw=1.2, ls="--",
                    label=f"mean-field l_max(beta) ({model}, d={int(d)})")
    if theory and x == "noise":
        _noise_overlay(ax, ds, selection, beta=None)
    if agg.kind == "probability":
        ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel(x)
    ax.set_ylabel(value)
    ax.set_title(f"{value} against {x} (band: {band}; {int(agg.seeds.max())} seeds per point)"
                 f"{_selection_text(selection)}", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return _save(fig, path)


def _noise_overlay(ax, ds, selection, **where) -> None:
    """The noise transitions of the store's fixed model and d (numerics.noise.diagram.sweep_overlay)."""
    from numerics.noise.diagram import sweep_overlay

    fixed = _select(ds, selection or {})

    def value(name):          # a fixed key, a one-value axis, or an axis fixed by --sel (a scalar coordinate)
        if name in fixed.coords and fixed[name].ndim == 0:
            return fixed[name].values.item()
        return _fixed(fixed, name)

    model, d = value("model"), value("d")
    if "beta" in where:
        where["beta"] = value("beta")
    if model is None or d is None or ("beta" in where and where["beta"] is None):
        return
    if sweep_overlay(ax, str(model), int(d), **{k: (float(v) if k == "beta" else v) for k, v in where.items()}):
        ax.legend(fontsize=7, loc="best")


def _selection_text(selection) -> str:
    return "" if not selection else "\n" + ", ".join(f"{k}={v}" for k, v in selection.items())


def _tick(v) -> str:
    if isinstance(v, (float, np.floating)):
        return f"{float(v):g}"
    return str(v)


def _save(fig, path) -> str:
    import matplotlib.pyplot as plt

    def writer(tmp):
        fig.savefig(tmp, dpi=120, format="png")

    try:
        return atomic_write(path, writer, suffix=".png")
    finally:
        plt.close(fig)
