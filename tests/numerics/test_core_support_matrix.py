"""The support matrix of the core as a test: every Model feature x {one system, a batch of 3} x backend.

For each feature and backend, either both paths run and every member of the batch equals its single run, or
both refuse with the same one-line InputError. Members equal their single runs bit for bit (``np.array_equal``)
wherever the two runs take the same arithmetic (the one attention pipeline of numerics.core.attention on (B, n, d),
B = 3 against B = 1); the stated exceptions, each with its bound and reason:

- energies of exponential models: the batch sums the pairs of every member and frame in another order than the
  single run (which reads them off the field's tiles where it can): within 64 n eps of the sum of |terms|;
- numba, one head: the single system runs the fused kernel (numerics.core.fused), the batch the member-lane
  kernel (numerics.core._member_kernels); each is within its rounding bound of the NumPy sums (about 1e-15
  relative here), so 16 rk4 evaluations stay within 1e-12;
- none for the normalisation schemes: their state is the directions and radii, (B, n, d + 1) for a batch, and
  one system runs the same :class:`numerics.core.norms.NormField` as the batch of one, so members equal their
  single runs bit for bit, radii included (:data:`BATCH_GAPS` is empty: no feature runs on one path only).

A second column checks the single field itself against a dense reference written here from the definitions
(module docstring of numerics.core.blocks and numerics.core.positions), so that an error of the pipeline, which
both paths share, is seen too (planted errors: tests at the end, and benchmarks/mutants.py).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.core.blocks import MLP, MultiHead, Schedule
from numerics.core.ensemble import Members
from numerics.core.model import Model, Solver
from numerics.core.trajectory import simulate, uniform_sphere

N, D, B, T_END, DT = 12, 4, 3, 0.2, 0.05  # N > 8: two tiles of the symmetric sums (the mirror)
EPS = np.finfo(float).eps
_rng = np.random.default_rng(2026)
HEADS = MultiHead(*(0.8 * _rng.standard_normal((3, 2, D)) for _ in range(4)))
MLP_ = MLP(_rng.standard_normal((5, D)), _rng.standard_normal(5), _rng.standard_normal((D, 5)),
           _rng.standard_normal(D), activation="gelu")
Q, K, V = (np.eye(D) + 0.4 * _rng.standard_normal((D, D)) for _ in range(3))
LABELS = np.array([0.0, 2.0, 1.5, 4.0, 3.0, 7.0, 5.5, 6.0, 9.0, 8.0, 8.5, 11.0])
BETAS = np.array([0.5, 1.5, -1.0])


def _kernel():
    from theory.expression_parser import parse_kernel

    return parse_kernel("s**3/3 + exp(beta*s)/beta", {})


#: feature -> keyword arguments of Model (besides kind and beta) and per-member values (Members) or None
FEATURES = {
    "one head": ({}, None),
    "one head, beta per member": ({}, Members(beta=BETAS)),
    "general Q K V": (dict(Q=Q, K=K, V=V), None),
    "heads": (dict(heads=HEADS), None),
    "heads, beta per member": (dict(heads=HEADS), Members(beta=BETAS)),
    "MLP": (dict(heads=HEADS, mlp=MLP_), None),
    "causal": (dict(heads=HEADS, causal=True), None),
    "ALiBi (3 heads, geometric slopes)": (dict(heads=HEADS, alibi=0.9), None),
    "ALiBi (3 heads, given slopes)": (dict(heads=HEADS, alibi=[0.1, 1.2, 0.0], causal=True), None),
    "ALiBi, beta per member": (dict(heads=HEADS, alibi=0.9), Members(beta=BETAS)),
    "RoPE": (dict(heads=HEADS, rope=3.0), None),
    "RoPE one head": (dict(rope=5.0), None),
    "labels": (dict(heads=HEADS, alibi=0.4, rope=2.0, positions=LABELS), None),
    "user kernel": (dict(kernel="kernel"), None),
    "user kernel, beta per member": (dict(kernel="kernel"), Members(beta=np.abs(BETAS))),
    "noise": (dict(noise=0.3), None),
    "common noise": (dict(common_noise=0.5), None),
    "common noise (values), attention off": (dict(common_noise=0.5, common_noise_law="values", attention=False),
                                             None),
    "beta scaling": (dict(beta=None, beta_scaling="log", gamma=0.7), None),
    "schedule": (dict(schedule=Schedule(times=[0.0, 0.1], heads=(HEADS, MultiHead.from_single(Q, K, V, d=D)))),
                 None),
    "schedule with ALiBi": (dict(schedule=Schedule(times=[0.0, 0.1], heads=(HEADS, HEADS)), alibi=0.5), None),
    **{f"norm {norm}": (dict(norm=norm, **extra), None) for norm, extra in
       (("pre", {}), ("peri", {}), ("mix", dict(norm_switch=0.1)), ("ngpt", {}), ("sqrt", {}), ("lnscale", {}))},
    "norm pre, heads, beta per member": (dict(norm="pre", heads=HEADS), Members(beta=BETAS)),
    "norm lnscale, beta per member": (dict(norm="lnscale"), Members(beta=BETAS)),
    "norm peri, ALiBi, RoPE, causal": (dict(norm="peri", heads=HEADS, alibi=0.5, rope=3.0, causal=True), None),
    "norm pre, centering, radii per token": (dict(norm="pre", centering=True, radius0=np.linspace(0.5, 2.0, N)),
                                             None),
}
#: features that run for one system and are refused for a batch, with the batch's one-line error (none left: the
#: normalisation schemes carry their radii (B, n) through the single run's NormField, and a batched depth schedule
#: takes the positions of the single one)
BATCH_GAPS: dict = {}


def model_of(name: str, kind: str, b: int | None = None) -> Model:
    """The model of feature ``name`` (member b's own model when the feature has per-member values)."""
    kw, members = FEATURES[name]
    kw = dict(kw)
    if kw.get("kernel") == "kernel":
        kw["kernel"] = _kernel()
    beta = kw.pop("beta", 1.2)
    if members is not None and members.beta is not None and b is not None:
        beta = float(members.beta[b])
    return Model(kind, beta, **kw)


def starts():
    return np.stack([uniform_sphere(N, D, 10 + b) for b in range(B)])


def _run(model, X0, backend, seed, members=None):
    """The trajectory, or the InputError's message (asserted to be one line)."""
    try:
        return simulate(model, X0, T_END, solver=Solver("rk4", dt=DT, backend=backend, seed=seed), members=members)
    except InputError as exc:
        message = str(exc)
        assert "\n" not in message, message
        return message


def energy_bound(X, beta):
    """64 n eps times the mean of |expm1(beta s)/beta| over the pairs (two summation orders of the same terms)."""
    G = X @ np.swapaxes(X, -1, -2)
    terms = np.abs(np.expm1(beta * G) / beta) if beta != 0 else np.abs(G)
    return 64 * N * EPS * terms.sum(axis=(-1, -2)) / (2 * N**2) + 1e-300


@pytest.mark.parametrize("backend", ["direct", "numba"])
@pytest.mark.parametrize("name", list(FEATURES))
def test_batch_members_equal_single_runs_or_both_refuse(name, backend):
    if backend == "numba":
        pytest.importorskip("numba")
    kind = "usa" if "kernel" in name else "sa"
    X0 = starts()
    members = FEATURES[name][1]
    ens = _run(model_of(name, kind), X0, backend, 7, members)
    singles = [_run(model_of(name, kind, b), X0[b], backend, 7 + b) for b in range(B)]
    if name in BATCH_GAPS and backend == "direct":
        assert isinstance(ens, str) and BATCH_GAPS[name] in ens, ens
        assert all(not isinstance(s, str) for s in singles), singles
        return
    if isinstance(ens, str) or any(isinstance(s, str) for s in singles):
        if name in BATCH_GAPS:  # refused on both paths, each in one line (the batch names the scheme's field)
            assert isinstance(ens, str) and all(isinstance(s, str) for s in singles), (ens, singles)
            return
        assert all(s == ens for s in singles), (ens, singles)  # the same one-line error on both paths
        return
    one_head_numba = backend == "numba" and ens.meta["backend"] == "numba" and "heads" not in FEATURES[name][0]
    for b, single in enumerate(singles):
        np.testing.assert_array_equal(ens.times, single.times)
        if one_head_numba:  # the fused kernel (one system) against the lane kernel (batch): see the docstring
            assert np.max(np.abs(ens.X[:, b] - single.X)) <= 1e-12, name
        else:
            np.testing.assert_array_equal(ens.X[:, b], single.X, err_msg=f"{name}, member {b}")
        assert (ens.radius is None) == (single.radius is None), name  # a scheme's radii, (frames, B, n)
        if single.radius is not None:
            np.testing.assert_array_equal(ens.radius[:, b], single.radius, err_msg=f"{name}, radii of member {b}")
        beta = single.meta["beta"]
        if "kernel" in name:  # the kernel's pair energy, computed as the single run computes it
            np.testing.assert_array_equal(ens.energy[:, b], single.energy)
        else:
            assert np.all(np.abs(ens.energy[:, b] - single.energy) <= energy_bound(single.X, beta)), name


# -- the field against a dense reference (errors the two paths share) ----------------------------------------------
def rope_rows(Y, p, base):
    """R(p_i) y_i with the 2 x 2 rotation blocks written out: pair (2m, 2m + 1) turned by the angle
    p_i base^{-2m/k'}, k' = 2 floor(k/2) (an odd k leaves its last coordinate alone)."""
    out = Y.copy()
    half = Y.shape[1] // 2
    for i, pi in enumerate(p):
        for m in range(half):
            a = pi * base ** (-2.0 * m / (2 * half))
            R = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
            out[i, 2 * m:2 * m + 2] = R @ Y[i, 2 * m:2 * m + 2]
    return out


def dense_field(X, model):
    """v_i straight from the definitions, with dense n x n matrices (no blocks, no shifts, no pipeline)."""
    n, d = X.shape
    p = np.arange(n, dtype=float) if model.positions is None else np.asarray(model.positions, float)
    if model.kernel is not None:
        from numerics.core.kernel_field import compile_kernel

        W = compile_kernel(model.kernel)(1, X @ X.T, model.beta)
        out = W @ X / (W.sum(axis=1, keepdims=True) if model.kind == "sa" else n)
        return out - np.sum(X * out, axis=1)[:, None] * X
    heads = model.heads or MultiHead.from_single(model.Q, model.K, model.V, d=d)
    H = heads.H  # ALiBi slopes: lambda 2^{-8 (h - 1)/H} for heads h = 1..H (a scalar lambda), or as given
    slopes = (np.zeros(H) if model.alibi is None else np.asarray(model.alibi, float) if np.ndim(model.alibi) else
              np.array([model.alibi * 2.0 ** (-8.0 * h / H) for h in range(H)]))
    total = np.zeros_like(X)
    for h in range(heads.H):
        q, k = X @ heads.Q[h].T, X @ heads.K[h].T
        if model.rope is not None:
            q, k = rope_rows(q, p, model.rope), rope_rows(k, p, model.rope)
        S = model.beta * heads.scale * (q @ k.T) - slopes[h] * np.abs(p[:, None] - p[None, :])
        if model.causal:
            S = np.where(np.tril(np.ones((n, n), bool)), S, -np.inf)
        E = np.exp(S)
        A = E @ X / (E.sum(axis=1, keepdims=True) if model.kind == "sa" else n)
        y = A @ heads.V[h].T @ heads.W[h]
        total += y if model.mlp is None else model.mlp(heads.H * y, h) / heads.H
    return total - np.sum(X * total, axis=1)[:, None] * X


REFERENCE = [name for name in FEATURES if not name.startswith(("norm ", "schedule", "noise", "beta scaling"))
             and "per member" not in name]


@pytest.mark.parametrize("backend", ["direct", "numba"])
@pytest.mark.parametrize("kind", ["sa", "usa"])
@pytest.mark.parametrize("name", REFERENCE)
def test_single_and_batched_fields_equal_the_dense_reference(name, kind, backend):
    check_reference(name, kind, backend)


def check_reference(name, kind, backend="direct"):
    """The field of one system and of each member of a batch (Attention.from_model on (B, n, d)) against the dense
    reference: 1e-13 relative to the field's largest entry (blocked sums and shifts against plain ones; the
    compiled kernels' own exps and summation orders stay within their rounding bounds, about 1e-15 here).
    Features the numba engines do not evaluate are refused (the first test) and skipped here."""
    from numerics.core.attention import Attention

    model = model_of(name, kind)
    X = starts()
    if backend == "numba":
        pytest.importorskip("numba")
        try:
            single, _ = model.vector_field(N, D, "numba")
        except InputError:
            return
        batched = Attention.from_model(model, N, D, engine="lanes")(X)
    else:
        single, _ = model.vector_field(N, D, "direct")
        batched = Attention.from_model(model, N, D)(X)
    for b in range(B):
        ref = dense_field(X[b], model)
        scale = max(1.0, float(np.max(np.abs(ref))))
        assert np.max(np.abs(single(X[b]) - ref)) <= 1e-13 * scale, name
        if backend == "direct" or "heads" in FEATURES[name][0]:  # the same engine for one system and the batch
            np.testing.assert_array_equal(batched[b], single(X[b]))
        else:  # fused kernel (one system) against member lanes (batch)
            assert np.max(np.abs(batched[b] - ref)) <= 1e-13 * scale, name


# -- planted errors: the reference column sees what the members-equal-singles column cannot ------------------------
@pytest.mark.parametrize("plant", ["rope-sign", "alibi-slope-index", "causal-transposed"])
def test_planted_pipeline_errors_are_seen(plant, monkeypatch):
    import numerics.core.attention as A
    import numerics.core.positions as P

    name = {"rope-sign": "RoPE", "alibi-slope-index": "ALiBi (3 heads, geometric slopes)",
            "causal-transposed": "causal"}[plant]
    if plant == "rope-sign":
        real = P.rotate
        monkeypatch.setattr(P, "rotate", lambda Y, labels, base: real(Y, -np.asarray(labels, float), base))
    elif plant == "alibi-slope-index":
        real_heads = A.Attention.heads.__func__

        def shifted(cls, *args, **kwargs):
            out = real_heads(cls, *args, **kwargs)
            if out.slopes is not None:
                out.slopes = np.roll(out.slopes, 1)  # head h gets head h - 1's slope
            return out

        monkeypatch.setattr(A.Attention, "heads", classmethod(shifted))
    else:
        real_avg = A._averages

        def transposed(X, left, beta, kind, causal, block, keys=None, bias=None):
            if not causal:
                return real_avg(X, left, beta, kind, causal, block, keys, bias)
            # j >= i instead of j <= i: the token axis reversed (one system's (n, .) arrays have no member axis)
            r = (lambda Y: None if Y is None else Y[..., ::-1, :])
            b = None if bias is None else (bias[0], bias[1][::-1])
            return real_avg(r(X), r(left), beta, kind, causal, block, r(keys), b)[..., ::-1, :]

        monkeypatch.setattr(A, "_averages", transposed)
    with pytest.raises(AssertionError):
        check_reference(name, "sa")


def test_the_matrix_covers_every_model_field():
    """A Model field added later must get a row here (or be listed as not a feature of the field)."""
    covered = {"kind", "beta", "Q", "K", "V", "kernel", "noise", "heads", "mlp", "schedule", "causal", "norm",
               "norm_switch", "alibi", "rope", "positions", "beta_scaling", "gamma", "common_noise", "attention"}
    not_features = {"time_unit", "norm_alpha", "norm_scale", "radius0", "centering",  # options of covered ones
                    "common_noise_law"}
    assert {f.name for f in dataclasses.fields(Model)} == covered | not_features


#: the routing of the compiled engines, written out here (not read from the table, so that an error of the table or
#: of its one choice is seen): feature -> (engine for one system, engine for a batch); refused features are None
ROUTES = {
    "one head": ("fused", "identity"),
    "one head, beta per member": ("fused", "identity"),
    "general Q K V": ("fused", "lanes"),
    "heads": ("heads", "heads"),
    "heads, beta per member": ("heads", "heads"),
}
ROUTE_REFUSED = ("MLP", "causal", "ALiBi (3 heads, geometric slopes)", "RoPE", "RoPE one head", "labels",
                 "user kernel", "schedule")
#: the compiled function each engine runs (its module and name: the tests count its calls)
KERNELS = {"fused": ("numerics.core.fused", "fused_accumulate"),
           "identity": ("numerics.core._member_kernels", "identity_sums"),
           "lanes": ("numerics.core._member_kernels", "member_sums"),
           "heads": ("numerics.core._member_heads", "heads_field")}


def _count_kernel_calls(monkeypatch) -> list:
    """Wrap the compiled kernels so that each call records its engine (the kernels are looked up in their modules
    when called, so the wrappers see every call the pipeline makes)."""
    import importlib

    calls = []
    for engine, (module, name) in KERNELS.items():
        mod = importlib.import_module(module)
        real = getattr(mod, name)

        def spy(*args, _real=real, _engine=engine, **kwargs):
            calls.append(_engine)
            return _real(*args, **kwargs)

        monkeypatch.setattr(mod, name, spy)
    return calls


def _routes(name, kind="sa"):
    """The fields of feature ``name`` with backend numba: one system and a batch of B (with its members)."""
    from numerics.core.ensemble import batch_vector_field, resolve_members

    model = model_of(name, kind)
    f, one = model.vector_field(N, D, "numba")
    g, many = batch_vector_field(model, resolve_members(model, FEATURES[name][1], B, D, 0), D, B, "numba", N)
    assert one == many == "numba"
    return f, g


@pytest.mark.parametrize("kind", ["sa", "usa"])
@pytest.mark.parametrize("name", list(ROUTES))
def test_each_model_reaches_the_engine_of_the_table(name, kind, monkeypatch):
    """backend numba: the engine named by the table is built (``attention.engine``) and its compiled kernel is the
    one that runs (counted calls), for one system and for a batch; backend direct: numpy, no kernel. A routing
    mistake would only cost speed (the member kernels are 1.1-16x faster than NumPy), so it is checked by name."""
    pytest.importorskip("numba")
    from numerics.core.engines import ENGINES, choose_for_model
    from numerics.core.ensemble import batch_vector_field, resolve_members

    single_engine, batch_engine = ROUTES[name]
    f, g = _routes(name, kind)
    assert (f.attention.engine, g.attention.engine) == (single_engine, batch_engine)
    model = model_of(name, kind)
    assert choose_for_model(model, "numba", batch=False) == single_engine
    assert ENGINES[single_engine].single and ENGINES[batch_engine].members
    X = starts()
    calls = _count_kernel_calls(monkeypatch)
    f(X[0])
    assert set(calls) == {single_engine}, (name, calls)
    calls.clear()
    g(X)
    assert set(calls) == {batch_engine}, (name, calls)
    calls.clear()
    h, _ = batch_vector_field(model, resolve_members(model, FEATURES[name][1], B, D, 0), D, B, "direct", N)
    model.vector_field(N, D, "direct")[0](X[0])
    h(X)
    assert h.attention.engine == "numpy" and calls == []


@pytest.mark.parametrize("name", ROUTE_REFUSED)
def test_the_compiled_engines_refuse_in_one_line(name):
    """Everything the table's compiled rows do not evaluate is refused with the same one line on every path: one
    system, the batch's check, the batch's field, the pipeline's constructor."""
    pytest.importorskip("numba")
    from numerics.core.attention import NUMBA_SUBSET, Attention
    from numerics.core.ensemble import batch_vector_field, check_batchable, resolve_members

    model = model_of(name, "sa")
    messages = []
    for attempt in (lambda: model.vector_field(N, D, "numba"),
                    lambda: check_batchable(model, "numba"),
                    lambda: batch_vector_field(model, resolve_members(model, None, B, D, 0), D, B, "numba", N),
                    lambda: Attention.from_model(model.at_context_length(N), N, D, engine="lanes")):
        with pytest.raises(InputError) as err:
            attempt()
        messages.append(str(err.value))
    assert "\n" not in NUMBA_SUBSET and set(messages) == {NUMBA_SUBSET}, (name, messages)


def test_the_pipeline_constructors_choose_through_the_table():
    """The batch fields' own entry points (numerics.core.batch_field) reach the same engines, and refuse the same."""
    pytest.importorskip("numba")
    from numerics.core.attention import NUMBA_SUBSET, Attention
    from numerics.core.batch_field import make_batch_block_field, make_batch_field

    assert make_batch_field(D, 1.0, engine="numba").attention.engine == "identity"
    assert make_batch_field(D, 1.0, V=V, engine="numba").attention.engine == "lanes"
    assert make_batch_field(D, 1.0, M=Q, engine="numba").attention.engine == "lanes"
    assert make_batch_field(D, 1.0).attention.engine == "numpy"
    assert make_batch_block_field(1.0, "sa", HEADS, engine="numba").attention.engine == "heads"
    assert Attention.one_head(D, 1.0, engine="fused").engine == "fused"
    from numerics.core.ensemble import batch_vector_field, resolve_members

    model = Model("sa", 1.0)  # Q = K = V = I in the model, V per member: the general member kernel
    members = resolve_members(model, Members(V=np.stack([V] * B)), B, D, 0)
    assert batch_vector_field(model, members, D, B, "numba", N)[0].attention.engine == "lanes"
    assert batch_vector_field(model, resolve_members(model, Members(beta=BETAS), B, D, 0), D, B, "numba",
                              N)[0].attention.engine == "identity"
    for attempt in (lambda: make_batch_block_field(1.0, "sa", HEADS, MLP_, engine="numba"),
                    lambda: make_batch_block_field(1.0, "sa", HEADS, causal=True, engine="numba"),
                    lambda: Attention.heads(1.0, "sa", HEADS, project=False, engine="heads")):
        with pytest.raises(InputError) as err:
            attempt()
        assert str(err.value) == NUMBA_SUBSET


def test_the_rounding_bounds_keep_their_values():
    """The bounds written once in numerics.core.engines, under their old names, equal the formulas they replaced
    (written out here as they were; claims and tests compare against them)."""
    from numerics.core import batch_field, engines, fused

    eps = np.finfo(float).eps
    for beta, d, n, m in ((1.0, 3, 32, 1.0), (-4.5, 16, 4096, 2.3), (0.0, 2, 1, 1.0)):
        old = 2.0 * (2.0 * (d + 2) * eps * abs(beta) * m + 4.0 * eps + (n - 1) * eps)
        assert fused.fused_rounding_bound(beta, d, n, m) == old
        assert batch_field.member_rounding_bound(np.array([0.5, beta]), d, n, m) == (
            2.0 * (2.0 * (d + 2) * eps * max(0.5, abs(beta)) * m + 4.0 * eps + (n - 1) * eps))
    heads, beta, n = HEADS, 1.3, 12
    b = float(np.max(np.abs(beta))) * abs(heads.scale)
    total = 0.0
    for h in range(heads.H):
        m_h = float(np.linalg.norm(np.abs(heads.Q[h]).T @ np.abs(heads.K[h]), 2))
        n_h = float(np.linalg.norm(heads.Q[h], 2) * np.linalg.norm(heads.K[h], 2))
        w_h = float(np.max((np.abs(heads.W[h]).T @ np.abs(heads.V[h])).sum(axis=1)))
        rho = 2.0 * (((2 * heads.d + heads.k + 3) * m_h + 2.0 * max(m_h, n_h)) * eps * b + 4.0 * eps + (n - 1) * eps)
        total += w_h * (2.0 * rho + 2.0 * (heads.d + heads.k + 2) * eps + heads.H * eps)
    assert engines.heads_rounding_bound(beta, heads, n) == (1.0 + math.sqrt(heads.d)) * total
    assert batch_field.heads_rounding_bound is engines.heads_rounding_bound
