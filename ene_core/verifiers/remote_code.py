"""Models that ship their own Python code (HHEM-style): run only with an explicit
``trust_remote_code=True``.

A model directory whose ``config.json`` (or ``tokenizer_config.json``) names classes in its own
modules (``auto_map``) runs that code when it loads. :func:`check_remote_code` refuses it with a
:class:`~ene_core.errors.RemoteCodeError` that names the flag unless the caller passed
``trust_remote_code=True``; a field in ``ene_verifier.json`` is not enough: the person running
ENE decides.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import RemoteCodeError

__all__ = ["check_remote_code", "remote_code"]

_CONFIGS = ("config.json", "tokenizer_config.json")


def remote_code(path: Path | str) -> list[str]:
    """The classes of its own code a local model directory names (``auto_map``); ``[]`` for a
    model that needs none, or a hub id (transformers asks about those itself)."""
    if not isinstance(path, Path):
        from huggingface_hub import try_to_load_from_cache

        found: list[str] = []
        for name in _CONFIGS:
            try:
                cached = try_to_load_from_cache(str(path), name)
            except Exception:  # an id the hub library rejects: transformers says why
                continue
            if isinstance(cached, str):
                found += _auto_map(Path(cached))
        return found
    return [c for name in _CONFIGS for c in _auto_map(path / name)]


def _auto_map(file: Path) -> list[str]:
    try:
        config: Any = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    auto = config.get("auto_map") if isinstance(config, dict) else None
    if not isinstance(auto, dict):
        return []
    out = []
    for value in auto.values():
        out += [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)]
    return out


def check_remote_code(path: Path | str, trust_remote_code: bool, model: Any = None) -> None:
    """Raise :class:`RemoteCodeError` when the model at ``path`` ships code and
    ``trust_remote_code`` is not ``True``."""
    if trust_remote_code is True:
        return
    classes = remote_code(path)
    if classes:
        where = str(model if model is not None else path)
        declared = isinstance(path, Path) and '"trust_remote_code"' in _text(
            path / "ene_verifier.json"
        )
        raise RemoteCodeError(
            f"model {where!r} runs its own Python code ({', '.join(sorted(set(classes)))}): "
            "pass trust_remote_code=True (--trust-remote-code) if you trust it; ENE never runs "
            "a model's code unasked"
            + (" (its ene_verifier.json cannot say so for you)" if declared else "")
        )


def _text(file: Path) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except OSError:
        return ""
