"""Reading the Dockerfile and .dockerignore as a container engine does, as far as the tests
need: instructions (continuations joined, comments dropped, exec form decoded) and whether a
path of the build context is sent to the engine."""

from __future__ import annotations

import fnmatch
import json
import shlex
from dataclasses import dataclass
from pathlib import PurePosixPath


@dataclass(frozen=True)
class Instruction:
    keyword: str  # upper case: FROM, RUN, COPY ...
    arguments: str
    stage: int  # 0 for the first FROM's stage

    def exec_form(self) -> list[str]:
        """The JSON array of an exec-form ENTRYPOINT, CMD or HEALTHCHECK ... CMD."""
        start = self.arguments.index("[")
        command: list[str] = json.loads(self.arguments[start:])
        return command

    def words(self) -> list[str]:
        return shlex.split(self.arguments)


def instructions(text: str) -> list[Instruction]:
    found: list[Instruction] = []
    stage = -1
    for line in _logical_lines(text):
        keyword, _, arguments = line.partition(" ")
        keyword = keyword.upper()
        stage += keyword == "FROM"
        found.append(Instruction(keyword, arguments.strip(), stage))
    return found


def _logical_lines(text: str) -> list[str]:
    lines: list[str] = []
    pending = ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue  # a comment, even inside a continued instruction
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        lines.append(pending + stripped)
        pending = ""
    return lines


def sent_to_engine(path: str, ignore: str) -> bool:
    """Whether the context path ``path`` survives ``ignore`` (a .dockerignore): the last pattern
    matching the path or one of its parents decides, ``!`` lets it back in."""
    patterns = [p.strip() for p in ignore.splitlines() if p.strip() and not p.startswith("#")]
    included = True
    for pattern in patterns:
        exception = pattern.startswith("!")
        if _matches(pattern.lstrip("!").strip("/"), PurePosixPath(path)):
            included = exception
    return included


def _matches(pattern: str, path: PurePosixPath) -> bool:
    candidates = [str(path), *(str(parent) for parent in path.parents if str(parent) != ".")]
    variants = {pattern, pattern.removeprefix("**/")}  # ** also matches no directory at all
    return any(fnmatch.fnmatchcase(c, v) for c in candidates for v in variants)
