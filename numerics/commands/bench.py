"""``attnflow bench``: time attention_field at n = 4096 against the floor measured in the same process."""
from __future__ import annotations

from ..bench import benchmark_field
from ..render import emit, table

NAME = "bench"
ORDER = 26
HELP = "time attention_field (n=4096, d in {3, 64}) against the GEMM + exp + GEMM floor"


def add_arguments(p):
    p.add_argument("--n", type=int, default=4096, help="number of particles (default 4096)")
    p.add_argument("--repeats", type=int, default=5, help="timing repeats, the minimum is kept (default 5)")
    p.add_argument("--model", choices=("sa", "usa"), default="sa", help="model (default sa)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(args) -> int:
    rows = benchmark_field(n=args.n, repeats=args.repeats, model=args.model)
    text = table([(r["n"], r["d"], f"{1e3 * r['field_seconds']:.1f} ms", f"{1e3 * r['floor_seconds']:.1f} ms",
                   f"{r['ratio']:.2f}x", f"{r['target']}x" if r["target"] else "-") for r in rows],
                 ["n", "d", "attention_field", "floor", "ratio", "target"])
    text += ("\nfloor = one Gram GEMM + one exp pass over n x n + one (n x n)(n x d) GEMM, same process; "
             "times are the minimum of the repeats")
    emit(args, {"results": rows}, text)
    return 0
