"""Rewrite numerics/decoder/data/reference_logits.json: transformers + torch on the packaged SmolLM2 GGUF.

Run from the repository root, with the extra attnflow[reference] (CPU torch installed first):
    pip install torch==2.13.0 && pip install -e ".[reference]"
    python benchmarks/record_decoder_reference.py
The default claim decoder.reference-recorded compares the NumPy forward pass with this file; the slow claim
decoder.reference compares with a live run and reports how far the live run is from the file.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from numerics.decoder.checkpoint import load_decoder  # noqa: E402
from numerics.decoder.checks import reference_prompts  # noqa: E402
from numerics.decoder.gguf_reader import packaged_gguf_path  # noqa: E402
from numerics.decoder.torch_reference import RECORDED, record  # noqa: E402

if __name__ == "__main__":
    written = record(packaged_gguf_path(), reference_prompts(load_decoder()))
    print(f"wrote {RECORDED} ({len(written['prompts'])} prompts, computed by {written['computed_by']})")
