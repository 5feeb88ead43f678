"""One normalisation of the text entering the engine, so that every ENG it returns serialises.

Every answer, question, request id and context (text, id, metadata) passes through a
:class:`Normaliser` once, in :meth:`ene_core.engine.request.Request.build`:

- lone surrogates (``"\\ud800"``: valid JSON, not valid Unicode; common in scraped text) are
  replaced with U+FFFD; two surrogates that make a pair become the character they encode;
- control characters (Unicode category Cc: NUL, the other C0 controls, DEL and the C1
  controls) are removed, except tab and the line ends ``\\n`` and ``\\r``;
- each change is counted, and the ENG carries one warning per kind naming where it happened.

Ids must be strings or finite numbers; metadata becomes plain JSON values (other values their
``str()``; non-finite floats and integers beyond 64 bits too) nested at most :data:`MAX_DEPTH`
levels deep.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from itertools import accumulate
from typing import Any

from ..errors import InvalidInputError

MAX_DEPTH = 64  # levels of nesting: JSON input (ene eval lines, ene serve bodies) and metadata
MAX_PLACES = 5  # places a warning names before "and N more"

_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # Cc minus \t \n \r
_ODD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
_INT_LIMIT = 2**63


def clean_text(text: str) -> tuple[str, int, int]:
    """``text`` normalised, with how many lone surrogates were replaced and how many control
    characters removed."""
    if _ODD.search(text) is None:
        return text, 0, 0
    surrogates = 0
    if _SURROGATE.search(text) is not None:
        before = text.count("\ufffd")
        # UTF-16 round trip: pairs join into their character, lone halves become U+FFFD
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        surrogates = text.count("\ufffd") - before
    text, controls = _CONTROL.subn("", text)
    return text, surrogates, controls


def check_id(value: Any, what: str) -> str | None:
    """An id as a string: a string, or a finite number; ``None`` stays ``None``."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return str(value)
        except ValueError:  # over 4300 digits: Python will not write it
            raise InvalidInputError(f"{what} is an integer too long: pass a string") from None
    if isinstance(value, float):
        if math.isfinite(value):
            return repr(value)
        raise InvalidInputError(
            f"{what} must be a string or a finite number, got {value} (a JSON number beyond "
            "±1.8e308, such as 1e400, is infinite): pass it as a string"
        )
    raise InvalidInputError(f"{what} must be a string or a finite number, got {_kind(value)}")


def _kind(value: Any) -> str:
    names = {bool: "a boolean", list: "an array", dict: "an object"}
    return names.get(type(value), type(value).__name__)


class Normaliser:
    """Normalises the texts of one request and keeps count of what it changed, and where."""

    def __init__(self) -> None:
        self.surrogates: list[str] = []  # places, in the order met
        self.controls: list[str] = []

    def text(self, value: str, where: str) -> str:
        cleaned, surrogates, controls = clean_text(value)
        if surrogates:
            self.surrogates.append(where)
        if controls:
            self.controls.append(where)
        return cleaned

    def metadata(self, value: Mapping[Any, Any], where: str) -> dict[str, Any]:
        """``value`` as plain JSON values with normalised strings (keys included)."""
        cleaned = self._json(value, where, 1)
        assert isinstance(cleaned, dict)
        return cleaned

    def _json(self, value: Any, where: str, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise InvalidInputError(
                f"{where} is nested more than {MAX_DEPTH} levels deep (or holds itself): "
                "pass flat metadata"
            )
        if isinstance(value, Mapping):
            return {self._key(k, where): self._json(v, where, depth + 1) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._json(v, where, depth + 1) for v in value]
        if isinstance(value, str):
            return self.text(value, where)
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int):
            return value if -_INT_LIMIT < value < _INT_LIMIT else self.text(_shown(value), where)
        if isinstance(value, float):
            return value if math.isfinite(value) else str(value)
        return self.text(_shown(value), where)

    def _key(self, key: Any, where: str) -> str:
        return self.text(key if isinstance(key, str) else _shown(key), where)

    def warnings(self) -> list[str]:
        """One warning per kind of change, naming where it happened."""
        out = []
        if self.surrogates:
            out.append(
                "lone surrogates (not valid Unicode) replaced with U+FFFD in "
                + _places(self.surrogates)
            )
        if self.controls:
            out.append(
                "control characters (NUL and others; tab and line ends are kept) removed from "
                + _places(self.controls)
            )
        return out


