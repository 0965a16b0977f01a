"""The independent implementation the NumPy forward pass is checked against: ``transformers`` + ``torch`` (CPU).

``transformers`` loads the same file (a GGUF through its own GGUF loader, which undoes llama.cpp's query/key row
permutation itself; or a checkpoint folder) into its Llama or GPT-2 model and computes the logits of every
position. Nothing of :mod:`numerics.decoder` is used on that side but the token ids.

The packages are the optional extra ``attnflow[reference]``; torch must be the CPU build, installed first with
``pip install torch==2.13.0`` (a plain ``pip install torch`` pulls a multi-gigabyte CUDA build). Tested with
transformers 5.24.0 and torch 2.13.0+cpu. The comparison runs in the slow tests and the claim
``decoder.reference``; its numbers for the packaged model are recorded in ``data/reference_logits.json``
(:func:`record`, run by ``python benchmarks/record_decoder_reference.py``), which the default claim ``decoder.reference-recorded`` compares against without torch.

transformers 5 computes a GGUF model's matrix products in float32 whatever dtype is asked for (it says so when
loading), so the agreement is that of float32 arithmetic (about 1e-7 relative), not float64's.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from numerics.common.errors import InputError
from numerics.common.provenance import atomic_write

REFERENCE_HINT = ("the reference comparison needs the extra attnflow[reference] with the CPU build of torch: "
                  "pip install torch==2.13.0 && pip install -e '.[reference]'")
RECORDED = Path(__file__).resolve().parent / "data" / "reference_logits.json"
TOP = 10


def reference_available() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers", "accelerate"))


def _require():
    if not reference_available():
        raise InputError(REFERENCE_HINT)
    import torch
    import transformers

    return torch, transformers


def load_reference_model(path: str | Path):
    """A ``transformers`` causal LM of a GGUF file or checkpoint folder, in evaluation mode on the CPU."""
    torch, transformers = _require()
    transformers.utils.logging.set_verbosity_error()   # no progress bars or notices on attnflow's stderr
    transformers.utils.logging.disable_progress_bar()
    path = Path(path)
    kwargs = {"dtype": torch.float32}
    if path.is_file():
        kwargs["gguf_file"] = path.name
        path = path.parent
    model = transformers.AutoModelForCausalLM.from_pretrained(str(path), **kwargs)
    model.eval()
    return model


def reference_logits(model, ids) -> np.ndarray:
    """Logits (n, vocab) of every position of ``ids`` computed by the ``transformers`` model (float64 copy)."""
    torch, _ = _require()
    with torch.no_grad():
        out = model(torch.tensor([list(map(int, ids))])).logits[0]
    return out.double().numpy()


def top_logits(logits: np.ndarray, top: int = TOP) -> dict:
    """Per position, the ids of the ``top`` largest logits (descending) and their values: ``top_ids``,
    ``top_values``."""
    order = np.argsort(-logits, axis=1, kind="stable")[:, :top]
    return {"top_ids": order.tolist(), "top_values": np.take_along_axis(logits, order, axis=1).tolist()}


def compare_top(ours: np.ndarray, reference: dict) -> dict:
    """Relative errors |ours - ref| / |ref| on the reference's top logits (per position) and whether the argmax
    agrees: ``max_relative``, ``argmax_agrees``."""
    ids = np.asarray(reference["top_ids"])
    ref = np.asarray(reference["top_values"], dtype=float)
    if ours.shape[0] != ids.shape[0]:
        raise InputError(f"compare_top: {ours.shape[0]} positions against {ids.shape[0]} recorded")
    mine = np.take_along_axis(ours, ids, axis=1)
    rel = np.abs(mine - ref) / np.abs(ref)
    return {"max_relative": float(rel.max()), "argmax_agrees": bool(np.all(np.argmax(ours, axis=1) == ids[:, 0]))}


def record(path: str | Path, prompts: dict, out: Path = RECORDED) -> dict:
    """Write the reference's top logits for the packaged model on ``prompts`` (name -> ids) to ``out``."""
    torch, transformers = _require()
    model = load_reference_model(path)
    entries = {name: {"ids": list(map(int, ids)), **top_logits(reference_logits(model, ids))}
               for name, ids in prompts.items()}
    payload = {"model": Path(path).name, "computed_by": {"transformers": transformers.__version__,
                                                          "torch": torch.__version__, "dtype": "float32"},
               "top": TOP, "prompts": entries}
    atomic_write(out, lambda tmp: Path(tmp).write_text(json.dumps(payload) + "\n"))
    return payload


def recorded() -> dict:
    """The recorded reference top logits (``data/reference_logits.json``)."""
    return json.loads(RECORDED.read_text())

