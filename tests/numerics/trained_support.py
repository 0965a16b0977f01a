"""Shared pieces of the trained-model tests: the skip marker, the short sentence and the model fixtures."""
import pytest

from numerics.trained import checkpoint as ck

requires_models = pytest.mark.skipif(not ck.models_available(), reason="needs the extra attnflow[models]")

SHORT = "Tokens cluster with depth."


@pytest.fixture(scope="module")
def model():
    """The packaged all-MiniLM-L6-v2 (loaded once per process: load_checkpoint caches)."""
    return ck.load_checkpoint()


@pytest.fixture(scope="module")
def trace(model):
    """The forward pass of SHORT through the first three layers."""
    from numerics.trained.encoder import run_encoder

    return run_encoder(model, SHORT, layers=3)
