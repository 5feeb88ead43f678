"""``ene calibrate``: choose a verifier's τ and τ_c on labelled cases and write a profile.

Input: JSON Lines, each an ``ene eval`` request (``contexts``, or ``chunks`` as in the
benchmark files) plus ``claims``: the gold status of each checkable claim of the answer, in
order (``{"text": ..., "status": "supported" | "contradicted" | "unsupported"}``; ``text``
optional, checked against the engine's claim when given). The cases are split into dev and
test by a digest of their ids (:func:`~ene_core.verifiers.profile.split_ids`); every candidate
(τ, τ_c) runs the engine on dev (the verifier's scores cached, so each pair is scored once), the
best is chosen there (:func:`~ene_core.verifiers.profile.choose_thresholds`), and only then is
the test part run, at the chosen thresholds and the verifier's defaults.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..engine.necessity import NecessityEngine
from ..engine.request import Request
from ..engine.scoring import ScoreCache
from ..errors import EneError, InvalidInputError
from ..verifiers.profile import STATUSES, VerifierProfile, choose_thresholds, confusion, split_ids
from ..verifiers.protocol import SupportOracle


@dataclass(frozen=True)
class LabelledCase:
    id: str
    request: Request
    gold: tuple[tuple[str | None, str], ...]  # (claim text or None, status) per checkable claim


def read_cases(path: str) -> tuple[list[LabelledCase], list[str]]:
    """The labelled cases of a JSONL file, and a message for each line that is not one."""
    cases: list[LabelledCase] = []
    problems: list[str] = []
    seen: set[str] = set()
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                case = _case(json.loads(line), number)
            except (ValueError, TypeError, KeyError) as exc:
                problems.append(f"line {number}: {exc}")
                continue
            if case.id in seen:
                problems.append(f"line {number}: id {case.id!r} again (ids must be unique)")
                continue
            seen.add(case.id)
            cases.append(case)
    return cases, problems


def _case(row: Any, number: int) -> LabelledCase:
    if not isinstance(row, dict):
        raise InvalidInputError("not a JSON object")
    item = dict(row)
    if "contexts" not in item and "chunks" in item:
        item["contexts"] = item.pop("chunks")
    claims = item.pop("claims", None)
    if not isinstance(claims, list) or not claims:
        raise InvalidInputError("no 'claims' (the gold status of each claim)")
    gold = []
    for claim in claims:
        status = claim.get("status") if isinstance(claim, dict) else claim
        if status not in STATUSES:
            raise InvalidInputError(f"a claim's status is {status!r}, not one of {STATUSES}")
        text = claim.get("text") if isinstance(claim, dict) else None
        gold.append((text if isinstance(text, str) else None, status))
    case_id = str(item.get("id") if item.get("id") is not None else f"line-{number}")
    item["id"] = case_id
    return LabelledCase(case_id, Request.from_mapping(item), tuple(gold))


def statuses(
    engine: NecessityEngine, cases: Sequence[LabelledCase]
) -> tuple[list[str], list[str], list[str]]:
    """Gold and predicted statuses of every claim of ``cases`` (claims of a case whose claims
    do not line up with the gold, or whose evaluation failed, are left out: the messages)."""
    gold: list[str] = []
    predicted: list[str] = []
    problems: list[str] = []
    outcomes = engine.evaluate_many([c.request for c in cases], return_exceptions=True)
    for case, eng in zip(cases, outcomes, strict=True):
        if isinstance(eng, BaseException):
            problems.append(f"{case.id}: {type(eng).__name__}: {eng}")
            continue
        claims = [c for c in eng.claims if c.checkable]
        texts = [t for t, _ in case.gold]
        if len(claims) != len(case.gold) or any(
            t is not None and t != c.text for t, c in zip(texts, claims, strict=True)
        ):
            problems.append(
                f"{case.id}: {len(case.gold)} gold claims, the engine reads {len(claims)} "
                "(or other texts): check the claims' order and text"
            )
            continue
        gold += [s for _, s in case.gold]
        predicted += [c.status or "unsupported" for c in claims]
    return gold, predicted, problems


def grid(step: float) -> list[float]:
    """Candidate thresholds: ``step``, ``2 * step``, ... below 1."""
    if not 0.0 < step < 0.5:
        raise EneError(f"--grid must be in (0, 0.5), got {step}")
    return [round(step * n, 4) for n in range(1, round(1 / step)) if step * n < 1.0]


def calibrate(
    oracle: SupportOracle,
    cases: Sequence[LabelledCase],
    *,
    make_engine: Callable[[float | None, float | None], NecessityEngine],
    taus: Sequence[float],
    test_share: float = 0.3,
    seed: int = 0,
    max_false_contradictions: float = 0.05,
    source: str | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> VerifierProfile:
    """Choose τ and τ_c on the dev part of ``cases``; score the test part once, at the chosen
    thresholds and at the verifier's defaults; the profile. ``make_engine(τ, τ_c)`` builds an
    engine on ``oracle`` (``None``: its defaults)."""
    dev_ids, test_ids = split_ids([c.id for c in cases], test_share, seed)
    dev = [c for c in cases if c.id in dev_ids]
    test = [c for c in cases if c.id in test_ids]
    if not dev or not test:
        raise EneError("calibration needs at least two labelled cases (a dev and a test part)")
    cache = ScoreCache(1 << 20)  # every candidate reads the verifier's scores once
    said: set[str] = set()

    def run(tau: float | None, tau_c: float | None, part: list[LabelledCase]) -> dict[str, Any]:
        engine = make_engine(tau, tau_c)
        engine.cache = cache
        try:
            gold, predicted, problems = statuses(engine, part)
        finally:
            engine.close()
        for problem in problems:  # the same at every candidate: said once
            if problem not in said:
                said.add(problem)
                say(f"skipped {problem}")
        result = confusion(gold, predicted)
        result["cases"] = len(part)
        return result

    results = {}
    for tau in taus:
        for tau_c in taus:
            results[tau, tau_c] = run(tau, tau_c, dev)
    (tau, tau_c), met = choose_thresholds(results, max_false_contradictions)
    default = make_engine(None, None)
    defaults = (default.threshold, default.contradiction_threshold)
    default.close()
    split = {
        "seed": seed,
        "test_share": test_share,
        "dev_cases": len(dev),
        "test_cases": len(test),
        "candidates": len(results),
        "input": source,
        "default_thresholds": list(defaults),
        "default_dev": _brief(run(*defaults, dev)),
        "default_test": _brief(run(*defaults, test)),
    }
    return VerifierProfile(
        verifier=oracle.name,
        revision=oracle.revision,
        threshold=tau,
        contradiction_threshold=tau_c,
        max_false_contradictions=max_false_contradictions,
        dev=results[tau, tau_c],
        test=run(tau, tau_c, test),
        split=split,
        cap_met=met,
    )


def _brief(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "matrix"}


def summary(profile: VerifierProfile) -> list[str]:
    """The lines ``ene calibrate`` prints: the choice, and dev and test side by side."""
    split = profile.split

    def line(name: str, r: dict[str, Any]) -> str:
        return (
            f"  {name:<5} {r['right']}/{r['claims']} claims right ({r['accuracy']}), "
            f"{r['supported_to_contradicted']} supported called contradicted "
            f"({r['false_contradiction_rate']:.1%} of supported)"
        )

    tau0, tau_c0 = split["default_thresholds"]
    cap = f"at most {profile.max_false_contradictions:.1%} of supported called contradicted"
    return [
        f"dev {split['dev_cases']} cases, test {split['test_cases']} cases "
        f"(seed {split['seed']}, test share {split['test_share']}); "
        f"{split['candidates']} candidates scored on dev only",
        f"chosen on dev: tau={profile.threshold:g} tau_c={profile.contradiction_threshold:g} "
        f"({cap}{'' if profile.cap_met else ': no candidate met it, fewest chosen'})",
        line("dev", profile.dev),
        line("test", profile.test),
        f"the verifier's defaults (tau={tau0:g} tau_c={tau_c0:g}):",
        line("dev", split["default_dev"]),
        line("test", split["default_test"]),
    ]


def file_digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def source_of(path: str) -> str:
    return f"{os.path.basename(path)} (sha256 {file_digest(path)})"
