"""``medlit doctor``: is this set-up fit to answer? One item per thing checked, each with what
to do when it fails.

It checks what a user configured, as medlit will use it: each source (reachable, latency, the
API key in use and its rate), the LLM of each task (:mod:`medlit.llm.probe`: reachable, model
found, JSON mode, streaming, logprobs, seed, speed), the store (SQLite or PostgreSQL, pgvector,
migrations), the embedder (loaded, its files' SHA-256 checked) and, on request, a self-test
(:mod:`medlit.doctor.self_test`). An item is ``needed`` when medlit cannot do its work without
it; :attr:`DoctorReport.usable` is False when a needed item failed, unless only online sources
did and the local corpus has documents (:attr:`DoctorReport.offline`: usable offline).

Usage::

    report = await run_doctor(settings, self_test=True)
    for item in report.items:
        print(item.status, item.area, item.name, item.detail, item.fix)
"""

from __future__ import annotations

from medlit.doctor.checks import DoctorItem, DoctorReport, run_doctor

__all__ = ["DoctorItem", "DoctorReport", "run_doctor"]
