"""Writing ``ene eval`` output without losing anything.

:class:`AtomicOutput` writes a hidden temporary file beside the output and renames it over the
output at the end, so the old output stays whole until the new one is complete.
:class:`AppendOutput` (``--resume``) appends to the output and flushes every line, and
:class:`ResumeState` tells which input lines an earlier run already wrote there.
:func:`check_output` refuses an output that would destroy the input.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.necessity import Engine
from ..errors import EneError
from .inputs import Item


def check_output(output: str, files: Sequence[str], *, shard_dir: str | None = None) -> str:
    """Refuse an output that would destroy input or cannot be written; returns its real path.

    The same file as an input (also through a symbolic or hard link), a file inside the input
    directory ``shard_dir`` (it would be read as a shard next time), a directory, or a missing
    directory.
    """
    target = os.path.realpath(output)
    if os.path.isdir(target):
        raise EneError(f"-o {output} is a directory: name a file")
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise EneError(f"-o {output}: directory {os.path.dirname(output) or '.'} does not exist")
    if not os.access(folder, os.W_OK) or (
        os.path.exists(target) and not os.access(target, os.W_OK)
    ):
        raise EneError(f"-o {output}: permission denied (cannot write there)")
    for name in files:
        if "://" in name:
            continue
        same = os.path.exists(target) and os.path.samefile(name, target)
        if same or os.path.realpath(name) == target:
            raise EneError(
                f"-o {output} is the input file {name}: writing it would destroy the input; "
                "name another output"
            )
    hidden = os.path.basename(target).startswith((".", "_"))  # shards skip these names
    if shard_dir is not None and folder == os.path.realpath(shard_dir) and not hidden:
        raise EneError(
            f"-o {output} is inside the input directory: it would be read as input next time"
        )
    return target


class AtomicOutput:
    """The output written all at once: a hidden temporary file beside ``path``, renamed over
    it by :meth:`commit`. Until then the old ``path`` (if any) is untouched."""

    def __init__(self, path: str) -> None:
        self.path = os.path.realpath(path)
        self.existed = os.path.exists(self.path)
        folder, name = os.path.split(self.path)
        fd, self.temp = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=folder)
        self._stream = open(fd, "w", encoding="utf-8", newline="\n")  # noqa: SIM115

    def write(self, text: str) -> None:
        self._stream.write(text)

    def commit(self) -> None:
        """Make the written lines the output, in one rename."""
        self._stream.flush()
        os.fsync(self._stream.fileno())
        self._stream.close()
        os.chmod(self.temp, _file_mode(self.path))
        os.replace(self.temp, self.path)

    def interrupted(self) -> bool:
        """The run was cut short: keep its lines as the output if there was no output before
        (``--resume`` continues it; returns True), else drop them and keep the old output."""
        if not self.existed:
            self.commit()
            return True
        self.discard()
        return False

    def discard(self) -> None:
        self._stream.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.temp)


def _file_mode(path: str) -> int:
    """The old file's permissions, else what a new file gets under the umask."""
    if os.path.exists(path):
        return os.stat(path).st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


class AppendOutput:
    """``--resume``: lines appended to ``path`` and flushed one by one, so a killed run loses
    at most the line being written (which :class:`ResumeState` then repairs)."""

    def __init__(self, path: str, state: ResumeState) -> None:
        self.path = os.path.realpath(path)
        self._stream = open(self.path, "a+b")  # noqa: SIM115
        if state.torn_at is not None:  # a line cut off mid-write: drop it
            self._stream.truncate(state.torn_at)
        elif state.needs_newline:
            self._stream.write(b"\n")
        self._stream.flush()

    def write(self, text: str) -> None:
        self._stream.write(text.encode("utf-8"))
        self._stream.flush()

    def commit(self) -> None:
        self._stream.flush()
        os.fsync(self._stream.fileno())
        self._stream.close()

    def interrupted(self) -> bool:
        self.commit()
        return True

    def discard(self) -> None:
        self._stream.close()


# -- resuming ------------------------------------------------------------------------------------
Key = tuple[str, str]


def _content_key(answer: Any, question: Any, texts: Sequence[Any]) -> Key:
    payload = json.dumps([answer, question, list(texts)], ensure_ascii=False)
    return ("content", hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest())


