"""Reading ``ene eval`` input: JSONL files (or a directory of shards) into numbered lines, and
each line into a request or the reason it is not one (:class:`Item`).

A file is read as bytes and split into lines the way Python reads text (``\\n``, ``\\r\\n``,
``\\r``), and each line is decoded on its own, so a line that is not UTF-8 is one bad line, not
the end of the run.
"""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..engine.request import Request, parse_request
from ..errors import EneError

READ_SIZE = 1 << 20  # bytes per read of an input file
_LINE_END = re.compile(rb"\r\n|\n|\r")


@dataclass(frozen=True)
class NotText:
    """An input line that is not UTF-8: only the reason is kept."""

    reason: str


RawLine = str | NotText


def input_files(path: str) -> list[str]:
    """A JSONL file, or a directory's shards in name order (hidden and ``_`` files skipped).

    Raises :class:`EneError` when the path is missing or unreadable, so nothing is written.
    URIs (``s3://...``, Ray backend) are passed through unchecked.
    """
    if "://" in path:
        return [path]
    if not os.path.exists(path):
        raise EneError(f"{path}: no such file or directory")
    if os.path.isdir(path):
        names = sorted(n for n in os.listdir(path) if not n.startswith((".", "_")))
        files = [os.path.join(path, n) for n in names if os.path.isfile(os.path.join(path, n))]
        if not files:
            raise EneError(f"{path} is a directory with no input files")
    else:
        files = [path]
    for name in files:
        if not os.access(name, os.R_OK):
            raise EneError(f"{name}: permission denied (cannot read it)")
    return files


def split_byte_lines(data: bytes) -> list[bytes]:
    """``data`` cut into lines at ``\\n``, ``\\r\\n`` or ``\\r`` (the ends dropped)."""
    lines = _LINE_END.split(data)
    if lines and lines[-1] == b"":
        lines.pop()  # the text ended with a line end
    return lines


def decode_line(raw: bytes, *, first: bool = False) -> RawLine:
    """One line as text, or :class:`NotText` saying where it stops being UTF-8.

    The first line of a file may start with a UTF-8 byte order mark, which is dropped.
    """
    if first and raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8) :]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return NotText(f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at byte {exc.start + 1})")


def read_lines(paths: Sequence[str]) -> Iterator[RawLine]:
    """The lines of ``paths`` one after another, decoded one by one (numbers run on)."""
    for path in paths:
        with open(path, "rb") as stream:
            pending = b""
            first = True
            while chunk := stream.read(READ_SIZE):
                data = pending + chunk
                # the lines up to the last line end; a final \r may be half of a \r\n
                end = max(data.rfind(b"\n"), data.rfind(b"\r", 0, len(data) - 1))
                pending = data[end + 1 :]
                for raw in split_byte_lines(data[: end + 1]):
                    yield decode_line(raw, first=first)
                    first = False
            for raw in split_byte_lines(pending):
                yield decode_line(raw, first=first)


def count_lines(paths: Sequence[str]) -> int:
    """How many lines :func:`read_lines` yields (for a progress total); cheap: bytes only."""
    total = 0
    for path in paths:
        with open(path, "rb") as stream:
            last = b""
            while chunk := stream.read(READ_SIZE):
                total += chunk.count(b"\n") + chunk.count(b"\r") - chunk.count(b"\r\n")
                if last == b"\r" and chunk.startswith(b"\n"):
                    total -= 1  # a \r\n cut between two chunks
                last = chunk[-1:]
            if last not in (b"", b"\n", b"\r"):
                total += 1  # a last line with no line end
    return total


@dataclass(frozen=True)
class Item:
    """One input line: a request, or why it is not one (neither: a blank line)."""

    number: int
    request: Request | None = None
    problem: str | None = None

    @property
    def blank(self) -> bool:
        return self.request is None and self.problem is None


def parse_line(number: int, line: RawLine) -> Item:
    if isinstance(line, NotText):
        return Item(number, problem=line.reason)
    if not line.strip():
        return Item(number)
    try:
        return Item(number, request=parse_request(line))
    except EneError as exc:
        return Item(number, problem=str(exc))
