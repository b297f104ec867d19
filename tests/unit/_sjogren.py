"""The shape of the article the local model misread (PubMedQA's 11053064, in our words): it
studies two complaints, fatigue and fibromyalgia, in one disease, and its results give a
prevalence for each. The research claim checks, the answer's numbers check and the result
sentence search are all tested on it."""

from __future__ import annotations

from medlit.types import AbstractSection, Article

SJOGREN = Article(
    pmid="11053064",
    title="Fatigue in primary Sjögren's syndrome: is there a link with the fibromyalgia "
    "syndrome?",
    abstract=[
        AbstractSection(label="OBJECTIVE", text="To learn whether fibromyalgia (FM) is more "
                        "common in patients with primary Sjögren's syndrome (pSS) who report "
                        "fatigue, against a control group of lupus patients."),
        AbstractSection(label="RESULTS", category="RESULTS", text="Fatigue was reported by 68% "
                        "of patients with pSS, a prevalence significantly higher than in the "
                        "lupus group (50%). FM was present in 12% of patients with pSS, "
                        "compared with 5% of lupus patients."),
        AbstractSection(label="CONCLUSIONS", category="CONCLUSIONS", text="Fatigue in pSS is "
                        "not due to the coexistence of FM in most cases."),
    ],
)  # fmt: skip
FATIGUE_RESULT = (
    "Fatigue was reported by 68% of patients with pSS, a prevalence significantly higher than "
    "in the lupus group (50%)."
)
