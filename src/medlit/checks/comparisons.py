"""What a sentence says of a comparison: that its groups differ, or that they do not.

A model can copy an article's comparison with one word turned ("higher" where the article
says "similar"): every other word and number is the article's, so the checks on words and
numbers pass it, and the finding is reversed. :func:`reverses` reads the two sentences'
comparisons:

- **no difference**: "similar", "comparable", "no (statistically) significant difference",
  "did not differ", "has not been shown to differ", "did not reduce", "unchanged", "was not
  (significantly) associated", "did not detect any", "cannot be improved";
- **a difference**: "higher", "lower", "more", "fewer", "increased", "reduced", "differed",
  "better", "worse", "superior to", "improved", "changed", "significantly" ..., none of them
  negated ("not higher", "no more", "cannot be improved").

A sentence saying both ("Mortality was similar, but complications were higher") or neither
says nothing here, so only a sentence that says one thing, set against a source saying the
other, is a reversal.

Hand-written: no natural-language-inference model can be loaded here (the brief's model hubs
are unreachable), and these cues are the ones abstracts state their comparisons with.

How many of the PubMedQA abstracts' result and conclusion sentences are read as reversing
their own article, and how many rewritten to state the opposite comparison are caught, is
measured by ``python benchmarks/reversed_findings.py`` (figures in ``docs/benchmarks.md``).
"""

from __future__ import annotations

import re
from typing import Literal

from medlit.words import cue, guarded
from medlit.words.memo import remembered
from medlit.words.stance import AS_COMPARISON, content_terms

__all__ = ["MIN_SHARE", "MIN_SHARED", "Comparison", "compared_terms", "comparison", "reverses"]

Comparison = Literal["same", "differ"]

_SAME = guarded(
    # "a group of similar size", "patients of comparable age": who was compared, not a finding
    # (a conclusion naming such a group would otherwise read as "no difference").
    r"\b(?:(?:similar(?:ly)?|comparable)(?! (?:size|age)s?\b)"
    r"|equivalent|unchanged|indistinguishable"
    r"|no (?:statistically )?significant(?:ly)?(?: \w+)? (?:differences?|changes?|effects?)"
    # "no systematic or significant differences", "no clinically relevant differences"
    r"|no (?:[\w-]+ ){0,3}?(?:differences?|associations?|improvements?)"
    r"|not significantly (?:different|differ\w*|chang\w*|associated)"
    r"|(?:was|were|is|are) not (?:significantly )?associated"
    r"|(?:did|does|do) not (?:detect|find|observe|show|see) (?:any|a) "
    r"|(?:did|does|do|was|were|has|have) not (?:been shown to )?(?:significantly )?"
    r"(?:differ|change|affect|alter|influence|reduce|increase|decrease|improve|lower|raise)\w*"
    # "depiction ... cannot be improved by changing the thickness of images"
    r"|(?:cannot|can ?not|could not) (?:be )?(?:significantly )?"
    r"(?:differ|chang|affect|alter|influenc|reduc|increas|decreas|improv|lower|rais)\w*"
    r")\b",
    re.IGNORECASE,
)
_DIFFER = guarded(
    r"\b(?:higher|lower|greater|larger|smaller|increased|decreased|reduced"
    # "more than 60% of patients" is a count, not a comparison
    r"|(?:more|less|fewer)(?! than (?:\d|half|a third|a quarter|one|two|three))"
    r"|differ(?:s|ed|ent|ently|ence|ences)?|better|worse|significantly"
    rf"|(?:superior|inferior){AS_COMPARISON}"
    r"|changed|influenced|altered|improved|worsened)\b",
    re.IGNORECASE,
)
_NEGATED = cue("negation.clause")
_REACH = 25  # characters before a cue in which a negation turns it
MIN_SHARED = 3
"""Words of what a claim compares that its source must share, at least, to be set against it."""
MIN_SHARE = 0.5
"""And the share of them."""


def _differences(sentence: str) -> list[str]:
    """The cues of a difference in ``sentence`` that no negation just before turns."""
    found = []
    for match in _DIFFER.finditer(sentence):
        if not _NEGATED.search(sentence[max(0, match.start() - _REACH) : match.start()]):
            found.append(match.group(0))
    return found


def comparison(sentence: str) -> Comparison | None:
    """Whether ``sentence`` says its groups do not differ (``same``), do (``differ``), or
    neither or both (None)."""
    same = _SAME.search(sentence) is not None
    differ = bool(_differences(_SAME.sub(" ", sentence)))
    if same == differ:
        return None
    return "same" if same else "differ"


def reverses(claim: str, source: str) -> bool:
    """Whether ``claim`` says a difference where ``source`` says none, or the other way, of
    the same things: the two share at least :data:`MIN_SHARED` of the words of what ``claim``
    compares, and :data:`MIN_SHARE` of them ("VEGF is not associated with venous invasion"
    reverses nothing in "Only tumour size appeared to be significantly different")."""
    said = comparison(claim)
    if said is None or comparison(source) in (None, said):
        return False
    wanted = compared_terms(claim)
    shared = len(wanted & compared_terms(source))
    return shared >= MIN_SHARED and shared >= MIN_SHARE * len(wanted)


def compared_terms(sentence: str) -> set[str]:
    """The content words of ``sentence`` without its comparison cues: what it compares."""
    return set(_compared_terms(sentence))


@remembered(16384)
def _compared_terms(sentence: str) -> frozenset[str]:
    return frozenset(content_terms(_DIFFER.sub(" ", _SAME.sub(" ", sentence))))
