"""Shared test configuration: Hypothesis profiles and random helpers.

Profiles: ``default`` (CI, no deadline: numeric suites have variable timing), ``thorough`` (more examples;
select with ``HYPOTHESIS_PROFILE=thorough``).
"""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("default", deadline=None, max_examples=25, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", deadline=None, max_examples=300,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def rng():
    return np.random.default_rng(20261121)
