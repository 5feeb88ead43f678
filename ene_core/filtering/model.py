"""ChunkFilter: drop the retrieved chunks a question will not need, before generation.

It scores each (question, chunk) pair with a small cross-encoder (the first layers of the shipped
verifier, fine-tuned on which chunks answers' true claims needed) and keeps the chunks at or
above a calibrated threshold, within ``min_keep`` / ``max_keep``. It never returns an empty
selection for a non-empty input, and on any error it keeps every chunk, logs the error and
records it in the decision (and in :attr:`ChunkFilter.errors`).
"""

from __future__ import annotations

import logging
import math
import threading
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..verifiers.encoding import PairEncoder
from ._text import chunk_text
from .lexical import combine, lexical_features
from .network import (
    DEFAULT_FILTER_DIR,
    DELTA_NAME,
    FilterSettings,
    build_network,
    load_delta,
)

logger = logging.getLogger("ene.filter")


@dataclass
class FilterDecision:
    """What one call of :meth:`ChunkFilter.decide` chose.

    ``kept`` and ``dropped`` are input indices in input order; ``scores`` one per chunk (empty
    after an error); ``tokens_kept`` / ``tokens_dropped`` in the filter's tokenizer's tokens;
    ``error`` is ``None`` or why every chunk was kept.
    """

    kept: list[int]
    dropped: list[int]
    scores: list[float]
    threshold: float
    tokens_kept: int = 0
    tokens_dropped: int = 0
    duration_ms: float = 0.0
    error: str | None = None
    model: str = "chunk-filter"
    revision: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def tokens_saved(self) -> int:
        """Tokens the generator will not read: the dropped chunks' tokens."""
        return self.tokens_dropped


def select(
    scores: Sequence[float],
    threshold: float,
    min_keep: int = 1,
    max_keep: int | None = None,
) -> list[int]:
    """The keep rule: indices (input order) of the chunks scoring ``>= threshold``, raised to
    the best ``min_keep`` (at least one when there are chunks) and cut to the best ``max_keep``;
    a NaN score counts as kept."""
    n = len(scores)
    if n == 0:
        return []
    safe = [math.inf if math.isnan(s) else float(s) for s in scores]
    order = sorted(range(n), key=lambda i: (-safe[i], i))
    kept = {i for i in range(n) if safe[i] >= threshold}
    low = min(max(1, min_keep), n)
    if len(kept) < low:
        kept.update(order[:low])
    if max_keep is not None and len(kept) > max(max_keep, low):
        kept = set(o for o in order if o in kept)
        kept = set(sorted(kept, key=lambda i: (-safe[i], i))[: max(max_keep, low)])
    return sorted(kept)


