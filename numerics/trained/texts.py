"""The text shipped with attnflow for the trained-model measurements, and reading a user's text."""
from __future__ import annotations

from pathlib import Path

from numerics.common.errors import InputError

DATA = Path(__file__).resolve().parent / "data"
PARAGRAPHS = DATA / "paragraphs.txt"

#: the three sentences of the sentence-transformers quick start (https://sbert.net, "Usage")
QUICKSTART = ("The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium.")
#: the similarities it prints for all-MiniLM-L6-v2 (4 decimals)
QUICKSTART_SIMILARITIES = ((1.0000, 0.6660, 0.1046), (0.6660, 1.0000, 0.1411), (0.1046, 0.1411, 1.0000))


def shipped_paragraphs() -> list[str]:
    """The four paragraphs of ``numerics/trained/data/paragraphs.txt`` (written for attnflow; blank-line separated)."""
    return [p.strip().replace("\n", " ") for p in PARAGRAPHS.read_text().split("\n\n") if p.strip()]


def read_text(text: str | None = None, file: str | None = None, paragraph: int = 1,
              max_bytes: int | None = None) -> str:
    """``text``, else the contents of ``file`` (refused from its size when larger than ``max_bytes``, before it
    is read; default: the common reader's bound), else the shipped paragraph number ``paragraph`` (1-based)."""
    if text is not None and file is not None:
        raise InputError("give --text or --file, not both")
    if text is not None:
        if not text.strip():
            raise InputError("--text is empty")
        return text
    if file is not None:
        from numerics.common.readers import read_text as read_file_text

        content = (read_file_text(file, "text file") if max_bytes is None
                   else read_file_text(file, "text file", max_bytes=max_bytes))
        if not content.strip():
            raise InputError(f"text file {file} is empty")
        return content
    paras = shipped_paragraphs()
    if not 1 <= paragraph <= len(paras):
        raise InputError(f"--paragraph must be between 1 and {len(paras)}, got {paragraph}")
    return paras[paragraph - 1]
