"""``ene_verifier.json``: what a model directory declares about how ENE should run it.

A small JSON object beside ``config.json``; every field is optional and an argument given in
Python or on the command line wins over it::

    {"input": "single", "separator": "<sep>", "window": 512, "threshold": 0.5,
     "rules": [], "prompt": "...{premise}...{hypothesis}...", "answers": ["yes", "no"]}

``input``: ``"pair"`` (the tokenizer's pair encoding, the default) or ``"single"`` (one string:
document, separator, claim; grounding models such as HHEM read that); ``separator``: the text
between them (default: the tokenizer's ``sep_token``); ``window``: the premise is split into
windows of that many tokens, each scored with the claim, and the most entailing window counts
(grounding models' long-document strategy); ``stride``: tokens between window starts (default
``window``); ``threshold`` / ``contradiction_threshold``: the model's calibrated τ / τ_c;
``rules``: the engine's rules that apply (names of :data:`~ene_core.verifiers.protocol.RULES`);
``prompt`` / ``answers``: a seq2seq model's prompt and answer words. ``trust_remote_code`` is
never read from here: the person running ENE passes it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError
from .protocol import RULES

__all__ = ["DECLARATION", "Declaration", "read_declaration"]

DECLARATION = "ene_verifier.json"

_FIELDS = {
    "input",
    "separator",
    "window",
    "stride",
    "threshold",
    "contradiction_threshold",
    "rules",
    "prompt",
    "answers",
    "trust_remote_code",
    "comment",
}


@dataclass(frozen=True)
class Declaration:
    """The fields of a model's ``ene_verifier.json`` (``None``: not declared)."""

    input: str | None = None
    separator: str | None = None
    window: int | None = None
    stride: int | None = None
    threshold: float | None = None
    contradiction_threshold: float | None = None
    rules: frozenset[str] | None = None
    prompt: str | None = None
    answers: tuple[str, ...] | None = None

    def only(self, reader: str, *fields: str) -> Declaration:
        """This declaration, checked to declare none but ``fields``: what ``reader`` reads (a
        field it would ignore is an :class:`~ene_core.errors.InvalidInputError`, never
        silently dropped)."""
        extra = [
            name
            for name in self.__dataclass_fields__
            if name not in fields and getattr(self, name) is not None
        ]
        if extra:
            raise InvalidInputError(
                f"{DECLARATION} declares {', '.join(extra)}, which {reader} does not read "
                f"(it reads {', '.join(fields)})"
            )
        return self


def read_declaration(path: Path | str) -> Declaration:
    """The declaration beside a local model's ``config.json`` (empty for a hub id or a model
    without one); an :class:`~ene_core.errors.InvalidInputError` that names the file and the
    field for anything else than the fields above, with their types."""
    if not isinstance(path, Path):
        return Declaration()
    file = path / DECLARATION
    if not file.exists():
        return Declaration()
    try:
        raw: Any = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"{file}: not a JSON object ({exc})") from None
    if not isinstance(raw, dict):
        raise InvalidInputError(f"{file}: not a JSON object")
    unknown = sorted(set(raw) - _FIELDS)
    if unknown:
        raise InvalidInputError(f"{file}: unknown field(s) {unknown}; known: {sorted(_FIELDS)}")

    def wrong(name: str, expected: str) -> InvalidInputError:
        return InvalidInputError(f"{file}: {name} must be {expected}, got {raw[name]!r}")

    if raw.get("input") not in (None, "pair", "single"):
        raise wrong("input", '"pair" or "single"')
    for name in ("window", "stride"):
        value = raw.get(name)
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or value < 8
        ):
            raise wrong(name, "an int of at least 8 tokens")
    for name in ("threshold", "contradiction_threshold"):
        value = raw.get(name)
        if value is not None and (
            not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value <= 1
        ):
            raise wrong(name, "a number in (0, 1]")
    for name in ("separator", "prompt"):
        if raw.get(name) is not None and not isinstance(raw[name], str):
            raise wrong(name, "a string")
    rules = raw.get("rules")
    if rules is not None and (not isinstance(rules, list) or any(r not in RULES for r in rules)):
        raise wrong("rules", f"a list of rule names ({', '.join(RULES)})")
    answers = raw.get("answers")
    if answers is not None and (
        not isinstance(answers, list)
        or len(answers) not in (2, 3)
        or not all(isinstance(a, str) and a for a in answers)
    ):
        raise wrong("answers", "a list of 2 or 3 answer words")
    return Declaration(
        input=raw.get("input"),
        separator=raw.get("separator"),
        window=raw.get("window"),
        stride=raw.get("stride"),
        threshold=None if raw.get("threshold") is None else float(raw["threshold"]),
        contradiction_threshold=(
            None
            if raw.get("contradiction_threshold") is None
            else float(raw["contradiction_threshold"])
        ),
        rules=None if rules is None else frozenset(rules),
        prompt=raw.get("prompt"),
        answers=None if answers is None else tuple(answers),
    )
