"""Claims about the pretrained all-MiniLM-L6-v2 and attnflow's view of it (numerics.trained).

Every check needs the optional extra ``attnflow[models]``; without it the result is ``inconclusive`` with the
reason in its details.
"""
from __future__ import annotations

import numpy as np

from numerics.common.verification import CheckResult, claim

SOURCE_SBERT = "sentence-transformers quick start (sbert.net, Usage), all-MiniLM-L6-v2"
SOURCE_BERT = "Devlin et al. arXiv 1810.04805 (BERT block); GLPR arXiv 2312.10794 (transformers as particles)"
SOURCE_GLPR = "GLPR arXiv 2312.10794 (ALBERT, clustering with depth); BPA arXiv 2410.23228 (l_max)"
SHORT = "Tokens cluster with depth."

#: the recorded trend of the iterated-layer experiment (paragraph 1, 100 iterations, eps = 0.3; see the note)
ITERATED_STEPS = 100
ITERATED_FINAL_CLUSTERS = {"block": [1, 2, 2, 3, 1, 1], "attention": [1, 2, 1, 1, 1, 1]}


def _unavailable(cid: str) -> CheckResult | None:
    from numerics.trained.checkpoint import EXTRA_HINT, models_available

    if models_available():
        return None
    return CheckResult(cid, "inconclusive", None, None, None, {"reason": f"the packaged model is missing: {EXTRA_HINT}"})


@claim(id="trained.quickstart", title="NumPy forward pass reproduces the published quick-start similarities",
       source=SOURCE_SBERT, note="trained-forward-pass.md")
def check_quickstart() -> CheckResult:
    cid = "trained.quickstart"
    if (skip := _unavailable(cid)) is not None:
        return skip
    from numerics.trained.checkpoint import load_checkpoint
    from numerics.trained.encoder import sentence_embeddings
    from numerics.trained.texts import QUICKSTART, QUICKSTART_SIMILARITIES

    E = sentence_embeddings(load_checkpoint(), QUICKSTART)
    S = E @ E.T
    printed = np.array(QUICKSTART_SIMILARITIES)
    err = float(np.abs(S - printed).max())
    same = bool(np.array_equal(np.round(S, 4), printed))
    return CheckResult(cid, "passed" if same else "failed", err, 0.0, "rounds to the printed 4 decimals (5e-5)",
                       {"similarities": S.tolist(), "printed": printed.tolist(), "sentences": list(QUICKSTART),
                        "path": "numerics.trained.encoder (float64 NumPy), mean pooling, unit norm"})


@claim(id="trained.block", title="attention rows sum to one; every layer is the documented post-LN BERT block",
       source=SOURCE_BERT, note="trained-forward-pass.md")
def check_block() -> CheckResult:
    cid = "trained.block"
    if (skip := _unavailable(cid)) is not None:
        return skip
    from numerics.trained.checkpoint import load_checkpoint
    from numerics.trained.encoder import run_encoder
    from numerics.trained.reference import reference_layer

    ckpt = load_checkpoint()
    tr = run_encoder(ckpt, SHORT)
    rows = float(np.abs(tr.attentions.sum(-1) - 1).max())
    gaps = []
    for l in range(ckpt.layers):
        Xn, Y, P = reference_layer(tr.states[l], ckpt.layer_weights[l], ckpt.heads, ckpt.ln_eps)
        gaps.append(max(float(np.abs(Xn - tr.states[l + 1]).max() / np.abs(Xn).max()),
                        float(np.abs(Y - tr.sublayer[l]).max() / np.abs(Y).max()),
                        float(np.abs(P - tr.attentions[l]).max())))
    worst = max(max(gaps), rows)
    tol = 1e-11
    return CheckResult(cid, "passed" if worst <= tol and tr.attentions.min() >= 0 else "failed", worst, 0.0, tol,
                       {"row_sum_error": rows, "layer_relative_gaps": gaps, "text": SHORT, "tokens": tr.n,
                        "paths": "numerics.trained.encoder (vectorised heads) vs numerics.trained.reference "
                                 "(loop over heads, scipy softmax, np.var LayerNorm, scipy.stats.norm GELU)"})


@claim(id="trained.schedule", title="attnflow's layer step through the trained depth schedule = the idealised "
       "attention sub-layer, to rounding", source=SOURCE_GLPR, note="trained-idealisation.md")
def check_schedule() -> CheckResult:
    cid = "trained.schedule"
    if (skip := _unavailable(cid)) is not None:
        return skip
    from numerics.trained.checkpoint import load_checkpoint
    from numerics.trained.encoder import run_encoder
    from numerics.trained.flows import attnflow_depth_run, idealised_sublayer, layer_input_scales

    ckpt = load_checkpoint()
    tr = run_encoder(ckpt, SHORT)
    frames = attnflow_depth_run(ckpt, tr)
    r2 = layer_input_scales(tr)
    U, gaps = frames[0], []
    for l in range(ckpt.layers):
        U = idealised_sublayer(U, ckpt.layer_weights[l], ckpt.heads, r2[l])
        gaps.append(float(np.abs(U - frames[l + 1]).max()))
    tol = 1e-12
    return CheckResult(cid, "passed" if max(gaps) <= tol else "failed", max(gaps), 0.0, tol,
                       {"per_layer": gaps, "r2": r2, "text": SHORT,
                        "paths": "simulate(Model(schedule=trained_schedule), Solver('layer', dt=1, backend='direct')) "
                                 "vs numerics.trained.flows.idealised_sublayer (full-width products)"})


