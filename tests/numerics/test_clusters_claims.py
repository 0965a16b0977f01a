"""The default clusters claims pass (slow: runs the same checks as `attnflow verify --only ...`)."""
import pytest

from numerics.common.verification import all_claims, run_claim


@pytest.mark.slow
@pytest.mark.parametrize("cid", ["clusters.single-linkage", "clusters.pairwise-merging",
                                 "clusters.two-cluster-merge-time", "clusters.staircase",
                                 "clusters.single-cluster-d3"])
def test_default_claim_passes(cid):
    (c,) = [c for c in all_claims() if c.id == cid]
    assert c.default
    result = run_claim(c).result
    assert result.status == "passed", result.details
