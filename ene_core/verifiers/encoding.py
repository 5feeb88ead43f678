"""Model inputs of (premise, hypothesis) pairs from token ids cached by text.

A packed premise is made of the request's sentences
(:attr:`ene_core.engine.premise.Premise.parts`, each with the whitespace before it), and the same
sentences and claims come back in round after round and request after request.
:class:`PairEncoder` tokenises each piece once and builds a pair's input ids by concatenating the
cached ids of its pieces between the tokenizer's special tokens, instead of re-tokenising the
joined text. A pair longer than ``max_length`` is cut the way ``tokenizers`` cuts it
(``longest_first``: :func:`longest_first`), checked against the tokenizer on probes when the
encoder is made.

That is exact only where the tokenizer never lets a token cross the whitespace that separates two
pieces: a fast (``tokenizers``) tokenizer that splits words at whitespace before its model runs
(BERT's WordPiece, byte-level BPE such as RoBERTa's, where a piece keeps its leading space),
with a character-by-character normaliser and no added token that swallows the whitespace after
it. Any other tokenizer goes through the tokenizer on the joined text (with ``longest_first``
truncation), as does a pair too long for ``max_length`` where the probes find the cut different.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# What may split a text before the model (each keeps whitespace a boundary), and what may
# normalise it (character by character).
_SPLITTERS = frozenset({"BertPreTokenizer", "Whitespace", "WhitespaceSplit", "ByteLevel"})
_FURTHER_SPLITS = frozenset({"Punctuation", "Digits"})
_NORMALISERS = frozenset(
    {"BertNormalizer", "Lowercase", "NFC", "NFD", "NFKC", "NFKD", "StripAccents"}
)
# Self-check on a tokenizer that passed the rules above: pieces as the premise packer writes them.
_PROBE = (
    ("Hello, world: it's 3.5 km (2 mi.) away.", " Zürich's \u201cbest\u201d café!", "\nNext  ok"),
    ("One.", "\nTwo  [x] #3", " e.g. ÉTÉ 北京."),
)
_PROBE_CLAIM = "The café isn't far."


@dataclass(frozen=True)
class Encoded:
    """Input ids (and token type ids where the model takes them) per pair; ``truncated``: the
    pairs cut to ``max_length``."""

    ids: list[list[int]]
    types: list[list[int]] | None
    truncated: list[int]


@dataclass(frozen=True)
class _Template:
    """Where the special tokens go around the two sequences, and their token type ids."""

    prefix: list[int]
    middle: list[int]
    suffix: list[int]
    prefix_types: list[int]
    middle_types: list[int]
    suffix_types: list[int]
    type_a: int
    type_b: int
    with_types: bool

    @property
    def specials(self) -> int:
        return len(self.prefix) + len(self.middle) + len(self.suffix)


class PairEncoder:
    """Input ids of (premise pieces, hypothesis) pairs, equal to what ``tokenizer`` gives for
    the joined premise and the hypothesis; thread-safe.

    ``cache_size``: pieces whose ids are kept (least recently used out), likewise for
    :meth:`count`.
    """

    def __init__(self, tokenizer: Any, max_length: int, *, cache_size: int = 1 << 16) -> None:
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.cache_size = cache_size
        self._ids: OrderedDict[str, tuple[int, ...]] = OrderedDict()  # tuples: untracked by gc
        self._counts: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()
        self._tokenizer_lock = threading.Lock()  # a fast tokenizer's settings change per call
        template = _template(tokenizer) if _concatenable(tokenizer) else None
        self.template = template
        self._cuts = False  # whether a pair too long is cut here (else by the tokenizer)
        if template is not None:
            probe = [list(p) for p in _PROBE]
            claims = [_PROBE_CLAIM] * len(probe)
            if self.encode(probe, claims) != self._tokenize(probe, claims):
                self.template = None  # a tokenizer the rules above do not describe
                return
            self._cuts = True
            long = [[text] for text, _ in _long_probes(max_length)]
            claims = [claim for _, claim in _long_probes(max_length)]
            self._cuts = self.encode(long, claims) == self._tokenize(long, claims, cut=True)

    @property
    def exact(self) -> bool:
        """Whether pairs are built from cached piece ids (else the tokenizer runs on each)."""
        return self.template is not None

    def encode(self, premises: Sequence[Sequence[str]], hypotheses: Sequence[str]) -> Encoded:
        """The model inputs of each ``(premise pieces, hypothesis)``: ``"".join(pieces)`` is the
        premise text."""
        template = self.template
        if template is None:
            return self._tokenize(premises, hypotheses)
        known = self._lookup({*(p for pieces in premises for p in pieces), *hypotheses})
        ids: list[list[int]] = []
        types: list[list[int]] | None = [] if template.with_types else None
        too_long: list[int] = []
        budget = self.max_length - template.specials
        for i, (pieces, hypothesis) in enumerate(zip(premises, hypotheses, strict=True)):
            a: Sequence[int] = [t for piece in pieces for t in known[piece]]
            b: Sequence[int] = known[hypothesis]
            if len(a) + len(b) > budget:
                too_long.append(i)
                a, b = longest_first(a, b, budget) if self._cuts else ([], ())  # else below
            ids.append([*template.prefix, *a, *template.middle, *b, *template.suffix])
            if types is not None:
                types.append(
                    template.prefix_types
                    + [template.type_a] * len(a)
                    + template.middle_types
                    + [template.type_b] * len(b)
                    + template.suffix_types
                )
        if too_long and not self._cuts:
            cut = self._tokenize(
                [premises[i] for i in too_long], [hypotheses[i] for i in too_long], cut=True
            )
            for j, i in enumerate(too_long):
                ids[i] = cut.ids[j]
                if types is not None and cut.types is not None:
                    types[i] = cut.types[j]
        return Encoded(ids, types, too_long)

    def count(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text without special tokens, cached by text (a text already
        tokenised as a pair's piece is not tokenised again)."""
        with self._lock:
            found = {t: self._counts[t] for t in texts if t in self._counts}
            found.update((t, len(self._ids[t])) for t in texts if t not in found and t in self._ids)
        missing = sorted({t for t in texts if t not in found})
        if missing:
            with self._tokenizer_lock:
                rows = self.tokenizer(missing, add_special_tokens=False, truncation=False)
            counted = {t: len(row) for t, row in zip(missing, rows["input_ids"], strict=True)}
            found.update(counted)
            with self._lock:
                _remember(self._counts, counted, self.cache_size)
        return [found[t] for t in texts]

    def _lookup(self, pieces: set[str]) -> dict[str, tuple[int, ...]]:
        """Token ids of each piece, from the cache or one batched tokenizer call."""
        found: dict[str, tuple[int, ...]] = {}
        missing: list[str] = []
        with self._lock:
            cache = self._ids
            for piece in pieces:
                ids = cache.get(piece)
                if ids is None:
                    missing.append(piece)
                else:
                    cache.move_to_end(piece)
                    found[piece] = ids
        if missing:
            with self._tokenizer_lock:
                rows = self.tokenizer(missing, add_special_tokens=False, truncation=False)
            fresh = {p: tuple(ids) for p, ids in zip(missing, rows["input_ids"], strict=True)}
            found.update(fresh)
            with self._lock:
                _remember(self._ids, fresh, self.cache_size)
        return found

    def _tokenize(
        self, premises: Sequence[Sequence[str]], hypotheses: Sequence[str], *, cut: bool = False
    ) -> Encoded:
        """The tokenizer on the joined premises (``cut``: truncated to ``max_length``)."""
        texts = ["".join(pieces) for pieces in premises]
        with self._tokenizer_lock:
            if cut:  # the premise, unless the claim alone is too long
                encoded = self.tokenizer(
                    texts, list(hypotheses), truncation="longest_first", max_length=self.max_length
                )
            else:
                encoded = self.tokenizer(texts, list(hypotheses), truncation=False)
        ids: list[list[int]] = encoded["input_ids"]
        types: list[list[int]] | None = encoded.get("token_type_ids")
        too_long = list(range(len(ids))) if cut else []
        if not cut and any(len(row) > self.max_length for row in ids):
            long = [i for i, row in enumerate(ids) if len(row) > self.max_length]
            shorter = self._tokenize(
                [premises[i] for i in long], [hypotheses[i] for i in long], cut=True
            )
            for j, i in enumerate(long):
                ids[i] = shorter.ids[j]
                if types is not None and shorter.types is not None:
                    types[i] = shorter.types[j]
            too_long = long
        return Encoded(ids, types, too_long)


