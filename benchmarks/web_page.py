"""How fast the web page shows an answer, measured in the browser.

    python benchmarks/web_page.py [--repeats 5]

Starts ``medlit serve`` on loopback against the fake E-utilities, Europe PMC and
OpenAI-compatible servers (the browser tests' harness, :mod:`tests.browser.harness`), opens the
page in headless Debian Chromium (``/usr/bin/chromium``, driven by Playwright), warms the server
with one question, then for each of six questions presses Enter once (a tier-1 miss: search,
score, LLM) and ``--repeats`` more times (tier-1 hits). The page's own ``performance`` marks give
the time from the Enter key to the first progress event of the SSE stream and to the answer
rendered and painted (the frame after it entered the DOM).

The misses run against fakes that answer at once: with the real PubMed and a real model a miss
takes what they take; the hits are the page, the HTTP service and the cache, nothing faked.
Target: a cached answer fully rendered within 300 ms of pressing Enter.

Last line: ``cached_rendered_p50_ms=... cached_rendered_p95_ms=... cached_first_progress_p50_ms=...
miss_rendered_p50_ms=... miss_first_progress_p50_ms=... errors=N``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests package (harness)

from tests.browser.harness import (
    CHROMIUM,
    ask,
    launch_chromium,
    page_factory,
    served_with_fakes,
)

WARM_UP = "Does aspirin cause gastrointestinal bleeding in the elderly?"
QUESTIONS = [
    "Does aspirin prevent stroke in adults?",
    "Do statins cause muscle pain in older adults?",
    "Does metformin reduce cancer incidence?",
    "Does vitamin D supplementation reduce fracture risk?",
    "Does telephone counseling improve mammography screening uptake?",
    "Does oral vitamin K lower the INR of adults on warfarin?",
]
TARGET_MS = 300.0


def _row(name: str, samples: list[dict[str, float]]) -> str:
    first = np.array([s["first-progress"] for s in samples])
    shown = np.array([s["painted"] for s in samples])
    return (
        f"{name:8} {len(samples):3d} {np.percentile(first, 50):10.1f} "
        f"{np.percentile(first, 95):10.1f} {np.percentile(shown, 50):10.1f} "
        f"{np.percentile(shown, 95):10.1f} {shown.max():10.1f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="Cached asks per question.")
    args = parser.parse_args()
    if not CHROMIUM.exists():
        print(f"needs Debian's chromium at {CHROMIUM} (apt-get install -y chromium)")
        return 2
    misses: list[dict[str, float]] = []
    hits: list[dict[str, float]] = []
    errors = 0
    with (
        tempfile.TemporaryDirectory(prefix="medlit-web-bench-") as tmp,
        served_with_fakes(Path(tmp)) as served,
        launch_chromium() as browser,
        page_factory(browser, served.base_url) as open_page,
    ):
        served.post("/v1/ask", json={"question": WARM_UP}).raise_for_status()
        page = open_page()
        for question in QUESTIONS:
            for n in range(1 + args.repeats):
                page.click("#new-conversation")  # each ask stands alone (no follow-up rewrite)
                timings = ask(page, question)
                ok = page.is_visible("#ask-result")
                hit = page.is_visible("#cache-note")
                if not ok or "painted" not in timings or (n > 0) != hit:
                    errors += 1
                    continue
                (hits if hit else misses).append(timings)
    print("web page, Enter pressed -> first progress event / answer painted (ms)")
    print(f"{'':8} {'n':>3} {'first p50':>10} {'first p95':>10} {'shown p50':>10} "
          f"{'shown p95':>10} {'shown max':>10}")  # fmt: skip
    print(_row("miss", misses))
    print(_row("cached", hits))
    shown = np.array([s["painted"] for s in hits])
    print(f"target: cached answer painted within {TARGET_MS:.0f} ms of Enter: "
          f"{(shown <= TARGET_MS).mean():.0%} of cached asks")  # fmt: skip
    figures = {
        "cached_rendered_p50_ms": np.percentile(shown, 50),
        "cached_rendered_p95_ms": np.percentile(shown, 95),
        "cached_first_progress_p50_ms": np.percentile([s["first-progress"] for s in hits], 50),
        "miss_rendered_p50_ms": np.percentile([s["painted"] for s in misses], 50),
        "miss_first_progress_p50_ms": np.percentile([s["first-progress"] for s in misses], 50),
    }
    print(" ".join(f"{k}={v:.1f}" for k, v in figures.items()) + f" errors={errors}")
    return 0 if errors == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
