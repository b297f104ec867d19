"""Context expansion and the answer prompt (seed 001, ``build_prompt``).

The evidence chosen by scoring is grouped by article; each article's block holds its chosen
chunks plus their neighbouring chunks (the sentence before a result often says what was
measured), in the article's own order, under a header naming the PMID the answer must cite.
The system rules bind the model to that evidence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from medlit.types import Article, Chunk, Evidence, Passage

__all__ = [
    "ANSWER_AGAINST_ARTICLES",
    "ANSWER_ECHOED",
    "ANSWER_EMPTY",
    "ANSWER_UNSUPPORTED",
    "NOTHING_SUPPORTED",
    "NO_EVIDENCE_ANSWER",
    "VERDICT_CUE",
    "EvidenceBlock",
    "best_article_lost",
    "build_messages",
    "evidence_header",
    "expand_context",
    "passages_of",
    "system_rules",
    "without_headers",
]

#: The warning under an answer the model wrote without a statement (a verdict alone).
ANSWER_EMPTY = (
    "the model wrote no answer beyond a verdict or citations: the most relevant sentences of "
    "the evidence are shown instead"
)
#: The warning under an answer that only repeated the evidence headers (the articles' titles).
ANSWER_ECHOED = (
    "the model wrote no answer, only the titles of the evidence it was given: the most "
    "relevant sentences of the evidence are shown instead"
)


def best_article_lost(pmid: str) -> tuple[str, str]:
    """Why the digest answers, and the warning, when what is left of the model's answer is
    not about the question and does not cite the best-matching article, which is."""
    return (
        "what was left of the model's answer was not about the question",
        "what was left of the model's answer was not about the question, and did not cite the "
        f"best-matching article (PMID {pmid}): the most relevant sentences of the evidence are "
        "shown instead",
    )


#: Why the digest answers, and the warning, when none of the model's cited statements is left
#: and the best-matching article names every subject of the question.
ANSWER_UNSUPPORTED = (
    "none of the model's statements could be tied to the articles",
    "none of the statements the model wrote could be tied to the retrieved articles (see the "
    "warnings): the most relevant sentences of the evidence are shown instead",
)
#: Why the digest answers, and the warning, when every cited statement of the model's answer
#: stated the answer its article concludes against.
ANSWER_AGAINST_ARTICLES = (
    "the model's statements contradicted the articles they cite",
    "every statement the model cited stated the answer its article concludes against: the most "
    "relevant sentences of the evidence are shown instead",
)


NOTHING_SUPPORTED = (
    "None of the statements written for this question could be tied to the retrieved "
    "articles: they were left out (see the warnings)."
)
NO_EVIDENCE_ANSWER = (
    "No evidence found: the literature search returned no articles relevant to this question, "
    "so medlit cannot answer it from the literature. Try rephrasing it with different terms "
    "or a broader scope."
)

_RULES = """You are medlit, a biomedical literature assistant. Answer the user's question using \
ONLY the evidence blocks below, which were retrieved from PubMed for this question.

Rules:
1. Use only the evidence given. Do not use outside knowledge, and never invent studies, numbers \
or PMIDs.
2. Cite every claim with the PMID of the article that supports it, written exactly as \
[PMID:12345678]. Cite only PMIDs that appear in the evidence headers.
3. If the evidence is thin (few or weak studies, indirect populations) or conflicting, say so \
plainly and explain how.
4. Prefer stronger designs (systematic reviews, meta-analyses, randomised trials) when studies \
disagree, and mention study type when it matters.
5. Be concise: a short paragraph or a few bullet points. No preamble."""

# Reason first, verdict last: a model that must commit in its first word cannot weigh the
# evidence it has not written out yet (a small model then says "Yes" to nearly everything).
# medlit moves the verdict line to the top of the answer (citations.split_verdict).
VERDICT_CUE = "LAST line"
_YES_NO_RULE = f"""6. This is a yes/no question. First say in 2-5 sentences what the evidence \
shows, citing it. Then end with a {VERDICT_CUE} that is exactly one of:
Verdict: Yes
Verdict: No
Verdict: Uncertain
Say Yes or No when the cited studies point that way, even if they are few; say No when they \
found no effect, no difference or no association; say Uncertain only when they conflict or \
none addresses the question."""


def system_rules(*, yes_no: bool) -> str:
    """The system message: evidence-only, cite every claim, flag thin or conflicting evidence."""
    return _RULES + ("\n" + _YES_NO_RULE if yes_no else "")


@dataclass
class EvidenceBlock:
    """One article's evidence for the prompt: its chosen chunks plus their neighbours."""

    article: Article
    chunks: list[Chunk] = field(default_factory=list)  # article order
    anchors: set[str] = field(default_factory=set)  # ids of chunks chosen by scoring
    score: float = 0.0

    def render(self) -> str:
        """The block's text, headed by the PMID to cite."""
        art = self.article
        lines = [evidence_header(art)]
        for chunk in self.chunks:
            label = f"{chunk.section}: " if chunk.section and chunk.ordinal > 0 else ""
            if chunk.from_full_text:  # where in the body it is: "[PMID:n · Results] ..."
                label = f"[{_ident(art)} · {chunk.section or 'Full text'}] "
            if chunk.ordinal == 0 and chunk.text.strip() == art.title.strip():
                continue  # the title chunk repeats the header
            lines.append(label + chunk.text.strip())
        return "\n".join(lines)


