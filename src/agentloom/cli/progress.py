"""Progress of files through a vector store, on stderr: a line for each file as it moves
(uploaded, then ingested, with a bar of its stage) and the overall bar (files and bytes done).

On a terminal the overall bar is one line redrawn under the files' lines; elsewhere (a pipe,
a log, a test) every line is written once and the overall count closes each file's line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TextIO

__all__ = ["STAGES", "Progress", "bar"]

STAGES = ("queued", "uploaded", "ingested")  # a file's stages, each a third of its bar
WIDTH = 20  # characters of the overall bar
FILE_WIDTH = len(STAGES)


def bar(done: float, total: float, width: int) -> str:
    """``[████░░░░]``: ``done`` of ``total`` in ``width`` characters."""
    filled = width if total <= 0 else min(width, round(done / total * width))
    return "[" + "█" * filled + "░" * (width - filled) + "]"


@dataclass
class _Count:
    files: int = 0
    bytes: int = 0


class Progress:
    """Files through their stages; :meth:`close` ends the overall line."""

    def __init__(self, stream: TextIO, files: int, total_bytes: int) -> None:
        self.stream = stream
        self.live = stream.isatty()
        self.files = files
        self.total_bytes = total_bytes
        self.done = _Count()
        self.note = ""

    def stage(self, name: str, stage: str, detail: str = "") -> None:
        """``name`` reached ``stage`` (one of :data:`STAGES`, or ``failed``)."""
        step = STAGES.index(stage) + 1 if stage in STAGES else FILE_WIDTH
        line = f"{bar(step, FILE_WIDTH, FILE_WIDTH)} {stage:<8} {name}"
        self._line(f"{line}  {detail}" if detail else line)

    def finished(self, name: str, size: int, stage: str, detail: str = "") -> None:
        """``name`` is through (ingested or failed): it counts toward the overall bar."""
        self.done.files += 1
        self.done.bytes += size
        self.stage(name, stage, detail)

    def working(self, note: str) -> None:
        """What is happening now, on the overall line (a terminal only)."""
        self.note = note
        self._draw()

    def close(self) -> None:
        if self.live:
            self.stream.write("\r\x1b[K")
        self.stream.write(self.overall() + "\n")
        self.stream.flush()

    def overall(self) -> str:
        from agentloom.cli.output import size

        bytes_ = f"{size(self.done.bytes)} of {size(self.total_bytes)}"
        files = f"{self.done.files}/{self.files} files"
        return f"{bar(self.done.bytes, self.total_bytes, WIDTH)} {files}, {bytes_}"

    def _line(self, text: str) -> None:
        if self.live:
            self.stream.write("\r\x1b[K" + text + "\n")
            self._draw()
        else:
            self.stream.write(f"{text}  ({self.done.files}/{self.files})\n")
        self.stream.flush()

    def _draw(self) -> None:
        if not self.live:
            return
        note = f"  {self.note}" if self.note else ""
        self.stream.write("\r\x1b[K" + self.overall() + note)
        self.stream.flush()
