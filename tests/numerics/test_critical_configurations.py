"""numerics.critical.configurations: structured families, masses, files and impossible requests."""
import numpy as np
import pytest

from numerics.critical.configurations import build_configuration, circle_clusters, orthoplex, simplex, simplex_vertices
from numerics.common.errors import InputError


@pytest.mark.parametrize("d", [2, 3, 6])
def test_simplex_vertices_are_equiangular(d):
    V = simplex_vertices(d)
    G = V @ V.T
    np.testing.assert_allclose(G, (1 + 1 / d) * np.eye(d + 1) - 1 / d, atol=1e-14)


def test_masses_and_shapes():
    X = circle_clusters(3, masses=[3, 1, 2])
    assert X.shape == (6, 3) and np.allclose(np.linalg.norm(X, axis=1), 1)
    assert np.allclose(X[:3], X[0]) and not np.allclose(X[3], X[0])
    assert orthoplex(3).shape == (6, 3) and simplex(3, masses=[2, 1, 1, 1]).shape == (5, 3)
    assert build_configuration("antipodal", n=4, d=3)[2] @ build_configuration("antipodal", n=4, d=3)[0] == -1


@pytest.mark.parametrize("kwargs, match", [
    (dict(config="simplex", n=5, d=3), "n = d \\+ 1"),
    (dict(config="clusters", k=4, n=6, d=2), "does not divide"),
    (dict(config="clusters", masses=[1, 2], n=4, d=2), "sum to 3"),
    (dict(config="orthoplex", n=5, d=3), "2d"),
    (dict(config="file", d=3), "--file"),
    (dict(config="polygon", d=3), "--n"),
    (dict(config="antipodal", k=3, n=6, d=3), "k = 2"),
])
def test_impossible_requests(kwargs, match):
    with pytest.raises(InputError, match=match):
        build_configuration(**kwargs)


def test_from_file(tmp_path):
    X = circle_clusters(3, k=3, n=6)
    path = tmp_path / "x.npy"
    np.save(path, X)
    np.testing.assert_array_equal(build_configuration("file", file=str(path)), X)
    with pytest.raises(InputError, match="not --n"):
        build_configuration("file", file=str(path), n=5)
