"""Domain types shared by every part of medlit.

``Article`` is what every source returns; ``Chunk`` is a piece of an article's abstract that the
evidence cache embeds; ``Evidence`` is a scored chunk used for an answer; ``Citation`` is what
an answer cites; ``SearchResults`` is what ``search_all_providers`` returns.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from enum import IntEnum
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

__all__ = [
    "AbstractSection",
    "Article",
    "Chunk",
    "Citation",
    "Evidence",
    "FullText",
    "FullTextSection",
    "Passage",
    "ProviderStatus",
    "SearchQuery",
    "SearchResults",
    "StudyType",
    "VerdictCause",
    "classify_study_type",
    "normalise_title",
    "retraction_of",
]

SourceName = Literal["pubmed", "europepmc", "local"]
SOURCE_NAMES: tuple[SourceName, ...] = ("pubmed", "europepmc", "local")

_CONCLUSION_LABELS = {"CONCLUSION", "CONCLUSIONS", "CONCLUSIONS AND RELEVANCE", "INTERPRETATION"}


class AbstractSection(BaseModel):
    """One part of an abstract: structured abstracts have several, labelled."""

    model_config = ConfigDict(frozen=True)

    label: str | None = Field(None, description="Label as printed, e.g. 'METHODS'.")
    category: str | None = Field(
        None, description="NLM category: BACKGROUND, OBJECTIVE, METHODS, RESULTS, CONCLUSIONS."
    )
    text: str

    @property
    def is_conclusion(self) -> bool:
        """True for the section that states the article's conclusion."""
        if (self.category or "").upper() == "CONCLUSIONS":
            return True
        return (self.label or "").strip().upper().rstrip(":") in _CONCLUSION_LABELS

    @property
    def is_methods(self) -> bool:
        """True for a section saying how the study was done (its methods, design, setting)."""
        if (self.category or "").upper() == "METHODS":
            return True
        return bool(re.search(r"METHOD|DESIGN|SETTING", (self.label or "").upper()))

    @property
    def is_result(self) -> bool:
        """True for a section reporting what the study found: its results or conclusion."""
        if self.is_conclusion or (self.category or "").upper() == "RESULTS":
            return True
        label = (self.label or "").upper()
        return "RESULT" in label or "FINDINGS" in label


class StudyType(IntEnum):
    """Evidence level from publication types; a higher value is stronger evidence."""

    OTHER = 0
    CASE_REPORT = 1
    OBSERVATIONAL = 2
    OTHER_TRIAL = 3
    RCT = 4
    SYSTEMATIC_REVIEW = 5  # includes meta-analyses

    @property
    def label(self) -> str:
        """Human label, e.g. 'systematic review / meta-analysis'."""
        return _STUDY_LABELS[self]


_STUDY_LABELS = {
    StudyType.OTHER: "other",
    StudyType.CASE_REPORT: "case report",
    StudyType.OBSERVATIONAL: "observational",
    StudyType.OTHER_TRIAL: "clinical trial",
    StudyType.RCT: "RCT",
    StudyType.SYSTEMATIC_REVIEW: "systematic review / meta-analysis",
}

_STUDY_PATTERNS: list[tuple[StudyType, re.Pattern[str]]] = [
    (StudyType.SYSTEMATIC_REVIEW, re.compile(r"meta-analysis|systematic review", re.I)),
    (StudyType.RCT, re.compile(r"randomi[sz]ed controlled trial", re.I)),
    (
        StudyType.OTHER_TRIAL,
        re.compile(r"clinical trial|controlled clinical trial|pragmatic clinical trial", re.I),
    ),
    (
        StudyType.OBSERVATIONAL,
        re.compile(
            r"observational study|cohort|case-control|cross-sectional|comparative study"
            r"|multicenter study|validation study|evaluation study|twin study",
            re.I,
        ),
    ),
    (StudyType.CASE_REPORT, re.compile(r"case reports?", re.I)),
]


