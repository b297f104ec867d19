"""The desmoid article (PMID 21979183, PubMedQA) whose "similar" the local model wrote as
"higher": a fixture of the reversed-comparison tests."""

from __future__ import annotations

from medlit.types import AbstractSection, Article

QUESTION = (
    "Do desmoid tumors behave differently after ileal pouch surgery compared with ileorectal "
    "anastomosis?"
)
SIMILAR = (
    "The risk of individual complications was also similar (bleeding (2.0% vs 0.0%), fistula "
    "(10.2% vs 13.5%), bowel obstruction (32.7% vs 48.6%), pain (34.7% vs 21.6%), and death "
    "related to desmoid tumors (2.0% vs 10.8%))."
)
HIGHER = (
    "Patients with restorative proctocolectomy had a higher risk of individual complications "
    "(bleeding, fistula, bowel obstruction, pain, and death related to desmoid tumors) compared "
    "to those with ileorectal anastomosis"
)
DESMOID = Article(
    pmid="21979183",
    title="Does intra-abdominal desmoid disease affect patients with an ileal pouch differently "
    "than those with an ileorectal anastomosis?",
    abstract=[
        AbstractSection(
            label="RESULTS",
            category="RESULTS",
            text="There were 86 patients: 49 had restorative proctocolectomy and 37 had "
            "ileorectal anastomosis. The overall complication rate of desmoids was similar, "
            f"approaching 70%. {SIMILAR}",
        ),
        AbstractSection(
            label="CONCLUSIONS",
            category="CONCLUSIONS",
            text="The morbidity associated with desmoid tumors has not been shown to differ, "
            "whether they arise after restorative proctocolectomy or ileorectal anastomosis.",
        ),
    ],
)
