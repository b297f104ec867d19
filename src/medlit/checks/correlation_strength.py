"""A correlation called strong must be strong by its own coefficient.

A model can call a correlation "strong" that its own coefficient shows weak (0.2, where
Cohen's "large" starts at 0.5), and the word then carries a yes/no answer the article does
not give.

Here a cited sentence calling a correlation, association or agreement strong ("strong",
"high", "excellent", "close", "robust", "good") is read with the coefficients it gives: a
decimal of magnitude under 1 after "r", "rho", "ρ", "coefficient(s)", "correlation of",
"Spearman", "Pearson", "kappa" or "ICC". When every such coefficient is under
:data:`STRONG`, the strength word is taken out ("a strong correlation ... 0.2" reads "a
correlation ... 0.2"), the finding and its citations kept, with a warning. A sentence giving no
coefficient is not judged.

Hand-written (a rule of thumb, no model). How it does on the PubMedQA abstracts' own
sentences calling a correlation strong, as written and with their coefficients cut, is
measured by ``python benchmarks/correlation_strength.py`` (figures in ``docs/benchmarks.md``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from medlit.checks.citations import extract_pmids
from medlit.checks.context import CheckContext, logged, sentence_findings
from medlit.checks.declare import check
from medlit.checks.findings import Finding
from medlit.words import guarded

__all__ = ["STRENGTH_WORDS", "STRONG", "overstated", "overstated_correlations"]

STRONG = 0.5
"""The least coefficient a correlation called strong may have (Cohen's "large")."""

STRENGTH_WORDS = re.compile(  # "a strong correlation", "excellent agreement"
    r"\b(?P<word>(?:very |extremely )?(?:strong(?:ly)?|high|excellent|close(?:ly)?"
    r"|robust(?:ly)?|good|substantial(?:ly)?))\s+(?:(?:and\s+)?(?:significant|positive|negative"
    r"|linear|inverse|direct|statistically significant)\s+)*"
    r"(?=(?:correlat\w*|associat\w*|agreement|relationship|concordance)\b)",
    re.I,
)
_COEFFICIENT = guarded(
    r"(?:\b(?:r|rho|r2|r\u00b2|kappa|icc|coefficients?|correlations?|spearman'?s?|pearson'?s?)"
    r"|\u03c1|\u03ba)"
    r"[^.;\d]{0,40}?(?<![\d.])(?P<value>[-\u2212]?0?\.\d+|[-\u2212]?1\.0+)\b",
    re.I,
)


_P_VALUE = guarded(r"\bp\s*[<>=\u2264\u2265]|\bp[- ]value", re.I)


def _coefficients(sentence: str) -> list[str]:
    """The coefficients ``sentence`` gives (a p value after the word is none)."""
    return [
        m.group("value") for m in _COEFFICIENT.finditer(sentence) if not _P_VALUE.search(m.group(0))
    ]


def overstated(sentence: str) -> str | None:
    """The strength word ``sentence`` calls its correlation by when every coefficient it gives
    is under :data:`STRONG`, else None."""
    strength = STRENGTH_WORDS.search(sentence)
    if strength is None:
        return None
    values = [abs(float(value.replace("\u2212", "-"))) for value in _coefficients(sentence)]
    if not values or max(values) >= STRONG:
        return None
    return strength.group("word")


def overstated_rewriter() -> tuple[Callable[[str], str], list[str]]:
    """Each cited sentence with the strength word its correlation's coefficients belie taken
    out, and the warnings so far (one for each)."""
    warnings: list[str] = []

    def check(sentence: str) -> str:
        if not extract_pmids(sentence):
            return sentence
        word = overstated(sentence)
        if word is None:
            return sentence
        values = ", ".join(_coefficients(sentence))
        warnings.append(
            f'a strength was taken out: "{word}", of a correlation whose coefficient is {values}'
        )
        kept = STRENGTH_WORDS.sub("", sentence, count=1)
        if kept[:1].islower() and sentence[:1].isupper():  # "Excellent agreement was ..."
            kept = kept[0].upper() + kept[1:]
        return kept

    return check, warnings


@check("overstated-correlations", "sentence")
def overstated_correlations(ctx: CheckContext) -> list[Finding]:
    """ "Strong" said of a correlation whose own coefficient is under 0.5."""
    rewrite, told = overstated_rewriter()
    found = sentence_findings("overstated-correlations", ctx, rewrite, told)
    return logged(found, "answer_correlations_overstated")
