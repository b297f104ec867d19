"""Context expansion and the answer prompt (seed 001, ``build_prompt``).

The evidence chosen by scoring is grouped by article; each article's block holds its chosen
chunks plus their neighbouring chunks (the sentence before a result often says what was
measured), in the article's own order, under a header naming the PMID the answer must cite.
The system rules bind the model to that evidence.

The prompt does not carry whole abstracts: :func:`focus_blocks` keeps, of each block, the
sentences that bear on the question, ranked by the evidence digest's own scoring (each
article's conclusion first, then results, background and aims last or never), within a token
budget. The messages are laid out so that calls over the same evidence share their leading
part, which llama.cpp, vLLM and hosted providers reuse from their prompt cache: the fixed
rules first, then the evidence, then what differs (the conversation, the question).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from medlit.types import Article, Chunk, Evidence, Passage

__all__ = [
    "ANSWER_AGAINST_ARTICLES",
    "ANSWER_ECHOED",
    "ANSWER_EMPTY",
    "ANSWER_UNSUPPORTED",
    "CHARS_PER_TOKEN",
    "NOTHING_SUPPORTED",
    "NO_EVIDENCE_ANSWER",
    "VERDICT_CUE",
    "EvidenceBlock",
    "RankedSentence",
    "best_article_lost",
    "build_messages",
    "evidence_header",
    "expand_context",
    "focus_blocks",
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

_RULES = """You are medlit, a biomedical literature assistant. Answer the question using ONLY the \
evidence below, retrieved from PubMed for it.

Rules:
1. No outside knowledge; never invent studies, numbers or PMIDs.
2. Cite every claim with its article's PMID, exactly as [PMID:12345678], and only PMIDs of the \
evidence.
3. Say plainly when the evidence is thin or conflicting; prefer reviews and randomised trials.
4. Be concise: a short paragraph. No preamble."""

# Reason first, verdict last: a model that must commit in its first word cannot weigh the
# evidence it has not written out yet (a small model then says "Yes" to nearly everything).
# medlit moves the verdict line to the top of the answer (citations.split_verdict). The rule
# closes the user message, after the evidence and the question: the system rules stay the same
# for every question (a server's prompt cache reuses them), and a small model leaves the
# verdict line out less often when it is the last thing it read.
VERDICT_CUE = "LAST line"
_YES_NO_RULE = f"""This is a yes/no question. First say in 2-5 sentences what the evidence \
shows, citing it. Then end with a {VERDICT_CUE} that is exactly one of:
Verdict: Yes
Verdict: No
Verdict: Uncertain
Say Yes or No when the cited studies point that way, even if they are few; say No when they \
found no effect, no difference or no association; say Uncertain only when they conflict or \
none addresses the question."""


def system_rules() -> str:
    """The system message: evidence-only, cite every claim, flag thin or conflicting evidence
    (the same for every question)."""
    return _RULES


@dataclass
class EvidenceBlock:
    """One article's evidence for the prompt: its chosen chunks plus their neighbours."""

    article: Article
    chunks: list[Chunk] = field(default_factory=list)  # article order
    anchors: set[str] = field(default_factory=set)  # ids of chunks chosen by scoring
    score: float = 0.0
    sentences: list[RankedSentence] | None = None  # set by focus_blocks: only these are shown

    def render(self) -> str:
        """The block's text, headed by the PMID to cite."""
        art = self.article
        lines = [evidence_header(art)]
        if self.sentences is not None:
            lines += [self._sentence_line(s) for s in _in_article_order(art, self.sentences)]
            return "\n".join(lines)
        for chunk in self.chunks:
            label = f"{chunk.section}: " if chunk.section and chunk.ordinal > 0 else ""
            if chunk.from_full_text:  # where in the body it is: "[PMID:n · Results] ..."
                label = f"[{_ident(art)} · {chunk.section or 'Full text'}] "
            if chunk.ordinal == 0 and chunk.text.strip() == art.title.strip():
                continue  # the title chunk repeats the header
            lines.append(label + chunk.text.strip())
        return "\n".join(lines)

    def _sentence_line(self, sentence: RankedSentence) -> str:
        """One chosen sentence, labelled as the whole chunks are: a conclusion as such, a
        sentence of a full text with where in the body it is ("[PMID:n · Results] ...")."""
        body = next((c for c in self.chunks if c.from_full_text and sentence.text in c.text), None)
        if body is not None:
            return f"[{_ident(self.article)} · {body.section or 'Full text'}] {sentence.text}"
        return ("Conclusion: " if sentence.is_conclusion else "") + sentence.text


def _ident(article: Article) -> str:
    if article.pmid:
        return f"PMID:{article.pmid}"
    return f"DOI:{article.doi}" if article.doi else article.key


