r"""The phase diagram of noisy ``usa`` in the :math:`(\beta, D)` plane, and its curves for overlays.

For each :math:`\beta` of a grid, :func:`beta_noise_diagram` computes the transitions of the modes
:math:`1, \dots, K` (:mod:`numerics.noise.transitions`). :func:`plot_beta_noise_diagram` draws, against
:math:`\beta` (:math:`D` on a log scale, and :math:`D / D_c(\beta)` in a second panel so that the bistable window
stays visible):

- the linear-stability threshold :math:`D_c(\beta)` of the uniform state (mode 1) and the thresholds :math:`D_k`
  of :math:`k \ge 2`;
- the fold :math:`D_{\text{fold}}(\beta)` of the clustered branch (:math:`\beta > \beta^*`): the clustered states
  exist below it;
- the first-order noise :math:`D_{\text{1st}}(\beta)`: the clustered state has the lower free energy below it
  (:math:`= D_c` for :math:`\beta \le \beta^*`; strictly between :math:`D_c` and :math:`D_{\text{fold}}` above:
  Mun and Rosenzweig's :math:`K_c < K_\#`, :math:`K = 1/(2D)`);
- :math:`\beta^*(d)`, where the transition changes from continuous to discontinuous.

:func:`overlay_curves` gives the same curves on a grid for other plots (the noisy sweeps' phase diagrams).
"""
from __future__ import annotations

import math

import numpy as np

from numerics.common.errors import InputError


def beta_noise_diagram(d: int, betas, modes: int = 2, *, L: int = 32, accuracy: bool = False,
                       progress=None) -> list:
    """``[(beta, [ModeTransition for k = 1..modes])]`` over ``betas`` (the cost is checked first)."""
    from numerics.noise.phase import check_transition_cost
    from numerics.noise.transitions import transitions

    betas = [float(b) for b in betas]
    if not betas:
        raise InputError("the (beta, D) diagram needs at least one beta")
    check_transition_cost(d, len(betas), modes, L)
    rows = []
    for i, b in enumerate(betas):
        rows.append((b, transitions(d, b, modes, L=L, accuracy=accuracy, trace_continuous=False)))
        if progress is not None:
            progress(i + 1, len(betas))
    return rows


def _value(estimate) -> float:
    return math.nan if estimate is None else estimate.value


def curves(rows) -> dict:
    """Arrays over the rows' betas: ``beta``, and per mode k ``threshold_k``, ``fold_k``, ``first_order_k``
    (NaN where the mode has none; the first-order noise of a continuous branch is its threshold)."""
    out = {"beta": np.array([b for b, _ in rows])}
    modes = len(rows[0][1]) if rows else 0
    for k in range(1, modes + 1):
        out[f"threshold_{k}"] = np.array([tr[k - 1].threshold if tr[k - 1].kind != "none" else math.nan
                                          for _, tr in rows])
        out[f"fold_{k}"] = np.array([_value(tr[k - 1].fold) for _, tr in rows])
        out[f"first_order_{k}"] = np.array([_value(tr[k - 1].first_order) for _, tr in rows])
        out[f"kind_{k}"] = [tr[k - 1].kind for _, tr in rows]
    return out


