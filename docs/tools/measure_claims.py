"""Record the claim registry's measured values for the documentation's claim page.

Runs ``attnflow verify --json`` (add ``--all`` to include the slow claims: it takes far longer) and writes
``docs/claims_measured.json`` (id -> status, measured, expected, tolerance), which ``docs/tools/generate.py`` shows
beside each claim. Usage::

    python docs/tools/measure_claims.py [--all]
"""
from __future__ import annotations

import datetime
import json
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "claims_measured.json"


def main(argv: list[str]) -> int:
    command = [sys.executable, "-m", "numerics", "verify", "--json", *argv]
    proc = subprocess.run(command, stdout=subprocess.PIPE, text=True)
    report = json.loads(proc.stdout)
    keys = ("status", "measured", "expected", "tolerance", "seconds", "cpu_seconds")  # CPU: what load leaves alone
    results = {c["id"]: {k: c.get(k) for k in keys} for c in report["checks"]}
    record = {"command": "attnflow verify --json " + " ".join(argv), "date": datetime.date.today().isoformat(),
              "summary": report.get("summary"), "threads": report.get("threads"), "results": results}
    OUT.write_text(json.dumps(record, indent=1, sort_keys=True, default=str) + "\n")
    print(f"{len(results)} claims recorded in {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
