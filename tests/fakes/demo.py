"""Try medlit with no network and no model: ``python -m tests.fakes.demo COMMAND...`` runs
COMMAND with medlit pointed at fakes on loopback, in a throw-away data directory.

The fakes are the ones the tests use: an E-utilities server holding a few made-up articles on
aspirin after stroke (and the generated aspirin and stroke sample records), a Europe PMC server
holding the same, and an OpenAI-compatible model that answers each prompt from what the prompt
contains (:class:`tests.fakes.research_responder.ResearchResponder` for research,
:class:`tests.fakes.evidence_llm.EvidenceResponder` for ``ask``). Its answers are made up by
rules, not by a language model: it shows what medlit does with a model's replies (the plan,
the claims and their quotes, the checks, the report), not what a model would say.

From the root of a clone (``tests/`` is not installed by ``pip install .``)::

    .venv/bin/python -m tests.fakes.demo .venv/bin/medlit research "Does aspirin prevent \
recurrent stroke, and at what bleeding cost?" --depth quick --out report.md
    .venv/bin/python -m tests.fakes.demo .venv/bin/medlit ask "Does aspirin prevent stroke?"

``--home DIR`` keeps the data directory (jobs, caches) instead of a temporary one.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from medlit.types import Article
from tests.fakes.europepmc_server import FakeEuropePMC
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.evidence_llm import EvidenceResponder
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.fakes.research_responder import ARTICLES, ResearchResponder
from tests.fakes.sample_corpus import sample_corpus

__all__ = ["DemoResponder", "demo_articles", "demo_env", "main"]


class DemoResponder:
    """Research prompts (their system prompt opens "medlit research: STEP") to the research
    responder, every other prompt (ask's) to the evidence responder."""

    def __init__(self) -> None:
        self.research = ResearchResponder()
        self.ask = EvidenceResponder(lambda pmids: "Yes")

    def __call__(self, request_json: dict[str, Any]) -> str | Reply:
        messages = request_json.get("messages", [])
        system = str(messages[0].get("content", "")) if messages else ""
        if system.startswith("medlit research:"):
            return self.research(request_json)
        return self.ask(request_json)


def demo_articles() -> list[Article]:
    """What the fake sources hold: the research corpus and the generated sample records."""
    return [*ARTICLES, *sample_corpus()]


@contextlib.contextmanager
def demo_env(home: Path) -> Iterator[dict[str, str]]:
    """The fakes, started; yields the environment that points medlit at them."""
    articles = demo_articles()
    with (
        FakeEutils(articles=articles, rate_limit=None, rate_limit_with_key=None) as eutils,
        FakeEuropePMC(articles=articles, rate_limit=None) as europepmc,
        FakeLLMServer(responder=DemoResponder()) as llm,
    ):
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEDLIT_")}
        env.update(
            MEDLIT_HOME=str(home),
            MEDLIT_PUBMED_BASE_URL=eutils.base_url,
            MEDLIT_EUROPEPMC_BASE_URL=europepmc.base_url,
            MEDLIT_LLM_BASE_URL=llm.base_url,
            MEDLIT_LLM_MODEL="fake-model",
            MEDLIT_LLM_MAX_RETRIES="0",
        )
        yield env


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command given with medlit pointed at the fakes; its exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.fakes.demo", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--home", type=Path, help="data directory to keep (default: temporary)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command to run")
    args = parser.parse_args(argv)
    if not args.command:
        parser.error("give the command to run, e.g. .venv/bin/medlit research QUESTION")
    with contextlib.ExitStack() as stack:
        home = args.home or Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="medlit-demo-"))
        )
        env = stack.enter_context(demo_env(home))
        sys.stderr.write(
            "demo: fake E-utilities, Europe PMC and model on loopback; the model's replies "
            "are made up by rules, not written by a language model\n"
        )
        sys.stderr.flush()
        return subprocess.call(args.command, env=env)


if __name__ == "__main__":
    raise SystemExit(main())
