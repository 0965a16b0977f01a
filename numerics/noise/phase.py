r"""The phase diagram of noisy ``usa``: stationary branch, linear threshold and particle averages against :math:`D`.

:func:`phase_diagram` collects, at fixed :math:`(d, \beta)`: the linear-stability threshold :math:`D_c` of the
uniform state, the type of the transition (theory.noise.bifurcation), the continued stationary branch
(numerics.noise.stationary), the transitions of the modes :math:`k = 1, \dots, K` with their refined folds and
first-order (equal free energy) noises (numerics.noise.transitions) and, optionally, long-time particle averages
of :math:`r = \lvert \operatorname{mean}_i x_i\rvert` from a clustered and from a uniform start at given noise
values. :func:`plot_phase_diagram` draws :math:`r` against :math:`D`. Mun and Rosenzweig's coupling is
:math:`K = 1/(2D)` (theory.noise_global).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from numerics.common.errors import InputError, require_choice, require_int, require_real
from numerics.noise.stationary import Branch, order_parameter_at, stationary_branch


@dataclass(frozen=True)
class ParticleAverage:
    """Time average of r over the second half of a noisy particle run."""

    D: float
    start: str
    r: float
    std: float


@dataclass(frozen=True)
class PdeState:
    """The S^2 Fokker-Planck solution at t_end from a clustered or a near-uniform non-zonal start."""

    D: float
    start: str
    r: float
    r_start: float
    L: int
    t_end: float


def pde_state(beta: float, D: float, *, start: str, L: int = 12, t_end: float = 40.0, dt: float = 0.02,
              seed: int = 0, progress=None) -> PdeState:
    """usa on S^2: solve the Fokker-Planck equation (:mod:`numerics.noise.sphere`) from ``clustered`` (a von
    Mises-Fisher bump exp(3 <x, e>) about a tilted axis e) or ``uniform`` (uniform plus 1e-2 random harmonics of
    every (l, m)) and return r = |E x| at ``t_end``."""
    from numerics.noise.sphere import clustered_coefficients, initial_coefficients, solve_sphere

    # any other value used to fall through to the near-uniform start silently
    start = require_choice(start, "start", ("clustered", "uniform"))
    if start == "clustered":
        c0 = clustered_coefficients(L, 3.0)
    else:
        c0 = initial_coefficients(L, 1e-2, seed=seed)
    h = solve_sphere(beta, D, L=L, t_end=t_end, c0=c0, dt=dt, saves=3, progress=progress)
    return PdeState(float(D), start, float(h.order_parameter[-1]), float(h.order_parameter[0]), L, t_end)


@dataclass(frozen=True)
class PhaseDiagram:
    d: int
    beta: float
    critical_noise: float
    continuous: bool
    discontinuity_beta: float
    fold: tuple[float, float] | None
    branch: Branch
    branch_at: dict                # D -> stable branch r (or None)
    particles: list = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    pde: list = field(default_factory=list)
    transitions: list = field(default_factory=list)

    @property
    def linear_threshold(self) -> float:
        """D_c, the linear-stability threshold of the uniform state (the field's original name is kept)."""
        return self.critical_noise

    @property
    def first_order(self):
        """The first-order (equal free energy) noise of the mode-1 branch (an Estimate), if computed."""
        return self.transitions[0].first_order if self.transitions else None


#: largest dimension of :func:`phase_diagram`: the branch continuation (zonal quadrature in the Gegenbauer
#: weight) runs without a floating-point warning for every |beta| <= 50 up to d = 100 and fails at d = 128,
#: beta = 50 (no point of the branch) and from d = 500 on (invalid values), measured on a grid of 12 betas
PHASE_MAX_D = 100
#: time step of the S^2 Fokker-Planck solves of :func:`phase_diagram`
PDE_DT = 0.02
#: field evaluations per step of the particle scheme (geodesic-weak2: two midpoint-RK2 half steps)
EVALS_PER_STEP = 4


def check_particle_cost(d: int, beta: float, n: int, t_end: float, dt: float, runs: int) -> None:
    """Refuse, before the first step, particle runs whose saved frames do not fit in memory or whose field
    evaluations together would take too long (:mod:`numerics.common.limits`): ``runs`` runs of n particles
    over ceil(t_end / dt) steps, :data:`EVALS_PER_STEP` evaluations each, O(n K) with the circle's Fourier field
    (what the ``auto`` backend picks at d = 2 when it is faster) and O(n^2 d) otherwise."""
    from numerics.common.limits import check_array, check_work, steps_of
    from numerics.core.model import Model

    steps = steps_of(t_end, dt)
    what = f"the phase experiment's particle runs ({runs} runs of n={n}, d={d}, {steps:.3g} steps each)"
    if not np.isfinite(steps):
        raise InputError(f"t_end/dt = {t_end:g}/{dt:g} steps is not a finite number of steps")
    check_array((steps // max(1, int(round(0.5 / dt))) + 2, n, d), what + " (saved frames)")
    field_fn, backend = Model("usa", beta).vector_field(n, d, "auto")
    per_eval = float(n) * (field_fn.harmonics + 8) if backend == "fourier" else float(n) * n * (2 * d + 8)
    check_work(runs * steps * EVALS_PER_STEP * per_eval, what)


def particle_average(d: int, beta: float, D: float, *, n: int, t_end: float, dt: float, seed: int, start: str,
                     progress=None) -> ParticleAverage:
    """Noisy usa particles (weak-order-2 scheme, field backend ``auto``): mean and std of r over [t_end/2, t_end]."""
    from numerics.core.model import Model
    from numerics.noise.sde import initial_particles, integrate_sde

    field_fn, _ = Model("usa", beta).vector_field(n, d, "auto")
    X0 = initial_particles(n, d, start, seed + 1)
    times, S, _ = integrate_sde(field_fn, X0, t_end, dt, D, seed=seed, scheme="geodesic-weak2",
                                save_every=max(1, int(round(0.5 / dt))), progress=progress)
    r = np.linalg.norm(S.mean(axis=1), axis=1)[times >= t_end / 2]
    return ParticleAverage(float(D), start, float(r.mean()), float(r.std()))


def phase_diagram(d: int, beta: float, noise_values=(), *, n: int = 0, t_end: float = 50.0, dt: float = 0.02,
                  seed: int = 0, L: int = 32, pde_L: int = 0, pde_t_end: float = 40.0,
                  progress=None, modes: int = 1, accuracy: bool = True,
                  trace_continuous: bool = True) -> PhaseDiagram:
    r"""Branch, threshold and (if ``n`` > 0) particle averages at each :math:`D` of ``noise_values``, both starts;
    with ``pde_L`` > 0 (:math:`d = 3` only) also the :math:`\mathbb{S}^2` Fokker-Planck state at ``pde_t_end``
    from both starts; the transitions of the modes 1..``modes`` (:func:`numerics.noise.transitions.transitions`:
    refined fold, first-order noise, with ``accuracy`` their truncation check; continuous branches are traced only
    with ``trace_continuous``, for the plot). ``fold`` is the refined fold of mode 1."""
    from theory.noise import bifurcation, discontinuity_threshold
    from numerics.noise.transitions import MAX_MODES, transitions

    d = require_int(d, "d", minimum=2, maximum=PHASE_MAX_D)
    beta = require_real(beta, "beta", minimum=-50.0, maximum=50.0)
    n = require_int(n, "particles", minimum=0)
    modes = require_int(modes, "modes", minimum=1, maximum=MAX_MODES)
    values = [require_real(D, "noise", minimum=0.0, strict_minimum=True) for D in noise_values]
    bif = bifurcation(d, beta)
    if bif.critical_noise <= 0:
        raise InputError(f"no instability of the uniform state at beta={beta:g}")
    check_transition_cost(d, 1, modes)
    branch = stationary_branch(d, beta, L=L, points=80, r_max=0.99)
    at = {D: order_parameter_at(branch, D) for D in values}
    # every request is validated, and the cost of all particle runs and PDE solves checked, before the first
    # run: a bad --pde setting must not surface only after hours of particle runs
    if n:
        t_end = require_real(t_end, "t_end", minimum=0.0, strict_minimum=True)
        dt = require_real(dt, "dt", minimum=0.0, strict_minimum=True)
        check_particle_cost(d, beta, n, t_end, dt, runs=2 * len(values))
    if pde_L:
        if d != 3:
            raise InputError("--pde solves the S^2 Fokker-Planck equation: it needs --d 3 (on S^1 use "
                             "attnflow meanfield --noise D)")
        pde_L = require_int(pde_L, "pde L", minimum=2, maximum=64)
        pde_t_end = require_real(pde_t_end, "pde t_end", minimum=0.0, strict_minimum=True)
        from numerics.common.limits import steps_of
        from numerics.noise.sphere import check_sphere_cost

        # all 2 len(values) solves together (each also checks itself): their work adds up
        check_sphere_cost(pde_L, 2 * len(values) * steps_of(pde_t_end, PDE_DT), saves=3)
    particles = []
    if n:
        for D in values:
            for start in ("clustered", "uniform"):
                particles.append(particle_average(d, beta, D, n=n, t_end=t_end, dt=dt, seed=seed, start=start,
                                                  progress=progress))
    pde = []
    if pde_L:
        for D in values:
            for start in ("clustered", "uniform"):
                pde.append(pde_state(beta, D, start=start, L=pde_L, t_end=pde_t_end, dt=PDE_DT, seed=seed,
                                      progress=progress))
    # the transitions last: every request above is checked (and the PDE's own checks run) before them
    modes_out = transitions(d, beta, modes, L=L, accuracy=accuracy, progress=progress,
                            trace_continuous=trace_continuous)
    fold = modes_out[0].fold
    fold_point = (fold.value, modes_out[0].fold_amplitude) if fold is not None and modes_out[0].fold_amplitude \
        is not None else (None if fold is None else (fold.value, float("nan")))
    return PhaseDiagram(d, beta, bif.critical_noise, bif.continuous, discontinuity_threshold(d), fold_point,
                        branch, at, particles,
                        {"landau_slope": bif.slope, "q": bif.q, "n": n, "t_end": t_end, "dt": dt, "seed": seed,
                         "branch": branch.meta, "pde_L": pde_L, "pde_t_end": pde_t_end,
                         "fold_accuracy": None if fold is None else fold.accuracy}, pde, modes_out)


def check_transition_cost(d: int, n_betas: int, modes: int, L: int = 32) -> None:
    """Refuse, before the first branch, a request whose branches (``n_betas`` x ``modes``) would take too long
    (:func:`numerics.noise.transitions.estimate_work`, :mod:`numerics.common.limits`)."""
    from numerics.common.limits import check_work
    from numerics.noise.transitions import estimate_work

    check_work(estimate_work(d, n_betas, modes, L),
               f"the transitions of {n_betas} beta value(s) x {modes} mode(s) (d = {d}, L = {L})")


def plot_phase_diagram(ph: PhaseDiagram, path: str) -> str:
    r""":math:`r` against :math:`D`: stable (solid) and unstable (dashed) branches, the uniform state,
    :math:`D_c`, the fold and the first-order noise, particle averages; with the transitions of modes
    :math:`k \ge 2`, a second panel with every mode's branch (amplitude :math:`m_k = E P_k` against :math:`D`)."""
    import matplotlib.pyplot as plt

    from numerics.common.provenance import atomic_write

    br = ph.branch
    higher = [tr for tr in ph.transitions[1:] if tr.branches]
    if higher:
        fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 4.8))
        _plot_mode_branches(ax2, ph)
    else:
        fig, ax = plt.subplots(figsize=(7.5, 4.8))
    Dmax = max([ph.critical_noise * 1.3, *(br.D.tolist() or [0])] + [p.D * 1.05 for p in ph.particles])
    ax.plot([0, ph.critical_noise], [0, 0], "k--", lw=1.2, label="uniform state (unstable)")
    ax.plot([ph.critical_noise, Dmax], [0, 0], "k-", lw=1.8, label="uniform state (stable)")
    stable = br.stable_guess
    for mask, style, label in ((stable, "-", "stationary branch (stable)"),
                               (~stable, "--", "stationary branch (unstable)")):
        Dm = np.where(mask, br.D, np.nan)
        ax.plot(Dm, np.where(mask, br.r, np.nan), style, color="tab:blue", lw=2, label=label)
    ax.axvline(ph.critical_noise, color="tab:red", lw=1, ls=":",
               label=f"linear threshold $D_c$ = {ph.critical_noise:.4g}")
    if ph.fold:
        ax.plot([ph.fold[0]], [ph.fold[1]], "o", color="tab:purple", label=f"fold $D$ = {ph.fold[0]:.6g}")
    first = ph.first_order
    if first is not None and first.value > ph.critical_noise:
        ax.axvline(first.value, color="black", lw=1.2, ls="-.",
                   label=f"first-order noise $D_{{1st}}$ = {first.value:.6g} (equal free energy)")
    for start, marker in (("clustered", "s"), ("uniform", "^")):
        pts = [p for p in ph.particles if p.start == start]
        if pts:
            ax.errorbar([p.D for p in pts], [p.r for p in pts], yerr=[p.std for p in pts], fmt=marker,
                        color="tab:orange" if start == "clustered" else "tab:green", ms=7, capsize=3,
                        mfc="none" if start == "uniform" else None,
                        label=f"particles from a {start} start (n = {ph.meta['n']})")
    for start, marker in (("clustered", "D"), ("uniform", "v")):
        pts = [p for p in ph.pde if p.start == start]
        if pts:
            ax.plot([p.D for p in pts], [p.r for p in pts], marker, color="tab:brown", ms=6,
                    mfc="none" if start == "uniform" else None,
                    label=f"$\\mathbb{{S}}^2$ PDE at t = {ph.meta['pde_t_end']:g} from a {start} start "
                          f"(L = {ph.meta['pde_L']})")
    if ph.particles:
        # finite n: the uniform state's fluctuations, E|mean|^2 = D / (n (D - D_c)) (proofs_notes/noise-threshold.md)
        Du = np.linspace(ph.critical_noise * 1.02, Dmax, 100)
        ax.plot(Du, np.sqrt(Du / (ph.meta["n"] * (Du - ph.critical_noise))), ":", color="tab:green", lw=1,
                label=f"uniform state at n = {ph.meta['n']}: " + r"$\sqrt{D / (n (D - D_c))}$")
    kind = "continuous" if ph.continuous else "discontinuous"
    ax.set_title(f"noisy usa on $S^{{{ph.d - 1}}}$, $\\beta$ = {ph.beta:g}: {kind} transition "
                 f"($\\beta^*$ = {ph.discontinuity_beta:.4g})", fontsize=10)
    ax.set_xlabel("noise $D$")
    ax.set_ylabel(r"order parameter $r = |\mathbb{E}\, x|$")
    ax.set_xlim(0, Dmax)
    ax.set_ylim(-0.03, 1.02)
    ax.legend(fontsize=7, loc="center left")
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, format="png", dpi=110))
    plt.close(fig)
    return path


