"""The words two questions differ in, once meaning-preserving differences are set aside.

The answer cache's guard (:mod:`medlit.cache.guard`) serves a cached answer for a new question
only when every word of one question is found in the other, up to:

- **case and typing**: both are lower-cased and read as typed (:func:`medlit.text.as_typed`:
  curly apostrophes, accents);
- **British / American spelling**: the table of the ``breame`` package (1,700 British words and
  their American spelling), then the regular patterns of medical English: ae / e
  (ischaemic), oe / e (apnoea, oedema), -our / -or (tumour), -ise / -ize and -isation /
  -ization, -yse / -yze, -tre / -ter, -ogue / -og, sulph- / sulf-;
- **inflection**: the noun and verb lemmas of ``lemminflect`` (women / woman, improves /
  improve, delayed / delay, children / child); an adjective is compared as written (better is
  not good, older is not old);
- **a vetted synonym** (``words/data/synonyms.tsv``: lay and medical names of one condition, one
  drug's names, an organ's noun and adjective, a few words of a question that mean the same);
- **function and framing words** (``words/data/function_words.txt``: articles, be / do / have,
  modal verbs, pronouns that name nobody, prepositions of relation, "is there evidence that"),
  which may be added, dropped or swapped;
- **compounds**: "followup" is "follow up" and "follow-up" (hyphens split words);
- **phrase forms** (:mod:`medlit.words.phrase_forms`, ``words/data/phrase_forms.toml``): a
  person noun's "with" phrase is the noun used as a modifier ("patients with diabetes" /
  "diabetes patients"), prepositions of one role are one ("among" / "in"), words that say the
  same before certain heads are one there ("older residents" / "elderly residents", "greater
  risk" / "increased risk"), and a noun made from a verb is the verb ("treatment of" /
  "treating", "reduction" / "reduce");

Word order is not compared. Everything else that differs is reported, word by word, with the
question's own spelling.

The spelling, lemmas and tables are the word tools' (:mod:`medlit.words`). Each question's
words and their keys are computed once (``functools.lru_cache``); the lemmatiser is needed only
when the two questions' spelling-folded words differ (in kind or order), and is loaded with the
vocabularies by :func:`load` (a server's warm-up) or by the first comparison that needs it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

from medlit.text import as_typed
from medlit.words import data_lines, is_verb, lemmas, spelling, synonym_groups
from medlit.words import load as load_words
from medlit.words.phrase_forms import phrase_forms, same_before, same_role, verb_of, with_phrases
from medlit.words.tokens import WORDS as _TOKEN

__all__ = [
    "WordDifference",
    "Wording",
    "function_words",
    "load",
    "spelling",
    "word_difference",
    "wording",
]

_NOT = re.compile(r"\b(can|won|shan)'t\b|n't\b")
_POSSESSIVE = re.compile(r"'s\b")

# Words that relate two things: the same words around them in another order may ask the
# converse ("risk factors for X" / "X a risk factor for", "A better than B" / "B better than
# A"). Each must be followed by the same word in both questions where both say it.
_RELATIONS = frozenset(
    {"for", "of", "to", "by", "than", "from", "with", "in", "on", "versus", "vs", "against"}
    | {"into", "between", "after", "before", "over", "under", "without"}
)


@cache
def function_words() -> frozenset[str]:
    """Words whose presence or absence changes no question (``words/data/function_words.txt``)."""
    return frozenset(line.strip() for line in data_lines("function_words.txt") if " " not in line)


@cache
def _framing() -> re.Pattern[str] | None:
    """The several-word framing phrases of ``function_words.txt`` ("can you tell me")."""
    phrases = sorted(
        (" ".join(_TOKEN.findall(line.strip())) for line in data_lines("function_words.txt")),
        key=len,
        reverse=True,
    )
    phrases = [p for p in phrases if " " in p]
    if not phrases:
        return None
    return re.compile(r"(?<!\S)(" + "|".join(re.escape(p) for p in phrases) + r")(?!\S)")


def load() -> None:
    """Load the vocabularies and the lemma table now (once per process), so that the first
    check that needs them is as fast as the others."""
    load_words()
    phrase_forms()
    function_words()
    _framing()
    _synonyms()


@dataclass(frozen=True, slots=True)
class _Synonyms:
    words: dict[str, str]  # a word (base form, spelling-folded) -> its group's name
    phrases: re.Pattern[str] | None  # several-word terms, on the spelling-folded text
    phrase_group: dict[str, str]  # a matched phrase -> its group's name


@cache
def _synonyms() -> _Synonyms:
    words: dict[str, str] = {}
    phrase_group: dict[str, str] = {}
    for group_terms in synonym_groups("synonyms.tsv"):
        terms = [t.lower() for t in group_terms]
        group = "=" + "_".join(_TOKEN.findall(terms[0]))
        for term in terms:
            tokens = [spelling(t) for t in _TOKEN.findall(as_typed(term))]
            if len(tokens) == 1:
                words.setdefault(tokens[0], group)
            else:
                phrase_group[" ".join(tokens)] = group
    phrases = None
    if phrase_group:
        alternatives = sorted(phrase_group, key=len, reverse=True)
        # The last word of a term may be plural ("heart attacks", "kidney stones").
        phrases = re.compile(
            r"(?<!\S)(" + "|".join(re.escape(p) for p in alternatives) + r")(?:s|es)?(?!\S)"
        )
    return _Synonyms(words, phrases, phrase_group)


@dataclass(frozen=True, slots=True)
class Wording:
    """One question's words, as the guard compares them.

    Attributes:
        words: the content words as written (lower case), in order, one entry per occurrence,
            a several-word synonym as one entry.
        folded: each word's spelling-folded form (a synonym phrase: its group's name).
        objects: each preposition of ``_RELATIONS`` -> the positions of the content words
            that follow it (-1: none, the question ends), as the question says them.
    """

    words: tuple[str, ...]
    folded: tuple[str, ...]
    objects: dict[str, tuple[int, ...]]


def _spans(tokens: list[str], folded: list[str]) -> dict[int, tuple[int, str | None]]:
    """The several-word phrases of a question's ``tokens`` (``folded``: their spellings):
    start token -> (end token, synonym group; None: a framing phrase, dropped). A synonym
    phrase that starts inside a framing phrase is not one."""
    synonyms = _synonyms()
    spans: dict[int, tuple[int, str | None]] = {}
    joined, raw = " ".join(folded), " ".join(tokens)
    framing = _framing()
    if framing is not None:
        for match in framing.finditer(raw):
            start = raw.count(" ", 0, match.start())
            spans[start] = (start + match.group(1).count(" ") + 1, None)
    if synonyms.phrases is not None:
        for match in synonyms.phrases.finditer(joined):
            start = joined.count(" ", 0, match.start())
            end = start + match.group(1).count(" ") + 1
            if not any(a <= start < b for a, (b, _) in spans.items()):
                spans[start] = (end, synonyms.phrase_group[match.group(1)])
    return spans


@lru_cache(maxsize=4096)
def wording(question: str) -> Wording:
    """The content words of ``question`` (cached: a cached question is compared many times)."""
    text = as_typed(question.lower())
    text = _POSSESSIVE.sub("", _NOT.sub(lambda m: f"{m.group(1) or ''} not", text))
    stop = function_words()
    text = with_phrases(text, stop, _RELATIONS)
    tokens = [same_role(t) for t in _TOKEN.findall(text)]
    # Compared as the phrase form's word ("older residents": "elderly"), named as written.
    same = [same_role(t) for t in _TOKEN.findall(same_before(text))]
    folded = [spelling(t) for t in (same if len(same) == len(tokens) else tokens)]
    spans = _spans(tokens, folded)
    words: list[str] = []
    keys: list[str] = []
    objects: dict[str, list[int]] = {}
    waiting: list[str] = []  # prepositions whose next content word is still to come
    i = 0
    while i < len(tokens):
        if i in spans:
            end, group = spans[i]
            if group is not None:
                for relation in waiting:
                    objects.setdefault(relation, []).append(len(words))
                waiting = []
                words.append(" ".join(tokens[i:end]))
                keys.append(group)
            i = end
            continue
        if tokens[i] in _RELATIONS:
            waiting.append(tokens[i])
        if tokens[i] not in stop:
            if tokens[i] not in _RELATIONS:
                for relation in waiting:
                    objects.setdefault(relation, []).append(len(words))
                waiting = []
            words.append(tokens[i])
            keys.append(folded[i])
        i += 1
    for relation in waiting:
        objects.setdefault(relation, []).append(-1)
    return Wording(tuple(words), tuple(keys), {k: tuple(v) for k, v in objects.items()})


@lru_cache(maxsize=4096)
def _keys(question: str) -> tuple[frozenset[str], ...]:
    """Each content word's keys: its spelling, its lemmas and its synonym group."""
    groups = _synonyms().words
    out = []
    for key in wording(question).folded:
        if key.startswith("="):
            out.append(frozenset((key,)))
            continue
        forms = lemmas(key)
        verbs = {spelling(v) for v in map(verb_of, forms) if v is not None}
        forms = forms | verbs | {spelling(v) for verb in verbs for v in lemmas(verb)}
        out.append(forms | {groups[k] for k in forms if k in groups})
    return tuple(out)


