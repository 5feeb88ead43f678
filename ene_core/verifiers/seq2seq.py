"""``Seq2SeqOracle``: a sequence-to-sequence model asked yes or no (Flan-T5 style).

The prompt holds the document and the claim; the model takes one decoder step, and the softmax
over its logits for the answer words' tokens (read from the tokenizer, never hard-coded) gives
the probabilities: ``yes`` is entailment; with ``unclear`` given (three answers), ``no`` is
contradiction, else ``no`` is "not entailed" and the contradiction probability is 0.

Determinism: pairs are encoded alone, padded to a length bucket (a multiple of ``bucket_tokens``)
and run in row groups of a fixed size per bucket (partial groups filled with copies), so every
forward pass a pair takes part in has a shape that depends only on that pair, and rows do not
interact: a pair's scores are bitwise the same whatever else is in the batch. On a CPU a fixed
shape is not enough (MKL picks a GEMM's micro-kernel by a row's place in the matrix, see
:class:`~ene_core.verifiers.nli.NLIOracle`), so there each forward pass holds one pair at its own
length, without padding; ``batch_size`` applies on a GPU. (On a tiny T5 on this CPU, groups of 8
and 32 rows gave the same scores alone and together, within 1.8e-7 of one pair per pass, and were
twice as fast; the guarantee is kept instead.) The passes run with ``cpu_threads`` threads
(default 1), as :class:`~ene_core.verifiers.nli.NLIOracle`'s do, so that their last digits do not
follow the machine's core count; ``cpu_threads=None`` leaves torch's setting alone.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path

from ..errors import InvalidInputError, ModelNotFoundError, OracleError
from .declared import read_declaration
from .nli import _fingerprint, _pick_device, _pick_dtype, _resolve, _round_up
from .protocol import Scores
from .remote_code import check_remote_code
from .threads import checked_cpu_threads, threads_held
from .windows import token_offsets

__all__ = ["DEFAULT_PROMPT", "Seq2SeqOracle"]

#: Flan-T5's entailment template ("Premise: ... Hypothesis: ... yes or no")
DEFAULT_PROMPT = (
    "Premise: {premise}\nHypothesis: {hypothesis}\n"
    "Does the premise entail the hypothesis? Answer yes or no."
)


class Seq2SeqOracle:
    """A local sequence-to-sequence model (Flan-T5, T5, BART ...) that answers yes or no.

    >>> oracle = Seq2SeqOracle("path/to/flan-t5-base")
    >>> oracle = Seq2SeqOracle("path/to/model", prompt="{premise}\\nQ: {hypothesis}? A:",
    ...                        yes="Yes", no="No", unclear="Maybe")

    ``prompt`` must hold ``{premise}`` and ``{hypothesis}``. ``yes`` / ``no`` / ``unclear`` are
    answer words (default: the model's ``ene_verifier.json`` ``prompt`` and ``answers``, else
    Flan's prompt and yes / no; :mod:`~ene_core.verifiers.declared`): each is tokenised as the
    model would write it and its first token's logit is read; the first tokens must differ. A
    premise that does not fit ``max_length`` (default: the model's ``n_positions`` or 512) with
    the rest of the prompt is cut at a token and the pair marked truncated (the ENG counts it).
    The engine's rules are off (``rules``) unless its ``ene_verifier.json`` declares some: they
    were tuned with the embedded NLI model.
    """

    default_contradiction_threshold: float | None = None

    def __init__(
        self,
        model: str | Path,
        *,
        prompt: str | None = None,
        yes: str | None = None,
        no: str | None = None,
        unclear: str | None = None,
        device: str | None = None,
        dtype: str | None = None,
        max_length: int | None = None,
        batch_size: int | None = None,
        max_batch_tokens: int | None = None,
        bucket_tokens: int = 16,
        cpu_threads: int | None = 1,
        threshold: float | None = None,
        trust_remote_code: bool = False,
    ) -> None:
        if bucket_tokens < 1:
            raise InvalidInputError(f"bucket_tokens must be a positive int, got {bucket_tokens!r}")
        self.cpu_threads = checked_cpu_threads(cpu_threads)
        path = _resolve(model)
        check_remote_code(path, trust_remote_code, model)
        declared = read_declaration(path).only(
            "Seq2SeqOracle", "prompt", "answers", "threshold", "rules"
        )
        prompt = prompt or declared.prompt or DEFAULT_PROMPT
        for field in ("{premise}", "{hypothesis}"):
            if field not in prompt:
                raise InvalidInputError(f"the prompt must hold {field}: {prompt!r}")
        if yes is None and no is None and unclear is None and declared.answers:
            yes, no, *rest = declared.answers
            unclear = rest[0] if rest else None
        yes, no = yes or "yes", no or "no"
        try:
            import torch
            from transformers import AutoModelForSeq2SeqLM, AutoTokenizer
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ModelNotFoundError(
                f"Seq2SeqOracle needs torch and transformers ({exc.name} is missing): "
                "pip install 'ene[nli]'"
            ) from None
        self._torch = torch
        trust = trust_remote_code is True  # checked above: only ever an explicit True
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(
                str(path), local_files_only=True, trust_remote_code=trust
            )
            self.model = AutoModelForSeq2SeqLM.from_pretrained(
                str(path), local_files_only=True, trust_remote_code=trust
            )
        except (OSError, ValueError) as exc:
            raise ModelNotFoundError(
                f"could not load a sequence-to-sequence model from {str(model)!r} ({exc}): pass "
                "a local directory (or a cached Hugging Face id) of a seq2seq model; ENE never "
                "downloads"
            ) from None
        self.tokenizer.model_max_length = 1 << 30  # we cut the premise ourselves, and record it
        config = self.model.config
        start = getattr(config, "decoder_start_token_id", None)
        if start is None:
            start = getattr(config, "pad_token_id", None)
        if start is None:
            raise OracleError(f"model {str(model)!r} declares no decoder_start_token_id")
        self._start = int(start)
        self._pad = int(self.tokenizer.pad_token_id or 0)
        words = [yes, no] + ([unclear] if unclear is not None else [])
        self.answer_ids = [self._first_token(w) for w in words]
        if len(set(self.answer_ids)) != len(words):
            raise InvalidInputError(
                f"the answer words {words!r} start with the same token: choose words whose "
                "first tokens differ"
            )
        self.three_way = unclear is not None
        self.prompt = prompt
        self.device = _pick_device(torch, device)
        self.dtype = _pick_dtype(torch, self.device, dtype)
        self.model.to(device=self.device, dtype=self.dtype).eval()
        limit = getattr(config, "n_positions", None) or getattr(
            config, "max_position_embeddings", None
        )
        self.max_length = int(max_length or min(limit or 512, 512))
        on_gpu = self.device.type == "cuda"
        self.batch_size = int(batch_size or (32 if on_gpu else 8))
        self.max_batch_tokens = int(max_batch_tokens or (32768 if on_gpu else 512))
        # one pair per forward pass on a CPU (see the module docstring)
        self._batched = on_gpu and self.batch_size > 1
        self.bucket_tokens = int(bucket_tokens)
        self.name = str(model)
        self.revision = getattr(config, "_commit_hash", None) or _fingerprint(path)
        self.default_threshold = threshold if threshold is not None else declared.threshold
        self.rules: frozenset[str] = declared.rules or frozenset()
        self._lock = threading.Lock()

    def _first_token(self, word: str) -> int:
        ids = self.tokenizer(word, add_special_tokens=False).input_ids
        if not ids or ids[0] == self.tokenizer.unk_token_id:
            raise InvalidInputError(f"the tokenizer has no token for the answer word {word!r}")
        return int(ids[0])

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False).input_ids)

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        if not pairs:
            return []
        encoded = [self._encode(p, h) for p, h in pairs]
        out: list[Scores] = [Scores(0.0, 0.0)] * len(pairs)
        buckets: dict[int, list[int]] = {}
        for i, (ids, _) in enumerate(encoded):
            length = min(_round_up(len(ids), self.bucket_tokens), self.max_length)
            buckets.setdefault(length if self._batched else len(ids), []).append(i)
        held = (
            threads_held(self._torch, self.cpu_threads)
            if self.cpu_threads is not None and self.device.type == "cpu"
            else nullcontext()
        )
        with self._lock, self._torch.inference_mode(), held:
            for length in sorted(buckets):
                members = buckets[length]
                rows = max(1, min(self.batch_size, self.max_batch_tokens // length))
                rows = rows if self._batched else 1
                for s in range(0, len(members), rows):
                    part = members[s : s + rows]
                    probs = self._forward([encoded[i][0] for i in part], length, rows)
                    for i, row in zip(part, probs, strict=False):
                        entail = row[0]
                        contra = row[1] if self.three_way else 0.0
                        out[i] = Scores(entail, contra, truncated=encoded[i][1])
        return out

    def _encode(self, premise: str, hypothesis: str) -> tuple[list[int], bool]:
        """The prompt's input ids, its premise cut at a token where it does not fit."""
        text = self.prompt.format(premise=premise, hypothesis=hypothesis)
        ids = self.tokenizer(text).input_ids
        if len(ids) <= self.max_length:
            return ids, False
        fixed = len(ids) - self.count_tokens(premise)
        room = max(0, self.max_length - fixed - 1)  # a token to spare for merges at the cut
        offsets = token_offsets(self.tokenizer, premise)
        cut = premise[: offsets[room - 1][1]] if room else ""
        ids = self.tokenizer(self.prompt.format(premise=cut, hypothesis=hypothesis)).input_ids
        return ids[: self.max_length], True

    def _forward(self, rows: list[list[int]], length: int, size: int) -> list[list[float]]:
        """Probabilities of the answers for ``rows``: ``rows`` is filled to ``size`` rows with
        copies of its last row and each row padded to ``length``."""
        torch = self._torch
        filled = rows + [rows[-1]] * (size - len(rows))
        ids = torch.full((len(filled), length), self._pad, dtype=torch.long)
        mask = torch.zeros((len(filled), length), dtype=torch.long)
        for r, row in enumerate(filled):
            ids[r, : len(row)] = torch.tensor(row)
            mask[r, : len(row)] = 1
        start = torch.full((len(filled), 1), self._start, dtype=torch.long)
        logits = self.model(
            input_ids=ids.to(self.device),
            attention_mask=mask.to(self.device),
            decoder_input_ids=start.to(self.device),
        ).logits
        picked = logits[: len(rows), 0, self.answer_ids].float().softmax(dim=-1).cpu()
        if not torch.isfinite(picked).all():
            raise OracleError(f"model {self.name!r} produced non-finite probabilities")
        if not self.three_way:
            return picked.tolist()
        # yes, no, unclear -> entailment, contradiction
        return picked[:, :2].tolist()
