"""``CustomCodeOracle``: a model that ships its own code and scores pairs itself (HHEM-style).

Such a model loads with ``trust_remote_code=True`` only (:mod:`~ene_core.verifiers.remote_code`),
and its own ``predict(pairs)`` gives each ``(premise, hypothesis)`` the probability that the
premise supports the hypothesis (Vectara's HHEM: the factual-consistency score). There is no
contradiction reading: a pair is supported or not.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from pathlib import Path

from ..errors import InvalidInputError, ModelNotFoundError, OracleError
from .declared import read_declaration
from .nli import _fingerprint, _pick_device, _resolve
from .protocol import Scores
from .remote_code import check_remote_code

__all__ = ["CustomCodeOracle"]


class CustomCodeOracle:
    """A local model with its own ``predict(pairs) -> scores`` (HHEM-2.1-open and alike).

    >>> oracle = CustomCodeOracle("path/to/HHEM-2.1-Open", trust_remote_code=True)

    ``trust_remote_code=True`` must be passed: without it the model is refused with a
    :class:`~ene_core.errors.RemoteCodeError` that names the flag. ``batch_size`` pairs go to
    one ``predict`` call; the default, 1, keeps a pair's score independent of its neighbours
    (a model's own batching usually pads to the longest pair). Its code may load other files
    (HHEM loads the Flan-T5 tokenizer): set ``HF_HUB_OFFLINE=1`` so that it cannot download.
    """

    default_contradiction_threshold: float | None = None

    def __init__(
        self,
        model: str | Path,
        *,
        trust_remote_code: bool = False,
        device: str | None = None,
        batch_size: int = 1,
        threshold: float | None = None,
    ) -> None:
        path = _resolve(model)
        check_remote_code(path, trust_remote_code, model)
        if batch_size < 1:
            raise InvalidInputError(f"batch_size must be a positive int, got {batch_size!r}")
        try:
            import torch
            from transformers import AutoModelForSequenceClassification
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ModelNotFoundError(
                f"CustomCodeOracle needs torch and transformers ({exc.name} is missing): "
                "pip install 'ene[nli]'"
            ) from None
        self._torch = torch
        try:
            self.model = AutoModelForSequenceClassification.from_pretrained(
                str(path), local_files_only=True, trust_remote_code=True
            )
        except (OSError, ValueError) as exc:
            raise ModelNotFoundError(
                f"could not load a custom-code model from {str(model)!r} ({exc})"
            ) from None
        if not callable(getattr(self.model, "predict", None)):
            raise OracleError(
                f"model {str(model)!r} has no predict(pairs) method: for a sequence-"
                "classification NLI model use NLIOracle"
            )
        self.device = _pick_device(torch, device)
        self.model.to(self.device).eval()
        self.batch_size = int(batch_size)
        self.name = str(model)
        self.revision = getattr(self.model.config, "_commit_hash", None) or _fingerprint(path)
        declared = read_declaration(path).only("CustomCodeOracle", "threshold", "rules")
        self.default_threshold = threshold if threshold is not None else declared.threshold
        self.rules: frozenset[str] = declared.rules or frozenset()  # none unless declared
        tokenizer = getattr(self.model, "tokenizer", None)
        self._tokenizer = tokenizer if callable(tokenizer) else None
        self._lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        if self._tokenizer is not None:
            return len(self._tokenizer(text, add_special_tokens=False)["input_ids"])
        return len(text.split())

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        out: list[Scores] = []
        with self._lock, self._torch.inference_mode():
            for s in range(0, len(pairs), self.batch_size):
                part = [(p, h) for p, h in pairs[s : s + self.batch_size]]
                found = self.model.predict(part)
                values = found.tolist() if hasattr(found, "tolist") else list(found)
                if len(values) != len(part):
                    raise OracleError(
                        f"model {self.name!r} gave {len(values)} scores for {len(part)} pairs"
                    )
                for value in values:
                    entail = float(value)
                    if not math.isfinite(entail) or not 0.0 <= entail <= 1.0:
                        raise OracleError(f"model {self.name!r} gave {value!r}, not a probability")
                    out.append(Scores(entail, 0.0))
        return out
