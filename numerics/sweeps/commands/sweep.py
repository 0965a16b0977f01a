"""``attnflow sweep run|resume|status|plot|observables``: parameter sweeps on Dask, results in a Zarr store.

This module imports only the standard library and attnflow at import time; dask, distributed, zarr and xarray
(the ``sweeps`` extra) are imported when a sweep runs, so the rest of the CLI works without them and the sweep
command says which extra to install.
"""
from __future__ import annotations

from numerics.common.errors import InputError
from numerics.common.render import emit, key_values, table

NAME = "sweep"
ORDER = 95
HELP = "parameter sweeps on Dask with results in a Zarr store: run, resume, status, plot, observables, convert"
#: inputs and outputs (the spec, the store, --plot, convert's --out) are classified in numerics.common.paths
DESCRIPTION = (HELP + ". A sweep is a TOML specification ([model], [sweep] axes, [run], [observables]); each "
               "cell's initial state comes from SeedSequence(root_seed, spawn_key=(seed,)), so the store does not "
               "depend on the scheduler or the number of workers. Needs: pip install 'attnflow[sweeps]'.")


def add_arguments(p):
    sub = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    sub.required = True

    def engine(q):
        q.add_argument("--scheduler", default="local",
                       help="local (a Dask cluster of processes on this machine, default), synchronous (in this "
                            "process), slurm (worker jobs submitted with sbatch through dask-jobqueue) or "
                            "tcp://HOST:PORT (an existing dask scheduler)")
        q.add_argument("--workers", type=int, default=2,
                       help="processes of the local cluster, or SLURM worker jobs (default 2)")
        q.add_argument("--queue", help="slurm: partition of the worker jobs (default: the cluster's default)")
        q.add_argument("--walltime", default="01:00:00", help="slurm: time limit of each worker job (default 01:00:00)")
        q.add_argument("--memory", default="2GiB", help="slurm: memory of each worker job (default 2GiB)")
        q.add_argument("--account", help="slurm: account charged (sbatch -A; default none)")
        q.add_argument("--job-extra", action="append", metavar="DIRECTIVE",
                       help="slurm: another #SBATCH directive, e.g. --job-extra=--qos=short (repeatable; default none)")
        q.add_argument("--json", action="store_true", help="print one JSON object")

    q = sub.add_parser("run", help="create the store and run every cell")
    q.add_argument("spec", help="sweep specification (TOML)")
    q.add_argument("--store", required=True, metavar="OUT.zarr", help="Zarr store to create (must not exist)")
    q.add_argument("--block", type=int, help="cells per task, integrated as one ensemble (default: [run] block, "
                   "else chosen from the work estimate)")
    engine(q)
    q = sub.add_parser("resume", help="run the pending cells of a store (and the failed ones with --retry-failed)")
    q.add_argument("store", metavar="OUT.zarr")
    q.add_argument("--retry-failed", action="store_true", help="run failed cells again")
    q.add_argument("--repair", action="store_true", help="delete unreadable shards and run their cells again "
                   "(default: refuse a damaged store)")
    engine(q)
    q = sub.add_parser("convert", help="copy a store of an earlier format (one file per cell) into the current "
                                       "sharded format")
    q.add_argument("store", metavar="OLD.zarr")
    q.add_argument("--out", required=True, metavar="NEW.zarr", help="the new store (must not exist)")
    q.add_argument("--block", type=int, help="cells per block of the new store (default: from the work estimate)")
    q.add_argument("--json", action="store_true", help="print one JSON object")
    q = sub.add_parser("status", help="cells done, failed and pending; the errors of failed cells")
    q.add_argument("store", metavar="OUT.zarr")
    q.add_argument("--json", action="store_true", help="print one JSON object")
    q = sub.add_parser("plot", help="phase diagram (--x and --y) or curves with confidence bands (--x only)")
    q.add_argument("store", metavar="OUT.zarr")
    q.add_argument("--x", required=True, help="axis on the horizontal axis")
    q.add_argument("--y", help="axis on the vertical axis: a phase diagram (heat map)")
    q.add_argument("--hue", help="without --y: one curve per value of this axis")
    q.add_argument("--value", required=True,
                   help="an output averaged over seeds (clusters, ...) or p_<0/1 output> (p_one_cluster)")
    q.add_argument("--sel", action="append", metavar="NAME=VALUE", help="fix another axis (repeatable)")
    q.add_argument("--no-theory", action="store_true",
                   help="do not overlay the theory (l_max(beta) on cluster counts; the noise transitions on noisy "
                        "sweeps; default: overlay)")
    q.add_argument("--plot", "--out", dest="out", metavar="FILE.png",  # --plot as in every command; --out kept
                   help="figure path (default: STORE_VALUE_X[_Y].png beside the store)")
    q.add_argument("--json", action="store_true", help="print one JSON object")
    q = sub.add_parser("observables", help="the registered observables, their parameters and outputs")
    q.add_argument("--json", action="store_true", help="print one JSON object")


def run(args) -> int:
    return {"run": _run, "resume": _resume, "status": _status, "plot": _plot,
            "observables": _observables, "convert": _convert}[args.action](args)


def _slurm(args):
    from numerics.sweeps.runner import SlurmOptions

    given = [f"--{k.replace('_', '-')}" for k in ("queue", "account", "job_extra") if getattr(args, k) is not None]
    if args.scheduler != "slurm" and given:
        raise InputError(f"{', '.join(given)} apply to --scheduler slurm only")
    return SlurmOptions(queue=args.queue, walltime=args.walltime, memory=args.memory, account=args.account,
                        job_extra=tuple(args.job_extra or ()))