@dataclass(frozen=True, slots=True)
class WordDifference:
    """The words of each question that the other does not say in any accepted form, or, when
    they say the same words, a relation whose object differs (``order``)."""

    only_new: tuple[str, ...]
    only_cached: tuple[str, ...]
    order: tuple[str, str] | None = None

    def __bool__(self) -> bool:
        return bool(self.only_new or self.only_cached or self.order)

    def describe(self) -> str:
        """``"differs: improve / compromise"``, ``"only in one question: delayed"`` or
        ``"differs in order: than surgery / than radiotherapy"``."""
        if self.order is not None:
            return f"differs in order: {self.order[0]} / {self.order[1]}"
        if self.only_new and self.only_cached:
            return f"differs: {', '.join(self.only_new)} / {', '.join(self.only_cached)}"
        return f"only in one question: {', '.join(self.only_new or self.only_cached)}"


def _unmatched(a: str, b: str) -> list[int]:
    """Positions of the words of ``a`` that ``b`` does not say in any accepted form."""
    mine = wording(a).folded
    theirs = set(wording(b).folded)
    if all(k in theirs for k in mine):
        return []  # the fast path: every word as spelled (no lemmatiser needed)
    their_keys = frozenset().union(*_keys(b))
    return [i for i, keys in enumerate(_keys(a)) if keys.isdisjoint(their_keys)]