def classify_study_type(publication_types: list[str]) -> StudyType:
    """The strongest study design named among an article's publication types."""
    best = StudyType.OTHER
    for pub_type in publication_types:
        for study_type, pattern in _STUDY_PATTERNS:
            if study_type > best and pattern.search(pub_type):
                best = study_type
                break
    return best


#: Study designs as an article states its own, in its title or the methods of its abstract.
_DESIGN_STATEMENTS: list[tuple[StudyType, re.Pattern[str]]] = [
    (
        StudyType.SYSTEMATIC_REVIEW,
        re.compile(r"\b(?:systematic(?:ally)? review\w*|meta-?analys[ie]s)\b", re.I),
    ),
    (
        StudyType.RCT,
        re.compile(
            r"\brandomi[sz]ed[\s,]+(?:[\w-]+[\s,]+){0,4}?(?:trial|study)\b"
            r"|\b(?:were|was) randomi[sz]ed\b"
            # "We randomized 42 patients ... to either the control or study group"; not "we
            # randomized the order of the images"
            r"|\bwe randomi[sz]ed\b(?!\s+the\s+(?:order|sequence)\b)"
            r"|\brandomi[sz]ation of (?:\d+ )?(?:[\w-]+ ){0,2}?(?:patients|participants|subjects"
            r"|women|men|children|adults|infants|volunteers)\b"
            # not "randomly assigned to two blinded readers": a reading order, not a treatment
            r"|\brandomly (?:assigned|allocated)\b(?!\s+to\s+(?:[\w-]+\s+){0,2}"
            r"(?:readers?|reviewers?|observers?|raters?)\b)"
            # "randomly divided into 2 groups", not into a derivation and a validation set
            r"|\brandomly divid(?:ed|ing)\b(?![^.]{0,80}\b(?:sets?|samples?|derivation"
            r"|training|validation|test(?:ing)?)\b)",
            re.I,
        ),
    ),
    (
        StudyType.OBSERVATIONAL,
        re.compile(
            r"\b(?:cohort|case-control|cross-sectional|retrospective(?:ly)?|prospective(?:ly)?"
            r"|population-based|registry)\b"
            # a series of patients as they came, or a group followed over time
            r"|\bconsecutive (?:[\w-]+ ){0,3}?(?:patients|cases|women|men|infants|children"
            r"|adults|subjects|individuals|admissions|procedures|operations|surgeries|resections"
            r"|biopsies|\w+(?:ectomies|otomies|plasties))\b"
            r"|\blongitudinal (?:[\w-]+ ){0,2}?(?:study|studies|cohort|survey|design)\b"
            r"|\b(?:mean|median) (?:duration of )?follow-up\b|\bfollowed(?: up)? for\b",
            re.I,
        ),
    ),
    (
        StudyType.CASE_REPORT,
        re.compile(
            r"\bcase report\b|\bwe (?:report|present|describe) (?:a|an|the) (?:[\w-]+ ){0,3}?"
            r"(?:case|patient|man|woman|boy|girl|child|infant)\b",
            re.I,
        ),
    ),
]


def study_type_from_text(article: Article) -> StudyType:
    """The study design an article states in its title or its abstract's methods, for one
    whose publication types name none (PubMed adds them when it indexes an article, months
    after it appears). Background and results are not read: "earlier meta-analyses found"
    is not this study's design. An animal study (MeSH Animals without Humans) states none
    that counts for clinical evidence."""
    if "Animals" in article.mesh_terms and "Humans" not in article.mesh_terms:
        return StudyType.OTHER  # rabbit hearts randomised to four series are no clinical trial
    methods = [s.text for s in article.abstract if s.is_methods]
    text = " ".join([article.title, *methods])
    for study_type, pattern in _DESIGN_STATEMENTS:
        if pattern.search(text):
            return study_type
    return StudyType.OTHER


