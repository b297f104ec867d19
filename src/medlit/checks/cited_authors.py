"""An author a sentence names for what it cites must be an author of the cited article.

A model asked to cite by PMID may still name authors, and the names are its own: an article
may list none on record, or others. An author named for a citation ("by Smith et al.",
"by Smith and colleagues", "Smith et al. found", "Smith et al. (1997) reported") is checked
against the surnames of the articles the sentence cites; one that none of them lists (or when
they list no authors, so nothing can bear it out) is taken out, the finding and its citations
kept, with a warning: "by Smith et al." goes, "Smith et al. found" reads "A study found".
A sentence citing nothing is held to every retrieved article: a model can take the first
word of a title for an author's name and write it before the sentence citing the article.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from medlit.checks.citations import extract_pmids
from medlit.checks.context import CheckContext, logged, sentence_findings
from medlit.checks.declare import check
from medlit.checks.findings import Finding
from medlit.text import fold_accents
from medlit.types import Article

__all__ = ["wrong_authors", "wrong_authors_rewriter"]

_NAME = r"(?P<name>[A-Z][\w'\u2019-]+)"
# "et al." keeps its full stop when it ends the sentence
_GROUP = r"(?:et\s+al(?:\.(?=\s*\S))?|and\s+(?:colleagues|co-?workers|coauthors))"
_YEAR = r"(?:\s*\((?:19|20)\d\d\))?"
# ", by Smith et al.," / "by Smith and colleagues" / ", as reported by Smith et al."
_BY = re.compile(
    rf",?\s*(?:\bas\s+(?:reported|described|shown|found|noted|demonstrated)\s+)?"
    rf"\bby\s+{_NAME}\s+{_GROUP}{_YEAR}(?P<trail>\s*,)?"
)
# "Smith et al. found", "Smith et al. (1997) reported": the name as the subject, opening the
# sentence or a clause
_AS_SUBJECT = re.compile(rf"(?:^|(?<=, )){_NAME}\s+{_GROUP}{_YEAR}\s+(?=[a-z])")
# What every match of both says ("et al", "and colleagues"), found much faster than they are
# tried at each word: a sentence without it names no author of either kind.
_GROUP_SAID = re.compile(r"et\s+al|and\s+co")


def _surname(author: str) -> str:
    """The surname of a "Last Initials" author, folded for comparison."""
    return fold_accents(author.rsplit(" ", 1)[0] if " " in author else author).lower()


def wrong_authors_rewriter(
    articles: Mapping[str, Article],
) -> tuple[Callable[[str], str], list[str]]:
    """Each sentence with the author names no article it cites lists taken out, and the warnings
    so far (one for each name)."""
    warnings: list[str] = []

    def check(sentence: str) -> str:
        if not _GROUP_SAID.search(sentence):
            return sentence
        pmids = extract_pmids(sentence)
        # A sentence citing nothing names an author of the evidence, if of anything.
        cited = [articles[p] for p in pmids if p in articles] if pmids else [*articles.values()]
        if not cited:
            return sentence
        which = "article it cites" if pmids else "retrieved article"
        surnames = {_surname(author) for article in cited for author in article.authors}
        surnames |= {name.split()[-1] for name in surnames if name}  # "De Vries": "vries"

        def unlisted(match: re.Match[str]) -> bool:
            if fold_accents(match.group("name")).lower() in surnames:
                return False
            warnings.append(
                f'an author name was taken out: "{match.group().strip(" ,")}", which no '
                f"{which} lists"
            )
            return True

        def by(match: re.Match[str]) -> str:
            if not unlisted(match):
                return match.group()
            return "," if match.group().startswith(",") and match.group("trail") else ""

        sentence = _BY.sub(by, sentence)
        return _AS_SUBJECT.sub(
            lambda m: _a_study(m, sentence) if unlisted(m) else m.group(), sentence
        )

    return check, warnings


def _a_study(match: re.Match[str], sentence: str) -> str:
    """What stands for a name taken out as a sentence's subject: "A study" opening it, else
    "a study"."""
    return "A study " if not sentence[: match.start()].strip() else "a study "


@check("wrong-authors", "sentence")
def wrong_authors(ctx: CheckContext) -> list[Finding]:
    """An author ("Smith et al.") that no article the sentence cites lists."""
    rewrite, told = wrong_authors_rewriter(ctx.articles)
    found = sentence_findings("wrong-authors", ctx, rewrite, told)
    return logged(found, "answer_authors_taken_out")
