"""PairEncoder: pair ids built from cached piece ids equal the tokenizer's on the joined text."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("transformers")

from transformers import AutoTokenizer, PreTrainedTokenizerFast

from ene_core.verifiers.encoding import PairEncoder
from ene_core.verifiers.nli import DEFAULT_MODEL_DIR

TRAINING = [
    "The Eiffel Tower is in Paris, France.",
    "It was finished in 1889 and is 330 metres tall.",
    "Zürich's café opens at 9:00; the tower doesn't.",
    "A full charge of the battery takes about two hours.",
    "The warranty covers manufacturing defects for two years.",
]
WORDS = [
    "the",
    "The",
    "tower",
    "Tower",
    "Paris",
    "café",
    "Zürich's",
    "doesn't",
    "1889",
    "3.5",
    "km",
    "(2",
    "mi.)",
    "e.g.",
    "U.S.",
    "北京",
    "naïve",
    "ÉTÉ",
    "—",
    "\u201cquoted\u201d",
    "[3]",
    "well-known",
    "unseenword",
    "x",
]
sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(
    lambda words: " ".join(words) + "."
)


@st.composite
def premise_parts(draw: st.DrawFn) -> list[str]:
    """Pieces as the premise packer writes them: the first bare, the others after a space
    (same context) or a newline (next context)."""
    sentences = draw(st.lists(sentence, min_size=1, max_size=4))
    separators = draw(
        st.lists(st.sampled_from([" ", "\n"]), min_size=len(sentences), max_size=len(sentences))
    )
    return [sentences[0]] + [sep + s for sep, s in zip(separators[1:], sentences[1:], strict=True)]


def shipped() -> Any:
    tokenizer = AutoTokenizer.from_pretrained(str(DEFAULT_MODEL_DIR), local_files_only=True)
    tokenizer.model_max_length = 1 << 30
    return tokenizer


def byte_level_bpe(*, use_regex: bool = True) -> PreTrainedTokenizerFast:
    """A RoBERTa-style tokenizer (byte-level BPE: "Ġthe" is not "the"), trained here offline."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    backend = Tokenizer(models.BPE(unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=use_regex)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(TRAINING * 20, trainer)
    backend.post_processor = processors.RobertaProcessing(
        ("</s>", backend.token_to_id("</s>")), ("<s>", backend.token_to_id("<s>"))
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        pad_token="<pad>",
        unk_token="<unk>",
        mask_token="<mask>",
        model_max_length=1 << 30,
    )


TOKENIZERS = {"shipped-wordpiece": shipped(), "byte-level-bpe": byte_level_bpe()}


def expected(tokenizer: Any, premise: str, claim: str, max_length: int) -> tuple[Any, Any, bool]:
    """What the tokenizer gives for the joined premise and the claim (truncated if too long)."""
    full = tokenizer(premise, claim, truncation=False)
    if len(full["input_ids"]) <= max_length:
        return full["input_ids"], full.get("token_type_ids"), False
    cut = tokenizer(premise, claim, truncation="longest_first", max_length=max_length)
    return cut["input_ids"], cut.get("token_type_ids"), True


def test_byte_level_bpe_is_a_tokenizer_where_the_leading_space_matters() -> None:
    bpe = TOKENIZERS["byte-level-bpe"]
    bare = bpe("tower", add_special_tokens=False)["input_ids"]
    spaced = bpe(" tower", add_special_tokens=False)["input_ids"]
    assert bare != spaced