#: Section titles of a body that set the study in context rather than report it.
_CONTEXT_SECTION = re.compile(
    r"^(?:introduction|background|body|discussion|general discussion|comments?)\b", re.I
)


class FullTextSection(BaseModel):
    """One piece of an article's body as read from its JATS full text.

    A nested section keeps the title of the top-level section it sits in ("Results"), so every
    piece says where in the article it comes from.
    """

    model_config = ConfigDict(frozen=True)

    label: str = Field(description="Top-level section title as printed, e.g. 'Results'.")
    kind: Literal["text", "table", "figure"] = Field(
        "text", description="Paragraphs, a table (caption and rows) or a figure caption."
    )
    text: str

    @property
    def reports_study(self) -> bool:
        """True for a piece that reports this study (methods, results, tables, figures,
        conclusions); False for its introduction and discussion, which tell what other
        studies found (a citation of this article would then carry their findings)."""
        return self.kind != "text" or not _CONTEXT_SECTION.match(self.label)

    @property
    def is_result(self) -> bool:
        """True for a piece of the results (or findings, conclusions) sections."""
        return self.as_abstract_section.is_result

    @property
    def as_abstract_section(self) -> AbstractSection:
        """This piece as the checks read an abstract section (results are RESULTS)."""
        upper = self.label.upper()
        category = None
        if "RESULT" in upper or "FINDINGS" in upper:
            category = "RESULTS"
        elif re.search(r"METHOD|DESIGN|PATIENTS AND|MATERIALS", upper):
            category = "METHODS"
        return AbstractSection(label=self.label, category=category, text=self.text)


class FullText(BaseModel):
    """An open-access article's body (PMC JATS), with the licence it is published under."""

    pmcid: str = Field(description="PubMed Central identifier, 'PMC...'.")
    source: Literal["pmc", "europepmc"] = Field(
        "pmc", description="Where it was read: E-utilities efetch db=pmc, or Europe PMC."
    )
    licence: str | None = Field(
        None, description="The licence as the article states it (URL or licence text)."
    )
    sections: list[FullTextSection] = Field(default_factory=list)

    @property
    def text(self) -> str:
        """The whole body as one string, one piece a line."""
        return "\n".join(section.text for section in self.sections)


def normalise_title(title: str) -> str:
    """Lower-case alphanumerics only: the last-resort key for deduplication."""
    return re.sub(r"[^a-z0-9]+", " ", title.lower()).strip()


