"""Calibration profiles: a verifier's thresholds chosen on labelled cases, as a small versioned
JSON file that ``NecessityEngine(profile=...)`` and ``--verifier-profile`` read.

:func:`choose_thresholds` picks τ and τ_c from the claims each candidate pair got right (most
right, with at most ``max_false_contradictions`` of the gold-supported claims called
contradicted); :func:`split_ids` is the deterministic dev / test split. ``ene calibrate`` runs
the engine and writes the profile (:mod:`ene_core.cli.calibrate`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ProfileError

__all__ = [
    "PROFILE_VERSION",
    "VerifierProfile",
    "choose_thresholds",
    "confusion",
    "split_ids",
]

PROFILE_VERSION = 1
STATUSES = ("supported", "contradicted", "unsupported")


@dataclass(frozen=True)
class VerifierProfile:
    """A verifier's calibrated thresholds and how they were chosen.

    ``verifier`` / ``revision``: the verifier's ``name`` / ``revision`` (an engine on another
    verifier refuses the profile); ``dev`` / ``test``: the scores on each part of the split
    (``claims``, ``right``, ``accuracy``, ``supported_to_contradicted``, ...); ``split``: how
    the cases were split; ``cap_met``: whether any candidate kept false contradictions under
    the cap (if not, the one with fewest was chosen).
    """

    verifier: str
    revision: str | None
    threshold: float
    contradiction_threshold: float
    max_false_contradictions: float
    dev: dict[str, Any] = field(default_factory=dict)
    test: dict[str, Any] = field(default_factory=dict)
    split: dict[str, Any] = field(default_factory=dict)
    cap_met: bool = True
    version: int = PROFILE_VERSION

    def to_dict(self) -> dict[str, Any]:
        return {"ene_profile": self.version, **asdict(self)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    @property
    def digest(self) -> str:
        """A short digest of the profile's content (the ENG records it)."""
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def record(self) -> dict[str, Any]:
        """What an ENG records of the profile it was evaluated with."""
        return {
            "version": self.version,
            "digest": self.digest,
            "verifier": self.verifier,
            "threshold": self.threshold,
            "contradiction_threshold": self.contradiction_threshold,
        }

    def write(self, path: str | os.PathLike[str]) -> None:
        target = Path(path)
        temporary = target.with_name(f".{target.name}.tmp")
        temporary.write_text(self.to_json(), encoding="utf-8")
        os.replace(temporary, target)

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> VerifierProfile:
        """Read a profile; :class:`ProfileError` says why one cannot be used."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ProfileError(f"cannot read the verifier profile {path}: {exc}") from None
        return cls.from_dict(data, where=str(path))

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "profile") -> VerifierProfile:
        if not isinstance(data, dict) or "ene_profile" not in data:
            raise ProfileError(f"{where} is not an ENE verifier profile (no 'ene_profile')")
        version = data["ene_profile"]
        if not isinstance(version, int) or version > PROFILE_VERSION:
            raise ProfileError(
                f"{where} is a version {version!r} profile; this ENE reads up to "
                f"{PROFILE_VERSION}: upgrade ene"
            )
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        fields["version"] = version
        try:
            profile = cls(**fields)
            taus = (float(profile.threshold), float(profile.contradiction_threshold))
        except (TypeError, ValueError) as exc:
            raise ProfileError(f"{where}: invalid profile: {exc}") from None
        if not all(0.0 < t <= 1.0 for t in taus) or not isinstance(profile.verifier, str):
            raise ProfileError(f"{where}: thresholds must be in (0, 1] and verifier a name")
        return profile


def split_ids(ids: Iterable[str], test_share: float, seed: int = 0) -> tuple[set[str], set[str]]:
    """A deterministic dev / test split by a digest of each id (independent of file order):
    about ``test_share`` of the ids go to test, at least one to each part when there are two."""
    if not 0.0 < test_share < 1.0:
        raise ProfileError(f"the test share must be in (0, 1), got {test_share}")
    ranked = sorted(
        set(ids), key=lambda i: hashlib.sha256(f"{seed}:{i}".encode("utf-8", "replace")).digest()
    )
    cut = round(len(ranked) * test_share)
    if len(ranked) >= 2:
        cut = min(max(cut, 1), len(ranked) - 1)
    return set(ranked[cut:]), set(ranked[:cut])


def confusion(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, Any]:
    """Claims right, accuracy, supported claims called contradicted, and the confusion matrix
    (``"gold->predicted"`` counts)."""
    pairs = list(zip(gold, predicted, strict=True))
    matrix = {f"{g}->{p}": sum(1 for x in pairs if x == (g, p)) for g in STATUSES for p in STATUSES}
    supported = sum(1 for g in gold if g == "supported")
    false_contra = matrix["supported->contradicted"]
    right = sum(1 for g, p in pairs if g == p)
    return {
        "claims": len(pairs),
        "right": right,
        "accuracy": round(right / len(pairs), 4) if pairs else None,
        "supported_to_contradicted": false_contra,
        "false_contradiction_rate": round(false_contra / supported, 4) if supported else 0.0,
        "matrix": matrix,
    }


def choose_thresholds(
    results: Mapping[tuple[float, float], dict[str, Any]], max_false_contradictions: float
) -> tuple[tuple[float, float], bool]:
    """The (τ, τ_c) whose :func:`confusion` has the most claims right among those calling at
    most ``max_false_contradictions`` of the gold-supported claims contradicted (ties: fewer
    false contradictions, then the lower τ, then the lower τ_c); when none does, the one with
    the fewest false contradictions. Returns it and whether the cap was met."""
    if not results:
        raise ProfileError("no candidate thresholds to choose from")
    within = [
        k for k, r in results.items() if r["false_contradiction_rate"] <= max_false_contradictions
    ]
    if within:
        best = min(
            within,
            key=lambda k: (-results[k]["right"], results[k]["supported_to_contradicted"], k),
        )
        return best, True
    best = min(
        results,
        key=lambda k: (results[k]["supported_to_contradicted"], -results[k]["right"], k),
    )
    return best, False