@pytest.mark.parametrize("name", sorted(TOKENIZERS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pairs=st.lists(st.tuples(premise_parts(), sentence), min_size=1, max_size=6),
    max_length=st.integers(min_value=12, max_value=128),
)
def test_ids_equal_the_tokenizer_on_the_joined_text(
    name: str, pairs: list[tuple[list[str], str]], max_length: int
) -> None:
    tokenizer = TOKENIZERS[name]
    encoder = PairEncoder(tokenizer, max_length)
    assert encoder.exact  # built from cached pieces, not by the tokenizer
    got = encoder.encode([p for p, _ in pairs], [c for _, c in pairs])
    for i, (parts, claim) in enumerate(pairs):
        ids, types, cut = expected(tokenizer, "".join(parts), claim, max_length)
        assert got.ids[i] == ids
        assert (got.types[i] if got.types is not None else None) == types
        assert (i in got.truncated) == cut
    # the same pieces again, now from the cache: still the same ids
    again = encoder.encode([p for p, _ in pairs], [c for _, c in pairs])
    assert again == got


class CountingTokenizer:
    """The tokenizer, counting its calls."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer, self.calls = tokenizer, 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self.tokenizer(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.tokenizer, name)


def test_each_piece_is_tokenised_once() -> None:
    counting = CountingTokenizer(TOKENIZERS["shipped-wordpiece"])
    encoder = PairEncoder(counting, 256)
    pieces = ["The tower is in Paris.", " It is tall.", "\nParis is in France."]
    first = encoder.encode([pieces, pieces[:2], pieces[1:]], ["The tower is tall."] * 3)
    calls = counting.calls
    second = encoder.encode([pieces[::-1], [pieces[0]]], ["The tower is tall.", "It is."])
    assert counting.calls == calls + 1  # one batched call, for the one new piece ("It is.")
    assert second.ids[1] == counting("The tower is in Paris.", "It is.")["input_ids"]
    assert first.ids[0] == counting("".join(pieces), "The tower is tall.")["input_ids"]
    assert encoder.count(["The tower is in Paris.", "x"]) == [6, 1]
    calls = counting.calls
    assert encoder.count(pieces) == [
        len(counting(p, add_special_tokens=False)["input_ids"]) for p in pieces
    ]
    assert counting.calls == calls + len(pieces)  # the pieces' counts came from their cached ids


@pytest.mark.parametrize("name", sorted(TOKENIZERS))
def test_a_pair_too_long_is_cut_as_the_tokenizer_cuts_it_without_calling_it(name: str) -> None:
    counting = CountingTokenizer(TOKENIZERS[name])
    encoder = PairEncoder(counting, 24)
    long = ["The Eiffel Tower is in Paris, France.", " It was finished in 1889 and is tall."]
    claims = ["The tower is tall.", " ".join(TRAINING), "It is."]
    calls = counting.calls
    got = encoder.encode([long, long, ["x."]], claims)
    assert counting.calls == calls + 1  # the new pieces, in one call: no second call to cut
    for i, (parts, claim) in enumerate(zip([long, long, ["x."]], claims, strict=True)):
        ids, types, cut = expected(counting.tokenizer, "".join(parts), claim, 24)
        assert got.ids[i] == ids and len(ids) <= 24
        assert (got.types[i] if got.types is not None else None) == types
        assert (i in got.truncated) == cut
    assert got.truncated == [0, 1]  # "x." with "It is." fits


def test_a_tokenizer_that_merges_across_spaces_falls_back_to_the_tokenizer() -> None:
    # Byte-level BPE without its regex sees the whole premise as one word: merges may cross
    # the space between two sentences, so pieces cannot be concatenated.
    tokenizer = byte_level_bpe(use_regex=False)
    encoder = PairEncoder(tokenizer, 64)
    assert not encoder.exact
    parts = ["The tower is in Paris.", " It was finished in 1889."]
    got = encoder.encode([parts], ["The tower is tall."])
    assert got.ids[0] == tokenizer("".join(parts), "The tower is tall.")["input_ids"]


def test_a_normaliser_that_is_not_character_by_character_falls_back() -> None:
    from tokenizers import normalizers

    tokenizer = shipped()
    tokenizer.backend_tokenizer.normalizer = normalizers.Sequence(
        [normalizers.Replace(" ", ""), normalizers.Lowercase()]
    )
    encoder = PairEncoder(tokenizer, 64)
    assert not encoder.exact
    parts = ["The tower is in Paris.", " It is tall."]
    got = encoder.encode([parts], ["Paris."])
    assert got.ids[0] == tokenizer("".join(parts), "Paris.")["input_ids"]


@pytest.mark.determinism
def test_nli_oracle_scores_parts_as_the_joined_premise(tiny_model_dir: str, device: str) -> None:
    from ene_core.verifiers.nli import NLIOracle

    oracle = NLIOracle(tiny_model_dir, device=device)
    assert oracle.encoder.exact
    parts = [("The cat sat on the mat.", " Paris is the capital.", "\nThe mat is red.")] * 2
    claims = ["The cat sat.", "Paris is the capital of France."]
    joined = oracle.score([("".join(p), c) for p, c in zip(parts, claims, strict=True)])
    assert oracle.score_parts(list(zip(parts, claims, strict=True))) == joined