def _unjoin(ours: list[int], theirs: list[int], a: str, b: str) -> None:
    """Drop from both lists a word of ``a`` that ``b`` writes as two or three neighbouring
    words, each of them unmatched ("followup" / "follow up")."""
    mine, other = wording(a).folded, wording(b).folded
    joins: dict[str, tuple[int, ...]] = {}
    for n in (2, 3):
        for k in range(len(theirs) - n + 1):
            run = theirs[k : k + n]
            if run[-1] - run[0] == n - 1:
                joins.setdefault("".join(other[p] for p in run), tuple(run))
    for i in list(ours):
        parts = joins.get(mine[i])
        if parts is not None and set(parts) <= set(theirs):
            ours.remove(i)
            for p in parts:
                theirs.remove(p)


def _object(question: str, relation: str, position: int) -> str:
    return f"{relation} {wording(question).words[position] if position >= 0 else '(end)'}"


def _order(new: str, cached: str) -> tuple[str, str] | None:
    """A relation both questions say whose following words differ (the same words, other
    roles), as (new's, cached's); None when every shared relation has the same objects."""
    a, b = wording(new), wording(cached)
    shared = sorted(a.objects.keys() & b.objects.keys())
    if not shared:
        return None
    keys_a, keys_b = _keys(new), _keys(cached)
    none: frozenset[str] = frozenset(("(end)",))
    for relation in shared:
        ours = [keys_a[p] if p >= 0 else none for p in a.objects[relation]]
        theirs = [keys_b[p] if p >= 0 else none for p in b.objects[relation]]
        for i, mine in enumerate(ours):
            if all(mine.isdisjoint(t) for t in theirs):
                other = b.objects[relation][0]
                return _object(new, relation, a.objects[relation][i]), _object(
                    cached, relation, other
                )
        for j, their in enumerate(theirs):
            if all(their.isdisjoint(m) for m in ours):
                return _object(new, relation, a.objects[relation][0]), _object(
                    cached, relation, b.objects[relation][j]
                )
    return None


