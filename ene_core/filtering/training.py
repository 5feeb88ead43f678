"""Train a chunk filter from labelled (question, chunk) pairs, on the CPU.

The network is the first ``num_layers`` layers of the shipped verifier with a fresh one-logit
head (:mod:`ene_core.filtering.network`); the embeddings stay frozen, so what is written is a
small delta. Training writes, in order: ``split.json`` (the held-out requests, before any model
is run on them), a checkpoint every ``checkpoint_every`` steps and at each epoch's end
(``checkpoints/step-N/``), then the best epoch's weights with the threshold calibrated on the
held-out requests (``filter.json`` + ``delta.safetensors``) and ``metrics.json``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import math
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .lexical import FEATURES, combine, lexical_features
from .model import _quantized, select
from .network import DELTA_NAME, FilterSettings, build_network, load_delta, save_delta

logger = logging.getLogger("ene.filter.train")


@dataclass
class Pair:
    """One training example: is ``text`` needed to answer ``question``?

    ``group`` names the request (the held-out split and calibration work per request);
    ``weight`` scales its loss; ``source`` says where it came from.
    """

    question: str
    text: str
    label: int
    weight: float = 1.0
    group: str = ""
    source: str = ""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Pair:
        return cls(
            question=str(data["question"]),
            text=str(data["text"]),
            label=int(data["label"]),
            weight=float(data.get("weight", 1.0)),
            group=str(data.get("group", "")),
            source=str(data.get("source", "")),
        )


def read_pairs(path: str | Path) -> list[Pair]:
    """Pairs from a JSONL file (one :class:`Pair` as a dict a line)."""
    with open(path, encoding="utf-8") as handle:
        return [Pair.from_dict(json.loads(line)) for line in handle if line.strip()]


def write_pairs(pairs: Iterable[Pair], path: str | Path) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for pair in pairs:
            handle.write(json.dumps(asdict(pair), ensure_ascii=False) + "\n")


def split_groups(
    pairs: Sequence[Pair], held_out: float = 0.1, seed: int = 0
) -> tuple[list[Pair], list[Pair]]:
    """Split by request (``group``), deterministically by a hash of the group name: a request's
    chunks are all on one side."""

    def side(group: str) -> bool:
        digest = hashlib.sha256(f"{seed}:{group}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < held_out

    train = [p for p in pairs if not side(p.group)]
    dev = [p for p in pairs if side(p.group)]
    return train, dev


def group_pairs(pairs: Sequence[Pair]) -> dict[str, list[int]]:
    """Indices of ``pairs`` by request, in first-seen order."""
    groups: dict[str, list[int]] = {}
    for i, pair in enumerate(pairs):
        groups.setdefault(pair.group or f"#{i}", []).append(i)
    return groups


def keep_curve(
    pairs: Sequence[Pair],
    scores: Sequence[float],
    thresholds: Iterable[float],
    *,
    min_keep: int = 1,
    max_keep: int | None = None,
    lengths: Sequence[int] | None = None,
) -> list[dict[str, float]]:
    """Per threshold: the share of needed chunks kept and of tokens (or words) dropped, over
    the requests of ``pairs`` with the keep rule applied per request."""
    groups = group_pairs(pairs)
    sizes = lengths or [max(1, len(p.text.split())) for p in pairs]
    curve = []
    for threshold in thresholds:
        needed = needed_kept = tokens = tokens_dropped = 0.0
        for members in groups.values():
            chosen = {
                members[j]
                for j in select([scores[i] for i in members], threshold, min_keep, max_keep)
            }
            for i in members:
                tokens += sizes[i]
                if i not in chosen:
                    tokens_dropped += sizes[i]
                if pairs[i].label:
                    needed += 1
                    needed_kept += i in chosen
        curve.append(
            {
                "threshold": float(threshold),
                "needed_kept": needed_kept / needed if needed else 1.0,
                "tokens_dropped": tokens_dropped / tokens if tokens else 0.0,
            }
        )
    return curve


def calibrate(
    pairs: Sequence[Pair],
    scores: Sequence[float],
    *,
    target_kept: float = 0.97,
    targets: dict[str, float] | None = None,
    min_keep: int = 1,
    max_keep: int | None = None,
) -> float:
    """The highest threshold (on a 0.005 grid) at which the held-out requests of every source
    (``Pair.source``) keep at least their target share of their needed chunks: ``targets[source]``
    when given (sources it does not name are not constraints), else ``target_kept`` for all."""
    grid = [round(0.005 * k, 3) for k in range(1, 200)]
    sources = sorted({p.source for p in pairs})
    goals = targets if targets is not None else dict.fromkeys(sources, target_kept)
    ok = [True] * len(grid)
    for source in sources:
        if source not in goals:
            continue
        idx = [i for i, p in enumerate(pairs) if p.source == source]
        curve = keep_curve(
            [pairs[i] for i in idx],
            [scores[i] for i in idx],
            grid,
            min_keep=min_keep,
            max_keep=max_keep,
        )
        for k, point in enumerate(curve):
            ok[k] = ok[k] and point["needed_kept"] >= goals[source]
    best = grid[0]
    for threshold, fine in zip(grid, ok, strict=True):
        if fine:
            best = threshold
    return best


def _auc(labels: Sequence[int], scores: Sequence[float]) -> float:
    pos = [s for s, y in zip(scores, labels, strict=False) if y]
    neg = [s for s, y in zip(scores, labels, strict=False) if not y]
    if not pos or not neg:
        return float("nan")
    ranked = sorted((s, y) for s, y in zip(scores, labels, strict=False))
    rank_sum, i = 0.0, 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        rank_sum += sum(1 for k in range(i, j) if ranked[k][1]) * (i + j + 1) / 2
        i = j
    return (rank_sum - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def score_pairs(
    model: Any, tokenizer: Any, pairs: Sequence[Pair], max_length: int, *, logits: bool = False
) -> list[float]:
    """Sigmoid scores (or raw logits) of the network on ``pairs``, batched by length and
    returned in input order."""
    import torch

    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i].text))
    out = [0.0] * len(pairs)
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(order), 64):
            idx = order[start : start + 64]
            raw = model(**_inputs(tokenizer, [pairs[i] for i in idx], max_length)).logits[:, 0]
            values = (raw if logits else torch.sigmoid(raw)).tolist()
            for i, v in zip(idx, values, strict=True):
                out[i] = float(v)
    return out


def _inputs(tokenizer: Any, pairs: Sequence[Pair], max_length: int) -> Any:
    """The network's inputs for ``pairs``: (question, chunk), cut and padded as the filter's."""
    return tokenizer(
        [p.question for p in pairs],
        [p.text for p in pairs],
        truncation="longest_first",
        max_length=max_length,
        padding=True,
        return_tensors="pt",
    )


def pair_features(pairs: Sequence[Pair]) -> list[list[float]]:
    """The lexical features of each pair, computed within its request (``group``)."""
    rows: list[list[float]] = [[] for _ in pairs]
    for members in group_pairs(pairs).values():
        question = pairs[members[0]].question
        for i, row in zip(
            members, lexical_features(question, [pairs[i].text for i in members]), strict=True
        ):
            rows[i] = row
    return rows


def fit_combiner(
    pairs: Sequence[Pair], logits: Sequence[float], features: Sequence[Sequence[float]]
) -> dict[str, float]:
    """Weighted logistic regression of the labels on the network's logit and the lexical
    features (L2 0.01); the weights :func:`ene_core.filtering.lexical.combine` reads."""
    import torch

    x = torch.tensor([[lg, *f] for lg, f in zip(logits, features, strict=True)])
    y = torch.tensor([float(p.label) for p in pairs])
    w = torch.tensor([p.weight for p in pairs])
    coef = torch.zeros(x.shape[1], requires_grad=True)
    bias = torch.zeros(1, requires_grad=True)
    with torch.no_grad():
        coef[0] = 1.0
    optimiser = torch.optim.LBFGS([coef, bias], max_iter=200, line_search_fn="strong_wolfe")
    loss_fn = torch.nn.BCEWithLogitsLoss(reduction="none")

    def closure() -> Any:
        optimiser.zero_grad()
        loss = (loss_fn(x @ coef + bias, y) * w).sum() / w.sum() + 0.01 * (coef**2).sum()
        loss.backward()
        return loss

    optimiser.step(closure)
    values = coef.detach().tolist()
    weights = {"neural": values[0], "bias": float(bias.detach()[0])}
    weights.update({name: v for name, v in zip(FEATURES, values[1:], strict=True)})
    return {k: round(v, 5) for k, v in weights.items()}


def combined_scores(
    logits: Sequence[float], features: Sequence[Sequence[float]], weights: dict[str, float] | None
) -> list[float]:
    """Probabilities from logits (and the lexical features when ``weights`` is given)."""
    values = (
        [combine(lg, f, weights) for lg, f in zip(logits, features, strict=True)]
        if weights
        else list(logits)
    )
    return [1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, v)))) for v in values]


def _batches(lengths: Sequence[int], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Shuffled batches of similar length in tokens (less padding on the CPU): the shuffled
    pairs are cut in runs of ``20 * batch_size``, each run sorted by length and cut in
    batches, and the batches shuffled."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    chunks = [order[i : i + batch_size * 20] for i in range(0, len(order), batch_size * 20)]
    batches: list[list[int]] = []
    for chunk in chunks:
        chunk.sort(key=lambda i: lengths[i])
        batches.extend(chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size))
    rng.shuffle(batches)
    return batches


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity where the platform tells it)."""
    import os

    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _encode(tokenizer: Any, pairs: Sequence[Pair], max_length: int) -> tuple[list, list]:
    """Token ids and token type ids of every pair, unpadded: the rows :func:`_inputs` gives,
    tokenised once for the whole run instead of once a batch and epoch."""
    enc = tokenizer(
        [p.question for p in pairs],
        [p.text for p in pairs],
        truncation="longest_first",
        max_length=max_length,
    )
    return enc["input_ids"], enc["token_type_ids"]


