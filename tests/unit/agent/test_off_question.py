"""A cited sentence naming nothing the question asks, citing an article that names none of it
either, goes (:mod:`medlit.checks.off_question`)."""

from __future__ import annotations

from tests.unit._checks import checked
from tests.unit.agent.articles import article

# PubMedQA 16498158 (gold yes) and the asthma review the local model cited beside it.
ATROPINE = article(
    "16498158",
    "Is atropine needed with ketamine sedation?",
    "The use of atropine as an adjunct for intramuscular ketamine sedation in children "
    "significantly reduces hypersalivation and may lower the incidence of post-procedural "
    "vomiting.",
)
ASTHMA = article(
    "24785562",
    "Is dexamethasone an effective alternative to oral prednisone in the treatment of pediatric "
    "asthma exacerbations?",
    "Dexamethasone can be used as an effective alternative to prednisone in the treatment of "
    "mild to moderate acute asthma exacerbations in children.",
)
ARTICLES = {"16498158": ATROPINE, "24785562": ASTHMA}
QUESTION = "Should atropine be given routinely when sedating children with ketamine?"
ON = "Atropine reduced hypersalivation during ketamine sedation [PMID:16498158]."
OFF = (
    "The evidence from [PMID:24785562] also suggests that dexamethasone can be used as an "
    "effective alternative to prednisone in the treatment of pediatric asthma exacerbations."
)


def test_a_sentence_about_something_else_citing_an_article_about_it_goes() -> None:
    text, warnings = checked("off-question", f"{ON} {OFF}", ARTICLES, QUESTION)
    assert text == ON
    assert warnings == [
        "a sentence was left out: it cited PMID 24785562 for something else than was asked: "
        "neither names atropine or ketamine"
    ]


def test_what_names_the_question_or_cites_an_article_that_does_stays() -> None:
    # Going on about the subject without naming it: its article names it.
    on = "It also lowered vomiting after the procedure [PMID:16498158]."
    assert checked("off-question", on, ARTICLES, QUESTION) == (on, [])
    # The sentence names the question's subject; whether the article does is another check's.
    named = "Ketamine sedation in asthma was studied too [PMID:24785562]."
    assert checked("off-question", named, ARTICLES, QUESTION) == (named, [])
    # Citing both, only the citation of the article about something else goes.
    both = "Children tolerated it well [PMID:16498158] [PMID:24785562]."
    text, warnings = checked("off-question", both, ARTICLES, QUESTION)
    assert "24785562" not in text and "16498158" in text and len(warnings) == 1
    assert warnings[0].startswith("a citation was removed: it cited PMID 24785562")


def test_under_one_rare_word_a_sentence_must_say_none_of_the_question() -> None:
    # "amenable" is how the question frames its subject, not the subject (PubMedQA's injury
    # and poisoning question): a sentence saying what it asks about stays.
    question = "Are any common factors of asthma amenable to prevention?"
    assert checked("off-question", OFF, ARTICLES, question) == (OFF, [])
    # Asked about a urethral catheter, the local model kept sentences on skin care for
    # incontinence dermatitis, citing a study that never mentions the urethra.
    dermatitis = article(
        "25406780",
        "Does skin care frequency affect the severity of incontinence-associated dermatitis?",
        "The dermatitis score was lower with skin care every 6 hours.",
    )
    catheter = article(
        "20497880",
        "Is transurethral catheterisation the ideal method of bladder drainage?",
        "Suprapubic catheterisation was preferred to transurethral catheterisation.",
    )
    cited = {"25406780": dermatitis, "20497880": catheter}
    asked = "Is a urethral catheter the best way to drain the bladder after surgery?"
    skin = "The dermatitis score was lower with skin care every 6 hours [PMID:25406780]."
    kept = "Suprapubic catheters were preferred [PMID:20497880]."
    text, warnings = checked("off-question", f"{kept} {skin}", cited, asked)
    assert text == kept and len(warnings) == 1


ENDOTHELIN = article(
    "11601252",
    "Is endothelin-1 an aggravating factor in the development of acute pancreatitis?",
    "Endothelin-1 plays a role in aggravating acute hemorrhagic pancreatitis.",
)
CYTOKINES = article(
    "18670651",
    "Cytokines in post-ERCP pancreatitis",
    "Early changes in serum IL-2 and IL-6 reflect the inflammatory activity in post-ERCP "
    "pancreatitis.",
)
PANCREATITIS = {"11601252": ENDOTHELIN, "18670651": CYTOKINES}
ASKED = "Does endothelin-1 make acute pancreatitis worse?"


def test_a_claim_of_support_from_an_article_that_cannot_give_it_goes() -> None:
    # What the local model wrote, citing a cytokine study that never mentions endothelin-1.
    finding = (
        "early changes in serum IL-2 and IL-6 reflect the inflammatory activity in post-ERCP "
        "pancreatitis [PMID:18670651]."
    )
    text, warnings = checked(
        "borrowed-support",
        f"A study [PMID:18670651] also supports this conclusion by showing that {finding}",
        PANCREATITIS,
        ASKED,
    )
    assert text == f"A study [PMID:18670651] shows that {finding}"
    assert warnings == [
        "a claim of support was taken out: PMID 18670651 never mentions endothelin-1"
    ]
    # Only the claim: the sentence goes.
    text, warnings = checked(
        "borrowed-support",
        "A study [PMID:18670651] also supports this finding.",
        PANCREATITIS,
        ASKED,
    )
    assert text == "" and warnings[0].startswith("a sentence was left out")
    # An article that names every subject of the question can support the answer.
    kept = "A study [PMID:11601252] also confirms this finding."
    assert checked("borrowed-support", kept, PANCREATITIS, ASKED) == (kept, [])
    # Said the other way round (the local model's words, over a study of another subject).
    for said in (
        f"The claim is supported by [PMID:18670651], which found that {finding}",
        f"This is further supported by a study [PMID:18670651] that found that {finding}",
    ):
        text, warnings = checked("borrowed-support", said, PANCREATITIS, ASKED)
        assert text == f"A study [PMID:18670651] found that {finding}", text
        assert warnings == [
            "a claim of support was taken out: PMID 18670651 never mentions endothelin-1"
        ]
    kept = "This is supported by [PMID:11601252], which found that it aggravates pancreatitis."
    assert checked("borrowed-support", kept, PANCREATITIS, ASKED) == (kept, [])
