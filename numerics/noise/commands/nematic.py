"""``attnflow nematic``: the isotropic-nematic transition of Maier-Saupe (W = P_2) and Onsager/Doi-Onsager
(W = -|sin gamma|) on S^1 (--d 2) and S^2 (--d 3): threshold, type, fold, first-order noise and the jump of S."""
from __future__ import annotations

import math

from numerics.common.errors import InputError
from numerics.common.render import emit, key_values

NAME = "nematic"
ORDER = 56
HELP = ("isotropic-nematic transition of Maier-Saupe (W = P_2) or Onsager (W = -|sin|) on S^1 or S^2: the "
        "spinodal D_#, type, fold, first-order noise and the jump of S (K = 1/(2D))")


def add_arguments(p):
    p.add_argument("--kernel", default="maier-saupe", choices=["maier-saupe", "onsager"],
                   help="maier-saupe: W(s) = P_2(s); onsager: W(s) = -sqrt(1 - s^2) (default maier-saupe)")
    p.add_argument("--d", type=int, default=3, help="ambient dimension: 2 (circle) or 3 (S^2; default 3)")
    p.add_argument("--L", type=int, default=32,
                   help="onsager: even degrees up to 2L (default 32; Maier-Saupe is exact with degree 2)")
    p.add_argument("--plot", metavar="FILE.png", help="the branch S against D (default: no plot)")
    p.add_argument("--json", action="store_true", help="print one JSON object (default: a table)")


def _D(value, acc=None) -> str:
    if value is None:
        return "-"
    if acc is None or not math.isfinite(acc) or acc == 0:
        return f"{value:.12g}"
    return f"{value:.12g} +- {max(acc, 1e-16):.1g}"


def run(args) -> int:
    from numerics.noise.nematic import nematic_transition

    if args.plot and not args.plot.lower().endswith(".png"):
        raise InputError(f"--plot must name a .png file, got {args.plot!r}")
    if args.d not in (2, 3):
        raise InputError(f"--d must be 2 (circle) or 3 (S^2), got {args.d}")
    tr = nematic_transition(args.kernel, args.d, L=args.L)
    if args.plot:
        _plot(tr, args.plot)
    fold, first = tr.fold, tr.first_order
    kind = {"continuous": "continuous (supercritical pitchfork)",
            "discontinuous": "first order (subcritical pitchfork)",
            "transcritical": "first order (transcritical: S jumps)"}.get(tr.kind, tr.kind)
    payload = {"kernel": tr.kernel, "d": tr.d, "linear_stability_threshold": tr.threshold, "type": tr.kind,
               "fold": None if fold is None else {"D": fold[0], "S": fold[1], "accuracy": fold[2]},
               "first_order": None if first is None else {"D": first[0], "S": first[1], "accuracy": first[2],
                                                          "S_accuracy": first[3]},
               "coupling_threshold": tr.coupling_threshold, "coupling_first_order": tr.coupling_first_order,
               "conversion": "K = 1/(2D)", "states": tr.meta["states"], "L": tr.meta["L"],
               "branch_stopped": tr.meta["stopped"], "plot": args.plot}
    text = key_values([
        ("kernel", f"{tr.kernel} (W(s) = {'P_2(s)' if tr.kernel == 'maier-saupe' else '-sqrt(1 - s^2)'})"),
        ("sphere", f"S^{tr.d - 1}"),
        ("states", tr.meta["states"]),
        ("spinodal D_# (isotropic loses stability)", _D(tr.threshold)),
        ("transition", kind),
        ("fold of the nematic branch (D, S)", "none" if fold is None else f"({_D(fold[0], fold[2])}, "
                                                                          f"S = {fold[1]:.6g})"),
        ("first-order noise D_1st (equal free energy)",
         "-" if not first else (f"{_D(first[0])} (= D_#: continuous)" if tr.kind == "continuous"
                                else _D(first[0], first[2]))),
        ("order parameter S at D_1st", f"{first[1]:.10g}" if first else "-"),
        ("K_# = 1/(2 D_#)", f"{tr.coupling_threshold:.10g}"),
        ("K_c = 1/(2 D_1st)", f"{tr.coupling_first_order:.10g}" if first else "-")])
    emit(args, {k: v for k, v in payload.items() if v is not None}, text)
    return 0


def _plot(tr, path: str) -> None:
    """S against D: the isotropic state (stable above D_#), the nematic branch (stable and unstable pieces),
    the fold and the first-order noise."""
    import matplotlib.pyplot as plt
    import numpy as np

    from numerics.common.provenance import atomic_write

    br = tr.branch
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    Dmax = max(tr.threshold * 1.2, float(br.D.max()) * 1.02)
    ax.plot([0, tr.threshold], [0, 0], "k--", lw=1.2, label="isotropic (unstable)")
    ax.plot([tr.threshold, Dmax], [0, 0], "k-", lw=1.8, label="isotropic (stable)")
    stable = br.stable_guess
    for mask, style, label in ((stable, "-", "nematic branch (stable)"), (~stable, "--", "nematic branch (unstable)")):
        ax.plot(np.where(mask, br.D, np.nan), np.where(mask, br.s, np.nan), style, color="tab:blue", lw=2,
                label=label)
    ax.axvline(tr.threshold, color="tab:red", lw=1, ls=":", label=f"spinodal D_# = {tr.threshold:.6g}")
    if tr.fold:
        ax.plot([tr.fold[0]], [tr.fold[1]], "o", color="tab:purple", label=f"fold D = {tr.fold[0]:.6g}")
    if tr.first_order and tr.first_order[0] > tr.threshold:
        ax.axvline(tr.first_order[0], color="black", lw=1.2, ls="-.",
                   label=f"first order D_1st = {tr.first_order[0]:.6g}, S = {tr.first_order[1]:.4g}")
    ax.set_xlabel("noise D")
    ax.set_ylabel("order parameter S")
    ax.set_title(f"{tr.kernel} on S^{tr.d - 1}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=110, format="png"))
    plt.close(fig)
