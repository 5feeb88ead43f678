"""Progress of a batch run on stderr: a ``rich`` bar with the total, rate and ETA.

The bar is shown on a terminal only: never when stderr is a pipe or a file, in CI (``$CI`` set),
with ``TERM=dumb`` or when the user asked for quiet. Messages (a skipped line, a failure) go to
the same stream, above the bar while it is shown, so the two never garble each other.
"""

from __future__ import annotations

import os
import sys
from types import TracebackType
from typing import IO, Any


def progress_wanted(stream: IO[str], *, quiet: bool = False) -> bool:
    """A live bar belongs on ``stream``: a terminal, not CI, not ``TERM=dumb``, not quiet."""
    if quiet or os.environ.get("CI") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class Progress:
    """A live bar of ``total`` items (``None``: unknown) when ``enabled``, else silent.

    ``completed`` items are already done when it starts (``--resume``): they count toward the
    total but not toward the rate. Use as a context manager, or call :meth:`close`.
    """

    def __init__(
        self,
        total: int | None,
        *,
        enabled: bool,
        stream: IO[str] | None = None,
        completed: int = 0,
        description: str = "ene eval",
        unit: str = "requests",
        force_terminal: bool | None = None,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self._bar: Any = None
        self._task: Any = None
        if enabled:
            self._start(total, completed, description, unit, force_terminal)

    def _start(
        self,
        total: int | None,
        completed: int,
        description: str,
        unit: str,
        force_terminal: bool | None,
    ) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            ProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichProgress
        from rich.text import Text

        class RateColumn(ProgressColumn):
            def render(self, task: Any) -> Text:
                speed = task.speed
                return Text(f"{speed:.1f} {unit}/s" if speed else f"- {unit}/s", style="cyan")

        console = Console(file=self.stream, force_terminal=force_terminal, highlight=False)
        self._bar = RichProgress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            RateColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=True,
            refresh_per_second=4,
        )
        self._task = self._bar.add_task(description, total=total, completed=completed)
        self._bar.start()

    @property
    def shown(self) -> bool:
        return self._bar is not None

    def advance(self, items: int = 1) -> None:
        if self._bar is not None:
            self._bar.advance(self._task, items)

    def message(self, text: str) -> None:
        """One line for the user, above the bar when it is shown."""
        if self._bar is not None:
            self._bar.console.print(text, markup=False, highlight=False, soft_wrap=True)
        else:
            print(text, file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
