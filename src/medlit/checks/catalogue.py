"""``docs/checks.md``, written from the registry: ``python -m medlit.checks.catalogue``."""

from __future__ import annotations

import sys

from medlit.checks.registry import ORDER, REGISTRY

__all__ = ["catalogue"]

_STAGES = {
    "cite": "Citations tied to their statements",
    "sentence": "Each cited sentence held to its articles",
    "note": "What the answer left no longer covers (a note put first)",
    "verdict": "The verdict and the sentences stating an answer, held to the conclusions",
    "claim": "A research finding held to the article it was drawn from",
    "report": "A research report's sentences held to what their references stand behind",
}

_HEAD = """# The answer checks

<!-- Written by `python -m medlit.checks.catalogue > docs/checks.md`; do not edit. -->

A model's answer is held to the articles it cites by the checks below, run in this order
(each sees the answer as the ones before it left it). Each returns findings; one function
applies them, and the note, the verdict and the fallback to the evidence digest follow from
the findings. `medlit ask --json`, the HTTP API and MCP return them as `findings` beside the
human `warnings`: `check` (the id below), `action` (`drop`, `uncite`, `cite`, `rewrite`,
`warn`, `note`, `flip_verdict`), `message`, `pmids` and `sentence`.

A check reads the answer parsed once into sentences (`checks/draft.py`) and says, for a
sentence by its index, what should become of it; `checks/apply.py` is the one place the text
changes. A check holding each sentence's citations to their articles gives (PMID, why) pairs
(`cited_findings` in `checks/context.py`); one reading sentence by sentence gives what each
sentence should read (`sentence_findings`). Findings of one check with the same message are
told once in `warnings` when the check gives the line for several ("2 sentences were left
out: ..."); each stays a record of its own in `findings`. What the checks read of a text more
than once (a sentence's stance, a text's words) is remembered by text (`words/memo.py`).

Code outside the package imports the checks from `medlit.checks` only (its `__all__`): the
answer's (`check_answer`, `enforce_citations`, `read_verdict`, ...), research's (`check_claim`,
`ground_text`, ...) and the checks by id (`ORDER`, `REGISTRY`, `refuse_unknown`). Each name is
imported from its module on first use, so importing the package loads no check. The word tools
the checks share but that hold no check (defined terms, conclusion sentences, unmentioned
terms, an article's view) are in `medlit.words` (`docs/words.md`).

Research runs the `claim` checks on each finding an extraction draws from an article, the
first that finds something dropping it (the reason is logged as `fabricated_claim_dropped`),
and the evidence table's cells through the same checks. The claim's quote is looked up in its
article before they run, so turning one off stops only what it decides: with `claim-quote` off,
a claim whose quote the article lacks is kept unquoted (`"quote": null`, "no quote found" in the
evidence table), and the other claim checks still read the quote the article holds.
It runs the `report` checks on each section and the executive summary of a report
(`checks/report_check.py`): each looks at the sentences no check before it left out, and a
sentence left out is counted in the report's limitations. The checks turned off for `ask` are
off for research too.

Speed: the answer is cut into sentences once; a sentence left out, or rewritten in place as
one sentence, leaves the others as they were cut (`Draft.replaced`). What the checks work out
of an article's own texts (its sections' sentences, their stems, content words and numbers)
is kept with the article's view (`words/evidence.py`, by PMID, title and abstract), worked
out when a check first reads it and kept for every later answer that cites the article.
Which words are technical is read from the package's copy of wordfreq's English table
(`medlit.words.frequency`), so a cold process does not load wordfreq.

The PubMedQA benchmarks of the checks (`benchmarks/`) split the 500 `pqal_dev` records
once, by a hash of the PMID, into a *tune* half and a *check* half and report both
(`--half tune|check|both`): a rule is written from tune-half cases only, and the check half
tells how it does on articles it was not written from. `benchmarks/ablation.py` replays
recorded model answers with each check off in turn; `benchmarks/checks_speed.py` times them.

Turn checks off by id: `MEDLIT_CHECKS_DISABLED='["wrong-years", "off-question"]'` (an
unknown id is a configuration error).
"""


def catalogue() -> str:
    """The Markdown page listing every check, stage by stage, in the order they run."""
    parts = [_HEAD]
    for stage, title in _STAGES.items():
        parts.append(f"\n## {title} (`{stage}`)\n\n| id | what it catches |\n|---|---|\n")
        for check_id in ORDER:
            check = REGISTRY[check_id]
            if check.stage == stage:
                parts.append(f"| `{check_id}` | {check.doc.replace('|', '/')} |\n")
    return "".join(parts)


if __name__ == "__main__":
    sys.stdout.write(catalogue())
