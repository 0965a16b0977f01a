"""The ``harmonic`` suite of ``attnflow bench``: the S^2 spherical-harmonic field (:mod:`numerics.harmonic.bench`)
measured and rendered as tables."""
from __future__ import annotations

from numerics.common.errors import require_int, require_real
from numerics.common.render import table
from numerics.harmonic.bench import (LARGE_MAX_SECONDS, SIMULATION_MIN_SPEEDUP, bench_crossover, bench_large,
                                     bench_simulation, check_bench_work)

SIM_DT = 0.1
DIRECT_STEPS = 1
SUBSAMPLE = 200


def run_harmonic_suite(args, progress) -> tuple[dict, str]:
    """Validate and cost the suite, run its three parts and return (payload, text)."""
    n_large = require_int(args.harmonic_n, "harmonic-n", minimum=2)
    n_sim = require_int(args.harmonic_sim_n, "harmonic-sim-n", minimum=2)
    t_end = require_real(args.harmonic_t_end, "harmonic-t-end", minimum=0.0, strict_minimum=True)
    repeats = require_int(args.repeats, "repeats", minimum=1)
    check_bench_work(n_large, SUBSAMPLE, n_sim, t_end, SIM_DT, DIRECT_STEPS, repeats)
    progress.note(f"harmonic suite: one S^2 field evaluation at n = {n_large} (beta = 1, 4) ...")
    large = bench_large(n=n_large, subsample=min(SUBSAMPLE, n_large), repeats=repeats)
    progress.note("harmonic suite: crossover against the direct field (beta = 1, 4, 9) ...")
    cross = bench_crossover(repeats=repeats)  # the grid of numerics.harmonic.bench.CROSSOVER_NS
    progress.note(f"harmonic suite: RK4 simulation, n = {n_sim}, beta = 4, to t = {t_end:g} ...")
    sim = bench_simulation(n=n_sim, t_end=t_end, dt=SIM_DT, direct_steps=DIRECT_STEPS)
    rows = [(r["n"], f"{r['beta']:g}", r["degree"], r["engine"], f"{r['seconds']:.2f} s", f"{r['cpu_seconds']:.2f} s",
             f"{r['traced_peak_bytes'] / 2**20:.0f} MiB", f"{r['peak_rss_bytes'] / 2**20:.0f} MiB",
             f"{r['max_error_on_subsample']:.1e}", f"{r['direct_cpu_seconds_extrapolated']:.3g} s",
             r["within_target"]) for r in large]
    text = table(rows, ["n", "beta", "L", "engine", "wall", "CPU", "NumPy peak", "process peak RSS",
                        f"error ({large[0]['subsample_rows']} rows)", "direct (extrapolated CPU)", "met"])
    text += (f"\nsa, tolerance {large[0]['tol']:g}; error against the direct blocked sums on a random subsample of "
             f"rows; target CPU < {LARGE_MAX_SECONDS:g} s, NumPy peak < 2 GiB, error <= tolerance")
    shown = (256, 1024, 4096)
    text += "\n\n" + table([(f"{c['beta']:g}", c["crossover_n"] or "-", c["predicted_crossover_n"] or "-",
                             *(f"{p['harmonic_cpu_seconds'] / p['direct_cpu_seconds']:.2g}"
                               for p in c["points"] if p["n"] in shown)) for c in cross],
                           ["beta", "crossover n (measured)", "crossover n (cost model)",
                            *(f"harmonic/direct at n={n}" for n in shown)])
    text += "\n\n" + table([(sim["n"], f"{sim['beta']:g}", f"{sim['t_end']:g}", sim["steps"],
                             f"{sim['harmonic_seconds']:.1f} s", f"{sim['harmonic_cpu_seconds']:.1f} s",
                             f"{sim['direct_cpu_seconds_extrapolated']:.3g} s",
                             f"{sim['speedup_extrapolated_cpu']:.0f}x", f"{sim['trajectory_difference_short']:.1e}",
                             sim["within_target"])],
                           ["n", "beta", "t_end", "rk4 steps", "harmonic wall", "harmonic CPU",
                            "direct CPU (extrapolated)", "speed-up", f"max |dX| at t = {sim['short_t']:g}", "met"])
    text += (f"\nsa, RK4 dt = {sim['dt']:g}; the direct run is timed for its first {sim['direct_steps_timed']} steps "
             f"and extrapolated (the whole run would take hours); target speed-up >= {SIMULATION_MIN_SPEEDUP:g}x; "
             "|dX| = harmonic vs direct trajectory over those steps (mostly RK4's O(dt^4) from the two fields' "
             "different extensions off the sphere); CPU = this process (the machine is shared)")
    return {"large": large, "crossover": cross, "simulation": sim}, text
