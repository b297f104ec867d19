"""A few generated aspirin and stroke records for trying medlit without network.

``python -m tests.fakes.eutils_server --sample`` serves them, so the README's first command can
be tried on a machine that cannot reach PubMed. They are made up (PMIDs 39000001-39000006, the
journal "Journal of Generated Evidence"): fit to exercise every command, not to answer anyone.
Only medlit's own types are imported, so a runtime install (no test extras) can serve them.
"""

from __future__ import annotations

from medlit.types import AbstractSection, Article

__all__ = ["sample_corpus"]

_RECORDS = [
    (
        "Low-dose aspirin and ischaemic stroke prevention in adults: a meta-analysis",
        "Meta-Analysis",
        2020,
        "Trials of daily low-dose aspirin against placebo in adults without prior stroke.",
        "Low-dose aspirin reduced the incidence of ischaemic stroke in adults, at the cost "
        "of more major bleeding.",
    ),
    (
        "Aspirin for primary prevention of stroke: a randomised controlled trial",
        "Randomized Controlled Trial",
        2018,
        "Adults aged 50 to 75 were randomised to aspirin 100 mg daily or placebo.",
        "Aspirin lowered the risk of stroke compared with placebo over five years.",
    ),
    (
        "Aspirin use and stroke outcomes in older adults: a cohort study",
        "Observational Study",
        2016,
        "Older adults reporting regular aspirin use were followed for ten years.",
        "Regular aspirin use was associated with fewer ischaemic strokes in older adults.",
    ),
    (
        "Aspirin dose and gastrointestinal bleeding in stroke prevention",
        "Cohort Studies",
        2017,
        "Adults taking aspirin to prevent stroke were grouped by daily dose.",
        "Higher aspirin doses increased gastrointestinal bleeding without fewer strokes.",
    ),
    (
        "Aspirin after transient ischaemic attack and the risk of recurrent stroke",
        "Randomized Controlled Trial",
        2019,
        "Adults seen within 48 hours of a transient ischaemic attack received aspirin or placebo.",
        "Early aspirin reduced recurrent stroke in the first weeks after a transient ischaemic "
        "attack.",
    ),
    (
        "Statins and muscle pain in older adults",
        "Cohort Studies",
        2015,
        "Older adults starting a statin reported muscle symptoms at each visit.",
        "Muscle pain was no more frequent with statins than before treatment.",
    ),
]


def sample_corpus() -> list[Article]:
    """The generated records, as :class:`~medlit.types.Article` objects."""
    articles = []
    for n, (title, pub_type, year, methods, conclusion) in enumerate(_RECORDS, start=1):
        articles.append(
            Article(
                pmid=str(39000000 + n),
                title=title,
                abstract=[
                    AbstractSection(label="METHODS", category="METHODS", text=methods),
                    AbstractSection(label="CONCLUSIONS", category="CONCLUSIONS", text=conclusion),
                ],
                authors=["Smith J", "Doe A"],
                journal="Journal of Generated Evidence",
                pub_date=f"{year} Mar",
                year=year,
                publication_types=["Journal Article", pub_type],
                mesh_terms=["Humans", "Aspirin" if "spirin" in title else "Statins"],
                language="eng",
            )
        )
    return articles