def longest_first(a: Sequence[int], b: Sequence[int], budget: int) -> tuple[list[int], list[int]]:
    """``a`` and ``b`` cut to ``budget`` tokens together as ``tokenizers`` cuts a pair
    (``TruncationStrategy::LongestFirst``, from the right): the shorter keeps all it can up to
    half the budget, the longer the rest."""
    n1, n2 = len(a), len(b)
    if n1 + n2 <= budget:
        return list(a), list(b)
    swap = n1 > n2
    if swap:
        n1, n2 = n2, n1
    n2 = n1 if n1 > budget else max(n1, budget - n1)
    if n1 + n2 > budget:
        n1 = budget // 2
        n2 = n1 + budget % 2
    if swap:
        n1, n2 = n2, n1
    return list(a[:n1]), list(b[:n2])


def _long_probes(max_length: int) -> list[tuple[str, str]]:
    """Pairs too long for ``max_length``: the premise, the claim or both, odd and even."""
    words = "The café's 3.5 km walk (北京) isn't far, e.g. ÉTÉ; ok."
    long = " ".join([words] * (max_length // 4 + 2))
    half = " ".join([words] * (max_length // 40 + 1))
    return [
        (long, _PROBE_CLAIM),
        (_PROBE_CLAIM, long),
        (long, long + " x"),
        (half, long),
        (long, half),
    ]


def _remember(cache: OrderedDict[str, Any], fresh: dict[str, Any], size: int) -> None:
    cache.update(fresh)
    while len(cache) > size:
        cache.popitem(last=False)


def _concatenable(tokenizer: Any) -> bool:
    """Whether the tokenizer keeps every whitespace a token boundary (see the module doc)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return False
    try:
        spec = json.loads(backend.to_str())
    except Exception:  # a backend that cannot describe itself
        return False
    normaliser = spec.get("normalizer")
    normalisers = [] if normaliser is None else _members(normaliser, "normalizers")
    if any(n.get("type") not in _NORMALISERS for n in normalisers):
        return False
    splitters = _members(spec.get("pre_tokenizer") or {}, "pretokenizers")
    kinds = [s.get("type") for s in splitters]
    if not any(k in _SPLITTERS for k in kinds) or any(
        k not in _SPLITTERS | _FURTHER_SPLITS for k in kinds
    ):
        return False
    if any(s.get("type") == "ByteLevel" and not s.get("use_regex", True) for s in splitters):
        return False  # without its regex, byte-level BPE sees the whole text as one word
    return not any(t.get("rstrip") or t.get("single_word") for t in spec.get("added_tokens", []))


def _members(spec: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return list(spec.get(key) or []) if spec.get("type") == "Sequence" else [spec]


def _template(tokenizer: Any) -> _Template | None:
    """The special tokens of a pair, read off one encoded pair (``None`` if not of the form
    ``prefix A middle B suffix`` with one token type per sequence)."""
    try:
        pair = tokenizer("hello there", "all good", truncation=False)
        sequences = pair.sequence_ids()
    except Exception:  # not a fast tokenizer after all
        return None
    ids: list[int] = pair["input_ids"]
    types: list[int] | None = pair.get("token_type_ids")
    a = [i for i, s in enumerate(sequences) if s == 0]
    b = [i for i, s in enumerate(sequences) if s == 1]
    if not a or not b or a != list(range(a[0], a[-1] + 1)) or b != list(range(b[0], b[-1] + 1)):
        return None
    if a[-1] >= b[0]:
        return None
    typed = types if types is not None else [0] * len(ids)
    if len({typed[i] for i in a}) != 1 or len({typed[i] for i in b}) != 1:
        return None
    return _Template(
        prefix=ids[: a[0]],
        middle=ids[a[-1] + 1 : b[0]],
        suffix=ids[b[-1] + 1 :],
        prefix_types=typed[: a[0]],
        middle_types=typed[a[-1] + 1 : b[0]],
        suffix_types=typed[b[-1] + 1 :],
        type_a=typed[a[0]],
        type_b=typed[b[0]],
        with_types=types is not None,
    )
