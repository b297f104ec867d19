"""Text utilities shared by chunking, the evidence digest and research."""

from __future__ import annotations

__all__ = ["split_sentences"]


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``.

    Uses ``syntok``, which handles biomedical prose ("e.g.", "et al.", "3.5 mg", "P < 0.01")
    where pysbd and spaCy's default splitter were seen to break sentences wrongly.
    """
    from syntok import segmenter

    sentences = []
    for paragraph in segmenter.process(text):
        for sentence in paragraph:
            joined = "".join(token.spacing + token.value for token in sentence).strip()
            if joined:
                sentences.append(joined)
    return sentences