class ChunkFilter:
    """Score and filter retrieved chunks for a question, offline and on the CPU.

    ``ChunkFilter()`` loads the default filter shipped in the package; ``ChunkFilter(path)`` one
    that ``ene train-filter`` wrote. ``threshold``, ``min_keep`` and ``max_keep`` override the
    directory's calibrated values. ``quantize`` (default on the CPU) runs the linear layers in
    int8 (dynamic quantization), about twice as fast with the same choices to within noise.
    Thread-safe: calls are serialised on one lock.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        threshold: float | None = None,
        min_keep: int | None = None,
        max_keep: int | None = None,
        device: str = "cpu",
        quantize: bool | None = None,
        batch_size: int = 32,
    ) -> None:
        from transformers import AutoTokenizer

        self.path = Path(path) if path is not None else DEFAULT_FILTER_DIR
        self.settings = FilterSettings.read(self.path)
        self.threshold = self.settings.threshold if threshold is None else float(threshold)
        self.min_keep = self.settings.min_keep if min_keep is None else int(min_keep)
        self.max_keep = self.settings.max_keep if max_keep is None else int(max_keep)
        if self.min_keep < 1:
            raise ValueError("min_keep must be at least 1: a filter never keeps nothing")
        self.batch_size = batch_size
        self.device = device
        base_dir = self.settings.base_dir()
        self.tokenizer = AutoTokenizer.from_pretrained(base_dir)
        self.tokenizer.model_max_length = 1 << 30  # pairs are cut here (no warning on long chunks)
        # (question, chunk) as the tokenizer pairs them, each text tokenised once
        self._pairs = PairEncoder(self.tokenizer, self.settings.max_length)
        model = build_network(base_dir, self.settings.num_layers)
        load_delta(model, self.path / DELTA_NAME)
        if quantize is None:
            quantize = device == "cpu"
        if quantize:
            model = _quantized(model)
        self.model = model.to(device).eval()
        self.errors = 0
        self.last_error: str | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def revision(self) -> str:
        return self.settings.revision

    def scores(self, question: str, chunks: Sequence[Any]) -> list[float]:
        """One score in [0, 1] per chunk: how likely the answer to ``question`` needs it."""
        texts = [chunk_text(c) for c in chunks]
        if not texts:
            return []
        return self._score(str(question or ""), texts)

    def keep(self, question: str, chunks: Sequence[Any]) -> list[int]:
        """The indices of the chunks to keep, in input order (every chunk on an error)."""
        return self.decide(question, chunks).kept

    def decide(self, question: str, chunks: Sequence[Any]) -> FilterDecision:
        """Score, select and account for one call; never raises for a bad chunk or model
        error (every chunk is kept and the error recorded)."""
        started = time.perf_counter()
        chunks = list(chunks)
        tokens = [0] * len(chunks)
        try:
            texts = [chunk_text(c) for c in chunks]
            scores, tokens = self._score_counted(str(question or ""), texts)
            kept = select(scores, self.threshold, self.min_keep, self.max_keep)
            error = None
        except Exception as exc:  # fail open: never lose evidence to a filter bug
            self.errors += 1
            self.last_error = f"{type(exc).__name__}: {exc}"
            logger.warning("chunk filter failed, keeping all %d chunks: %s", len(chunks), exc)
            scores, kept, error = [], list(range(len(chunks))), self.last_error
        kept_set = set(kept)
        dropped = [i for i in range(len(chunks)) if i not in kept_set]
        return FilterDecision(
            kept=kept,
            dropped=dropped,
            scores=scores,
            threshold=self.threshold,
            tokens_kept=sum(tokens[i] for i in kept),
            tokens_dropped=sum(tokens[i] for i in dropped),
            duration_ms=(time.perf_counter() - started) * 1000.0,
            error=error,
            model=self.name,
            revision=self.revision,
        )

    def _score_counted(self, question: str, texts: list[str]) -> tuple[list[float], list[int]]:
        """Each chunk's score and its token count, every text tokenised once."""
        if not texts:
            return [], []
        return self._score(question, texts), self._pairs.count(texts)

    def _score(self, question: str, texts: list[str]) -> list[float]:
        import torch

        pairs = self._pairs.encode([(question,)] * len(texts), texts)
        out: list[float] = []
        with self._lock, torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                rows = range(start, min(start + self.batch_size, len(texts)))
                inputs = _padded(pairs.ids, pairs.types, rows, self.tokenizer.pad_token_id or 0)
                tensors = {k: torch.tensor(v, device=self.device) for k, v in inputs.items()}
                out.extend(self.model(**tensors).logits[:, 0].float().tolist())
        weights = self.settings.combine
        if weights:
            features = lexical_features(question, texts)
            out = [combine(x, row, weights) for x, row in zip(out, features, strict=True)]
        return [_sigmoid(x) for x in out]


def _padded(
    ids: list[list[int]], types: list[list[int]] | None, rows: range, pad: int
) -> dict[str, list[list[int]]]:
    """The model inputs of ``rows``, padded on the right to the longest, as the tokenizer pads."""
    width = max(len(ids[i]) for i in rows)
    fill = [width - len(ids[i]) for i in rows]
    inputs = {
        "input_ids": [ids[i] + [pad] * f for i, f in zip(rows, fill, strict=True)],
        "attention_mask": [[1] * len(ids[i]) + [0] * f for i, f in zip(rows, fill, strict=True)],
    }
    if types is not None:
        inputs["token_type_ids"] = [types[i] + [0] * f for i, f in zip(rows, fill, strict=True)]
    return inputs


def _quantized(model: Any) -> Any:
    """``model`` with int8 dynamic quantization of its linear layers, or ``model`` itself
    where this torch cannot (the eager API is deprecated; it still ships in torch 2.13)."""
    import torch

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return torch.ao.quantization.quantize_dynamic(
                model, {torch.nn.Linear}, dtype=torch.qint8
            )
    except Exception as exc:  # no quantized engine, or the API is gone
        logger.info("int8 quantization unavailable (%s): the filter runs in float32", exc)
        return model


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)