def _plot_mode_branches(ax, ph: PhaseDiagram) -> None:
    """Every mode's branch (both sides for transcritical ones) as amplitude m_k against D, its threshold, its
    fold and its first-order noise."""
    for tr in ph.transitions:
        if not tr.branches:
            continue
        colour = "tab:blue" if tr.mode == 1 else f"C{tr.mode + 2}"
        for j, side in enumerate(tr.branches):
            stable = side.stable_guess
            for mask, style in ((stable, "-"), (~stable, "--")):
                ax.plot(np.where(mask, side.D, np.nan), np.where(mask, side.s, np.nan), style, color=colour,
                        lw=1.6, label=f"mode {tr.mode} ({tr.kind}; solid: stable in its class)"
                        if j == 0 and style == "-" else None)
        ax.axvline(tr.threshold, color=colour, lw=0.8, ls=":")
        if tr.first_order is not None and tr.first_order.value != tr.threshold:
            ax.axvline(tr.first_order.value, color=colour, lw=1, ls="-.")
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xlabel("noise $D$")
    ax.set_ylabel(r"amplitude $m_k = \mathbb{E}\, P_k(\langle x, e\rangle)$  ($k$-fold: $\mathbb{E} \cos k\theta$)")
    ax.set_title(r"branches of the modes $k$ (dotted: $D_k$; dash-dot: first-order noise)", fontsize=10)
    ax.legend(fontsize=7)
