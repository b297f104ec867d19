"""The verifier: findings checked across sources (seed 002, verify_findings).

Findings are grouped by the plan-level sub-question they answer (a follow-up's findings join
its root's group, since they are about the same topic). A group resting on one article gives
low-confidence facts without an LLM call; a group with several articles is cross-referenced by
the LLM into facts (with every supporting source) and discrepancies (each side with its
sources). The LLM only ever refers to claims by number: sources are attached here, from the
findings, so a fact can never cite an article that was not retrieved.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from medlit.errors import LLMConfigError, LLMOutputError, TimeBudgetSpent
from medlit.log import get_logger
from medlit.research.models import (
    ConflictingClaim,
    Discrepancy,
    ResearchFinding,
    ResearchPlan,
    VerifiedFact,
)
from medlit.research.prompts import (
    CROSS_REFERENCE_SYSTEM,
    CrossReferenceReply,
    ResearchLLM,
    Task,
    messages,
)
from medlit.types import Citation

__all__ = ["group_findings", "verify_findings"]

log = get_logger("research.verifier")


def group_findings(
    findings: list[ResearchFinding], plan: ResearchPlan | None = None
) -> dict[str, list[ResearchFinding]]:
    """Findings by the plan-level sub-question they belong to, in first-seen order.

    The same claim from the same article (read again for a follow-up) counts once.
    """
    groups: dict[str, list[ResearchFinding]] = defaultdict(list)
    seen: set[tuple[str, str, str]] = set()
    for finding in findings:
        group = finding.sub_question_id
        if plan is not None and (root := plan.root_of(group)) is not None:
            group = root.id
        key = (group, finding.article_key, " ".join(finding.claim.lower().split()))
        if key not in seen:
            seen.add(key)
            groups[group].append(finding)
    return dict(groups)


def _sources(findings: list[ResearchFinding]) -> list[Citation]:
    seen: dict[str, Citation] = {}
    for finding in findings:
        seen.setdefault(finding.article_key, finding.source)
    return list(seen.values())


def _numbers(findings: list[ResearchFinding]) -> list[str]:
    return list(dict.fromkeys(n for f in findings for n in f.numbers))


def _low_facts(group_id: str, findings: list[ResearchFinding]) -> list[VerifiedFact]:
    return [
        VerifiedFact(
            statement=f.claim,
            confidence="low",
            sources=[f.source],
            sub_question_id=group_id,
            numbers=list(f.numbers),
        )
        for f in findings
    ]


async def _cross_reference(
    group_id: str, question: str, findings: list[ResearchFinding], llm: ResearchLLM
) -> tuple[list[VerifiedFact], list[Discrepancy]]:
    lines = [
        f"[{i}] (PMID {f.pmid or 'none'}) {f.claim} | "
        + (f'quote: "{f.quote}"' if f.quote is not None else "no quote found in the article")
        + (f" | numbers: {', '.join(f.numbers)}" if f.numbers else "")
        for i, f in enumerate(findings, start=1)
    ]
    user = f"Sub-question: {question}\n\nClaims:\n" + "\n".join(lines)
    reply = await llm.complete_json(
        Task.CROSS_REFERENCE, messages(CROSS_REFERENCE_SYSTEM, user), CrossReferenceReply
    )

    def pick(ids: list[int]) -> list[ResearchFinding]:
        # Only claim numbers that exist; the LLM cannot add a source.
        return [findings[i - 1] for i in dict.fromkeys(ids) if 1 <= i <= len(findings)]

    used: set[int] = set()
    facts: list[VerifiedFact] = []
    for fact in reply.facts:
        support = pick(fact.claim_ids)
        if not support or not fact.statement.strip():
            continue
        used.update(i for i in fact.claim_ids if 1 <= i <= len(findings))
        sources = _sources(support)
        # Confidence is earned by independent sources, whatever the model says.
        confidence = fact.confidence if len(sources) > 1 else "low"
        facts.append(
            VerifiedFact(
                statement=fact.statement.strip(),
                confidence=confidence,
                sources=sources,
                sub_question_id=group_id,
                numbers=_numbers(support),
            )
        )
    discrepancies: list[Discrepancy] = []
    for conflict in reply.conflicts:
        sides = [
            ConflictingClaim(
                claim=side.claim.strip() or support[0].claim, sources=_sources(support)
            )
            for side in conflict.positions
            if (support := pick(side.claim_ids))
        ]
        keys = [{s.pmid or s.title for s in side.sources} for side in sides]
        # A real conflict has two sides resting on different articles.
        if len(sides) >= 2 and len(set().union(*keys)) >= 2:
            used.update(i for side in conflict.positions for i in side.claim_ids)
            discrepancies.append(
                Discrepancy(
                    topic=conflict.topic.strip() or question,
                    claims=sides,
                    sub_question_id=group_id,
                    note=conflict.note.strip(),
                )
            )
    left_out = [f for i, f in enumerate(findings, start=1) if i not in used]
    if left_out:
        # Claims the model neither merged nor opposed still stand, on their own source each.
        facts.extend(_low_facts(group_id, left_out))
    return facts, discrepancies


async def verify_findings(
    findings: list[ResearchFinding],
    llm: ResearchLLM,
    plan: ResearchPlan | None = None,
    *,
    on_group: Callable[[int, int], None] | None = None,
) -> tuple[list[VerifiedFact], list[Discrepancy]]:
    """Cross-check findings into facts and discrepancies.

    Args:
        findings: the research stage's findings.
        llm: the LLM client (task ``cross_reference``).
        plan: the plan (groups follow-ups with their root sub-question; gives the wording).
        on_group: called with (groups done, groups total) for progress.

    Returns:
        ``(facts, discrepancies)``. An unparseable cross-reference reply, or one the job's
        time budget cut off, degrades that group to low-confidence facts (logged
        ``cross_reference_failed``).

    Raises:
        LLMError: the cross-reference call failed for another reason (provider down, timeout).
    """
    groups = group_findings(findings, plan)
    facts: list[VerifiedFact] = []
    discrepancies: list[Discrepancy] = []
    for done, (group_id, group) in enumerate(groups.items(), start=1):
        question = group_id
        if plan is not None and (sub := plan.get(group_id)) is not None:
            question = sub.text
        if len(_sources(group)) == 1:
            facts.extend(_low_facts(group_id, group))
        else:
            try:
                new_facts, new_discrepancies = await _cross_reference(
                    group_id, question, group, llm
                )
            except LLMConfigError:
                raise
            except (LLMOutputError, TimeBudgetSpent) as exc:
                # Unparseable, or the job's time ran out: its findings stand, each on its own.
                log.warning("cross_reference_failed", group=group_id, error=str(exc)[:200])
                new_facts, new_discrepancies = _low_facts(group_id, group), []
            facts.extend(new_facts)
            discrepancies.extend(new_discrepancies)
        if on_group is not None:
            on_group(done, len(groups))
    log.info(
        "findings_verified", facts=len(facts), discrepancies=len(discrepancies), groups=len(groups)
    )
    return facts, discrepancies
