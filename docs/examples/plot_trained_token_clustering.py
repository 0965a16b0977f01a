"""
Token clustering in a pretrained transformer, layer by layer
============================================================

GLPR (arXiv 2312.10794) show, for a pretrained ALBERT, the histogram of the pairwise cosines of the tokens
layer by layer: the mass moves towards 1 as the tokens cluster. Here the same figure for all-MiniLM-L6-v2
(6 layers, 12 heads, width 384; the optional extra ``attnflow[models]``) on a paragraph shipped with attnflow,
next to attnflow's attention-only flow with the model's own heads as a depth schedule, started from the same
layer-0 tokens (``numerics.trained.flows``).
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from numerics.trained.checkpoint import load_checkpoint  # noqa: E402
from numerics.trained.encoder import run_encoder  # noqa: E402
from numerics.trained.flows import attnflow_depth_run  # noqa: E402
from numerics.trained.geometry import layer_geometry  # noqa: E402
from numerics.trained.plots import draw_layer_histograms  # noqa: E402
from numerics.trained.texts import shipped_paragraphs  # noqa: E402

ckpt = load_checkpoint()
trace = run_encoder(ckpt, shipped_paragraphs()[0])
runs = {"all-MiniLM-L6-v2": [g.to_dict() for g in layer_geometry(trace.states)],
        "attnflow attention-only": [g.to_dict() for g in layer_geometry(attnflow_depth_run(ckpt, trace))]}

# %%
# The histograms: the trained model's cosines drift slowly to the right; the attention-only flow with the
# same heads collapses the tokens much faster (the MLP and the LayerNorm hold the model's tokens apart).
fig, axes = plt.subplots(1, 7, figsize=(17, 2.8), sharey=True)
draw_layer_histograms(axes, runs)
fig.suptitle(f"pairwise cosines of {trace.n} tokens, layer by layer")
fig.tight_layout()

# %%
# Mean cosine and eps-cluster count (eps = 0.3 rad) per layer.
for name, geo in runs.items():
    print(name, [(round(g["mean_cosine"], 3), g["clusters"]) for g in geo])
