"""The same model answers through two versions of medlit: which checks give better verdicts?

``verdicts.py`` asks a real model; its figure moves with the model's own run-to-run changes
(llama.cpp on another thread count writes other answers), so two versions of medlit measured
at different times differ by the model as much as by medlit. This study holds the model's
answers fixed: it serves an OpenAI-compatible endpoint on loopback that answers each answer
call (the system prompt of medlit's answer) with the answer a real model wrote for that
question, recorded by ``verdicts.py --record`` (``drafted`` and its verdict line), and passes
every other call (the verdict read off a checked text, the planner) to the real model. Point
``verdicts.py`` of each version at it in turn; the difference is the checks'.

Usage::

    python benchmarks/studies/replayed_drafts.py --recorded F --upstream http://127.0.0.1:18800 \\
        --port 18801 &
    MEDLIT_LLM_BASE_URL=http://127.0.0.1:18801/v1 ... \\
        python benchmarks/verdicts.py --start 92 --n 60

The endpoint logs each call (replayed or passed on) to stderr. A question with no recorded
answer is passed on too, so the model writes it afresh (counted in the log as ``passed``).
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

#: The first words of medlit's answer prompt (agent/prompt.py), in every version measured.
ANSWER_PROMPT = "You are medlit, a biomedical literature assistant."


def answers(path: Path) -> dict[str, str]:
    """Question -> the model's whole reply (its answer, then its verdict line when it wrote one)."""
    out = {}
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        reply = row["drafted"]
        if row.get("drafted_verdict"):
            reply += f"\nVerdict: {str(row['drafted_verdict']).capitalize()}"
        out[row["standalone"]] = reply
    return out


def recorded_reply(body: dict[str, Any], replies: dict[str, str]) -> str | None:
    """The recorded reply for an answer call, or None (pass it on)."""
    messages = body.get("messages") or []
    if not messages or not str(messages[0].get("content", "")).startswith(ANSWER_PROMPT):
        return None
    asked = "\n".join(str(m.get("content", "")) for m in messages[1:])
    lines = {line.strip() for line in asked.splitlines() if line.startswith("Question: ")}
    found = [q for q in replies if f"Question: {q}" in lines]  # not an evidence title
    return replies[found[0]] if len(found) == 1 else None


def completion(body: dict[str, Any], text: str) -> dict[str, Any]:
    """A whole (not streamed) chat completion carrying ``text``."""
    return {
        "id": "replayed",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "replayed"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


def _fetch(url: str, data: bytes | None) -> bytes:
    """The upstream server's reply to a POST of ``data`` (a GET when None)."""
    headers = {"Content-Type": "application/json"}
    with urllib.request.urlopen(urllib.request.Request(url, data, headers), timeout=1800) as reply:
        return bytes(reply.read())


def serve(replies: dict[str, str], upstream: str, port: int) -> None:
    """Serve until killed."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            text = recorded_reply(body, replies)
            if text is not None:
                asked = body["messages"][-1]["content"].splitlines()[-1]
                print("replayed", asked[:80], flush=True, file=sys.stderr)
                self._send(json.dumps(completion(body, text)).encode())
                return
            body["stream"] = False  # answered whole; the client takes a whole reply
            body.pop("stream_options", None)
            print("passed", flush=True, file=sys.stderr)
            self._send(_fetch(upstream + self.path, json.dumps(body).encode()))

        def do_GET(self) -> None:
            self._send(_fetch(upstream + self.path, None))

        def _send(self, out: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args: Any) -> None:
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recorded", type=Path, required=True, help="verdicts.py --record file")
    parser.add_argument("--upstream", default="http://127.0.0.1:18800")
    parser.add_argument("--port", type=int, default=18801)
    args = parser.parse_args(argv)
    serve(answers(args.recorded), args.upstream.rstrip("/"), args.port)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
