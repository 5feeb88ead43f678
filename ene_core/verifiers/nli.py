"""Support oracles: score (premise, hypothesis) pairs with entailment/contradiction probabilities.

:class:`NLIOracle` runs any Hugging Face sequence-classification NLI model through
``transformers`` + ``torch`` (imported lazily, so ``import ene_core`` needs neither).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import os
import re
import threading
from array import array
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import (
    InvalidInputError,
    LabelMappingError,
    ModelNotFoundError,
    OracleError,
    OracleOutOfMemoryError,
)
from .declared import read_declaration
from .encoding import Encoded, PairEncoder
from .protocol import EMBEDDED_RULES, Scores
from .remote_code import check_remote_code
from .threads import checked_cpu_threads, own_threads, threads_held
from .windows import aggregate, premise_windows, single_text

logger = logging.getLogger("ene")

DEFAULT_MODEL_DIR = Path(__file__).parents[1] / "models" / "ene-nli-mini"
DEVICE_ENV = "ENE_DEVICE"  # "cpu", "cuda", "cuda:1", ... or "auto"; the device= argument wins

_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "half": "float16", "fp32": "float32"}

_ENTAIL = {"entailment", "entail", "entails", "entailed", "yes", "supported", "support"}
_NEUTRAL = {"neutral", "unknown", "undetermined", "unsupported"}
_CONTRA = {"contradiction", "contradict", "contradicts", "contradicted", "no", "refuted"}
_NOT_ENTAIL = {
    "not_entailment",
    "non_entailment",
    "not_entailed",
    "not entailment",
    "no_entailment",
}


def label_indices(id2label: dict[Any, str]) -> tuple[int, int | None]:
    """``(entailment index, contradiction index or None)`` from a model's ``id2label``."""
    entail = contra = None
    normalised = {
        int(i): str(label).strip().lower().replace("-", "_") for i, label in id2label.items()
    }
    for i, label in normalised.items():
        if label in _ENTAIL:
            entail = i
        elif label in _CONTRA:
            contra = i
    known = _ENTAIL | _NEUTRAL | _CONTRA | _NOT_ENTAIL
    if entail is None or any(label not in known for label in normalised.values()):
        raise LabelMappingError(
            f"cannot map config.id2label {id2label!r} to entailment/neutral/contradiction: "
            "set it in the model's config.json, e.g. "
            '{"0": "entailment", "1": "neutral", "2": "contradiction"}'
        )
    if len(normalised) == 3 and contra is None:
        raise LabelMappingError(f"3-way model without a contradiction label: {id2label!r}")
    return entail, contra


