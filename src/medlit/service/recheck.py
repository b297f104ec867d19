"""The service's background check of cached answers for new articles.

With ``service.recheck_interval_s`` above 0, every that many seconds the service checks the
tier-1 answers due (``cache.recheck_after_s``) as ``medlit cache recheck`` does
(:meth:`medlit.assistant.Assistant.recheck_due`): through the service's own assistant, so an
answer asked again takes one of its miss slots (``service.ask_concurrency``) and never delays
a cached answer. Replicas sharing a store may all run it: each answer's check holds a lease in
the store, so one replica checks it. Off by default: a due answer is checked when it is next
asked for, and a scheduled ``medlit cache recheck`` does the rest.
"""

from __future__ import annotations

import asyncio

from medlit.assistant import Assistant
from medlit.log import get_logger

__all__ = ["recheck_periodically"]

log = get_logger("service.recheck")


async def recheck_periodically(assistant: Assistant, interval_s: float) -> None:
    """Check the answers due every ``interval_s`` seconds, until cancelled; a round that
    fails is logged and the next one runs on time."""
    while True:
        await asyncio.sleep(interval_s)
        try:
            report = await assistant.recheck_due()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a store or source outage: the next round tries again
            log.warning("recheck_round_failed", error=str(exc))
            continue
        if report.due:
            log.info("recheck_round", due=report.due, outcomes=report.outcomes)