def _collate(ids: Sequence[Sequence[int]], types: Sequence[Sequence[int]], pad_id: int) -> Any:
    """``input_ids``, ``token_type_ids`` and ``attention_mask`` of the rows, padded on the right
    to the longest, as the tokenizer pads them."""
    import torch

    width = max(len(row) for row in ids)
    input_ids = torch.full((len(ids), width), pad_id, dtype=torch.long)
    token_types = torch.zeros((len(ids), width), dtype=torch.long)
    mask = torch.zeros((len(ids), width), dtype=torch.long)
    for r, (row, kinds) in enumerate(zip(ids, types, strict=True)):
        input_ids[r, : len(row)] = torch.tensor(row, dtype=torch.long)
        token_types[r, : len(row)] = torch.tensor(kinds, dtype=torch.long)
        mask[r, : len(row)] = 1
    return {"input_ids": input_ids, "token_type_ids": token_types, "attention_mask": mask}


def _layer_mask(model: Any, hidden: Any, mask: Any) -> Any:
    """The attention mask the encoder layers take, built as ``BertModel`` builds it."""
    try:
        from transformers.masking_utils import create_bidirectional_mask
    except ImportError:  # transformers 4: the additive mask
        return model.get_extended_attention_mask(mask, mask.shape)
    return create_bidirectional_mask(config=model.config, inputs_embeds=hidden, attention_mask=mask)