class NLIOracle:
    """A Hugging Face NLI cross-encoder, batched, on GPU when there is one.

    >>> oracle = NLIOracle()                       # the embedded default verifier, offline
    >>> oracle = NLIOracle("path/to/model", device="cuda")

    Batching: pairs are tokenized alone, padded to a length bucket (a multiple of
    ``bucket_tokens``) and run in row groups of a fixed size per bucket (``min(batch_size,
    max_batch_tokens // length)``, partial groups filled with copies), so every forward pass a
    pair takes part in has a shape that depends only on that pair. Rows do not interact, so a
    pair's probabilities are bitwise the same whatever else is in the batch (the determinism
    guarantee). On a CPU a fixed shape is not enough: MKL picks a GEMM's micro-kernel (full or
    edge tile) and thread split by a row's place in the matrix, so a row's last digits can
    depend on its position in the group (on AVX2 code paths often, on AVX-512 for some shapes).
    There every deterministic forward pass holds one pair at its exact length (``batch_size``,
    ``max_batch_tokens`` and ``bucket_tokens`` then apply to ``deterministic=False`` only), so a
    pair's arithmetic depends on that pair alone on any CPU. ``deterministic=False`` trades the
    guarantee for less padding: length-sorted groups padded to their longest pair, whose last
    digits can then depend on the neighbours.

    Threads: MKL also splits a small GEMM's sum between threads (a one-pair pass's feed-forward
    output, 1,536 terms), so a pair's last digits would depend on torch's thread count, which
    defaults to the machine's cores. A deterministic CPU call therefore runs each pass with
    ``cpu_threads`` threads (default 1: the same digits on a 2-core laptop and a 64-core
    server), ``torch.get_num_threads() // cpu_threads`` passes at once on the oracle's worker
    threads (on a 2-core CPU two one-thread passes at once read more pairs per second than one
    two-thread pass), or one at a time on the calling thread when that is one. Each of those
    threads holds its own OpenMP and MKL count, so torch's process-wide setting and the host's
    other threads are left alone; where torch has no MKL (no per-thread count), torch's setting
    is changed for the call and set back after it, under a lock every oracle shares, and other
    threads of the process see it meanwhile. ``cpu_threads=None`` leaves every setting alone and
    runs one pass at a time (the digits then follow torch's thread count).

    Device: ``device=``, else the ``ENE_DEVICE`` environment variable, else CUDA when available.
    On CUDA the weights run in bfloat16 (float16 without bf16 support; ``dtype=`` overrides) with
    the softmax in float32; each call's tokens go over in one pinned, non-blocking copy, the
    groups are padded on the device and the results come back in one transfer.

    ``overlap`` (default: on CUDA only) lets the engine plan while the model runs: it scores a
    round on a worker thread and steps each request as soon as its pairs are scored (see
    :meth:`score_parts`). On a CPU the planning would take cores from the model.

    Out of memory: the group is split in half and retried, down to one row; the size that
    fitted is kept for the oracle's lifetime (a token cap, ``oom_token_cap``, counted in
    ``oom_splits``), so the fixed-shape rule holds from then on, although pairs scored before
    and after a split may differ in their last digits. If one row does not fit, the cap is left
    as it was and :class:`OracleOutOfMemoryError` (an ``OracleError``, recorded by the engine
    like any oracle failure) says what to lower.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        device: str | None = None,
        dtype: str | None = None,
        max_length: int | None = None,
        batch_size: int | None = None,
        max_batch_tokens: int | None = None,
        bucket_tokens: int = 16,
        deterministic: bool = True,
        cpu_threads: int | None = 1,
        overlap: bool | None = None,
        input: str | None = None,
        separator: str | None = None,
        window: int | None = None,
        stride: int | None = None,
        trust_remote_code: bool = False,
    ) -> None:
        path = _resolve(model)  # before importing torch: a wrong path fails at once
        check_remote_code(path, trust_remote_code, model)
        declared = read_declaration(path).only(
            "NLIOracle",
            "input",
            "separator",
            "window",
            "stride",
            "threshold",
            "contradiction_threshold",
            "rules",
        )
        self.input = input or declared.input or "pair"
        if self.input not in ("pair", "single"):
            raise InvalidInputError(f"input must be 'pair' or 'single', got {self.input!r}")
        self.window = window if window is not None else declared.window
        self.stride = stride if stride is not None else declared.stride
        for name, value in (("window", self.window), ("stride", self.stride)):
            if value is not None and (not isinstance(value, int) or value < 1):
                raise InvalidInputError(f"{name} must be a positive int, got {value!r}")
        trust = trust_remote_code is True  # checked above: only ever an explicit True
        try:
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ModelNotFoundError(
                f"NLIOracle needs torch and transformers ({exc.name} is missing): "
                "pip install 'ene[nli]'"
            ) from None
        self._torch = torch
        from transformers.utils import logging as hf_logging

        bars = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()  # a local load needs no progress bar on stderr
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(
                str(path), local_files_only=True, trust_remote_code=trust
            )
            self.model = AutoModelForSequenceClassification.from_pretrained(
                str(path), local_files_only=True, trust_remote_code=trust
            )
        except OSError as exc:
            where = str(model or path)
            if isinstance(path, str):  # a hub id that is not in the local cache
                raise ModelNotFoundError(
                    f"model {where!r} is neither a local directory nor in the local Hugging "
                    f"Face cache: {_EXPECTED}"
                ) from None
            raise ModelNotFoundError(
                f"could not load an NLI model from {where!r} ({exc}): {_EXPECTED}"
            ) from None
        finally:
            if bars:
                hf_logging.enable_progress_bar()
        self.tokenizer.model_max_length = 1 << 30  # we truncate ourselves, and record it
        config = self.model.config
        self.entail_index, self.contra_index = label_indices(config.id2label)
        self.device = _pick_device(torch, device)
        self.dtype = _pick_dtype(torch, self.device, dtype)
        self.model.to(device=self.device, dtype=self.dtype).eval()
        limit = getattr(config, "max_position_embeddings", 512) or 512
        self.max_length = int(
            max_length or getattr(config, "ene_max_length", None) or min(limit, 512)
        )
        on_gpu = self.device.type == "cuda"
        # A GPU has idle parallelism and gets big groups; a CPU gains little from batching
        # (and forwards one pair per pass when deterministic, see _rows).
        self.batch_size = batch_size or (64 if on_gpu else 8)
        self.max_batch_tokens = max_batch_tokens or (32768 if on_gpu else 512)
        if bucket_tokens < 1:
            raise InvalidInputError(f"bucket_tokens must be a positive int, got {bucket_tokens!r}")
        self.bucket_tokens = int(bucket_tokens)
        self.deterministic = deterministic
        self.cpu_threads = checked_cpu_threads(cpu_threads)
        self.overlap = on_gpu if overlap is None else bool(overlap)
        self.name = "ene-nli-mini" if model is None else str(model)
        self.revision = getattr(config, "_commit_hash", None) or _fingerprint(path)
        threshold = declared.threshold
        if threshold is None:
            threshold = getattr(config, "ene_threshold", None)
        self.default_threshold = float(threshold) if threshold is not None else None
        contra = declared.contradiction_threshold
        if contra is None:
            contra = getattr(config, "ene_contradiction_threshold", None)
        self.default_contradiction_threshold = float(contra) if contra is not None else None
        # the engine's rules: the embedded model's, else none unless ene_verifier.json says
        embedded = isinstance(path, Path) and path.resolve() == DEFAULT_MODEL_DIR.resolve()
        self.rules = (
            declared.rules
            if declared.rules is not None
            else (EMBEDDED_RULES if embedded else frozenset())
        )
        sep = getattr(self.tokenizer, "sep_token", None)
        self.separator = separator or declared.separator or (f" {sep} " if sep else " ")
        self._lock = threading.Lock()
        self._counting = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None  # one-pair CPU passes (_run_groups)
        self._pool_owner = (0, 0, 0)  # the process, workers and threads the pool was made for
        self.padding = {"pairs": 0, "rows": 0, "tokens": 0, "padded_tokens": 0}
        self.oom_splits = 0
        self.oom_token_cap: int | None = None  # rows x length per forward, set by an OOM
        self._oom_errors = _oom_errors(torch)
        self.encoder = PairEncoder(self.tokenizer, self.max_length)

    def count_tokens(self, text: str) -> int:
        return self.encoder.count([text])[0]

    def count_tokens_many(self, texts: Sequence[str]) -> list[int]:
        """``count_tokens`` of each text: cached by text, the rest in one batched tokenizer
        call."""
        return self.encoder.count(list(texts)) if texts else []

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        return self.score_parts([((premise,), hypothesis) for premise, hypothesis in pairs])

    def score_parts(
        self,
        pairs: Sequence[tuple[Sequence[str], str]],
        on_scored: Callable[[list[int], list[Scores]], None] | None = None,
    ) -> list[Scores]:
        """Like :meth:`score`, each premise given as the pieces it is made of
        (``"".join(pieces)`` is the premise: sentences with the whitespace before them, see
        :attr:`~ene_core.engine.premise.Premise.parts`); a piece is tokenised once and its ids
        reused (:class:`~ene_core.verifiers.encoding.PairEncoder`).

        ``on_scored(indices, scores)``, when given, is called in the calling thread as each
        forward pass's results are in (the indices of its pairs in ``pairs``); the passes are the
        same (so are the scores), run in the order that completes the first pairs first, and
        their results come back one pass at a time (on CUDA without stopping the device) instead
        of once per call.
        """
        if not pairs:
            return []
        if self.input == "single" or self.window is not None:
            return self._score_read(pairs, on_scored)
        encoded = self.encoder.encode([p for p, _ in pairs], [h for _, h in pairs])
        return self._score_encoded(encoded, on_scored)

    def _score_read(
        self,
        pairs: Sequence[tuple[Sequence[str], str]],
        on_scored: Callable[[list[int], list[Scores]], None] | None,
    ) -> list[Scores]:
        """Score pairs the way the model declares it reads them: one string (document,
        separator, claim) and / or the premise in windows, the most entailing window counting
        (:mod:`~ene_core.verifiers.windows`); a premise cut to fit is marked truncated."""
        single = self.input == "single"
        owners: list[int] = []
        premises: list[str] = []
        claims: list[str] = []
        cut: set[int] = set()
        for i, (pieces, claim) in enumerate(pairs):
            texts, truncated = premise_windows(
                self.tokenizer,
                "".join(pieces),
                claim,
                max_length=self.max_length,
                separator=self.separator if single else None,
                window=self.window,
                stride=self.stride,
            )
            if truncated:
                cut.add(i)
            owners += [i] * len(texts)
            premises += texts
            claims += [claim] * len(texts)
        if single:
            rows = [
                self.tokenizer(single_text(p, h, self.separator))["input_ids"]
                for p, h in zip(premises, claims, strict=True)
            ]
            long = [r for r, row in enumerate(rows) if len(row) > self.max_length]
            encoded = Encoded([row[: self.max_length] for row in rows], None, long)
        else:
            encoded = self.encoder.encode([(p,) for p in premises], claims)
        read = self._score_encoded(encoded, None)
        windows: list[list[Scores]] = [[] for _ in pairs]
        for i, score in zip(owners, read, strict=True):
            windows[i].append(score)
        out = [aggregate(w) for w in windows]
        out = [Scores(s.entail, s.contra, True) if i in cut else s for i, s in enumerate(out)]
        if on_scored is not None:
            on_scored(list(range(len(pairs))), out)
        return out

    def _score_encoded(
        self,
        encoded: Encoded,
        on_scored: Callable[[list[int], list[Scores]], None] | None,
    ) -> list[Scores]:
        """The scores of encoded pairs (:meth:`score_parts` after its encoding)."""
        pairs = encoded.ids
        ids, types = encoded.ids, encoded.types
        lengths = [len(row) for row in ids]
        truncated = set(encoded.truncated)
        out: list[Scores] = [Scores(0.0, 0.0)] * len(pairs)
        parts: list[tuple[list[int], Any]] = []
        failure = ""
        with self._lock, self._torch.inference_mode(), self._threads() as workers:
            try:
                tokens = self._upload(ids, types)
                groups = self._groups(lengths)
                if on_scored is not None:
                    groups.sort(key=lambda g: max(g[0]))
                copies: list[tuple[list[int], Any, Any]] = []  # results on their way back
                for done in self._run_groups(groups, tokens, lengths, workers):
                    parts += done
                    if on_scored is not None:
                        copies += [self._fetch(part, probs) for part, probs in done]
                        self._report(copies, on_scored, truncated, out, wait=False)
                if on_scored is not None:
                    self._report(copies, on_scored, truncated, out, wait=True)
                else:
                    # One device-to-host transfer per call: the GPU runs ahead while groups queue.
                    order = [i for group, _ in parts for i in group]
                    probs = self._torch.cat([p for _, p in parts]).cpu()
                    self._collect(order, probs, truncated, out)
            except self._oom_errors as exc:  # outside a forward pass: the inputs or the results
                failure = _first_line(exc)
            if failure:
                parts.clear()
                self._release_memory()
                raise OracleOutOfMemoryError(
                    f"{self.device} ran out of memory moving the inputs or results of "
                    f"{len(pairs)} pair(s) ({failure}): free memory on the device, or use "
                    "NLIOracle(device='cpu')"
                )
        return out

    @contextmanager
    def _threads(self) -> Iterator[int]:
        """The worker threads a deterministic CPU call runs its passes on, each with
        ``cpu_threads`` threads (see the class docstring): torch's thread count divided by
        ``cpu_threads``, so the call uses the threads torch was given; 0: the calling thread,
        held at ``cpu_threads`` for the call (one worker's worth), or as torch is set. Where a
        thread cannot set its own count, torch's is set for the call and set back after it."""
        if self.cpu_threads is None or not self.deterministic or self.device.type != "cpu":
            yield 0
            return
        workers = self._torch.get_num_threads() // self.cpu_threads
        if workers > 1 and own_threads() is not None:  # each holds its own count
            yield workers
            return
        with threads_held(self._torch, self.cpu_threads):
            yield workers if workers > 1 else 0  # (0: one at a time, on this thread)

    def _run_groups(
        self,
        groups: list[tuple[list[int], int, int]],
        tokens: _Tokens,
        lengths: list[int],
        workers: int,
    ) -> Iterator[list[tuple[list[int], Any]]]:
        """Each group's passes (:meth:`_run_group`), in order; on ``workers`` worker threads at
        ``cpu_threads`` each when there are any (one-pair CPU passes): a pass's arithmetic is its
        pair's alone, whichever thread runs it."""
        if not workers or any(rows > 1 for _, _, rows in groups):
            for group, length, rows in groups:  # (an out-of-memory split is sequential)
                done: list[tuple[list[int], Any]] = []
                self._run_group(group, length, rows, tokens, lengths, done)
                yield done
            return
        torch, threads, own = self._torch, self.cpu_threads or 1, own_threads()
        if self._pool is None or self._pool_owner != (os.getpid(), workers, threads):
            if self._pool is not None and self._pool_owner[0] == os.getpid():
                self._pool.shutdown(wait=False)
            # (a forked child has none of its parent's threads: it makes its own pool)
            self._pool = ThreadPoolExecutor(
                workers,
                thread_name_prefix="ene-cpu-pass",
                initializer=None if own is None else functools.partial(own.pin, threads),
            )
            self._pool_owner = (os.getpid(), workers, threads)

        def run(group: list[int], length: int, rows: int) -> list[tuple[list[int], Any]]:
            if own is None and torch.get_num_threads() != threads:  # as _threads set it
                torch.set_num_threads(threads)
            done: list[tuple[list[int], Any]] = []
            with torch.inference_mode():
                self._run_group(group, length, rows, tokens, lengths, done)
            return done

        futures = [self._pool.submit(run, *group) for group in groups]
        try:
            for future in futures:
                yield future.result()
        finally:
            for future in futures:
                future.cancel()
            wait(futures)  # none still running when the call returns

    def _fetch(self, part: list[int], probs: Any) -> tuple[list[int], Any, Any]:
        """Start bringing one pass's results to the host: on CUDA a non-blocking copy into
        pinned memory and an event that says when it is there, so the GPU keeps running."""
        if self.device.type != "cuda":
            return part, probs, None
        host = self._torch.empty(probs.shape, dtype=probs.dtype, pin_memory=True)
        host.copy_(probs, non_blocking=True)
        arrived = self._torch.cuda.Event()
        arrived.record()
        return part, host, arrived

    def _report(
        self,
        copies: list[tuple[list[int], Any, Any]],
        on_scored: Callable[[list[int], list[Scores]], None],
        truncated: set[int],
        out: list[Scores],
        *,
        wait: bool,
    ) -> None:
        """Hand the passes whose results have arrived to ``on_scored``, in order (``wait``:
        all of them)."""
        while copies:
            part, host, arrived = copies[0]
            if arrived is not None:
                if not wait and not arrived.query():
                    return
                arrived.synchronize()
            copies.pop(0)
            on_scored(part, self._collect(part, host, truncated, out))

    def _collect(
        self, order: list[int], probs: Any, truncated: set[int], out: list[Scores]
    ) -> list[Scores]:
        """The scores of the pairs ``order`` from their probabilities (on the host), also
        written to ``out``."""
        if not self._torch.isfinite(probs).all():
            raise OracleError(f"model {self.name!r} produced non-finite probabilities")
        entail = probs[:, 0].tolist()
        contra = probs[:, 1].tolist() if self.contra_index is not None else [0.0] * len(order)
        scores = [
            Scores(e, c, truncated=i in truncated)
            for i, e, c in zip(order, entail, contra, strict=True)
        ]
        for i, score in zip(order, scores, strict=True):
            out[i] = score
        return scores

    def _groups(self, lengths: list[int]) -> list[tuple[list[int], int, int]]:
        """``(pair indices, padded length, rows)`` per forward pass.

        Deterministic: length buckets of ``bucket_tokens``, a fixed row count per bucket
        (:meth:`_rows`), partial groups filled; on a CPU one pair per pass, unpadded. Otherwise:
        length-sorted groups of ``batch_size`` padded to their longest pair.
        """
        if not self.deterministic:
            order = sorted(range(len(lengths)), key=lambda i: lengths[i])
            chunks = [order[s : s + self.batch_size] for s in range(0, len(order), self.batch_size)]
            return [(c, max(lengths[i] for i in c), len(c)) for c in chunks]
        bucket = 1 if self.device.type == "cpu" else self.bucket_tokens  # a lone pair needs no pad
        buckets: dict[int, list[int]] = {}
        for i, n in enumerate(lengths):
            buckets.setdefault(min(_round_up(n, bucket), self.max_length), []).append(i)
        groups = []
        for length in sorted(buckets):
            rows = self._rows(length)
            members = buckets[length]
            groups += [(members[s : s + rows], length, rows) for s in range(0, len(members), rows)]
        return groups

    def _rows(self, length: int) -> int:
        """Rows per deterministic forward pass of ``length`` tokens: one on a CPU, where a row's
        last digits can depend on its position in a bigger GEMM (see the class docstring)."""
        if self.device.type == "cpu":
            return 1
        return max(1, min(self.batch_size, self.max_batch_tokens // length))

    def _run_group(
        self,
        group: list[int],
        length: int,
        rows: int,
        tokens: _Tokens,
        lengths: list[int],
        parts: list[tuple[list[int], Any]],
    ) -> None:
        """Forward ``group`` in ``rows``-row passes; on out-of-memory halve the rows and retry."""
        pending, fitted = group, self.oom_token_cap  # fitted: the cap of the last success
        while pending:
            size = rows
            if self.oom_token_cap is not None:  # the rule after an OOM, for every later call
                size = max(1, min(rows, self.oom_token_cap // length))
            part = pending[:size]
            message = ""
            try:
                out = self._forward(tokens, part, length, size)
                with self._counting:  # passes may run on several worker threads
                    self.padding["pairs"] += len(part)
                    self.padding["rows"] += size
                    self.padding["tokens"] += sum(lengths[i] for i in part)
                    self.padding["padded_tokens"] += size * length
            except self._oom_errors as exc:
                message = _first_line(exc)
                out = None  # leave the except block first: its traceback holds the tensors
            if out is not None:
                parts.append((part, out))
                pending, fitted = pending[size:], self.oom_token_cap
                continue
            self._release_memory()
            if size == 1:  # not a matter of group size: keep the sizes that fitted
                self.oom_token_cap = fitted
                raise OracleOutOfMemoryError(
                    f"{self.device} ran out of memory on a single pair of {length} tokens "
                    f"({message}): lower max_length (now {self.max_length}), free memory on "
                    "the device, or use NLIOracle(device='cpu')"
                )
            self.oom_splits += 1
            self.oom_token_cap = size // 2 * length
            logger.warning(
                "ene: %s out of memory on %d x %d tokens; retrying with groups of at most %d "
                "tokens from now on",
                self.device,
                size,
                length,
                self.oom_token_cap,
            )

    def _release_memory(self) -> None:
        if self.device.type == "cuda":
            self._torch.cuda.empty_cache()

    def _upload(self, ids: list[list[int]], types: list[list[int]] | None) -> _Tokens:
        """Every pair's tokens, concatenated, on the device in one (pinned, non-blocking) copy."""
        torch = self._torch
        flat, starts, lengths = array("q"), array("q"), array("q")
        for row in ids:
            starts.append(len(flat))
            lengths.append(len(row))
            flat.extend(row)
        total = len(flat)
        if types is not None:
            for row in types:
                flat.extend(row)
        flat.extend(starts)
        flat.extend(lengths)
        on_device = self._to_device(torch.frombuffer(flat, dtype=torch.long))
        n = len(ids)
        end = len(flat) - 2 * n
        return _Tokens(
            ids=on_device[:total],
            types=on_device[total:end] if types is not None else None,
            starts=on_device[end : end + n],
            lengths=on_device[end + n :],
            host_starts=starts,
            host_lengths=lengths,
        )

    def _to_device(self, host: Any) -> Any:
        if self.device.type == "cuda":
            host = host.pin_memory()  # so that the copy is truly asynchronous
        return host.to(self.device, non_blocking=True)

    def _forward(self, tokens: _Tokens, part: list[int], length: int, rows: int) -> Any:
        """``(len(part), 2)`` float32 probabilities (entailment, contradiction), on the device.

        The ``rows x length`` inputs are gathered on the device from the uploaded tokens; filler
        rows repeat the last real pair.
        """
        torch = self._torch
        if rows == 1 and tokens.host_lengths[part[0]] == length:
            # one pair at its own length (a CPU pass): its tokens as they lie, no gather
            start = tokens.host_starts[part[0]]
            ids = tokens.ids[start : start + length].unsqueeze(0)
            inputs = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
            if tokens.types is not None:
                inputs["token_type_ids"] = tokens.types[start : start + length].unsqueeze(0)
            return self._probabilities(inputs, 1)
        picked = self._to_device(torch.tensor(part + [part[-1]] * (rows - len(part))))
        columns = torch.arange(length, device=self.device)
        valid = columns < tokens.lengths[picked].unsqueeze(1)
        where = (tokens.starts[picked].unsqueeze(1) + columns).clamp_(max=tokens.ids.numel() - 1)
        inputs = {
            "input_ids": torch.where(valid, tokens.ids[where], self.tokenizer.pad_token_id or 0),
            "attention_mask": valid.long(),
        }
        if tokens.types is not None:
            inputs["token_type_ids"] = torch.where(valid, tokens.types[where], 0)
        return self._probabilities(inputs, len(part))

    def _probabilities(self, inputs: dict[str, Any], real: int) -> Any:
        """``(real, 2)`` probabilities of the first ``real`` rows of ``inputs``."""
        logits = self.model(**inputs).logits
        probs = logits.float().softmax(dim=-1)[:real]
        contra = self.contra_index if self.contra_index is not None else self.entail_index
        return probs[:, [self.entail_index, contra]]


@dataclass(frozen=True)
class _Tokens:
    """One ``score`` call's tokens on the device: rows concatenated, with starts and lengths."""

    ids: Any
    types: Any
    starts: Any
    lengths: Any
    host_starts: Sequence[int] = ()  # the same starts and lengths on the host
    host_lengths: Sequence[int] = ()


def _resolve(model: str | Path | None) -> Path | str:
    if model is None:
        if not (DEFAULT_MODEL_DIR / "config.json").exists():
            raise ModelNotFoundError(
                f"the embedded default verifier is not installed at {DEFAULT_MODEL_DIR}: "
                "pass a local NLI model, NLIOracle(model='path/to/model')"
            )
        return DEFAULT_MODEL_DIR
    path = Path(model).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ModelNotFoundError(f"model {str(model)!r} is a file: {_EXPECTED}")
        if not (path / "config.json").exists():
            raise ModelNotFoundError(f"model {str(model)!r} has no config.json: {_EXPECTED}")
        return path
    if not _HUB_ID.fullmatch(str(model)):
        raise ModelNotFoundError(f"model {str(model)!r} does not exist: {_EXPECTED}")
    if not _in_hub_cache(str(model)):
        raise ModelNotFoundError(
            f"model {str(model)!r} is neither a local directory nor in the local Hugging Face "
            f"cache: {_EXPECTED}"
        )
    return str(model)  # a hub id: only usable if it is already in the local HF cache


def _in_hub_cache(repo_id: str) -> bool:
    """Whether the local Hugging Face cache holds ``repo_id``'s config (True if unknowable)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - transformers brings huggingface_hub
        return True
    try:
        return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)
    except Exception:  # an id the hub library rejects: let transformers say why
        return True


_EXPECTED = (
    "pass a local directory holding a Hugging Face NLI model (config.json, the tokenizer "
    "files and model.safetensors or pytorch_model.bin), or the id of a model already in the "
    "local Hugging Face cache; ENE never downloads"
)
# what Hugging Face accepts as a repo id ("name" or "namespace/name"); anything else is a path
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]{0,95}(?:/[\w.-]{1,96})?")


def _pick_device(torch: Any, device: str | None) -> Any:
    """``device``, else ``$ENE_DEVICE``, else CUDA when available; a typed error if unusable."""
    name = (device or os.environ.get(DEVICE_ENV, "") or "auto").strip()
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    source = "device=" if device else f"${DEVICE_ENV}="
    try:
        chosen = torch.device(name)
    except (RuntimeError, ValueError):
        raise InvalidInputError(
            f"unknown device {source}{name!r}: use 'cpu', 'cuda', 'cuda:N' or 'auto'"
        ) from None
    if chosen.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0 or (chosen.index or 0) >= count:
            raise InvalidInputError(
                f"{source}{name!r} but this torch sees {count} CUDA device(s): "
                f"pass device='cpu' (or unset {DEVICE_ENV})"
            )
    return chosen


def _pick_dtype(torch: Any, device: Any, dtype: str | None) -> Any:
    if dtype is not None:
        value = getattr(torch, _DTYPES.get(dtype, dtype), None)
        if not isinstance(value, torch.dtype) or not value.is_floating_point:
            raise InvalidInputError(
                f"unknown dtype {dtype!r}: use 'float32', 'bfloat16' or 'float16'"
            )
        return value
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float32


def _oom_errors(torch: Any) -> tuple[type[BaseException], ...]:
    """The out-of-memory exception types of this torch (``torch.OutOfMemoryError`` >= 2.5)."""
    found = [getattr(module, "OutOfMemoryError", None) for module in (torch, torch.cuda)]
    return tuple(dict.fromkeys(t for t in found if isinstance(t, type)))


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _fingerprint(path: Path | str) -> str | None:
    weights = sorted(Path(path).glob("*.safetensors")) if isinstance(path, Path) else []
    if not weights:
        return None
    digest = hashlib.sha256()
    for file in weights:
        digest.update(file.read_bytes())
    return "sha256:" + digest.hexdigest()[:16]


def _round_up(n: int, multiple: int) -> int:
    return int(math.ceil(n / multiple) * multiple)
