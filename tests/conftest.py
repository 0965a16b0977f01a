"""Shared test configuration: Hypothesis profiles, a fresh printed seed per run, and random helpers.

Profiles (select with ``HYPOTHESIS_PROFILE``):

- ``default`` (CI): 25 fresh random examples per property test on every run (not derandomized: each run tries
  new inputs), no deadline (numeric suites have variable timing), failing examples printed with
  ``@reproduce_failure`` blobs;
- ``thorough``: 300 examples per test (``HYPOTHESIS_PROFILE=thorough pytest``);
- ``replay``: derandomized, for bisecting (the seed below still applies).

The run's seed is drawn from the operating system (or taken from ``--hypothesis-seed`` / ``HYPOTHESIS_SEED``)
and printed in the pytest header and as the last line of the run (``hypothesis seed: N``): ``pytest --hypothesis-seed=N`` replays the run.
"""
import os
import secrets

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("default", deadline=None, max_examples=25, derandomize=False, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", deadline=None, max_examples=300, derandomize=False, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("replay", deadline=None, max_examples=25, derandomize=True, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def _run_seed(config) -> int:
    given = config.getoption("hypothesis_seed", default=None) or os.environ.get("HYPOTHESIS_SEED")
    return int(given) if given is not None else secrets.randbits(32)


def pytest_configure(config):
    import hypothesis.core

    seed = _run_seed(config)
    config._attnflow_hypothesis_seed = seed
    hypothesis.core.global_force_seed = seed


def _seed_line(config) -> str:
    seed = getattr(config, "_attnflow_hypothesis_seed", None)
    return (f"hypothesis seed: {seed} (replay: pytest --hypothesis-seed={seed}); "
            f"profile: {os.environ.get('HYPOTHESIS_PROFILE', 'default')}")


def pytest_report_header(config):
    return _seed_line(config)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    # also under -q (which hides the header): the seed is the last line of every run
    terminalreporter.write_line(_seed_line(config))


@pytest.fixture
def rng():
    return np.random.default_rng(20261121)


@pytest.fixture(autouse=True)
def _mpmath_precision_does_not_leak():
    """A test that changes mpmath's global precision fails (use mpmath.workdps locally)."""
    import mpmath

    before = mpmath.mp.dps
    yield
    after = mpmath.mp.dps
    mpmath.mp.dps = before
    assert after == before, f"test left mpmath.mp.dps = {after} (was {before}); use mpmath.workdps"