def iterated_trend(steps: int = ITERATED_STEPS, eps: float = 0.3) -> dict:
    """Per layer and variant: mean cosine first/last, final clusters, plateaus, l_max and the reduced model."""
    from numerics.trained.checkpoint import load_checkpoint
    from numerics.trained.comparison import compare_iterated
    from numerics.trained.flows import iterate_layer
    from numerics.trained.texts import shipped_paragraphs

    ckpt = load_checkpoint()
    text = shipped_paragraphs()[0]
    out = {}
    for variant in ("block", "attention"):
        rows = []
        for layer in range(1, ckpt.layers + 1):
            c = compare_iterated(ckpt, iterate_layer(ckpt, text, layer, steps, variant), eps)
            rows.append({"layer": layer, "mean_cosine_first": c["mean_cosine"][0],
                         "mean_cosine_last": c["mean_cosine"][-1],
                         "increasing_fraction": c["mean_cosine_increasing_fraction"],
                         "final_clusters": c["final_clusters"], "plateaus": c["plateaus"], "l_max": c["l_max"],
                         "betas": c["betas"], "reduced": c["reduced"]})
        out[variant] = rows
    return out


@claim(id="trained.iterated-layer", title="one trained layer iterated: mean cosine rises in every layer; cluster "
       "counts end at the recorded values, not always at the predicted single cluster",
       source=SOURCE_GLPR, note="trained-iterated-layer.md", default=False)
def check_iterated_layer() -> CheckResult:
    cid = "trained.iterated-layer"
    if (skip := _unavailable(cid)) is not None:
        return skip
    trend = iterated_trend()
    rises = all(r["mean_cosine_last"] > r["mean_cosine_first"] for rows in trend.values() for r in rows)
    finals = {v: [r["final_clusters"] for r in rows] for v, rows in trend.items()}
    lmax = {v: [r["l_max"]["beta_iso_median"] for r in rows] for v, rows in trend.items()}
    theory_single = {v: [f == 1 for f in fs] for v, fs in finals.items()}
    ok = rises and finals == ITERATED_FINAL_CLUSTERS
    return CheckResult(cid, "passed" if ok else "failed", {"final_clusters": finals, "mean_cosine_rises": rises},
                       {"final_clusters": ITERATED_FINAL_CLUSTERS, "mean_cosine_rises": True}, "exact",
                       {"trend": trend, "l_max_beta_iso": lmax, "theory_single_cluster_holds": theory_single,
                        "steps": ITERATED_STEPS, "eps": 0.3, "text": "shipped paragraph 1"})


def _effective_beta_gap(ckpt) -> tuple[float, list[dict]]:
    """Largest relative gap (to beta_spec) between the heads module's effective inverse temperatures of layer 1 and
    the same numbers from the layer's raw scores.

    Issue 43, "outputs computed but never judged": beta_iso and beta_spec feed `attnflow model inspect`, the
    decoder's per-layer betas and the iterated-layer comparison, and no claim compared them with anything. The
    independent values use the PyTorch-layout weights sliced here (not :func:`head_blocks`) on tokens x_i = r e_i:
    the scores L_ij = <W_q,h x_i, W_k,h x_j> / sqrt(k), beta_iso = the mean self-score (1/d) sum_i L_ii, and
    beta_spec = r^2 sigma_max(W_q,h^T W_k,h) / sqrt(k) from the k x k Gram matrices
    (sigma_max^2 = lambda_max(W_q,h W_q,h^T W_k,h W_k,h^T)).
    """
    from numerics.trained.heads import head_reports

    w = ckpt.layer_weights[0]
    d = w.Wq.shape[1]
    k = d // ckpt.heads
    gap, rows = 0.0, []
    for r2 in (1.0, 2.0):
        X = np.sqrt(r2) * np.eye(d)
        for h, rep in enumerate(head_reports(ckpt, 0, r2)):
            Wq, Wk = w.Wq[h * k:(h + 1) * k], w.Wk[h * k:(h + 1) * k]
            L = (X @ Wq.T) @ (X @ Wk.T).T / np.sqrt(k)
            iso = float(np.mean(np.diag(L)))
            spec = float(r2 * np.sqrt(np.max(np.linalg.eigvals((Wq @ Wq.T) @ (Wk @ Wk.T)).real)) / np.sqrt(k))
            gap = max(gap, abs(rep.beta_iso - iso) / spec, abs(rep.beta_spec - spec) / spec)
            rows.append({"r2": r2, "head": h, "beta_iso": rep.beta_iso, "beta_iso_scores": iso,
                         "beta_spec": rep.beta_spec, "beta_spec_gram": spec})
    return gap, rows


