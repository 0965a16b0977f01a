"""attnflow verify runs the claims with one BLAS thread unless the user chose, and reports CPU time per claim.

Two BLAS threads on small problems spin at every barrier: on a busy 2-core machine the default run used 130 s
of CPU time with them and 63 s with one (``trained.head-blowup-time`` 13.9 s and 1.6 s).
"""
import numpy as np
import pytest
from threadpoolctl import threadpool_info

import numerics.common.verification as verification
from numerics.common.verification import CheckResult, Claim
from tests.cli.helpers import run_json


def _blas_threads() -> list[int]:
    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


def _claims(seen: list):
    def check():
        seen.append(_blas_threads())
        a = np.ones((64, 64))
        return CheckResult("area.threads", "passed", float((a @ a)[0, 0]), 64.0, "exact", {})

    return [Claim("area.threads", "BLAS threads inside a claim", "-", "x.md", check)]


def _run(monkeypatch, capsys):
    seen: list = []
    claims = _claims(seen)
    monkeypatch.setattr(verification, "select_claims", lambda only, include_all=False: claims)
    return run_json(capsys, ["verify"]), seen


@pytest.fixture
def no_thread_choice(monkeypatch):
    for name in ("ATTNFLOW_BLAS_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)


def test_claims_run_with_one_blas_thread_and_report_cpu_time(monkeypatch, capsys, no_thread_choice):
    payload, seen = _run(monkeypatch, capsys)
    assert seen and all(n == 1 for n in seen[0]), seen
    assert payload["threads"]["blas_threads"] == 1 and "ATTNFLOW_BLAS_THREADS" in payload["threads"]["reason"]
    (check,) = payload["checks"]
    assert check["status"] == "passed" and 0.0 <= check["cpu_seconds"]


def test_the_users_thread_count_is_obeyed(monkeypatch, capsys, no_thread_choice):
    monkeypatch.setenv("ATTNFLOW_BLAS_THREADS", "2")
    payload, seen = _run(monkeypatch, capsys)
    assert payload["threads"]["blas_threads"] == 2
    assert all(n == 2 for n in seen[0]), seen