class Article(BaseModel):
    """A bibliographic record with its abstract, whatever source it came from."""

    pmid: str | None = Field(None, description="PubMed identifier.")
    doi: str | None = Field(None, description="DOI, lower-cased, without a resolver prefix.")
    pmcid: str | None = Field(None, description="PubMed Central identifier (PMC...).")
    title: str = Field("", description="Article (or book) title.")
    abstract: list[AbstractSection] = Field(default_factory=list)
    authors: list[str] = Field(default_factory=list, description="'Last Initials' per author.")
    journal: str | None = Field(None, description="Journal title (or book/publisher).")
    pub_date: str | None = Field(None, description="Publication date as given: '2001 Jun'.")
    year: int | None = Field(None, description="Publication year.")
    publication_types: list[str] = Field(default_factory=list)
    mesh_terms: list[str] = Field(default_factory=list, description="MeSH descriptor names.")
    keywords: list[str] = Field(default_factory=list)
    language: str | None = Field(None, description="ISO 639-2 code as PubMed gives it: 'eng'.")
    source: SourceName = Field("pubmed", description="Provider the record came from.")
    citation_count: int | None = Field(None, description="Times cited (Europe PMC).")
    open_access: bool | None = Field(None, description="Open access (Europe PMC).")
    is_book: bool = Field(False, description="A PubmedBookArticle.")
    full_text: FullText | None = Field(
        None, description="The body of an open-access article, when it was read (PMC)."
    )

    def as_read(self) -> Article:
        """The article as the answer checks read it: its abstract followed by the sections of
        its full text that report the study (:attr:`FullTextSection.reports_study`; each an
        :class:`AbstractSection` labelled with its section), when it has one; itself otherwise.
        A number or sentence of the Results is then the article's."""
        if self.full_text is None or not self.full_text.sections:
            return self
        body = [s.as_abstract_section for s in self.full_text.sections if s.reports_study]
        return self.model_copy(update={"abstract": [*self.abstract, *body]})

    @property
    def key(self) -> str:
        """Stable identity: PMID, else DOI, else a hash of the normalised title."""
        if self.pmid:
            return f"pmid:{self.pmid}"
        if self.doi:
            return f"doi:{self.doi.lower()}"
        digest = hashlib.sha1(normalise_title(self.title).encode()).hexdigest()[:16]
        return f"title:{digest}"

    @property
    def abstract_text(self) -> str:
        """The abstract as one string, labels inline."""
        parts = []
        for section in self.abstract:
            prefix = f"{section.label}: " if section.label else ""
            parts.append(prefix + section.text)
        return "\n".join(parts)

    @property
    def everything_said(self) -> str:
        """Title, abstract and MeSH terms: all the article says of what it is about."""
        return " ".join([self.title, self.abstract_text, *self.mesh_terms])

    @property
    def conclusion(self) -> str | None:
        """The conclusion section's text, if the abstract is structured and has one."""
        for section in self.abstract:
            if section.is_conclusion:
                return section.text
        return None

    @property
    def study_type(self) -> StudyType:
        """Evidence level from the publication types, or (when they name no design, as
        before PubMed indexes an article) from the design its title or methods state."""
        by_type = classify_study_type(self.publication_types)
        return by_type if by_type is not StudyType.OTHER else study_type_from_text(self)

    @property
    def url(self) -> str | None:
        """Link for a reader: PubMed, else doi.org."""
        if self.pmid:
            return f"https://pubmed.ncbi.nlm.nih.gov/{self.pmid}/"
        if self.doi:
            return f"https://doi.org/{self.doi}"
        return None

    @property
    def is_english(self) -> bool:
        """English or unknown language (an unknown language is not dropped)."""
        return self.language is None or self.language.lower() in {"eng", "en", "english"}

    @property
    def retraction(self) -> str | None:
        """Why the article is never evidence, as PubMed marks it: "retracted" (publication type
        Retracted Publication) or "retraction notice" (Retraction of Publication); else None."""
        return retraction_of(self.publication_types)


def retraction_of(publication_types: Iterable[str]) -> str | None:
    """:attr:`Article.retraction` of an article of these publication types."""
    types = {t.strip().lower() for t in publication_types}
    if "retracted publication" in types:
        return "retracted"
    if "retraction of publication" in types:
        return "retraction notice"
    return None


class Chunk(BaseModel):
    """A piece of an abstract, the unit the evidence cache embeds and searches."""

    id: str = Field(description="'{article key}#{ordinal}'.")
    article_key: str
    ordinal: int = Field(ge=0, description="Position in the article (0 is the title chunk).")
    section: str | None = Field(
        None, description="Section label: the abstract's, or the full text's ('Results')."
    )
    text: str
    is_conclusion: bool = False
    from_full_text: bool = Field(False, description="From the article's full text (PMC).")


class Evidence(BaseModel):
    """A chunk scored for one question, with its article."""

    chunk: Chunk
    article: Article
    similarity: float = Field(description="Cosine similarity to the question.")
    score: float = Field(0.0, description="Combined relevance/recency/study-type/diversity.")


class Passage(BaseModel):
    """A piece of an article an answer was given to read: where it is, and what it says."""

    section: str | None = Field(None, description="Section label ('Results', 'CONCLUSIONS').")
    from_full_text: bool = Field(False, description="From the full text, not the abstract.")
    text: str