def _header_meta(article: Article) -> str:
    """The header's "year, design", without the parentheses (the journal says nothing the
    model needs, and costs tokens per article)."""
    return ", ".join(
        part
        for part in (
            str(article.year) if article.year else None,
            article.study_type.label,
        )
        if part
    )


def evidence_header(article: Article) -> str:
    """The line that heads an article's evidence in the prompt: "[PMID:n] Title (year,
    design)"."""
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


#: Characters per token of English biomedical prose in the BPE vocabularies of the models medlit
#: is used with (Qwen2.5, Llama 3, GPT-4o): the prompt budget's unit, an estimate that errs on
#: the long side.
CHARS_PER_TOKEN = 4.0


class RankedSentence(Protocol):
    """A sentence of the evidence as the digest's scoring ranks it
    (:class:`medlit.digest.DigestSentence`)."""

    @property
    def text(self) -> str: ...
    @property
    def article_key(self) -> str: ...
    @property
    def is_conclusion(self) -> bool: ...


RankFn = Callable[[str, list[Evidence]], Sequence[RankedSentence]]
"""Ranks the sentences of some evidence for a question, best first: conclusions first, each
group by relevance, off-topic and aim sentences left out (the digest's scoring)."""


def focus_blocks(
    question: str,
    blocks: list[EvidenceBlock],
    rank: RankFn,
    *,
    max_tokens: int,
    per_article: int,
) -> list[EvidenceBlock]:
    """Of each block, the sentences that bear on ``question``, within ``max_tokens``.

    Every sentence of the blocks (the chosen chunks and their neighbours) is ranked by
    ``rank``; each article, best first, gets its best sentence (its conclusion, where one
    bears on the question), then the rest go by rank, at most ``per_article`` an article,
    while the budget lasts (headers count). An article none of whose sentences is ranked
    (about another subject, only aims) is left out; the best article always stays.
    """
    if not blocks:
        return []
    evidence = [
        Evidence(chunk=chunk, article=block.article, similarity=0.0, score=block.score)
        for block in blocks
        for chunk in block.chunks
    ]
    ranked = list(rank(question, evidence))
    budget = max_tokens * CHARS_PER_TOKEN
    by_key = {block.article.key: block for block in blocks}
    picked: dict[str, list[RankedSentence]] = {}
    used = 0.0

    def take(sentence: RankedSentence, *, always: bool = False) -> None:
        nonlocal used
        chosen = picked.setdefault(sentence.article_key, [])
        if len(chosen) >= per_article or sentence in chosen:
            return
        head = 0 if chosen else len(evidence_header(by_key[sentence.article_key].article)) + 2
        cost = head + len(sentence.text) + 1
        if used + cost > budget and not always:
            return
        chosen.append(sentence)
        used += cost

    ranked = [s for s in ranked if s.article_key in by_key]
    for number, block in enumerate(blocks):
        first = next((s for s in ranked if s.article_key == block.article.key), None)
        if first is not None:
            take(first, always=number == 0)
    for block in blocks:  # a full text read for this answer shows its best passage
        body = [c.text for c in block.chunks if c.from_full_text]
        best = next(
            (
                s
                for s in ranked
                if s.article_key == block.article.key and any(s.text in t for t in body)
            ),
            None,
        )
        if best is not None:
            take(best)
    for sentence in ranked:
        take(sentence)
    kept = []
    for block in blocks:
        chosen = picked.get(block.article.key)
        if chosen:
            kept.append(
                EvidenceBlock(block.article, list(block.chunks), set(block.anchors), block.score)
            )
            kept[-1].sentences = chosen
    return kept or blocks[:1]


def _in_article_order(article: Article, sentences: list[RankedSentence]) -> list[RankedSentence]:
    """``sentences`` as the article says them (a sentence not found in its abstract last)."""
    said = article.abstract_text

    def where(sentence: RankedSentence) -> int:
        found = said.find(sentence.text)
        return found if found >= 0 else len(said) + 1

    return sorted(sentences, key=where)


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
    """The chat messages for the ``answer`` task: the fixed rules, then the evidence, then
    what differs between calls over it (the conversation, the question), so that such calls
    share their leading part (a server's prompt cache reuses it)."""
    evidence_text = "\n\n".join(block.render() for block in blocks)
    parts = ["Evidence:\n\n" + evidence_text]
    if memory_summary.strip():
        parts.append("Conversation so far (summary):\n" + memory_summary.strip())
    asked = question.strip()
    if standalone_question and standalone_question.strip() != asked:
        parts.append(f"Question: {asked}\n(Standalone: {standalone_question.strip()})")
    else:
        parts.append(f"Question: {asked}")
    if focus:
        parts.append(f"Focus of the answer: {focus}.")
    if yes_no:
        parts.append(_YES_NO_RULE)
    return [
        {"role": "system", "content": system_rules()},
        {"role": "user", "content": "\n\n".join(parts)},
    ]