def item_keys(item: Item) -> list[Key]:
    """The keys under which an output record would name this input line."""
    request = item.request
    if request is not None and request.id is not None:
        return [("id", request.id)]
    keys = [("line", str(item.number))]
    if request is not None:
        texts = [c.text for c in request.contexts]
        keys.insert(0, _content_key(request.answer, request.question, texts))
    return keys


def record_key(record: dict[str, Any]) -> Key:
    """The key of one output record: an ENG, or an error record of ``--on-error record``."""
    if record.get("id") is not None:
        return ("id", str(record["id"]))
    if "schema_version" in record:
        texts = [c.get("text") for c in record.get("contexts") or [] if isinstance(c, dict)]
        return _content_key(record.get("answer"), record.get("question"), texts)
    return ("line", str(record.get("line")))


@dataclass
class ResumeState:
    """The requests an earlier run wrote into the output, to be skipped by this one.

    A request is matched by its ``id``; one without an ``id`` by its content (answer, question
    and chunk texts: what the ENG records), and a bad or failed line recorded by
    ``--on-error record`` by its line number. Keys are counted, so two identical requests
    need two records.
    """

    path: str
    keys: Counter[Key] = field(default_factory=Counter)  # ENGs
    error_keys: Counter[Key] = field(default_factory=Counter)  # error records
    # (model, threshold, contradiction threshold)
    verifiers: set[tuple[str, Any, Any]] = field(default_factory=set)
    records: int = 0
    torn_at: int | None = None  # byte offset of a last line cut off mid-write
    needs_newline: bool = False

    @classmethod
    def read(cls, path: str) -> ResumeState:
        """Read (never change) ``path``; raises :class:`EneError` if it is not ``ene eval``
        output. A missing file is an empty state."""
        state = cls(path)
        if not os.path.exists(path):
            return state
        offset = 0
        with open(path, "rb") as stream:
            for number, raw in enumerate(stream, start=1):
                start, offset = offset, offset + len(raw)
                complete = raw.endswith(b"\n")
                if not raw.strip():
                    continue
                try:
                    record = json.loads(raw.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError):
                    if not complete:  # the last line, cut off when the earlier run was killed
                        state.torn_at = start
                        break
                    raise EneError(
                        f"--resume: {path} line {number} is not JSON, so it is not ene eval "
                        "output: name another output, or drop --resume to replace it"
                    ) from None
                if not isinstance(record, dict) or not (
                    "schema_version" in record or ("error" in record and "line" in record)
                ):
                    raise EneError(
                        f"--resume: {path} line {number} is neither an ENG nor an error "
                        "record, so it is not ene eval output"
                    )
                state.needs_newline = not complete
                state.records += 1
                counter = state.keys if "schema_version" in record else state.error_keys
                counter[record_key(record)] += 1
                verifier = record.get("verifier")
                if isinstance(verifier, dict):
                    tau, tau_c = verifier.get("threshold"), verifier.get("contradiction_threshold")
                    model = str(verifier.get("model"))
                    state.verifiers.add((model, tau, tau if tau_c is None else tau_c))
        return state

    def take(self, item: Item) -> str | None:
        """``"ok"`` (an ENG) or ``"error"`` (an error record) if ``item`` is already in the
        output, else ``None``; each record vouches for one line."""
        if item.blank:
            return None
        for key in item_keys(item):
            for kind, counter in (("ok", self.keys), ("error", self.error_keys)):
                if counter[key] > 0:
                    counter[key] -= 1
                    return kind
        return None

    def check_engine(self, engine: Engine) -> None:
        """Refuse to mix verdicts of another verifier or thresholds into the output."""
        now = (engine.oracle.name, engine.threshold, engine.contradiction_threshold)
        for model, tau, tau_c in sorted(self.verifiers - {now}, key=str):
            raise EneError(
                f"--resume: {self.path} was written with model {model!r}, threshold {tau}, "
                f"contradiction threshold {tau_c}; this run uses {now[0]!r}, threshold {now[1]}, "
                f"contradiction threshold {now[2]}: pass the same --model, --threshold and "
                "--contradiction-threshold, or write to a new output"
            )