def _shown(value: Any) -> str:
    try:
        return str(value)
    except Exception:  # a value whose __str__ fails is shown by its type
        return f"<{type(value).__name__}>"


def _places(places: list[str]) -> str:
    unique = list(dict.fromkeys(places))
    shown = ", ".join(unique[:MAX_PLACES])
    more = len(unique) - MAX_PLACES
    return shown + (f" and {more} more" if more > 0 else "")


def json_problem(value: Any, limit: int) -> str | None:
    """Why decoded JSON ``value`` is not sound to keep and write again, or ``None``: a string
    (or key) with a lone surrogate, nesting deeper than ``limit``, a non-finite number, or a
    value that is not JSON. Iterative: any depth is safe."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return "it holds a lone surrogate (not valid Unicode)"
        elif isinstance(item, (dict, list)):
            if depth > limit:
                return f"nested more than {limit} levels deep"
            if isinstance(item, dict):
                keys = list(item)
                if not all(isinstance(k, str) for k in keys):
                    return "an object has a key that is not a string"
                stack.extend((k, depth) for k in keys)
                stack.extend((v, depth + 1) for v in item.values())
            else:
                stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, float):
            if not math.isfinite(item):
                return f"it holds {item}, not a JSON number"
        elif item is not None and not isinstance(item, (bool, int)):
            return f"it holds a {type(item).__name__}, not a JSON value"
    return None


# -- JSON nesting, measured without parsing --------------------------------------------------------
_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)  # one pass; unterminated too
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def json_depth(text: str) -> int:
    """How deeply the arrays and objects of JSON ``text`` nest, without parsing it: linear
    time, no recursion (``json.loads`` recurses once per level)."""
    brackets = _NOT_BRACKETS.sub("", _STRINGS.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def too_deep(text: str, limit: int) -> bool:
    """Whether JSON ``text`` nests more than ``limit`` levels (cheap when it has few brackets)."""
    return text.count("[") + text.count("{") > limit and json_depth(text) > limit


def decode_json(text: str | bytes, limit: int | None = MAX_DEPTH) -> Any:
    """Strict JSON: text, or bytes in UTF-8 (or UTF-16/32, as ``json.loads`` detects them),
    nested at most ``limit`` levels (``None``: as deep as ``json.loads`` goes; never a
    ``RecursionError``), without ``NaN`` or ``Infinity`` (not JSON). Raises ``ValueError``
    whose message completes "... is": e.g. ``json.JSONDecodeError`` for bad syntax,
    ``UnicodeDecodeError`` for bytes that are not text."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode(json.detect_encoding(text))
    if not isinstance(text, str):
        raise ValueError(f"not JSON text (got {type(text).__name__})")
    if limit is not None and too_deep(text, limit):
        raise ValueError(f"nested more than {limit} levels deep")
    try:
        return json.loads(text, parse_constant=_not_json)
    except (json.JSONDecodeError, _Refused):
        raise
    except ValueError as exc:  # an integer of over 4300 digits
        raise ValueError(f"not JSON ENE reads: {exc}") from None
    except RecursionError:  # json.loads recurses once per level
        raise ValueError("nested too deeply") from None


class _Refused(ValueError):
    """Valid for ``json.loads``, not JSON."""


def _not_json(name: str) -> Any:
    raise _Refused(f"not valid JSON: {name} is not a JSON number (numbers must be finite)")
