"""A citation must be to an article that speaks of what its sentence says the question asks.

A model can cite, for what the question asks about, an article that never speaks of it: a
study that never mentions the question's population, or one on another subject cited beside
the right one. The PMIDs were retrieved, so citation enforcement keeps them. Here each
cited sentence is held to the articles it cites:

- a subject word of the question the sentence uses (vancomycin, concentration; not a framing
  word such as benefits) must be said somewhere in the article (title, abstract, MeSH):
  :func:`medlit.research.grounding.unsaid_in_article`, the rule research claims follow. A word
  common in English that no retrieved article says is the question's own wording, not held to
  any one article (a verb of the question's phrasing that the answer repeats would otherwise
  leave out a true sentence); a rare one is held;
- a population the question names and the sentence repeats (children, infants, the elderly:
  by word, or by age) must be one the article speaks of. Adults are not checked: most studies
  of adults never say so. An uncited sentence that names such a population is left out too,
  unless an evidence article that speaks of it says most of the sentence's words.

A citation that fails goes, and a sentence left with no citation is left out, with a warning.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from medlit.checks.attribution import MIN_SHARE
from medlit.checks.citations import extract_pmids, remove_cited_for
from medlit.checks.context import CheckContext, logged, sentence_findings
from medlit.checks.declare import check
from medlit.checks.findings import Finding
from medlit.types import Article
from medlit.words import age_groups, cue, mesh
from medlit.words.defined_terms import spell_out
from medlit.words.frame import Population, QuestionFrame, frame_of
from medlit.words.grounding import unsaid_in_article, word_stems
from medlit.words.memo import remembered
from medlit.words.search_plan import named_otherwise
from medlit.words.search_terms import content_terms

__all__ = [
    "Unsaid",
    "population_words",
    "populations_unspoken",
    "unsaid_reader",
    "unsaid_subjects",
    "unspoken_in",
]

_CHECKED_GROUPS = frozenset({"infant", "child", "elderly"})
_GROUP_WORDS = {"infant": "infants", "child": "children", "elderly": "older people"}


@remembered(4096)  # (an article's, everything it says, kept with it)
def _groups_spoken(text: str) -> frozenset[str]:
    """The age groups ``text`` speaks of, for these checks: a study of infants is a study of
    children too (the converse does not hold: a trial in 2- to 12-year-olds says nothing of
    newborns)."""
    groups = age_groups(text.lower())
    return frozenset(groups | {"child"} if "infant" in groups else groups)


@dataclass
class Unsaid:
    """An answer after the check, what it says about it, and the words of the sentences it
    left out."""

    text: str
    warnings: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)  # age groups: child, infant, elderly

    def unaddressed(self, text: str, cited: Sequence[Article] = ()) -> list[str]:
        """What the sentences left out were cited for that nothing in ``text`` (the answer
        after every check) speaks of: their words, and their populations ("children" is
        spoken of by "paediatric" too). ``text`` is read as it will be shown, with the
        abbreviations the ``cited`` articles define spelled out ("109 patients with IH" speaks
        of infants, as "infantile hemangiomas (IH)"); a population the ``cited`` articles
        speak of is the text's too (its findings are theirs: a study of infantile
        hemangiomas speaks of infants, whatever sentence of it the answer kept)."""
        lower = spell_out(text, cited).lower()
        spoken = _groups_spoken(lower).union(
            *(_groups_spoken(article.everything_said) for article in cited)
        )
        return [w for w in dict.fromkeys(self.words) if w.lower() not in lower] + [
            _GROUP_WORDS[g] for g in dict.fromkeys(self.groups) if g not in spoken
        ]


class _Reader:
    """One answer's reading: what each article speaks of (read once), and what was left out."""

    def __init__(
        self, articles: Mapping[str, Article], question: str, frame: QuestionFrame
    ) -> None:
        self.articles = articles
        self.question = question
        self.frame = frame
        self.asked_groups = frame.population_names("age") & _CHECKED_GROUPS
        self.groups_of: dict[str, frozenset[str]] = {}
        self.terms_of: dict[str, set[str]] = {}
        self.unsaid = Unsaid("")

    @functools.cached_property
    def spoken(self) -> set[str]:
        """The word stems of every retrieved article (read once, when first needed)."""
        return set().union(*(word_stems(a.everything_said) for a in self.articles.values()))

    def groups_in(self, pmid: str) -> frozenset[str]:
        if pmid not in self.groups_of:
            self.groups_of[pmid] = _groups_spoken(self.articles[pmid].everything_said)
        return self.groups_of[pmid]

    def says(self, pmid: str, group: str, terms: set[str]) -> bool:
        """Whether article ``pmid`` speaks of ``group`` and says most of a sentence's ``terms``."""
        if group not in self.groups_in(pmid):
            return False
        if pmid not in self.terms_of:
            said = self.articles[pmid].everything_said
            self.terms_of[pmid] = set(content_terms(said, limit=100_000))
        return bool(terms) and len(terms & self.terms_of[pmid]) >= MIN_SHARE * len(terms)

    def uncited(self, sentence: str, named: set[str]) -> str:
        """A sentence citing nothing that names a population ("... is more effective in
        children than in adults") is kept only when an article given that speaks of that
        population says most of it (the sentence may have been taken from it)."""
        if not named:
            return sentence
        terms = set(content_terms(sentence, limit=1000))
        unspoken = sorted(
            g for g in named if not any(self.says(p, g, terms) for p in self.articles)
        )
        if not unspoken:
            return sentence
        self.unsaid.groups.extend(unspoken)
        self.unsaid.warnings.append(
            f"a sentence was left out: it speaks of {_GROUP_WORDS[unspoken[0]]}, citing "
            "nothing, and no retrieved article that speaks of them says it"
        )
        return ""

    def check(self, sentence: str) -> str:
        cited = [p for p in extract_pmids(sentence) if p in self.articles]
        named = age_groups(sentence.lower()) & self.asked_groups
        if not cited:
            return self.uncited(sentence, named)
        wrong: list[tuple[str, str, str | None]] = []  # (pmid, word, age group)
        for pmid in cited:
            said = self.articles[pmid].everything_said
            # The retrieved articles' words only ever clear a word: read them when one is left.
            aliased = functools.partial(named_otherwise, self.frame, text=said)
            word = unsaid_in_article(sentence, self.question, said, named=aliased)
            if word is not None:
                word = unsaid_in_article(
                    sentence, self.question, said, spoken=self.spoken, named=aliased
                )
            if word is not None:
                wrong.append((pmid, word, None))
            elif named and (missing := sorted(named - self.groups_in(pmid))):
                wrong.append((pmid, _GROUP_WORDS[missing[0]], missing[0]))
        if not wrong:
            return sentence
        why = [(pmid, f"{word!r}, which that article never mentions") for pmid, word, _ in wrong]
        kept, told = remove_cited_for(sentence, why)
        self.unsaid.warnings.extend(told)
        if not kept:
            self.unsaid.words.extend(word for _, word, group in wrong if group is None)
            self.unsaid.groups.extend(group for _, _, group in wrong if group is not None)
        return kept