def _ident(article: Article) -> str:
    if article.pmid:
        return f"PMID:{article.pmid}"
    return f"DOI:{article.doi}" if article.doi else article.key


def _header_meta(article: Article) -> str:
    """The header's "journal, year, design", without the parentheses."""
    return ", ".join(
        part
        for part in (
            article.journal,
            str(article.year) if article.year else None,
            article.study_type.label,
        )
        if part
    )


def evidence_header(article: Article) -> str:
    """The line that heads an article's evidence in the prompt: "[PMID:n] Title (journal,
    year, design)"."""
    meta = _header_meta(article)
    return f"[{_ident(article)}] {article.title}" + (f" ({meta})" if meta else "")


def without_headers(text: str, articles: Iterable[Article]) -> str:
    """``text`` without the evidence headers it repeats ("[PMID:n] Title (2000, other)").

    A small model may answer with some of its evidence headers and nothing else; their
    citations are real, so the citation checks keep them, and the titles (each article's
    question, or a subject beside the point) would read as the answer. A header repeated is
    no statement.
    """
    for article in articles:
        title = re.escape(article.title.strip()).replace(r"\ ", r"\s+")
        if not title:
            continue
        header = rf"\[{re.escape(_ident(article))}\]\s*{title}(?:\s*\([^()\n]*\))?"
        text = re.sub(header, " ", text, flags=re.I)
        # The title quoted without its identifier keeps the prompt's "(journal, year,
        # design)" after it: 'which states that "... eosinophilic esophagitis? (2003,
        # other)"'. That tail is our prompt's, never the article's words.
        meta = _header_meta(article)
        if meta:
            tail = re.escape(meta).replace(r"\ ", r"\s+")
            text = re.sub(rf"({title})\s*\({tail}\)", r"\1", text, flags=re.I)
    return text.strip()


NeighbourFn = Callable[[Chunk, int], list[Chunk]]


def expand_context(
    evidence: list[Evidence],
    neighbours: NeighbourFn | None,
    *,
    window: int,
    max_chars: int,
) -> list[EvidenceBlock]:
    """Group evidence by article, best article first, adding each chunk's neighbours.

    Args:
        evidence: scored chunks, best first.
        neighbours: returns the chunks within ``window`` positions of a chunk in its article
            (the chunk itself may be included); ``None`` adds no context.
        window: how many chunks either side to add.
        max_chars: stop adding articles once the rendered blocks would exceed this (the best
            article always goes in).
    """
    blocks: dict[str, EvidenceBlock] = {}
    for item in evidence:
        key = item.article.key
        block = blocks.setdefault(key, EvidenceBlock(article=item.article, score=item.score))
        block.score = max(block.score, item.score)
        block.anchors.add(item.chunk.id)
        extra = neighbours(item.chunk, window) if neighbours and window > 0 else []
        by_id = {c.id: c for c in block.chunks}
        for chunk in [item.chunk, *extra]:
            if chunk.article_key == key:
                by_id.setdefault(chunk.id, chunk)
        block.chunks = sorted(by_id.values(), key=lambda c: c.ordinal)

    ordered = sorted(blocks.values(), key=lambda b: -b.score)
    kept: list[EvidenceBlock] = []
    used = 0
    for block in ordered:
        size = len(block.render())
        if kept and used + size > max_chars:
            continue
        kept.append(block)
        used += size
    return kept


def passages_of(evidence: Iterable[Evidence], article_key: str, limit: int = 10) -> list[Passage]:
    """The passages of one article the answer was given (its evidence chunks, best first; the
    title chunk is no passage): what a citation of it rests on."""
    passages: list[Passage] = []
    seen: set[str] = set()
    for item in sorted(evidence, key=lambda ev: -ev.score):
        chunk = item.chunk
        if chunk.article_key != article_key or chunk.ordinal == 0 or chunk.id in seen:
            continue
        seen.add(chunk.id)
        passages.append(
            Passage(section=chunk.section, from_full_text=chunk.from_full_text, text=chunk.text)
        )
        if len(passages) >= limit:
            break
    return passages


def build_messages(
    question: str,
    blocks: list[EvidenceBlock],
    *,
    standalone_question: str | None = None,
    focus: str | None = None,
    memory_summary: str = "",
    yes_no: bool = False,
) -> list[dict[str, str]]:
    """The chat messages for the ``answer`` task: system rules, then memory, evidence, question."""
    parts: list[str] = []
    if memory_summary.strip():
        parts.append("Conversation so far (summary):\n" + memory_summary.strip())
    evidence_text = "\n\n".join(block.render() for block in blocks)
    parts.append("Evidence:\n\n" + evidence_text)
    asked = question.strip()
    if standalone_question and standalone_question.strip() != asked:
        parts.append(f"Question: {asked}\n(Standalone: {standalone_question.strip()})")
    else:
        parts.append(f"Question: {asked}")
    if focus:
        parts.append(f"Focus of the answer: {focus}.")
    return [
        {"role": "system", "content": system_rules(yes_no=yes_no)},
        {"role": "user", "content": "\n\n".join(parts)},
    ]
