"""Helpers for testing with ENE without a real model: :class:`KeywordOracle` (a transparent,
deterministic verifier: :mod:`ene_core.verifiers.keyword`), and tiny random models on disk for
exercising the real model code paths offline: :func:`make_tiny_nli_model` (a BERT NLI
cross-encoder, any label order), :func:`make_tiny_seq2seq_model` (a T5 that answers yes / no) and
:func:`make_tiny_custom_code_model` (a model with its own code, HHEM-style)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .verifiers.keyword import KeywordOracle

__all__ = [
    "KeywordOracle",
    "make_tiny_custom_code_model",
    "make_tiny_nli_model",
    "make_tiny_seq2seq_model",
]


def make_tiny_nli_model(
    directory: str,
    *,
    id2label: dict[int, str] | None = None,
    seed: int = 0,
    words: Sequence[str] = (),
    favour: int | None = None,
) -> str:
    """Write a tiny, randomly initialised BERT NLI model (and its tokenizer) to ``directory``.

    For exercising the real :class:`~ene_core.verifiers.nli.NLIOracle` code path offline; its
    verdicts are meaningless, except with ``favour``: the label of that index then wins every
    pair (its head's weights are zero and its bias favours that label). Needs torch,
    transformers and tokenizers.
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
    if favour is not None:
        with torch.no_grad():
            model.classifier.weight.zero_()
            model.classifier.bias.fill_(-4.0)
            model.classifier.bias[favour] = 4.0
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return str(out)


def _word_tokenizer(words: Sequence[str], specials: Sequence[str], single: str) -> Any:
    """A fast word-piece tokenizer: the specials, characters, word pieces and ``words``;
    ``single``: the template around one text (``"$A </s>"``)."""
    import string

    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    pieces = list(string.ascii_lowercase + string.digits + string.punctuation)
    vocab_list = [
        *specials,
        *pieces,
        *("##" + c for c in pieces),
        *sorted({*map(str.lower, words)}),
    ]
    vocab = {token: i for i, token in enumerate(dict.fromkeys(vocab_list))}
    backend = Tokenizer(models.WordPiece(vocab, unk_token=specials[2]))
    backend.normalizer = normalizers.BertNormalizer(lowercase=True)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    used = [t for t in specials if t in single.split()]
    backend.post_processor = processors.TemplateProcessing(
        single=single, special_tokens=[(t, vocab[t]) for t in used]
    )
    return backend, vocab


def make_tiny_seq2seq_model(
    directory: str,
    *,
    seed: int = 0,
    words: Sequence[str] = (),
    answer: str | None = None,
) -> str:
    """Write a tiny, randomly initialised T5 model and its tokenizer to ``directory``: for
    exercising :class:`~ene_core.verifiers.seq2seq.Seq2SeqOracle` offline. "yes", "no" and
    "maybe" are one token each. Its answers are meaningless, except with ``answer``: that word
    then wins every prompt over the other two (the decoder's layers write nothing, so its first
    step reads the start token alone, and the output head points that word at it)."""
    from pathlib import Path

    import torch
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    specials = ["<pad>", "</s>", "<unk>"]
    backend, vocab = _word_tokenizer(
        [*words, "yes", "no", "maybe", "premise", "hypothesis", "answer"], specials, "$A </s>"
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    torch.manual_seed(seed)
    config = T5Config(  # type: ignore[call-arg]
        vocab_size=len(vocab),
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=1,
        num_heads=4,
        decoder_start_token_id=0,
        pad_token_id=0,
        eos_token_id=1,
        n_positions=256,
    )
    model = T5ForConditionalGeneration(config).eval()
    if answer is not None:
        with torch.no_grad():
            for block in model.decoder.block:
                block.layer[0].SelfAttention.o.weight.zero_()
                block.layer[1].EncDecAttention.o.weight.zero_()
                block.layer[2].DenseReluDense.wo.weight.zero_()
            start = model.decoder.final_layer_norm(model.shared.weight[0])
            toward = start / start.norm()
            for word in ("yes", "no", "maybe"):  # lm_head may share its weights with the inputs
                model.lm_head.weight[vocab[word]] = (8 if word == answer else -8) * toward
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return str(out)


_CUSTOM_CONFIG = """from transformers import PretrainedConfig


class TinyJudgeConfig(PretrainedConfig):
    model_type = "tiny-judge"

    def __init__(self, scale=8.0, **kwargs):
        self.scale = scale
        super().__init__(**kwargs)
"""

_CUSTOM_MODEL = """import torch
from transformers import PreTrainedModel

from .configuration_tiny_judge import TinyJudgeConfig


class TinyJudge(PreTrainedModel):
    # HHEM-style: predict(pairs) -> the probability that each premise supports its hypothesis
    # (here: from the share of the hypothesis's words the premise has)

    config_class = TinyJudgeConfig

    def __init__(self, config):
        super().__init__(config)
        self.weight = torch.nn.Parameter(torch.tensor([config.scale]))
        self.post_init()

    def _init_weights(self, module):
        pass

    def forward(self, overlap):
        return torch.sigmoid(self.weight * (overlap - 0.5))

    def predict(self, pairs):
        shares = []
        for premise, hypothesis in pairs:
            have = set(premise.lower().replace(".", " ").split())
            need = hypothesis.lower().replace(".", " ").split()
            shares.append(sum(w in have for w in need) / max(1, len(need)))
        return self.forward(torch.tensor(shares))
"""


def make_tiny_custom_code_model(directory: str, *, scale: float = 8.0) -> str:
    """Write a tiny model that ships its own code (a modeling file, a config with ``auto_map``)
    to ``directory``: HHEM-style, its ``predict(pairs)`` gives the probability that each premise
    supports its hypothesis (a sigmoid of the share of the hypothesis's words the premise has,
    times a weight ``scale``). Loads only with ``trust_remote_code=True``."""
    import json
    from pathlib import Path

    import torch
    from safetensors.torch import save_file

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    (out / "configuration_tiny_judge.py").write_text(_CUSTOM_CONFIG, encoding="utf-8")
    (out / "modeling_tiny_judge.py").write_text(_CUSTOM_MODEL, encoding="utf-8")
    config = {
        "model_type": "tiny-judge",
        "architectures": ["TinyJudge"],
        "scale": scale,
        "auto_map": {
            "AutoConfig": "configuration_tiny_judge.TinyJudgeConfig",
            "AutoModelForSequenceClassification": "modeling_tiny_judge.TinyJudge",
        },
    }
    (out / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    save_file({"weight": torch.tensor([scale])}, str(out / "model.safetensors"))
    return str(out)
