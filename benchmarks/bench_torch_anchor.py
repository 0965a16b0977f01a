"""The torch anchor of the sweeps guide's table: the authors' batched phase-diagram script, run here on CPU.

Run: nice python benchmarks/bench_torch_anchor.py --script PATH/phase-diagrams.py [--json]
     [--torch-python /work/venv-torch/bin/python]

``PATH/phase-diagrams.py`` is the file of the public repository borjanG/2023-transformers-rotf (Geshkovski,
Letrouit, Polyanskiy, Rigollet; commit 538ba839f7fc read here). It needs PyTorch, which is never a dependency of
attnflow: the script runs it in a separate interpreter. Make one with

    python -m venv /work/venv-torch && /work/venv-torch/bin/pip install torch numpy scipy

(or pass ``--torch-python``, or set ``ATTNFLOW_TORCH_PYTHON``). Without it the script says so and exits 2.

What is run, unmodified: the authors' module is loaded from its file and its own ``do_results(args)`` (the loop
over betas, each a batch of systems integrated by ``simu_xform.step_1`` with its 200 statistics checkpoints) is
timed, with ``--use_softmax`` (sa, V = I, Q = K = I), their step 0.1, to t = 50, n = 32, d = 2 and d = 3. Their
code places every tensor on ``'cuda'``; the driver maps that device to the CPU (``Tensor.to`` and ``torch.eye``
are wrapped; no line of their file changes), stubs ``tqdm`` and ``matplotlib`` (progress bar and plots, not
called in the timed part) and sends their prints to /dev/null. Only size parameters are chosen: ``--batch`` and
``--betas`` (two runs: attnflow's B = 256 as 4 betas x 64 systems, and their default batch of 2048 systems x 2
betas), over [0.5, 16] as attnflow's table. One torch thread (``torch.set_num_threads(1)``), float64 (their
``set_default_dtype``). Systems per core-hour = 3600 x systems / CPU seconds of the child process during
``do_results``.

Accuracy: their step is x <- normalize(x + eta softmax(beta X X^T) X) (the Post-LN layer, first order in eta);
one trajectory (n = 32, seed 0, beta = 1 and 4) is run with their ``step_1`` from attnflow's start to their end time and
compared with attnflow's RK4 at the same dt = 0.1 and with a reference (attnflow RK4, dt = 0.001): the largest
distance of a token from its reference position is printed for both. A benchmark, not a test: nothing in tests
imports it.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

#: (label, d, batch, betas): attnflow's B = 256 and the authors' default batch
RUNS = (("d2", 2, 64, 4), ("d3", 3, 64, 4), ("d2", 2, 2048, 2), ("d3", 3, 2048, 2))
N, STEP, T_END, BETA_MIN, BETA_MAX = 32, 0.1, 50.0, 0.5, 16.0
HOWTO = ("the torch anchor needs a separate interpreter with PyTorch: python -m venv /work/venv-torch && "
         "/work/venv-torch/bin/pip install torch numpy scipy (or --torch-python PATH / ATTNFLOW_TORCH_PYTHON)")

# The child runs in the torch interpreter: load the authors' file, map 'cuda' to the CPU, time do_results.
CHILD = r'''
import contextlib, importlib.util, io, json, os, sys, time, types, argparse
import numpy as np
import torch
torch.set_num_threads(1)
_to, _eye = torch.Tensor.to, torch.eye
def _cpu(x):
    return "cpu" if (x == "cuda" or (isinstance(x, torch.device) and x.type == "cuda")) else x
def to(self, *a, **k):
    a = tuple(_cpu(x) for x in a)
    if "device" in k: k["device"] = _cpu(k["device"])
    return _to(self, *a, **k)
def eye(*a, **k):
    if "device" in k: k["device"] = _cpu(k["device"])
    return _eye(*a, **k)
torch.Tensor.to, torch.eye = to, eye
tq = types.ModuleType("tqdm"); tq.tqdm = lambda it, **k: it
mpl = types.ModuleType("matplotlib"); mpl.pyplot = types.ModuleType("matplotlib.pyplot")
sys.modules.update({"tqdm": tq, "matplotlib": mpl, "matplotlib.pyplot": mpl.pyplot})
req = json.loads(sys.stdin.read())
spec = importlib.util.spec_from_file_location("rotf_phase_diagrams", req["script"])
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
def make_args(**kw):
    base = dict(dmodel=2, ntokens=32, batch=2048, betamin=0.1, betamax=9.0, betas=90, maxtime=0.0, step=0.1,
                use_softmax=False, randomV=0, randomKQ=0, cluster_sizes=False, disable_tqdm=True, noanneal=0,
                rawstep=False, regen_period=0.0, plotdim=False)
    base.update(kw); return argparse.Namespace(**base)
out = {"torch": torch.__version__, "threads": torch.get_num_threads()}
if req["mode"] == "time":
    args = make_args(dmodel=req["d"], ntokens=req["n"], batch=req["batch"], betas=req["betas"], betamin=req["bmin"],
                     betamax=req["bmax"], maxtime=req["t_end"], step=req["step"], use_softmax=True)
    mod.args = args  # step_1 reads the module-level args of their __main__ block
    with contextlib.redirect_stdout(io.StringIO()):
        c0, w0 = time.process_time(), time.perf_counter()
        mod.do_results(args)
        c1, w1 = time.process_time(), time.perf_counter()
    out.update(cpu_seconds=c1 - c0, wall_seconds=w1 - w0)
else:
    X0 = np.array(req["X0"])
    args = make_args(dmodel=X0.shape[1], ntokens=X0.shape[0], batch=1, step=req["step"], use_softmax=True)
    mod.args = args
    torch.set_default_dtype(torch.float64)
    with contextlib.redirect_stdout(io.StringIO()):
        s = mod.simu_xform(args, req["beta"])
        s.M.copy_(torch.from_numpy(X0)[None])
        t, steps = 0.0, 0
        while t < req["t_end"]:  # their do_single_beta's loop: step until the time reaches maxtime
            t = s.step_1(t); steps += 1
    out.update(X=s.M[0].numpy().tolist(), t=t, steps=steps)
print(json.dumps(out))
'''


def child(python: str, request: dict) -> dict:
    done = subprocess.run([python, "-c", CHILD], input=json.dumps(request), capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise SystemExit(f"error: the torch child failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def attnflow_rate(d: int, method: str, B: int = 256) -> dict:
    """Systems per core-hour of attnflow's ensemble at the table's configuration (sweeps guide: B systems, iid
    uniform starts, betas geometric over [0.5, 16], ``method`` at dt = 0.1 to t = 50, backend ``direct``)."""
    import time

    from numerics.core.members import Members
    from numerics.core.model import Model, SaveAt, Solver
    from numerics.core.sampling import uniform_sphere
    from numerics.core.simulate import simulate

    rng = np.random.default_rng(0)
    X0 = np.stack([uniform_sphere(N, d, rng) for _ in range(B)])
    c0 = time.process_time()
    simulate(Model("sa", 1.0), X0, T_END, solver=Solver(method, dt=STEP, backend="direct"), save=SaveAt(every=500),
             members=Members(beta=np.geomspace(BETA_MIN, BETA_MAX, B)))
    cpu = time.process_time() - c0
    return {"d": d, "method": method, "systems": B, "cpu_seconds": cpu, "systems_per_core_hour": 3600.0 * B / cpu,
            "load_average": list(os.getloadavg())}


def accuracy(python: str, script: str, beta: float, d: int) -> dict:
    """Largest token distance at the end from a reference: the authors' step and attnflow's RK4, both dt = 0.1."""
    from numerics.core.model import Model, SaveAt, Solver
    from numerics.core.sampling import uniform_sphere
    from numerics.core.simulate import simulate

    X0 = uniform_sphere(N, d, 0)
    theirs = child(python, {"mode": "trajectory", "script": script, "X0": X0.tolist(), "beta": beta,
                            "step": STEP, "t_end": T_END})
    t = theirs["steps"] * STEP  # their clock adds eta per step (t >= t_end after this many steps)

    def end(model, method: str, dt: float) -> np.ndarray:
        return simulate(model, X0, t, solver=Solver(method, dt=dt, backend="direct"), save=SaveAt(times=[0.0, t])).X[-1]

    ref = end(Model("sa", beta), "rk4", 0.001)
    rk4 = end(Model("sa", beta), "rk4", STEP)
    layer = end(Model("sa", beta), "layer", STEP)
    # attnflow's literal Post-LN layer (docs/other_codes.md): the same update as their step_1
    literal = end(Model("sa", beta, norm="mix", norm_switch=10.0 * t), "layer", STEP)
    Y = np.array(theirs["X"])
    err = lambda Z: float(np.max(np.linalg.norm(Z - ref, axis=1)))  # noqa: E731
    return {"beta": beta, "d": d, "t_end": t, "their_steps": theirs["steps"], "their_error": err(Y),
            "attnflow_rk4_error": err(rk4), "attnflow_layer_error": err(layer), "their_minus_attnflow_literal_layer": float(np.max(np.abs(Y - literal)))}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--script", default=os.environ.get("ATTNFLOW_ROTF_SCRIPT"),
                   help="path of phase-diagrams.py from borjanG/2023-transformers-rotf")
    p.add_argument("--torch-python", default=os.environ.get("ATTNFLOW_TORCH_PYTHON", "/work/venv-torch/bin/python"))
    p.add_argument("--json", action="store_true")
    p.add_argument("--skip-accuracy", action="store_true")
    p.add_argument("--skip-timing", action="store_true")
    a = p.parse_args()
    if not os.path.exists(a.torch_python):
        print(f"error: {a.torch_python} not found; {HOWTO}", file=sys.stderr)
        raise SystemExit(2)
    if not a.script or not os.path.exists(a.script):
        print("error: pass --script PATH/phase-diagrams.py (git clone https://github.com/borjanG/2023-transformers-rotf)",
              file=sys.stderr)
        raise SystemExit(2)
    rows = []
    from threadpoolctl import threadpool_limits

    ours = []
    for label, d, batch, betas in () if a.skip_timing else RUNS:
        if batch * betas == 256:  # attnflow at the same configuration, interleaved with the torch runs
            with threadpool_limits(1):
                for method in ("rk4", "layer"):
                    o = attnflow_rate(d, method)
                    ours.append(o)
                    if not a.json:
                        print(f"attnflow {label} n={N} d={d} {method}: 256 systems: cpu {o['cpu_seconds']:.1f} s -> "
                              f"{o['systems_per_core_hour']:,.0f} systems per core-hour", flush=True)
        r = child(a.torch_python, {"mode": "time", "script": a.script, "n": N, "d": d, "batch": batch, "betas": betas,
                                   "bmin": BETA_MIN, "bmax": BETA_MAX, "t_end": T_END, "step": STEP})
        systems = batch * betas
        r.update(case=label, n=N, d=d, batch=batch, betas=betas, systems=systems,
                 systems_per_core_hour=3600.0 * systems / r["cpu_seconds"], load_average=list(os.getloadavg()))
        rows.append(r)
        if not a.json:
            print(f"{label} n={N} d={d}: {betas} betas x {batch} systems: cpu {r['cpu_seconds']:.1f} s, wall "
                  f"{r['wall_seconds']:.1f} s -> {r['systems_per_core_hour']:,.0f} systems per core-hour "
                  f"(torch {r['torch']}, {r['threads']} thread, load {r['load_average'][0]:.1f})", flush=True)
    acc = [] if a.skip_accuracy else [accuracy(a.torch_python, a.script, beta, d) for d in (2, 3) for beta in (1.0, 4.0)]
    if not a.json:
        for r in acc:
            print(f"accuracy d={r['d']} beta={r['beta']:g} t={r['t_end']:.4f} ({r['their_steps']} steps): their step "
                  f"{r['their_error']:.2e}, attnflow rk4 {r['attnflow_rk4_error']:.2e} (max token distance from "
                  f"rk4 dt=0.001), attnflow projected layer {r['attnflow_layer_error']:.2e}; their step - attnflow literal layer {r['their_minus_attnflow_literal_layer']:.1e}")
    else:
        print(json.dumps({"schema": 1, "runs": rows, "attnflow": ours, "accuracy": acc}, indent=1))


if __name__ == "__main__":
    main()
