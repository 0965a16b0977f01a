"""numerics.core.positions and the Model fields alibi/rope/positions: the block field against a brute-force
double loop, validation, metadata, and the checks of numerics.architectures.positions_checks (each shown to fail on
a planted error)."""
from __future__ import annotations

import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.core import positions as P
from numerics.core.blocks import MultiHead, Schedule
from numerics.core.model import Model
from numerics.core.trajectory import uniform_sphere


def brute_field(X, beta, kind="sa", alibi=0.0, rope=None, labels=None, causal=False, heads=None):
    """v_i by a double loop over (i, j), straight from the definitions (module docstring of core.positions)."""
    n, d = X.shape
    p = np.arange(n, dtype=float) if labels is None else np.asarray(labels, float)
    heads = heads or MultiHead.from_single(d=d)
    slopes = P.alibi_slopes(alibi, heads.H)
    out = np.zeros_like(X)
    for h in range(heads.H):
        for i in range(n):
            J = range(i + 1) if causal else range(n)
            w, ys = [], []
            for j in J:
                q, k = heads.Q[h] @ X[i], heads.K[h] @ X[j]
                if rope is not None:
                    q = P.rotate(q[None], p[i:i + 1], rope)[0]
                    k = P.rotate(k[None], p[j:j + 1], rope)[0]
                w.append(np.exp(beta * heads.scale * (q @ k) - slopes[h] * abs(p[i] - p[j])))
                ys.append(X[j])
            w = np.array(w)
            a = (w @ np.array(ys)) / (w.sum() if kind == "sa" else n)
            out[i] += heads.W[h].T @ (heads.V[h] @ a)
    return out - np.einsum("ij,ij->i", X, out)[:, None] * X


CASES = [dict(alibi=0.7), dict(alibi=0.3, causal=True), dict(rope=5.0), dict(rope=2.0, causal=True, alibi=0.2),
         dict(rope=3.0, labels=[0.5, -1.0, 2.0, 2.0, 7.0, 0.0]), dict(alibi=1.1, labels=[3, 1, 4, 1, 5, 9])]


@pytest.mark.parametrize("d", [3, 4])
@pytest.mark.parametrize("kind", ["sa", "usa"])
@pytest.mark.parametrize("case", CASES)
def test_block_field_with_positions_matches_double_loop(case, kind, d):
    X = uniform_sphere(6, d, np.random.default_rng(d))
    kw = dict(case)
    labels = kw.pop("labels", None)
    model = Model(kind, 1.3, positions=labels, **kw)
    f, backend = model.vector_field(6, d, "auto")
    assert backend == "blocks"
    ref = brute_field(X, 1.3, kind, kw.get("alibi", 0.0), kw.get("rope"), labels, kw.get("causal", False))
    np.testing.assert_allclose(f(X), ref, atol=1e-14)


def test_per_head_geometric_slopes_and_explicit_slopes():
    rng = np.random.default_rng(7)
    heads = MultiHead(*(rng.standard_normal((3, 2, 3)) for _ in range(4)))
    X = uniform_sphere(5, 3, rng)
    np.testing.assert_allclose(P.alibi_slopes(0.5, 3), 0.5 * 2.0 ** (-8 * np.arange(3) / 3))
    np.testing.assert_allclose(P.paper_slopes(8), 2.0 ** -np.arange(1, 9))
    for alibi in (0.5, [0.1, 0.0, 2.0]):
        f = Model("sa", 1.0, heads=heads, alibi=alibi, rope=4.0).vector_field(5, 3)[0]
        np.testing.assert_allclose(f(X), brute_field(X, 1.0, "sa", alibi, 4.0, heads=heads), atol=1e-14)


def test_zero_bias_is_the_existing_block_field_bit_for_bit():
    X = uniform_sphere(7, 3, np.random.default_rng(0))
    for causal in (False, True):
        plain = Model("sa", 1.3, causal=causal, mlp=None, heads=MultiHead.from_single(d=3)).vector_field(7, 3)[0]
        zero = Model("sa", 1.3, causal=causal, heads=MultiHead.from_single(d=3), alibi=0.0).vector_field(7, 3)[0]
        assert np.array_equal(plain(X), zero(X))