def _run_layers(model: Any, hidden: Any, mask: Any, layers: range) -> Any:
    """``hidden`` through the network's encoder layers ``layers``."""
    extended = _layer_mask(model, hidden, mask)
    for k in layers:
        out = model.bert.encoder.layer[k](hidden, extended)
        hidden = out[0] if isinstance(out, tuple) else out
    return hidden


def _head_logits(model: Any, hidden: Any, mask: Any, start: int) -> Any:
    """The logit of each row from the output of the frozen part (``hidden``, the input of
    encoder layer ``start``): the trained layers, the pooler and the head. In train mode the
    caller applies the embeddings' dropout to ``hidden`` first, as ``BertEmbeddings`` does."""
    layers = range(start, len(model.bert.encoder.layer))
    hidden = _run_layers(model, hidden, mask, layers)
    return model.classifier(model.dropout(model.bert.pooler(hidden)))[:, 0]


class _FrozenPart:
    """The frozen part of the network: the embeddings and the first ``frozen_layers`` encoder
    layers, run without gradients and without dropout. Its output for each pair is computed
    once and kept (float32) when all of them fit in ``cache_bytes``; otherwise it is computed
    again for each batch (the same values up to float rounding)."""

    def __init__(
        self,
        model: Any,
        frozen_layers: int,
        ids: Sequence[Sequence[int]],
        types: Sequence[Sequence[int]],
        pad_id: int,
        cache_bytes: int,
    ) -> None:
        self.model, self.frozen_layers = model, frozen_layers
        self.ids, self.types, self.pad_id = ids, types, pad_id
        self.cache: list[Any] | None = None
        size = sum(len(row) for row in ids) * model.config.hidden_size * 4
        self.cached = size <= cache_bytes
        if self.cached:
            self.cache = [None] * len(ids)
            order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
            for start in range(0, len(order), 64):
                rows = order[start : start + 64]
                hidden, _ = self._compute(rows)
                for r, i in enumerate(rows):
                    self.cache[i] = hidden[r, : len(ids[i])].clone()

    def modules(self) -> list[Any]:
        bert = self.model.bert
        return [bert.embeddings, *bert.encoder.layer[: self.frozen_layers]]

    def _compute(self, rows: Sequence[int]) -> tuple[Any, Any]:
        import torch

        enc = _collate([self.ids[i] for i in rows], [self.types[i] for i in rows], self.pad_id)
        modes = [m.training for m in self.modules()]
        for m in self.modules():
            m.eval()
        try:
            with torch.no_grad():
                hidden = self.model.bert.embeddings(
                    input_ids=enc["input_ids"], token_type_ids=enc["token_type_ids"]
                )
                hidden = _run_layers(
                    self.model, hidden, enc["attention_mask"], range(self.frozen_layers)
                )
        finally:
            for m, mode in zip(self.modules(), modes, strict=True):
                m.train(mode)
        return hidden, enc["attention_mask"]

    def __call__(self, rows: Sequence[int]) -> tuple[Any, Any]:
        """The frozen part's output for ``rows`` (padded with zeros) and their mask."""
        import torch

        if self.cache is None:
            return self._compute(rows)
        width = max(len(self.ids[i]) for i in rows)
        hidden = torch.zeros((len(rows), width, self.model.config.hidden_size))
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, i in enumerate(rows):
            hidden[r, : len(self.ids[i])] = self.cache[i]
            mask[r, : len(self.ids[i])] = 1
        return hidden, mask