def _sequence(question: str) -> tuple[list[str], set[int]]:
    """The question's content words, once each in order of first use, each as one of its keys
    (the same for two words that match), and the positions that follow a relation."""
    seen: dict[str, int] = {}
    objects = {p for ps in wording(question).objects.values() for p in ps}
    follows: set[int] = set()
    for position, keys in enumerate(_keys(question)):
        key = min(keys)  # a synonym group ("=...") sorts first, then the shortest lemma
        if key not in seen:
            if position in objects:
                follows.add(len(seen))
            seen[key] = position
    return list(seen), follows


def _moved(new: str, cached: str) -> tuple[str, str] | None:
    """The same words in another order, other than a phrase moved whole ("In adults, does X
    ...?" / "Does X ... in adults?"): (new's order, cached's), or None. A question in the
    passive (with "by") may order its words any way."""
    if "by" in wording(new).objects or "by" in wording(cached).objects:
        return None
    a, after_a = _sequence(new)
    b, after_b = _sequence(cached)
    if a == b or sorted(a) != sorted(b):
        return None  # the same order, or words matched in ways one key cannot show
    start = 0
    while a[start] == b[start]:
        start += 1
    end = len(a)
    while a[end - 1] == b[end - 1]:
        end -= 1
    middle_a, middle_b = a[start:end], b[start:end]
    for k in range(1, len(middle_a)):
        if middle_b == middle_a[k:] + middle_a[:k]:
            # The phrase moved must begin after a relation ("in", "for", ...) in one question,
            # or be one verb (a passive without its agent: "can I use X" / "can X be used").
            if start in after_a or start + k in after_a or start in after_b:
                return None
            if start + len(middle_a) - k in after_b:
                return None
            if (k == 1 and is_verb(middle_a[0])) or (
                k == len(middle_a) - 1 and is_verb(middle_a[-1])
            ):
                return None
    words_a, words_b = wording(new).words, wording(cached).words
    return (
        " ".join(words_a[i] for i in sorted(_sequence_positions(new))[:8]),
        " ".join(words_b[i] for i in sorted(_sequence_positions(cached))[:8]),
    )


def _sequence_positions(question: str) -> list[int]:
    seen: dict[str, int] = {}
    for position, keys in enumerate(_keys(question)):
        seen.setdefault(min(keys), position)
    return list(seen.values())


def _same_words(new: str, cached: str) -> bool:
    """Whether both say the same words, spelling-folded, in the same order and with the same
    relations ("Does aspirin ..." / "does aspirin ..."): then no word, relation or order
    differs, which needs no lemma."""
    a, b = wording(new), wording(cached)
    return a.folded == b.folded and a.objects == b.objects


def word_difference(new: str, cached: str) -> WordDifference:
    """What ``new`` and ``cached`` differ in, word by word (empty: the same question)."""
    if new == cached or _same_words(new, cached):
        return WordDifference((), ())
    only_new, only_cached = _unmatched(new, cached), _unmatched(cached, new)
    if not (only_new or only_cached):
        return WordDifference((), (), _order(new, cached) or _moved(new, cached))
    _unjoin(only_new, only_cached, new, cached)
    _unjoin(only_cached, only_new, cached, new)
    a, b = wording(new), wording(cached)
    return WordDifference(
        tuple(dict.fromkeys(a.words[i] for i in only_new)),
        tuple(dict.fromkeys(b.words[i] for i in only_cached)),
    )
