"""Helpers for testing with ENE without a real model: :class:`KeywordOracle` (a transparent,
deterministic verifier: :mod:`ene_core.verifiers.keyword`) and :func:`make_tiny_nli_model` (a tiny
random NLI model on disk, for exercising the real model code path offline)."""

from __future__ import annotations

from collections.abc import Sequence

from .verifiers.keyword import KeywordOracle

__all__ = ["KeywordOracle", "make_tiny_nli_model"]


def make_tiny_nli_model(
    directory: str,
    *,
    id2label: dict[int, str] | None = None,
    seed: int = 0,
    words: Sequence[str] = (),
) -> str:
    """Write a tiny, randomly initialised BERT NLI model (and its tokenizer) to ``directory``.

    For exercising the real :class:`~ene_core.verifiers.nli.NLIOracle` code path offline; its
    verdicts are meaningless. Needs torch, transformers and tokenizers.
    """
    import string
    from pathlib import Path

    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    pieces = list(string.ascii_lowercase + string.digits + string.punctuation)
    vocab_list = specials + pieces + ["##" + c for c in pieces] + sorted({w.lower() for w in words})
    vocab = {token: i for i, token in enumerate(dict.fromkeys(vocab_list))}
    backend = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    backend.normalizer = normalizers.BertNormalizer(lowercase=True)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=256,
    )
    labels = id2label or {0: "entailment", 1: "neutral", 2: "contradiction"}
    torch.manual_seed(seed)
    config = BertConfig(  # type: ignore[call-arg]
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=256,
        num_labels=len(labels),
        id2label=labels,
        label2id={v: k for k, v in labels.items()},
    )
    model = BertForSequenceClassification(config).eval()
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return str(out)