def train_filter(
    train_pairs: Sequence[Pair],
    dev_pairs: Sequence[Pair],
    out_dir: str | Path,
    *,
    base: str = "ene-nli-mini",
    num_layers: int = 2,
    max_length: int = 128,
    epochs: int = 2,
    batch_size: int = 32,
    learning_rate: float = 5e-5,
    threads: int | None = 1,
    frozen_layers: int = 0,
    feature_cache_mb: int = 2048,
    seed: int = 0,
    target_kept: float = 0.97,
    targets: dict[str, float] | None = None,
    min_keep: int = 1,
    max_keep: int | None = None,
    checkpoint_every: int = 200,
    max_steps: int | None = None,
    calibration: Callable[[list[float]], float] | None = None,
    lexical: bool = True,
    log: Callable[[str], None] | None = None,
) -> FilterSettings:
    """Train, checkpoint, pick the best epoch on the held-out pairs and calibrate its threshold.

    ``calibration`` (optional) maps the held-out scores to a threshold; by default the highest
    one keeping ``target_kept`` of the held-out needed chunks (per source, or ``targets[source]``
    for the sources ``targets`` names: :func:`calibrate`). ``lexical`` fits the combination
    of the network's logit with the lexical features on the training pairs. Returns the
    settings written.

    Speed: the pairs are tokenised once, batched by length in tokens, and only the trained
    layers run forward and backward. The embeddings are always frozen; ``frozen_layers`` (0, the
    default, up to ``num_layers - 1``) freezes the first encoder layers too: about twice as fast
    with 1 of 2, and a worse network (held-out AUC about 0.715 against 0.744 on the shipped
    filter's pairs, docs/chunk-filter.md). The frozen part runs without dropout (the
    embeddings' dropout is applied to its output, the trained layers' input) and its output for
    each pair is computed once and kept when it fits in ``feature_cache_mb`` (float32, 1.5 KB a
    token), else again for each batch. ``frozen_layers=0`` trains every kept layer with the
    same dropout as the network's own forward pass (the same random draws). ``threads`` is
    torch's CPU thread count (0 or ``None``: the cores this process may use); the same pairs,
    seed and thread count give the same weights, another thread count weights that differ in
    rounding.
    """
    import torch
    from transformers import AutoTokenizer

    say = log or logger.info
    if not 0 <= frozen_layers < num_layers:
        raise ValueError(f"frozen_layers must be 0..{num_layers - 1}, not {frozen_layers}")
    threads = threads or available_cores()
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    rng = random.Random(seed)
    out = Path(out_dir)
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    held_out_groups = sorted(group_pairs(dev_pairs))
    (out / "split.json").write_text(
        json.dumps(
            {
                "train_pairs": len(train_pairs),
                "held_out_pairs": len(dev_pairs),
                "held_out_groups": held_out_groups,
            },
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    settings = FilterSettings(
        base=base,
        num_layers=num_layers,
        max_length=max_length,
        min_keep=min_keep,
        max_keep=max_keep,
    )
    base_dir = settings.base_dir()
    tokenizer = AutoTokenizer.from_pretrained(base_dir)
    model = build_network(base_dir, num_layers)
    frozen_prefixes = (
        "bert.embeddings.",
        *(f"bert.encoder.layer.{k}." for k in range(frozen_layers)),
    )
    for name, param in model.named_parameters():
        param.requires_grad = not name.startswith(frozen_prefixes)
    params = [p for p in model.parameters() if p.requires_grad]
    prepared = time.time()
    ids, types = _encode(tokenizer, train_pairs, max_length)
    lengths = [len(row) for row in ids]
    frozen = _FrozenPart(
        model, frozen_layers, ids, types, tokenizer.pad_token_id or 0, feature_cache_mb << 20
    )
    say(
        f"{len(train_pairs)} pairs tokenised{' and the frozen part run' if frozen.cached else ''}"
        f" in {time.time() - prepared:.1f}s; {threads} threads, {frozen_layers} frozen layers"
    )
    dropout = model.bert.embeddings.dropout.p
    trained_seconds, trained_pairs = 0.0, 0
    optimiser = torch.optim.AdamW(params, lr=learning_rate, weight_decay=0.01)
    total = epochs * math.ceil(len(train_pairs) / batch_size)
    if max_steps is not None:
        total = min(total, max_steps)
    warmup = max(1, total // 20)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min((s + 1) / warmup, max(0.0, (total - s) / max(1, total - warmup)))
    )
    loss_fn = torch.nn.BCEWithLogitsLoss(reduction="none")
    step, started = 0, time.time()
    best: tuple[float, int] | None = None
    history: list[dict[str, Any]] = []

    def checkpoint(tag: str) -> Path:
        path = out / "checkpoints" / tag
        path.mkdir(parents=True, exist_ok=True)
        save_delta(model, path / DELTA_NAME)
        settings.revision = tag
        settings.write(path)
        return path

    for epoch in range(epochs):
        model.train()
        running = 0.0
        epoch_started, epoch_pairs = time.perf_counter(), 0
        for batch in _batches(lengths, batch_size, rng):
            if max_steps is not None and step >= max_steps:
                break
            hidden, mask = frozen(batch)
            hidden = torch.nn.functional.dropout(hidden, dropout, training=True)
            labels = torch.tensor([float(train_pairs[i].label) for i in batch])
            weights = torch.tensor([train_pairs[i].weight for i in batch])
            logits = _head_logits(model, hidden, mask, frozen_layers)
            loss = (loss_fn(logits, labels) * weights).sum() / weights.sum()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimiser.step()
            schedule.step()
            optimiser.zero_grad()
            step += 1
            epoch_pairs += len(batch)
            value = loss.item()
            running = 0.98 * running + 0.02 * value if step > 1 else value
            if step % 20 == 0:
                elapsed = time.time() - started
                say(f"epoch {epoch} step {step}/{total} loss {running:.4f} {elapsed:.0f}s")
            if checkpoint_every and step % checkpoint_every == 0:
                seconds = time.perf_counter()
                checkpoint(f"step-{step}")
                epoch_started += time.perf_counter() - seconds  # not training time
        epoch_seconds = time.perf_counter() - epoch_started
        trained_seconds += epoch_seconds
        trained_pairs += epoch_pairs
        tag = f"epoch-{epoch}"
        checkpoint(tag)
        scores = score_pairs(model, tokenizer, dev_pairs, max_length) if dev_pairs else []
        auc = _auc([p.label for p in dev_pairs], scores) if dev_pairs else float("nan")
        rate = epoch_pairs / epoch_seconds if epoch_seconds > 0 else float("nan")
        history.append(
            {
                "epoch": epoch,
                "step": step,
                "held_out_auc": auc,
                "train_seconds": round(epoch_seconds, 2),
                "pairs_per_second": round(rate, 1),
            }
        )
        say(f"epoch {epoch} done: held-out AUC {auc:.4f}, {rate:.1f} pairs/s")
        if best is None or (not math.isnan(auc) and auc > best[0]):
            best = (auc, epoch)
        if max_steps is not None and step >= max_steps:
            break
    assert best is not None
    load_delta(model, out / "checkpoints" / f"epoch-{best[1]}" / DELTA_NAME)
    settings.revision = f"{out.name}-epoch-{best[1]}"
    settings.training = {
        "epochs": epochs,
        "steps": step,
        "best_epoch": best[1],
        "held_out_auc_network": best[0],
        "seconds": round(time.time() - started, 1),
        "threads": threads,
        "batch_size": batch_size,
        "frozen_layers": frozen_layers,
        "pairs_per_second": round(trained_pairs / trained_seconds, 1) if trained_seconds else None,
    }
    return finish_filter(
        model,
        tokenizer,
        settings,
        train_pairs,
        dev_pairs,
        out,
        lexical=lexical,
        calibration=calibration,
        target_kept=target_kept,
        targets=targets,
        history=history,
        log=say,
    )


def finish_filter(
    model: Any,
    tokenizer: Any,
    settings: FilterSettings,
    train_pairs: Sequence[Pair],
    dev_pairs: Sequence[Pair],
    out_dir: str | Path,
    *,
    lexical: bool = True,
    calibration: Callable[[list[float]], float] | None = None,
    target_kept: float = 0.97,
    targets: dict[str, float] | None = None,
    quantize: bool = True,
    history: list[dict[str, Any]] | None = None,
    log: Callable[[str], None] | None = None,
) -> FilterSettings:
    """Fit the lexical combination on the training pairs, calibrate the threshold on the
    held-out pairs (scored in int8 when ``quantize``, as ``ChunkFilter`` runs), and write
    ``filter.json``, ``delta.safetensors``, ``metrics.json``."""
    say = log or logger.info
    out = Path(out_dir)
    max_length = settings.max_length
    weights = None
    if lexical:
        say("fitting the lexical combination on the training pairs")
        train_logits = score_pairs(model, tokenizer, train_pairs, max_length, logits=True)
        weights = fit_combiner(train_pairs, train_logits, pair_features(train_pairs))
        say(f"combine {weights}")
    settings.combine = weights
    # calibrate on the scores the filter will give: int8 on the CPU, as ChunkFilter() runs
    scorer = _quantized(copy.deepcopy(model)) if quantize else model
    dev_logits = score_pairs(scorer, tokenizer, dev_pairs, max_length, logits=True)
    scores = combined_scores(dev_logits, pair_features(dev_pairs), weights)
    auc = _auc([p.label for p in dev_pairs], scores) if dev_pairs else float("nan")
    if calibration is not None:
        threshold = float(calibration(scores))
    elif dev_pairs:
        threshold = calibrate(
            dev_pairs,
            scores,
            target_kept=target_kept,
            targets=targets,
            min_keep=settings.min_keep,
            max_keep=settings.max_keep,
        )
    else:
        threshold = 0.5
    settings.threshold = threshold
    settings.training = {
        **settings.training,
        "train_pairs": len(train_pairs),
        "held_out_pairs": len(dev_pairs),
        "held_out_auc": auc,
        "target_kept": targets or target_kept,
    }
    save_delta(model, out / DELTA_NAME)
    settings.write(out)
    by_source = {}
    for source in sorted({p.source for p in dev_pairs}):
        idx = [i for i, p in enumerate(dev_pairs) if p.source == source]
        by_source[source] = keep_curve(
            [dev_pairs[i] for i in idx],
            [scores[i] for i in idx],
            [0.05 * k for k in range(1, 20)],
            min_keep=settings.min_keep,
        )
    (out / "metrics.json").write_text(
        json.dumps(
            {
                "history": history or [],
                "threshold": threshold,
                "held_out_auc": auc,
                "held_out_curves": by_source,
            },
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    (out / "held_out_scores.json").write_text(json.dumps(scores) + "\n", encoding="utf-8")
    say(f"wrote {out}: held-out AUC {auc:.4f}, threshold {threshold:.3f}")
    return settings
