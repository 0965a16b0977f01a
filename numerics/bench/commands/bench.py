"""``attnflow bench``: speed of the field kernels, measured in one process against in-process references.

Suites: ``field`` times attention_field at n = 4096 against the honest floor (the same GEMM, exp, GEMM in
cache-sized tiles), the hardware bound measured in this process (dgemm and exp rates, recorded per d under
``hardware``), the general-QK path, the fused kernel and the installed peers (JAX, torch SDPA; optional);
``fourier`` times the O(n K) circle field against the direct O(n^2) field (n = 16384, beta = 10), interleaved,
and one evaluation at n = 10^6; ``simulate`` measures the share of an rk4 run spent outside its field
evaluations (minima of interleaved rounds, the median of paired rounds and the median CPU-time share);
``adaptive`` counts the field evaluations of the adaptive integrators against SciPy's DOP853 at matched
accuracy (counts, no timing); ``harmonic`` times the S^2 spherical-harmonic field (n = 10^6 at beta = 1 and 4 with
its error on a subsample of direct rows, the crossover n against the direct field at beta = 1, 4, 9, and an RK4
run of n = 10^5 tokens to t = 20 against the direct run's first steps, extrapolated;
:mod:`numerics.harmonic.bench`); ``energy`` times the standalone energy (``interaction_energy``) against one
field evaluation at n = 256, 1024, 4096 and d = 3, 16, 64 (:mod:`numerics.bench.energy_cost`; goal: at most half).
``all`` (default) runs the six. The timed comparisons alternate their contenders
within each round and keep the minimum over the rounds (``simulate`` also reports medians).
"""
from __future__ import annotations

from numerics.common.errors import require_int
from numerics.common.render import emit, table

NAME = "bench"
ORDER = 26
HELP = "time attention_field against an honest floor, the measured hardware bound and installed peers"

#: targets for the Fourier field (proofs_notes/circle-fourier-field.md)
FOURIER_MIN_SPEEDUP = 50.0
FOURIER_MAX_RELATIVE_ERROR = 1e-12
FOURIER_LARGE_MAX_SECONDS = 1.0


