"""Property tests draw fresh examples: the CI profile is not derandomized and the run seed is printed."""
import os

from hypothesis import settings


def test_profiles_draw_fresh_examples():
    for name in ("default", "thorough"):
        profile = settings.get_profile(name)
        assert not profile.derandomize  # a derandomized profile turns every property test into a fixed list
        assert profile.max_examples >= 25 and profile.print_blob
    assert settings.get_profile("thorough").max_examples >= 300
    if os.environ.get("HYPOTHESIS_PROFILE", "default") != "replay":
        assert not settings.default.derandomize


def test_run_seed_is_recorded(pytestconfig):
    import hypothesis.core

    seed = pytestconfig._attnflow_hypothesis_seed
    assert isinstance(seed, int) and hypothesis.core.global_force_seed == seed