def unsaid_reader(
    articles: Mapping[str, Article], question: str, frame: QuestionFrame | None = None
) -> tuple[Callable[[str], str], Unsaid]:
    """Each sentence without its citations to articles that never speak of what it names of
    the question (``""`` when none is left); and what was found so far (its ``text`` unset).
    ``frame``: the question's, as carried (None: read by :func:`~medlit.words.frame.frame_of`)."""
    reader = _Reader(articles, question, frame_of(question if frame is None else frame))
    return reader.check, reader.unsaid


_AGE_STATED = cue("age.stated")
_SEX_WORDS = {"female": "women", "male": "men"}
# A disease's type as an article says it: "type 2", "type II", "T2DM", "non-insulin-dependent"
# (and its MeSH descriptor, "Diabetes Mellitus, Type 2").
_TYPE_SAID = {
    "1": re.compile(
        r"\btype[\s-]*(?:1|i|one)\b|\bt1dm?\b|\biddm\b|(?<!non-)insulin-dependent", re.I
    ),
    "2": re.compile(r"\btype[\s-]*(?:2|ii|two)\b|\bt2dm?\b|\bniddm\b|non-insulin-dependent", re.I),
}
_TYPE_SAID_ANY = re.compile(r"\btype [12]\b", re.I)
#: A site's other names in an abstract or its MeSH terms ("Stomach Neoplasms" for gastric).
_SAID_AS: dict[str, tuple[str, ...]] = {
    "colorectal": ("colon", "rectal"),
    "colon": ("colorectal", "colonic"),
    "rectal": ("colorectal", "rectum"),
    "gastric": ("stomach",),
    "stomach": ("gastric",),
    "renal": ("kidney",),
    "kidney": ("renal",),
    "hepatic": ("liver",),
    "liver": ("hepatic",),
    "pulmonary": ("lung",),
    "lung": ("pulmonary",),
    "oesophageal": ("esophageal", "oesophagus", "esophagus"),
    "esophageal": ("oesophageal", "esophagus"),
    "icu": ("intensive care",),
    "intensive": ("icu",),
}
_ROOT = 4  # letters a word and its derived form share at least
_TYPE_ASKED = re.compile(r"^type (\d)\b")