@claim(id="trained.head-blowup-time",
       title="the heads' Gaussian blow-up times 1/(2 r^2 lambda_max(sym A_h)) of layer 1 equal the Gaussian area's "
             "closed form and its moment ODE",
       source="CACP arXiv 2501.18322 (Gaussian solutions of softmax attention, V = I)", note="trained-head-blowup-time.md")
def check_head_blowup_time() -> CheckResult:
    cid = "trained.head-blowup-time"
    if (skip := _unavailable(cid)) is not None:
        return skip
    from numerics.gaussian.solutions import gaussian_attention, softmax_blowup_time, solve_moment_ode
    from numerics.trained.checkpoint import load_checkpoint
    from numerics.trained.heads import head_blocks, head_reports

    ckpt = load_checkpoint()
    Q, K, _, _ = head_blocks(ckpt.layer_weights[0], ckpt.heads)
    k, d = Q.shape[1], Q.shape[2]
    closed_gap, rows = 0.0, []
    for r2 in (1.0, 2.0):   # two token norms pin the r^2 scaling
        for h, rep in enumerate(head_reports(ckpt, 0, r2)):
            A = K[h].T @ Q[h] / np.sqrt(k)
            other = softmax_blowup_time(r2 * np.eye(d), A)
            closed_gap = max(closed_gap, abs(rep.blowup_time / other - 1.0))
            rows.append({"r2": r2, "head": h, "heads_module": rep.blowup_time, "gaussian_closed_form": other})
    # third route for the head that blows up first: the moment ODE d Sigma/dt = 2 Sigma sym(A) Sigma integrated
    # (DOP853, rtol 1e-10) on the range of sym(A) (Sigma stays r^2 I on its kernel), blow-up time extrapolated
    # from the pole of tr Sigma
    first = min(rows[:ckpt.heads], key=lambda r: r["heads_module"])
    A = K[first["head"]].T @ Q[first["head"]] / np.sqrt(k)
    S = 0.5 * (A + A.T)
    w, U = np.linalg.eigh(S)
    U = U[:, np.abs(w) > 1e-9 * np.abs(w).max()]
    m = U.shape[1]
    model = gaussian_attention("softmax", m, V=np.eye(m), A=U.T @ S @ U)
    sol = solve_moment_ode(model, np.zeros(m), np.eye(m), 2.0 * first["heads_module"], rtol=1e-10)
    ode_gap = abs(first["heads_module"] / sol.blowup_time - 1.0) if sol.status == "blow-up" else float("inf")
    # the ODE's error, a posteriori: DOP853's global error is proportional to rtol (measured: 4.8e-9, 4.1e-10,
    # 3.7e-11 at rtol 1e-9, 1e-10, 1e-11), so the change from rtol 1e-9 to 1e-10 is 9x the error at 1e-10; the
    # pole fit adds about 1/(BLOWUP_FACTOR m) = 2e-10 relative at most (tr Sigma stops at 1e8 m, the regular
    # directions O(m)). Tolerance: 10x the estimate, floored at 1e-9 (proofs_notes/trained-head-blowup-time.md)
    loose = solve_moment_ode(model, np.zeros(m), np.eye(m), 2.0 * first["heads_module"], rtol=1e-9)
    ode_estimate = (abs(loose.blowup_time / sol.blowup_time - 1.0) / 9.0
                    if sol.status == loose.status == "blow-up" else float("inf"))
    tol_closed, tol_ode = 1e-12, max(10.0 * ode_estimate, 1e-9)   # same eigenvalue two ways / 10x the ODE's error
    beta_gap, beta_rows = _effective_beta_gap(ckpt)
    tol_beta = 1e-10   # rounding of sums of d = 384 products and of a k x k eigenvalue problem (measured 1e-15)
    ok = closed_gap <= tol_closed and ode_gap <= tol_ode and beta_gap <= tol_beta
    return CheckResult(cid, "passed" if ok else "failed", {"closed_forms": closed_gap, "moment_ode": ode_gap,
                                                           "effective_betas": beta_gap},
                       0.0, {"closed_forms": tol_closed, "moment_ode": tol_ode, "effective_betas": tol_beta},
                       {"rows": rows, "effective_beta_rows": beta_rows, "ode_head": first["head"], "ode_status": sol.status,
                        "ode_blowup_time": sol.blowup_time, "range_dimension": m,
                        "ode_error_estimate": ode_estimate, "ode_blowup_time_rtol_1e-9": loose.blowup_time,
                        "compared": "numerics.trained.heads.blowup_time (eigenvalues of sym(A_h)) vs "
                                    "numerics.gaussian.solutions.softmax_blowup_time (Sigma_0^{1/2} S Sigma_0^{1/2}) "
                                    "vs solve_moment_ode on the range of sym(A_h)"})