def test_rope_rotation_identities_and_odd_dimension():
    rng = np.random.default_rng(1)
    Y = rng.standard_normal((4, 5))
    p = rng.uniform(-3, 3, 4)
    R = P.rotate(Y, p, 10.0)
    np.testing.assert_allclose(np.linalg.norm(R, axis=1), np.linalg.norm(Y, axis=1), rtol=1e-14)
    np.testing.assert_array_equal(R[:, -1], Y[:, -1])  # odd k: the last coordinate is not rotated
    np.testing.assert_allclose(P.rotate(R, -p, 10.0), Y, atol=1e-14)
    np.testing.assert_allclose(P.rope_frequencies(4, 100.0), [1.0, 0.1])
    # relative positions: <R(p) q, R(r) k> = <q, R(r - p) k>
    q, k = Y[0], Y[1]
    lhs = P.rotate(q[None], [1.7], 3.0)[0] @ P.rotate(k[None], [-0.4], 3.0)[0]
    assert abs(lhs - q @ P.rotate(k[None], [-2.1], 3.0)[0]) < 1e-14


def test_planted_bias_sign_fails(monkeypatch):
    """Planted: +lambda |p_i - p_j| (the bias added instead of subtracted); the double loop must disagree."""
    X = uniform_sphere(6, 3, np.random.default_rng(2))
    monkeypatch.setattr("numerics.core.attention.bias_block",
                        lambda slope, labels, a, b, c: -slope * np.abs(labels[a:b, None] - labels[None, :c]))
    f = Model("sa", 1.0, alibi=0.8).vector_field(6, 3)[0]
    assert np.max(np.abs(f(X) - brute_field(X, 1.0, "sa", 0.8))) > 1e-3


@pytest.mark.parametrize("kwargs,message", [
    (dict(alibi=-0.5), "alibi lambda must be >= 0"),
    (dict(alibi=[0.1, -1.0]), "alibi slopes must be >= 0"),
    (dict(alibi=[0.1, 0.2]), "alibi gives 2 slopes, but the attention has 1 heads"),
    (dict(rope=0.0), "rope base must be > 0"),
    (dict(rope=float("nan")), "rope base must be finite"),
    (dict(positions=[0, 1, 2]), "position labels need a position mechanism"),
    (dict(alibi=0.1, positions=[[0, 1]]), "position labels must have 1 dimensions"),
    (dict(alibi=0.1, positions=[0.0, np.inf]), "position labels has a non-finite entry"),
])
def test_bad_position_input_is_refused(kwargs, message):
    with pytest.raises(InputError, match=message):
        Model("sa", 1.0, **kwargs)


def test_label_count_and_backends_are_checked():
    model = Model("sa", 1.0, alibi=0.1, positions=[0.0, 1.0, 2.0])
    with pytest.raises(InputError, match="3 position labels for 4 tokens"):
        model.vector_field(4, 3)
    with pytest.raises(InputError, match="no positions"):
        Model("sa", 1.0, rope=10.0).vector_field(4, 2, "fourier")
    with pytest.raises(InputError, match="numba backend"):
        Model("sa", 1.0, rope=10.0).vector_field(4, 2, "numba")


def test_metadata_round_trip_and_schedule():
    m = Model("usa", 0.7, alibi=[0.3], rope=50.0, positions=np.linspace(0, 1, 5), causal=True)
    back = Model.from_meta(m.to_meta())
    assert back.to_meta() == m.to_meta()
    X = uniform_sphere(5, 3, np.random.default_rng(3))
    np.testing.assert_array_equal(m.vector_field(5, 3)[0](X), back.vector_field(5, 3)[0](X))
    plain = Model("sa", 1.0, causal=True)
    assert "alibi" not in plain.to_meta()  # metadata of runs without positions is unchanged
    sched = Schedule.constant(MultiHead.from_single(d=3), layers=2)
    fs = Model("sa", 1.0, schedule=sched, alibi=0.4).vector_field(5, 3)[0]
    np.testing.assert_allclose(fs(X, 0.5), brute_field(X, 1.0, "sa", 0.4), atol=1e-14)