def _with_beta_star(c: dict, d: int, bstar: float) -> dict:
    """Insert beta* into the curves when it lies inside the grid: mode 1's fold and first-order noise equal
    D_c there (so their lines start where they leave D_c); every threshold is g_k(beta*); the other modes'
    folds and first-order noises are interpolated (geometrically) between the neighbouring betas."""
    from numerics.noise.zonal import couplings

    beta = c["beta"]
    c["beta_star"] = bstar
    if not (beta.size and beta.min() < bstar < beta.max()) or np.any(beta == bstar):
        return c
    i = int(np.searchsorted(beta, bstar))
    w = (bstar - beta[i - 1]) / (beta[i] - beta[i - 1])
    modes = sum(1 for key in c if key.startswith("threshold_"))
    g = couplings(d, bstar, modes)
    c["beta"] = np.insert(beta, i, bstar)
    for k in range(1, modes + 1):
        c[f"threshold_{k}"] = np.insert(c[f"threshold_{k}"], i, g[k] if g[k] > 0 else np.nan)
        for key in (f"fold_{k}", f"first_order_{k}"):
            a, b = c[key][i - 1], c[key][i]
            value = g[1] if k == 1 else (a ** (1 - w) * b ** w if a > 0 and b > 0 else np.nan)
            c[key] = np.insert(c[key], i, value)
        kind = c[f"kind_{k}"]
        c[f"kind_{k}"] = kind[:i] + ["continuous" if k == 1 else kind[i]] + kind[i:]
    return c


def overlay_curves(model: str, d: int, beta_min: float, beta_max: float, points: int = 12) -> dict:
    """D_c(beta) (and, for usa, the fold and the first-order noise of mode 1) on ``points`` betas in
    [beta_min, beta_max]: what a noisy sweep's (beta, noise) phase diagram is compared with. sa has only its
    linear threshold (its branch and free energy are not implemented)."""
    from theory.noise import critical_noise, discontinuity_threshold

    grid = np.linspace(beta_min, beta_max, points) if beta_max > beta_min else np.array([beta_min])
    if model != "usa":
        return {"beta": grid, "threshold_1": np.array([critical_noise(model, d, b)[0] for b in grid]),
                "beta_star": None, "model": model}
    c = _with_beta_star(curves(beta_noise_diagram(d, grid, 1, accuracy=False)), d, discontinuity_threshold(d))
    c["model"] = model
    return c


#: line styles of the plots: (key, label, colour, style)
LINES = (("threshold", r"linear-stability threshold $D_c$", "tab:red", "-"),
         ("fold", "fold of the clustered branch", "tab:purple", "--"),
         ("first_order", r"first-order noise $D_{1st}$ (equal free energy)", "black", "-"))


def draw_curves(ax, c: dict, x=None, y=None, modes: int = 1, normalise: bool = False) -> None:
    """Draw the curves of :func:`curves` on ``ax``; ``x``/``y`` map (beta, D) to the axes' coordinates (the
    sweeps' heat maps plot against grid indices), ``normalise`` divides D by D_c(beta)."""
    x = x or (lambda b: b)
    y = y or (lambda D: D)
    beta = c["beta"]
    scale = c["threshold_1"] if normalise else np.ones_like(beta)
    for k in range(1, modes + 1):
        for key, label, colour, style in LINES:
            vals = c.get(f"{key}_{k}")
            if vals is None or not np.any(np.isfinite(vals)):
                continue
            if k == 1 and key == "first_order" and c.get("beta_star") is not None:
                # below beta* D_1st = D_c: drawn there it would hide the threshold curve exactly under it
                vals = np.where(beta < c["beta_star"], np.nan, vals)
            if k > 1:
                if key == "first_order":      # only where it differs from the threshold (first order)
                    vals = np.where(np.array(c[f"kind_{k}"]) == "continuous", np.nan, vals)
                    if not np.any(np.isfinite(vals)):
                        continue
                colour, label = f"C{k + 2}", f"mode {k}: {label.split(' $')[0].split(' (')[0]}"
                style = "-." if key == "first_order" else style
            ax.plot(x(beta), y(vals / scale), style, color=colour, lw=2 if k == 1 else 1.2,
                    marker="o" if beta.size < 8 else None, ms=4, label=label)
    if c.get("beta_star") is not None and beta.min() <= c["beta_star"] <= beta.max():
        ax.axvline(x(np.array([c["beta_star"]]))[0], color="grey", ls=":", lw=1,
                   label=rf"$\beta^* = {c['beta_star']:.4g}$ (continuous below, first order above)")


