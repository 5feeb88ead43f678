"""The engine flags shared by ``ene eval``, ``ene evaluate``, ``ene serve`` and the Ray backend.

:func:`engine_options` reads them from the parsed command line into a plain dict (it crosses
process boundaries: Ray actors, Serve replicas), and :func:`build_engine` builds the engine they
ask for: a :class:`~ene_core.NecessityEngine` in this process, or with ``--remote URL`` a
:class:`~ene_core.service.remote.RemoteEngine` on an ``ene serve`` service.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..errors import EneError

if TYPE_CHECKING:
    from ..engine.necessity import Engine
    from ..verifiers.profile import VerifierProfile


def build_engine(args: argparse.Namespace) -> Engine:
    """The engine the command line asked for (``--oracle keyword`` needs no model, ``--oracle
    judge`` an OpenAI-compatible server, ``--oracle seq2seq`` a yes/no sequence-to-sequence
    model, ``--oracle custom`` a model with its own code and ``--trust-remote-code``;
    ``--cascade KIND`` sends the pairs the first verifier is unsure of to a second;
    ``--verifier-profile`` sets the thresholds; ``--rules`` switches the engine's rules over the
    verifier's own; ``--remote URL`` is an ``ene serve`` service, whose own verifier is used)."""
    if getattr(args, "remote", None):
        from .remote import RemoteEngine

        chosen = [
            "--" + name.replace("_", "-")
            for name in VERIFIER_OPTIONS
            if getattr(args, name, None) is not None
        ]
        if chosen:
            raise EneError(
                f"with --remote the service's verifier decides: pass {', '.join(chosen)} to "
                "`ene serve` instead, or drop --remote"
            )
        return RemoteEngine(args.remote, timeout=args.remote_timeout)
    from ..engine.necessity import NecessityEngine

    citation_base = getattr(args, "citation_base", None)
    base = 1 if citation_base is None else citation_base
    tau = getattr(args, "threshold", None)
    contra = getattr(args, "contradiction_threshold", None)
    profile = _profile(getattr(args, "verifier_profile", None))
    oracle = _oracle(args, getattr(args, "oracle", None) or "nli", getattr(args, "model", None))
    then = getattr(args, "cascade", None)
    if then:
        from ..verifiers.cascade import Cascade

        band = getattr(args, "cascade_band", None)
        oracle = Cascade(
            oracle,
            _oracle(args, then, getattr(args, "cascade_model", None)),
            band=0.1 if band is None else band,
            threshold=profile.threshold if profile is not None else tau,
            contradiction_threshold=profile.contradiction_threshold if profile else contra,
        )
    return NecessityEngine(
        oracle,
        tau,
        contradiction_threshold=contra,
        citation_base=base,
        profile=profile,
        rules=getattr(args, "rules", None),
    )


def _oracle(args: argparse.Namespace, kind: str, model: str | None) -> Any:
    """One verifier of the command line: ``nli`` (``model``), ``keyword`` or ``judge``."""
    if kind == "keyword":
        from ..verifiers.keyword import KeywordOracle

        return KeywordOracle()
    if kind == "judge":
        from ..verifiers.llm_judge import KEY_ENV, LLMJudge

        name = getattr(args, "judge_model", None)
        if not name:
            raise EneError("the LLM judge needs --judge-model NAME (the server's model name)")
        optional = {
            "base_url": getattr(args, "judge_url", None),
            "max_concurrency": getattr(args, "judge_concurrency", None),
            "timeout": getattr(args, "judge_timeout", None),
            "cache_dir": getattr(args, "judge_cache", None),
        }
        return LLMJudge(
            name,
            api_key_env=getattr(args, "judge_key_env", None) or KEY_ENV,
            three_way=bool(getattr(args, "judge_three_way", False)),
            **{k: v for k, v in optional.items() if v is not None},
        )
    trust = bool(getattr(args, "trust_remote_code", False))
    device = getattr(args, "device", None)
    if kind in ("seq2seq", "custom") and not model:
        raise EneError(f"--oracle {kind} needs --model DIR (a local model directory)")
    if kind == "seq2seq" and model:
        from ..verifiers.seq2seq import DEFAULT_PROMPT, Seq2SeqOracle

        answers = (getattr(args, "seq2seq_answers", None) or "yes,no").split(",")
        if len(answers) not in (2, 3):
            raise EneError("--seq2seq-answers takes YES,NO or YES,NO,UNCLEAR")
        return Seq2SeqOracle(
            model,
            prompt=getattr(args, "seq2seq_prompt", None) or DEFAULT_PROMPT,
            yes=answers[0],
            no=answers[1],
            unclear=answers[2] if len(answers) == 3 else None,
            device=device,
            batch_size=getattr(args, "batch_size", None),
            trust_remote_code=trust,
        )
    if kind == "custom" and model:
        from ..verifiers.custom import CustomCodeOracle

        return CustomCodeOracle(model, trust_remote_code=trust, device=device)
    if kind != "nli":
        raise EneError(f"unknown verifier {kind!r}: nli, keyword, judge, seq2seq or custom")
    from ..verifiers.nli import NLIOracle

    return NLIOracle(
        model,
        device=device,
        batch_size=getattr(args, "batch_size", None),
        input=getattr(args, "nli_input", None),
        window=getattr(args, "nli_window", None),
        stride=getattr(args, "nli_stride", None),
        trust_remote_code=trust,
    )


def _profile(value: Any) -> VerifierProfile | None:
    """``--verifier-profile``: a path here, the profile's content once it crossed to a Ray
    actor or a Serve replica (:func:`engine_options`)."""
    if value is None:
        return None
    from ..verifiers.profile import VerifierProfile

    if isinstance(value, dict):
        return VerifierProfile.from_dict(value)
    return VerifierProfile.read(value)


ENGINE_OPTIONS = (
    "oracle",
    "model",
    "threshold",
    "contradiction_threshold",
    "batch_size",
    "device",
    "citation_base",
    "verifier_profile",
    "judge_model",
    "judge_url",
    "judge_key_env",
    "judge_concurrency",
    "judge_timeout",
    "judge_cache",
    "judge_three_way",
    "cascade",
    "cascade_band",
    "cascade_model",
    "rules",
    "trust_remote_code",
    "seq2seq_prompt",
    "seq2seq_answers",
    "nli_input",
    "nli_window",
    "nli_stride",
)
# the flags that choose the verdicts: an ``ene serve`` service's own, so refused with --remote
VERIFIER_OPTIONS = (
    "model",
    "threshold",
    "contradiction_threshold",
    "verifier_profile",
    "judge_model",
    "cascade",
    "rules",
    "seq2seq_prompt",
    "seq2seq_answers",
    "nli_input",
    "nli_window",
)


def engine_options(args: argparse.Namespace) -> dict[str, Any]:
    """The engine flags as a plain dict: ``build_engine(argparse.Namespace(**options))``. A
    profile travels as its content (Ray actors and Serve replicas may not see the file); the
    judge's key never does (each process reads it from the environment)."""
    options = {name: getattr(args, name, None) for name in ENGINE_OPTIONS}
    profile = _profile(options["verifier_profile"])
    options["verifier_profile"] = profile.to_dict() if profile is not None else None
    return options