def _spoken_of(population: Population, article: Article) -> bool:
    """Whether ``article`` (title, abstract, MeSH) speaks of ``population``: an age group by
    word or age; a sex or pregnancy by word, or by what only it has (a study of ovarian cancer
    is a study of women); a condition, a setting or a site by every word of its name (a wrist
    trial says "fractures" but not "hip") or by another name of the MeSH concept its name is
    (:mod:`medlit.words.mesh`); a disease's type by that type ("type 1" is not "type 2"), read
    from the article's MeSH descriptors when they name one."""
    text = article.everything_said
    lower = text.lower()
    if population.kind == "age":
        return population.name in _ages_spoken(lower)
    if population.kind == "sex":
        return cue(f"frame.{population.name}_implied").search(lower) is not None
    if population.kind == "pregnancy":
        return cue("frame.pregnancy_implied").search(lower) is not None
    typed = _TYPE_ASKED.match(population.name)
    if typed:
        # The MeSH descriptors of a type name it ("Diabetes Mellitus, Type 1"): when they do,
        # they say which (an abstract of type 1 may set it against type 2).
        indexed = " ".join(m for m in article.mesh_terms if _TYPE_SAID_ANY.search(m))
        said_type = _TYPE_SAID[typed.group(1)].search(indexed or text)
        if said_type is None:
            return False
        if not said_type.group(0).lower().startswith("type"):
            text += " diabetes mellitus"  # "T2DM", "NIDDM": the type of diabetes
    said = word_stems(text)
    words = _TYPE_ASKED.sub("", population.name).split()
    if words and all(_word_said(w, said) for w in words):
        return True
    # Or the MeSH concept it names, by another of its names ("heart failure": "cardiac
    # failure"); a type is never read so (another type is another descriptor's term).
    return not typed and mesh.same_concept(population.name, text)


def _word_said(word: str, said: set[str]) -> bool:
    """Whether ``said`` (an article's word stems) holds ``word`` (of a population's name), a
    word of its root, or one of its other names ("colorectal" is said by "colon")."""
    names = (word, *_SAID_AS.get(word.lower(), ()))
    for name in names:
        stems = {s for s in word_stems(name) if not s.isdigit()}
        if not stems:
            return True  # a number or a word of no topic ("the"): tells no population apart
        if all(s in said or _said_alike(s, said) for s in stems):
            return True
    return False


def _said_alike(stem: str, said: set[str]) -> bool:
    """Whether ``said`` holds a word of the same root as ``stem``, one beginning the other
    (four letters at least): "korea" and "korean", "colon" and "colonic", "thai" and
    "thailand"."""
    if len(stem) < _ROOT:
        return False
    return any(
        len(other) >= _ROOT and (other.startswith(stem) or stem.startswith(other)) for other in said
    )


_AGE_SAID = re.compile(r"\b(?:aged?|ages)\s+(?:of\s+)?(?=\d)|\d\s*(?:-|\s)?\w+(?:-|\s)old\b")


@remembered(4096)
def _ages_spoken(text: str) -> frozenset[str]:
    """The age groups ``text`` speaks of (:func:`_groups_spoken`), an age in numbers only
    where it is said to be one ("aged 7", "7-year-old"): "within 30 days" is no infant."""
    groups = set(_groups_spoken(_AGE_STATED.sub(" ", text)))
    for match in _AGE_STATED.finditer(text):
        around = text[max(0, match.start() - 8) : match.end() + 6]
        if _AGE_SAID.search(around):
            groups |= _groups_spoken(match.group(0) + " old")
    return frozenset(groups)


def _checked(population: Population) -> bool:
    """Adults are not checked: most studies of adults never say so."""
    return population.kind != "age" or population.name in _CHECKED_GROUPS


def population_words(population: Population) -> str:
    """How a caveat names ``population``: "children", "women", "pregnancy", "nursing homes"."""
    if population.kind == "age":
        return _GROUP_WORDS.get(population.name, population.name)
    if population.kind == "sex":
        return _SEX_WORDS[population.name]
    if population.kind == "setting" and population.words[:1].isupper():
        return population.words.split(None, 1)[-1].rstrip("?").strip()  # "India"
    return population.name


def populations_unspoken(
    question: str, text: str, articles: Mapping[str, Article], frame: QuestionFrame | None = None
) -> list[str]:
    """The populations the question names (its frame's: an age group, a sex, pregnancy, a
    condition or a disease type, a setting, a site) that none of the articles ``text`` cites
    speaks of: what they found may not hold for them. Every kind alike.

    An answer to a follow-up about a population can cite only studies of another: when no
    sentence names the population no citation is wrong, but nothing cited is about it either.
    """
    cited = [articles[p] for p in dict.fromkeys(extract_pmids(text)) if p in articles]
    return unspoken_in(frame_of(question if frame is None else frame), cited)


def unspoken_in(frame: QuestionFrame, articles: Sequence[Article]) -> list[str]:
    """The populations of ``frame`` none of ``articles`` speaks of, in words
    (:func:`populations_unspoken`; none when no article is given)."""
    asked = [p for p in frame.populations if _checked(p)]
    if not asked or not articles:
        return []
    unspoken = [p for p in asked if not any(_spoken_of(p, a) for a in articles)]
    words = list(dict.fromkeys(population_words(p) for p in unspoken))
    # "hip fractures" (a condition) says "hip" (its site): one caveat.
    return [
        w for w in words if not any(w != o and re.search(rf"\b{re.escape(w)}\b", o) for o in words)
    ]


@check("unsaid-subjects", "sentence")
def unsaid_subjects(ctx: CheckContext) -> list[Finding]:
    """A citation to an article that never speaks of a subject or population of the question
    that the sentence names."""

    rewrite, unsaid = unsaid_reader(ctx.articles, ctx.question, ctx.frame)
    found = sentence_findings("unsaid-subjects", ctx, rewrite, unsaid.warnings)
    ctx.data["unsaid-subjects"] = unsaid
    return logged(found, "answer_subjects_unsaid")