def beta_noise_figure(d: int, rows):
    """The figure of :func:`plot_beta_noise_diagram` (two panels against beta: D on a log scale, and
    D / D_c(beta)), not saved: for notebooks and the gallery."""
    import matplotlib.pyplot as plt

    from theory.noise import discontinuity_threshold

    c = _with_beta_star(curves(rows), d, discontinuity_threshold(d))
    modes = len(rows[0][1])
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.8))
    draw_curves(ax, c, modes=modes)
    positive = [v for k in range(1, modes + 1) for v in c[f"threshold_{k}"] if np.isfinite(v) and v > 0]
    if positive:
        ax.set_yscale("log")
    ax.set_xlabel(r"$\beta$")
    ax.set_ylabel(r"noise $D$ (log scale)")  # the axis is D; the coupling K = 1/(2D) is in the CLI's notes
    ax.set_title(rf"noisy usa on $S^{{{d - 1}}}$: thresholds, folds and first-order noises", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    label_regions_absolute(ax, c)
    draw_curves(ax2, c, modes=1, normalise=True)
    fold = c["fold_1"] / c["threshold_1"]
    ax2.fill_between(c["beta"], 1.0, np.where(np.isfinite(fold), fold, 1.0), color="tab:purple", alpha=0.12,
                     label=r"bistable window ($D_c$, $D_{fold}$)")
    ax2.set_xlabel(r"$\beta$")
    ax2.set_ylabel(r"$D \,/\, D_c(\beta)$")
    ax2.set_title(r"mode 1, relative to the linear threshold ($K_c < K_\#$ above $\beta^*$)", fontsize=10)
    ax2.legend(fontsize=7, loc="center left")  # the top is the uniform region's label
    label_regions_relative(ax2, c["beta"], fold)
    fig.tight_layout()
    return fig


REGION_STYLE = {"fontsize": 10, "fontweight": "bold", "ha": "center", "va": "center", "alpha": 0.75}


def label_regions_absolute(ax, c: dict) -> None:
    """Name the regions of the (beta, D) panel: uniform (stable) above the mode-1 threshold and the fold,
    clustered below the threshold (where the uniform state is unstable)."""
    beta = np.asarray(c["beta"], float)
    top = np.fmax(np.asarray(c["threshold_1"], float), np.asarray(c["fold_1"], float))
    Dc = np.asarray(c["threshold_1"], float)
    if beta.size < 2 or not np.any(np.isfinite(Dc) & (Dc > 0)):
        return
    xb = beta.min() + 0.72 * (beta.max() - beta.min())
    log = ax.get_yscale() == "log"
    up = float(np.interp(xb, beta, top))
    down = float(np.interp(xb, beta, Dc))
    ax.text(xb, up * 3 if log else up * 1.15, "uniform", color="tab:red", **REGION_STYLE)
    ax.text(xb, down / 2.2 if log else down * 0.8, "clustered", color="tab:blue", **REGION_STYLE)


def label_regions_relative(ax, beta, fold) -> None:
    """Name the regions of the D / D_c panel: clustered below 1, bistable between 1 and the fold (first-order
    side), uniform above; the y range leaves room below 1 for the clustered region."""
    beta = np.asarray(beta, float)
    fold = np.where(np.isfinite(fold), fold, 1.0)
    hi = max(float(np.max(fold)), 1.0)
    span = max(hi - 1.0, 0.1)
    ax.set_ylim(1.0 - 0.35 * span, hi + 0.35 * span)
    x_mid = beta.min() + 0.5 * (beta.max() - beta.min())
    ax.text(x_mid, 1.0 - 0.18 * span, "clustered (uniform unstable)", color="tab:blue", **REGION_STYLE)
    ax.text(beta.min() + 0.3 * (beta.max() - beta.min()), hi + 0.2 * span, "uniform", color="tab:red",
            **REGION_STYLE)
    wide = int(np.argmax(fold))
    if fold[wide] > 1.0:
        ax.text(beta[wide] - 0.08 * (beta.max() - beta.min()), 1.0 + 0.55 * (fold[wide] - 1.0), "bistable",
                color="tab:purple", **REGION_STYLE)


def plot_beta_noise_diagram(d: int, rows, path: str) -> str:
    """Write :func:`beta_noise_figure` to ``path`` (PNG, atomically)."""
    import matplotlib.pyplot as plt

    from numerics.common.provenance import atomic_write

    fig = beta_noise_figure(d, rows)
    atomic_write(path, lambda tmp: fig.savefig(tmp, format="png", dpi=110))
    plt.close(fig)
    return path


def _to_axis(coords) -> callable:
    """Map values to the index coordinates of a heat-map axis drawn at 0..n-1 over ``coords`` (interpolated
    linearly, or in log when the positive coordinates span more than a factor 10; NaN outside the range)."""
    c = np.asarray(coords, float)
    order = np.argsort(c)
    c, idx = c[order], np.arange(c.size, dtype=float)[order]
    logs = bool(np.all(c > 0) and c[-1] > 10 * c[0])
    fx = np.log(c) if logs else c

    def f(v):
        v = np.asarray(v, float)
        with np.errstate(invalid="ignore", divide="ignore"):
            w = np.log(v) if logs else v
        out = np.interp(w, fx, idx)
        return np.where((w >= fx[0]) & (w <= fx[-1]), out, np.nan)

    return f


def sweep_overlay(ax, model: str, d: int, *, beta_coords=None, noise_coords=None, beta_is_x: bool = True,
                  beta: float | None = None) -> bool:
    """The theory lines over a noisy sweep's plot (the hook of numerics.sweeps.plotting).

    - a heat map over (beta, noise) (index axes): D_c(beta), and for usa the fold and the first-order noise of
      mode 1 (:func:`overlay_curves`), mapped onto the grid indices;
    - curves against noise at a fixed ``beta``: vertical lines at D_c, the fold and the first-order noise.

    Returns whether anything was drawn (nothing for models other than usa/sa or beta outside [-50, 50])."""
    from theory.noise import critical_noise

    if model not in ("usa", "sa"):
        return False
    if beta_coords is not None and noise_coords is not None:
        b = np.asarray(beta_coords, float)
        if not (np.all(np.abs(b) <= 50) and b.size):
            return False
        c = overlay_curves(model, d, float(b.min()), float(b.max()), points=max(8, min(24, 4 * b.size)))
        fb, fD = _to_axis(beta_coords), _to_axis(noise_coords)
        x, y = (fb, fD) if beta_is_x else (fD, fb)
        beta = c["beta"]
        for key, label, colour, style in LINES:
            vals = c.get(f"{key}_1")
            if vals is None or not np.any(np.isfinite(vals)):
                continue
            xs, ys = (fb(beta), fD(vals)) if beta_is_x else (fD(vals), fb(beta))
            ax.plot(xs, ys, style, color="white" if key == "threshold" else colour, lw=2, label=f"{model}: {label}")
        return True
    if beta is not None and abs(beta) <= 50:
        Dc = critical_noise(model, d, beta)[0]
        ax.axvline(Dc, color="tab:red", ls=":", lw=1.2, label=f"linear-stability threshold D_c = {Dc:.4g}")
        if model == "usa":
            from numerics.noise.transitions import mode_transition

            tr = mode_transition(d, beta, 1, accuracy=False, trace_continuous=False)
            if tr.fold is not None:
                ax.axvline(tr.fold.value, color="tab:purple", ls="--", lw=1.2, label=f"fold {tr.fold.value:.4g}")
            if tr.first_order is not None and tr.first_order.value != Dc:
                ax.axvline(tr.first_order.value, color="black", ls="-.", lw=1.2,
                           label=f"first-order noise {tr.first_order.value:.4g}")
        return True
    return False