class Citation(BaseModel):
    """An article an answer cites. Only ever evidence actually retrieved for that answer."""

    pmid: str | None
    doi: str | None = None
    title: str
    journal: str | None = None
    year: int | None = None
    study_type: str = "other"
    score: float = 0.0
    url: str | None = None
    passages: list[Passage] = Field(
        default_factory=list,
        description="The passages of the article the answer was given (best first), with "
        "their section and whether they come from the full text.",
    )

    @classmethod
    def from_article(cls, article: Article, score: float = 0.0) -> Citation:
        """Build a citation from an article and its document score."""
        return cls(
            pmid=article.pmid,
            doi=article.doi,
            title=article.title,
            journal=article.journal,
            year=article.year,
            study_type=article.study_type.label,
            score=round(score, 4),
            url=article.url,
        )


class SearchQuery(BaseModel):
    """One search request to a provider."""

    model_config = ConfigDict(frozen=True)

    term: str
    limit: int = Field(20, ge=1, le=10000)
    offset: int = Field(0, ge=0, description="Results to skip (esearch retstart, paging).")
    sort: Literal["relevance", "pub_date"] = "relevance"
    min_year: int | None = None
    max_year: int | None = None
    entered_since: AwareDatetime | None = Field(
        None,
        description="Only articles entered in the source on or after this moment (time zone "
        "required): PubMed's Entrez date (esearch datetype=edat; whole days, so the day before "
        "is included rather than an article missed), Europe PMC's creation date "
        "(CREATION_DATE, whole days likewise), the local corpus's added date (exact). None: "
        "whenever entered.",
    )


class ProviderStatus(BaseModel):
    """How one provider fared in a search_all_providers call."""

    provider: str
    status: Literal["ok", "no_match", "error", "timeout", "disabled"] = Field(
        description="no_match: the provider answered but could use no term of the query."
    )
    count: int = 0
    dropped_non_english: int = 0
    error: str | None = None
    unreachable: bool = Field(
        False,
        description="The error was a host that does not resolve or refuses connections "
        "(not retried: trying again cannot help).",
    )
    elapsed_ms: float = 0.0
    not_asked: bool = Field(
        False,
        description="Left out of this search: it failed shortly before and rests "
        "(search.failed_source_rest_s); status and error are that failure's.",
    )


class SearchResults(BaseModel):
    """Combined, deduplicated results of every enabled provider."""

    query: SearchQuery
    articles: list[Article] = Field(default_factory=list)
    providers: dict[str, ProviderStatus] = Field(default_factory=dict)

    @property
    def failed(self) -> list[str]:
        """Providers that errored or timed out."""
        return [name for name, st in self.providers.items() if st.status in {"error", "timeout"}]


#: Why a verdict is Uncertain: the model's own verdict (its verdict line, or its reading of the
#: checked answer), a check (a sentence dropped, a note, a verdict turned), a verdict policy
#: (a rule the evidence digest's verdict did not pass, or the articles the answer's verdict
#: would follow concluding both ways), no evidence to read one from, or a
#: cached answer stored before causes were kept.
CauseKind = Literal["model", "check", "policy", "no_evidence", "unrecorded"]


class VerdictCause(BaseModel):
    """Why a yes/no verdict is withheld (the verdict is "uncertain")."""

    model_config = ConfigDict(frozen=True)

    kind: CauseKind = Field(
        description="model: the model said uncertain (its verdict line or its reading of the "
        "checked answer); check: a check of the answer (`check` names it); policy: a verdict "
        "policy, the evidence digest's or the answer's (`rule` names the rule); no_evidence: "
        "nothing to read a verdict from; unrecorded: a cached answer stored before causes were "
        "kept."
    )
    check: str | None = Field(None, description="The check's id, for kind check.")
    rule: str | None = Field(None, description="The policy's rule, for kind policy.")
    sentence: str | None = Field(
        None, description="The sentence the check dropped (or found), as written."
    )
    detail: str = Field("", description="The cause in words.")