def add_arguments(p):
    p.add_argument("--suite", choices=("field", "fourier", "simulate", "adaptive", "harmonic", "energy", "all"), default="all",
                   help="which benchmarks to run (default all)")
    p.add_argument("--n", type=int, default=4096, help="particles for the field suite (default 4096)")
    p.add_argument("--repeats", type=int, default=5, help="timing repeats, the minimum is kept (default 5)")
    p.add_argument("--model", choices=("sa", "usa"), default="sa", help="model of the field suite (default sa)")
    p.add_argument("--fourier-n", type=int, default=16384, help="particles for the Fourier comparison (16384)")
    p.add_argument("--fourier-large-n", type=int, default=1_000_000,
                   help="particles for the single large Fourier evaluation (default 10^6)")
    p.add_argument("--harmonic-n", type=int, default=1_000_000,
                   help="tokens of the large S^2 harmonic evaluation (default 10^6)")
    p.add_argument("--harmonic-sim-n", type=int, default=100_000,
                   help="tokens of the S^2 harmonic RK4 simulation (default 10^5)")
    p.add_argument("--harmonic-t-end", type=float, default=20.0,
                   help="end time of the S^2 harmonic simulation (default 20; dt = 0.1)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def check_suites(args) -> None:
    """Validate and cost the sizes of every suite that will run, before any of them starts (a bad
    --fourier-n must not wait for the field suite's minutes)."""
    from numerics.bench.field_floor import check_field_work
    from numerics.bench.simulate_share import check_simulate_work

    repeats = require_int(args.repeats, "repeats", minimum=1)
    if args.suite in ("field", "all"):
        check_field_work(args.n, repeats)
    if args.suite in ("fourier", "all"):
        from numerics.circle.fourier import check_fourier_bench

        check_fourier_bench(args.fourier_n, args.fourier_large_n, repeats)
    if args.suite in ("simulate", "all"):
        for d in SIMULATE_DIMS:
            check_simulate_work(SIMULATE_N, d, SIMULATE_STEPS, repeats)
    if args.suite in ("energy", "all"):
        from numerics.bench.energy_cost import ENERGY_SIZES, check_energy_work

        check_energy_work(ENERGY_SIZES, repeats)


#: the simulate suite's sizes
SIMULATE_N, SIMULATE_DIMS, SIMULATE_STEPS = 2048, (3, 64), 10


def run(args) -> int:
    from numerics.bench.field_floor import benchmark_field
    from numerics.common.provenance import StderrProgress

    progress = StderrProgress("bench")  # the suites print nothing while they time: say what is running
    check_suites(args)  # every suite's sizes validated and costed before the first one runs
    payload, parts = {}, []
    if args.suite in ("field", "all"):
        progress.note(f"field suite: attention_field vs its floor at n = {args.n}, {args.repeats} repeats ...")
        rows = benchmark_field(n=args.n, repeats=args.repeats, model=args.model)
        payload["results"] = rows
        payload["hardware"] = [{"d": r["d"], **r["rates"]} for r in rows]  # measured in each d's rounds
        peer_names = sorted({name for r in rows for name in r["peers"]})

        def ms(x):
            return "-" if x is None else f"{1e3 * x:.1f} ms"

        text = table([(r["n"], r["d"], r["tile_rows"], ms(r["field_seconds"]), ms(r["general_seconds"]),
                       ms(r["fused_seconds"]), ms(r["floor_seconds"]), ms(r["bound_seconds"]),
                       f"{r['bound_ratio']:.2f}x", f"{r['general_bound_ratio']:.2f}x",
                       "-" if r["fused_bound_ratio"] is None else f"{r['fused_bound_ratio']:.2f}x",
                       f"{r['target']}x" if r["target"] else "-", r["within_target"],
                       *(f"{ms(r['peers'][p])} ({r['peer_ratios'][p]:.2f})" if p in r["peers"] else "-"
                         for p in peer_names))
                      for r in rows],
                     ["n", "d", "tile", "field", "general QK", "numba", "floor", "bound", "field/bound",
                      "general/bound", "numba/bound", "target", "met", *peer_names])
        r0 = rows[0]
        compile_s = r0["numba_compile_seconds"]
        text += ("\nhardware, this process, one thread, interleaved with the field: " + "; ".join(
                     f"d={r['d']}: dgemm {r['rates']['gemm_flops_per_second'] / 1e9:.1f} GFLOP/s, "
                     f"exp {r['rates']['exp_per_second'] / 1e9:.2f} G/s" for r in rows)
                 + "; bound = 4 n^2 (d+1) / dgemm + n^2 / exp"
                 "\nfield = the default (NumPy, Q = K = I: symmetric weights, upper block triangle, half the exps "
                 "the bound counts); general QK = the NumPy path for general Q, K (here Q = I as a matrix); "
                 "numba = the fused kernel (general Q, K)"
                 "\nfloor = the full GEMM + exp + GEMM in cache-sized tiles; contenders interleaved, "
                 "minimum of the repeats; met = the faster of field and numba within the target"
                 "\nnumba: " + ("not installed (pip install 'attnflow[fast]')" if compile_s is None else
                                f"compile or cache load {compile_s:.2f} s before timing (not in the times)")
                 + "; peers: " + (", ".join(peer_names) + " (in brackets: best attnflow time / peer time, < 1 = "
                                  "attnflow faster)" if peer_names else "none installed")
                 + f"\nload average before {', '.join(f'{x:.2f}' for x in r0['load_average_before'])}, after "
                 f"{', '.join(f'{x:.2f}' for x in r0['load_average_after'])} (1, 5, 15 min; 2 cores): other "
                 "processes change every time; compare ratios, not seconds")
        parts.append(text)
    if args.suite in ("fourier", "all"):
        from numerics.circle.fourier import bench_fourier

        n = require_int(args.fourier_n, "fourier-n", minimum=2)
        n_large = require_int(args.fourier_large_n, "fourier-large-n", minimum=2)
        progress.note(f"fourier suite: direct vs Fourier field at n = {n}, one evaluation at n = {n_large} ...")
        report = bench_fourier(n=n, beta=10.0, n_large=n_large, repeats=args.repeats)
        for r in report["models"].values():
            r["within_target"] = (r["speedup"] >= FOURIER_MIN_SPEEDUP
                                  and r["relative_error"] <= FOURIER_MAX_RELATIVE_ERROR)
        big = report["large"]
        big["within_target"] = big["fourier_seconds"] < FOURIER_LARGE_MAX_SECONDS
        payload["fourier"] = report
        rows = [(m, report["n"], r["harmonics"], f"{r['direct_seconds']:.3f} s", f"{1e3 * r['fourier_seconds']:.2f} ms",
                 f"{r['speedup']:.0f}x", f"{r['relative_error']:.1e}", f">= {FOURIER_MIN_SPEEDUP:g}x, <= 1e-12", r["within_target"])
                for m, r in report["models"].items()]
        text = table(rows, ["model", "n", "K", "direct", "fourier", "speed-up", "rel. error", "target", "met"])
        text += (f"\nfourier at n = {big['n']} (sa, K = {big['harmonics']}): {big['fourier_seconds']:.3f} s per "
                 f"evaluation (target < {FOURIER_LARGE_MAX_SECONDS:g} s, met: {'yes' if big['within_target'] else 'no'}); "
                 "beta = 10, usa in the rescaled unit")
        parts.append(text)
    if args.suite in ("simulate", "all"):
        from numerics.bench.simulate_share import benchmark_simulate

        progress.note("simulate suite: rk4 with every frame saved vs its bare field evaluations ...")
        rows = [benchmark_simulate(n=SIMULATE_N, d=d, steps=SIMULATE_STEPS, repeats=args.repeats)
                for d in SIMULATE_DIMS]
        payload["simulate"] = rows
        text = table([(r["n"], r["d"], r["steps"], f"{r['simulate_seconds']:.3f} s", f"{r['field_seconds']:.3f} s",
                       f"{100 * r['outside_share']:.1f}%", f"{100 * r['outside_share_paired_median']:.1f}%",
                       f"{100 * r['outside_share_cpu_median']:.1f}%", f"< {100 * r['target']:.0f}%", r["within_target"])
                      for r in rows], ["n", "d", "rk4 steps", "simulate", "4 x steps fields", "outside (minima)",
                                       "outside (median of pairs)", "outside (CPU time)", "target", "met"])
        text += ("\nsimulate saves every frame and its energy; interleaved with the bare fields, the order alternating; "
                 "met = both wall-time shares below the target; CPU time = this process's, median of the rounds "
                 "(robust to other processes); one thread; load average " + "; ".join(
                     f"d={r['d']}: {r['load_average_before'][0]:.2f} -> {r['load_average_after'][0]:.2f}" for r in rows))
        parts.append(text)
    if args.suite in ("adaptive", "all"):
        from numerics.bench.adaptive_evals import benchmark_adaptive

        progress.note("adaptive suite: field evaluations against SciPy's DOP853 at matched accuracy ...")
        report = benchmark_adaptive()
        payload["adaptive"] = report
        rows = [(name + (f" ({r['method_used']})" if "method_used" in r else ""), f"{r['rtol']:.0e}",
                 f"{r['error']:.1e}", r["evaluations"],
                 "-" if r.get("scipy_evaluations_at_same_error") is None else f"{r['scipy_evaluations_at_same_error']:.0f}",
                 "-" if r.get("ratio_to_scipy") is None else f"{r['ratio_to_scipy']:.2f}")
                for name, runs in report["runs"].items() for r in runs]
        text = table(rows, ["method", "rtol", "max error", "evaluations", "scipy at same error", "ratio"])
        text += (f"\nsa, n = {report['n']}, d = {report['d']}, beta = {report['beta']:g}, t_end = {report['t_end']:g}, "
                 f"{report['outputs']} outputs; error against SciPy DOP853 at rtol 2.5e-14; counts, not times")
        parts.append(text)
    if args.suite in ("harmonic", "all"):
        from numerics.bench.harmonic_suite import run_harmonic_suite

        payload["harmonic"], text = run_harmonic_suite(args, progress)
        parts.append(text)
    if args.suite in ("energy", "all"):
        from numerics.bench.energy_cost import benchmark_energy

        progress.note("energy suite: interaction_energy vs one field evaluation, interleaved ...")
        rows = benchmark_energy(repeats=args.repeats)
        payload["energy"] = rows
        text = table([(r["n"], r["d"], r["block"], f"{1e3 * r['energy_seconds']:.3f} ms",
                       f"{1e3 * r['field_seconds']:.3f} ms", f"{r['ratio']:.2f}", f"{r['ratio_median']:.2f}",
                       "-" if r["compiled_ratio"] is None else f"{r['compiled_ratio']:.2f}",
                       "-" if r["compiled_ratio"] is None else f"{r['compiled_ratio_median']:.2f}",
                       f"<= {r['target']:g}", r["within_target"], r["compiled_within_target"]) for r in rows],
                     ["n", "d", "energy rows", "energy", "field", "energy/field (minima)", "(median of rounds)",
                      "compiled/field", "(median)", "target", "met", "compiled met"])
        text += ("\nenergy = interaction_energy(X, 1.0) (pair sum, upper block triangle: GEMM, expm1, two sums per term); "
                 "compiled = interaction_energy(X, 1.0, backend='numba') (one expm1 per unordered pair; - without Numba); "
                 "field = make_field(d, 1.0)(X) (NumPy, Q = K = I: upper block triangle, GEMM, exp, two GEMMs per term); "
                 "interleaved, the order alternating, minimum and median over the rounds; one thread; load average "
                 f"{rows[0]['load_average_before'][0]:.2f} -> {rows[-1]['load_average_after'][0]:.2f}")
        parts.append(text)
    emit(args, payload, "\n\n".join(parts))
    return 0
