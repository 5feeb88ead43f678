"""A transparent, deterministic oracle for tests, examples and CI without a model.

``KeywordOracle`` says a premise entails a claim iff it contains every content word of the
claim, and contradicts it iff only the claim's numbers are missing while the premise states
other numbers. It is not a verifier: use it to test plumbing, never to judge answers.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from .oracle import Scores
from .premise import content_words


class KeywordOracle:
    name = "keyword-oracle"
    revision: str | None = "1"
    default_threshold: float | None = 0.5

    def __init__(self) -> None:
        self.pairs_scored = 0
        self.calls = 0
        self._lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        with self._lock:
            self.calls += 1
            self.pairs_scored += len(pairs)
        return [self._one(premise, claim) for premise, claim in pairs]

    @staticmethod
    def _one(premise: str, claim: str) -> Scores:
        have = set(content_words(premise))
        need = set(content_words(claim))
        if not need:
            return Scores(0.0, 0.0)
        missing = need - have
        if not missing:
            return Scores(0.95, 0.02)
        numbers_missing = all(w[0].isdigit() for w in missing)
        if numbers_missing and any(w[0].isdigit() for w in have):
            return Scores(0.03, 0.9)
        return Scores(round(0.4 * (1 - len(missing) / len(need)), 6), 0.02)


def make_tiny_nli_model(
    directory: str,
    *,
    id2label: dict[int, str] | None = None,
    seed: int = 0,
    words: Sequence[str] = (),
) -> str:
    """Write a tiny, randomly initialised BERT NLI model (and its tokenizer) to ``directory``.

    For exercising the real :class:`~ene_core.oracle.NLIOracle` code path offline; its verdicts
    are meaningless. Needs torch, transformers and tokenizers.
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