def test_labels_from_text_and_npy(tmp_path):
    (tmp_path / "p.txt").write_text("0, 0.5 1\n2")
    np.testing.assert_array_equal(P.load_labels(tmp_path / "p.txt"), [0, 0.5, 1, 2])
    np.save(tmp_path / "p.npy", np.arange(3.0))
    np.testing.assert_array_equal(P.load_labels(tmp_path / "p.npy"), [0, 1, 2])
    (tmp_path / "bad.txt").write_text("0 one")
    with pytest.raises(InputError, match="must hold numbers"):
        P.load_labels(tmp_path / "bad.txt")
    with pytest.raises(InputError, match="cannot read"):
        P.load_labels(tmp_path)


# -- what survives (numerics.architectures.positions_checks) ------------------------------------------------------------
def test_alibi_energy_gradient_and_monotone():
    from numerics.architectures.positions_checks import alibi_energy_rows

    (row,) = alibi_energy_rows(seeds=(3,), t_end=3.0)
    assert row["gradient_relative_error"] < 1e-8
    assert row["sa_min_increment"] > 0 and row["usa_min_increment"] > 0


def test_planted_asymmetric_bias_is_not_the_gradient(monkeypatch):
    """Planted: a one-sided bias lambda (p_i - p_j)^+ (causal-like, asymmetric): the FD gradient check fails."""
    from numerics.architectures.positions_checks import alibi_energy_rows

    monkeypatch.setattr("numerics.core.attention.bias_block",
                        lambda s, p, a, b, c: s * np.maximum(p[a:b, None] - p[None, :c], 0.0))
    (row,) = alibi_energy_rows(seeds=(3,), t_end=0.5)
    assert row["gradient_relative_error"] > 1e-3


def test_rope_structure_and_planted_torus():
    from numerics.architectures import positions_checks as C

    rows = C.rope_structure_rows(seeds=(5,))
    fields = [r for r in rows if "translation_error" in r]
    assert max(r["translation_error"] for r in fields) < 1e-13
    assert max(r["torus_equivariance_error"] for r in fields) < 1e-13
    assert min(r["generic_rotation_residual"] for r in fields) > 1e-2
    assert [r["gradient_relative_error"] for r in rows if "gradient_relative_error" in r][0] < 1e-8


def test_planted_unrotated_keys_break_translation(monkeypatch):
    """Planted: only the queries rotated (keys left alone): the scores depend on p_i, not on p_j - p_i."""
    from numerics.architectures import positions_checks as C

    monkeypatch.setattr(P.PositionEncoding, "head_inputs",
                        lambda self, X, q, k: (P.rotate(q, self.labels_for(X.shape[0]), self.rope), k))
    rows = C.rope_structure_rows(seeds=(5,))
    assert max(r["translation_error"] for r in rows if "translation_error" in r) > 1e-3


def test_causal_collapse_with_positions():
    from numerics.architectures.positions_checks import causal_collapse_position_runs

    runs = causal_collapse_position_runs([(11, 4, 3, 1.0, 0.5, 5.0)])
    assert runs[0]["max_angle_to_x1_0"] < 1e-8 and runs[0]["x1_displacement"] < 1e-14


def test_planted_reversed_mask_does_not_collapse_to_the_first_token(monkeypatch):
    """Planted: the causal mask reversed (tokens attend to later ones): x_1 moves, the collapse point is x_n."""
    from numerics.architectures.positions_checks import causal_collapse_position_runs

    import numerics.core.attention as A
    original = A._averages

    def reversed_mask(X, left, beta, kind, causal, block, keys=None, bias=None):  # X, left, keys: ([B,] n, .)
        if not causal:
            return original(X, left, beta, kind, causal, block, keys, bias)
        flip = (lambda Y: None if Y is None else Y[..., ::-1, :])  # the token axis (one system has no member axis)
        b = None if bias is None else (bias[0], bias[1][::-1])
        return original(flip(X), flip(left), beta, kind, causal, block, flip(keys), b)[..., ::-1, :]

    monkeypatch.setattr(A, "_averages", reversed_mask)
    runs = causal_collapse_position_runs([(11, 4, 3, 1.0, 0.5, None)], t_end=30.0)
    assert runs[0]["x1_displacement"] > 1e-3


def test_one_cluster_criterion_can_fail():
    """The one-cluster check on a state that has not synchronised (t = 0.5): 1 - min cos is far above 1e-10."""
    from numerics.architectures.positions_checks import one_cluster_runs

    (row,) = one_cluster_runs([(1, "sa", 8, 3, 1.0, 0.5, None)], t_end=0.5)
    assert row["one_minus_min_cos"] > 1e-2
