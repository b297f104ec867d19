"""What a person at a terminal sees while ``medlit ask`` works: the stage, then the answer as
the model writes it.

:class:`AskLiveView` is a :mod:`medlit.progress` sink. Stage events update a spinner on stderr
("searching PubMed for “…”", "writing the answer"); the first ``token`` event stops it and
shows the answer growing on stdout in a transient region, which is cleared at the end so the
checked answer (citations verified, verdict first) is printed in its place by the command.
Only used when stderr is a terminal; ``--json`` and piped output never see it.
"""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.status import Status
from rich.text import Text

from medlit.progress import ProgressEvent

__all__ = ["AskLiveView"]


class AskLiveView:
    """A spinner with the current stage on ``err``, then the streamed answer on ``out``.

    Args:
        out: where the answer is written (stdout's console).
        err: where progress is shown (stderr's console).
    """

    def __init__(self, out: Console, err: Console) -> None:
        self.out = out
        self.err = err
        self.text = Text()
        self.stages: list[str] = []
        self.first_token_at: float | None = None
        self._status: Status | None = None
        self._live: Live | None = None

    def __enter__(self) -> AskLiveView:
        self._status = self.err.status("reading the question…", spinner="dots")
        self._status.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop_status()
        if self._live is not None:
            self._live.stop()
            self._live = None

    def __call__(self, event: ProgressEvent) -> None:
        """The progress sink."""
        if event.kind == "stage":
            self.stages.append(event.stage)
            if self._status is not None:
                self._status.update(f"{event.message or event.stage}…")
        elif event.kind == "token":
            self._show_token(event.message)
        elif event.kind == "warning":
            self.err.print(f"[yellow]warning:[/] {escape(event.message)}", highlight=False)

    def _show_token(self, delta: str) -> None:
        if self._live is None:
            self._stop_status()
            self.first_token_at = time.monotonic()
            # Transient: the checked answer replaces the draft when the command prints it.
            self._live = Live(
                self.text,
                console=self.out,
                transient=True,
                auto_refresh=False,
                vertical_overflow="visible",
            )
            self._live.start()
        self.text.append(delta)
        self._live.refresh()

    def _stop_status(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None