def _convert(args) -> int:
    from numerics.sweeps.store import convert_store

    payload = convert_store(args.store, args.out, args.block)
    text = key_values([("from", f"{payload['source']} ({payload['source_format']})"),
                       ("to", f"{payload['target']} ({payload['target_format']})"), ("cells", payload["cells"]),
                       ("done / failed / pending", " / ".join(str(payload["counts"][k])
                                                              for k in ("done", "failed", "pending"))),
                       ("cells per block", payload["block"]), ("files", payload["files"])])
    emit(args, payload, text)
    return 0


def _report(args, report) -> int:
    from numerics.cli import whole_run, whole_run_text

    payload = report.to_dict()
    payload.update(whole_run())  # "seconds" is the sweep alone; these add start-up, imports and the store
    c = payload["counts"]
    text = key_values([("store", payload["store"]), ("scheduler", payload["scheduler"]),
                       ("workers", payload["workers"]),
                       ("cells per task", f"{payload['block']} ({payload['tasks']} tasks)"),
                       ("cells computed now", payload["computed"]),
                       ("failed now", payload["failed_now"]),
                       ("store: done / failed / pending", f"{c['done']} / {c['failed']} / {c['pending']}"),
                       ("wall time (seconds)", f"{payload['seconds']:.1f} (sweep; {whole_run_text(payload)})")])
    if c["failed"]:
        text += f"\n\n{c['failed']} cell(s) failed: attnflow sweep status {payload['store']} shows why; " \
                f"attnflow sweep resume {payload['store']} --retry-failed runs them again"
    emit(args, payload, text)
    return 0


def _run(args) -> int:
    from numerics.sweeps.runner import run_sweep
    from numerics.sweeps.spec import SweepSpec

    spec = SweepSpec.from_file(args.spec)
    return _report(args, run_sweep(spec, args.store, scheduler=args.scheduler, workers=args.workers,
                                   block=args.block, slurm=_slurm(args)))


def _resume(args) -> int:
    from numerics.sweeps.runner import resume_sweep

    return _report(args, resume_sweep(args.store, scheduler=args.scheduler, workers=args.workers,
                                      retry_failed=args.retry_failed, repair=args.repair, slurm=_slurm(args)))


def _status(args) -> int:
    from numerics.sweeps.store import open_store

    store = open_store(args.store)
    counts = store.counts()
    errors = store.errors()
    dims = store.spec.dims
    rows = [(", ".join(f"{d}={_val(store.spec.axes[d][i])}" for d, i in zip(dims, idx)), err)
            for idx, err in errors]
    payload = {"store": str(store.path), "dims": dict(zip(dims, store.spec.shape)), "counts": counts,
               "outputs": [o.name for o in store.outputs],
               "failed": [{"cell": dict(zip(dims, map(_val, (store.spec.axes[d][i] for d, i in zip(dims, idx))))),
                           "error": err} for idx, err in errors]}
    text = key_values([("store", str(store.path)),
                       ("axes", ", ".join(f"{d} ({k})" for d, k in zip(dims, store.spec.shape))),
                       ("outputs", ", ".join(payload["outputs"])),
                       ("done / failed / pending", f"{counts['done']} / {counts['failed']} / {counts['pending']}")])
    if rows:
        text += "\n\n" + table(rows[:40], ["failed cell", "error"], max_width=100)
    emit(args, payload, text)
    return 0


def _val(v):
    return v.item() if hasattr(v, "item") else v


def _plot(args) -> int:
    import os

    from numerics.sweeps.plotting import parse_selection, plot_curves, plot_phase_diagram
    from numerics.sweeps.store import open_store

    store = open_store(args.store)
    ds = store.dataset()
    selection = parse_selection(args.sel)
    base = os.path.splitext(os.path.normpath(args.store))[0]
    out = args.out or f"{base}_{args.value}_{args.x}{'_' + args.y if args.y else ''}.png"
    if args.y:
        if args.hue:
            raise InputError("--hue draws curves; a phase diagram (--y) has no hue")
        path = plot_phase_diagram(ds, args.x, args.y, args.value, out, selection, theory=not args.no_theory)
        kind = "phase diagram"
    else:
        path = plot_curves(ds, args.x, args.value, out, hue=args.hue, selection=selection,
                           theory=not args.no_theory)
        kind = "curves"
    emit(args, {"plot": path, "kind": kind, "value": args.value, "x": args.x, "y": args.y, "hue": args.hue},
         f"{kind} of {args.value}: plot written to {path}")  # one line (emit adds none when it is there)
    return 0


def _observables(args) -> int:
    from numerics.sweeps.observables import registered

    obs = registered()
    payload = {name: {"doc": o.doc, "parameters": o.parameters(),
                      "outputs": [{"name": out.name, "over_time": out.over_time, "doc": out.doc}
                                  for out in o.outputs]} for name, o in sorted(obs.items())}
    rows = [(name, ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                             for k, v in p["parameters"].items()) or "-",
             ", ".join(out["name"] + (" (time)" if out["over_time"] else "") for out in p["outputs"]))
            for name, p in payload.items()]
    emit(args, {"observables": payload}, table(rows, ["observable", "parameters", "outputs"], max_width=80))
    return 0

