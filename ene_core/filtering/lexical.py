"""Lexical features of a chunk against its question, within one request's chunks.

The filter's score combines its network's logit with these (a logistic layer fitted on the
training pairs, stored in ``filter.json`` as ``combine``): a two-layer network is fast but reads
little, and whether a chunk names what the question names is what BM25 already knows.

Per chunk: ``bm25_rel`` (BM25 of the question, the request's chunks as the corpus, over the
request's best; 0 when no chunk shares a word), ``bm25_top`` (1 for the best chunk(s)),
``coverage`` (the IDF-weighted share of the question's content words the chunk contains).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence

FEATURES = ("bm25_rel", "bm25_top", "coverage")
WORD = re.compile(r"[a-z0-9]+")
_STOP_WORDS = (
    "a an the of in on at to for from by with and or but is are was were be been being what which "
    "who whom whose when where why how that this these those it its as do does did has have had "
    "not no than then there their they he she his her him i you your we our can could will "
    "would should may might also into about over after before during between both same other "
    "such more most many much"
)
STOP = frozenset(_STOP_WORDS.split())


def words(text: str) -> list[str]:
    """Lower-cased word tokens."""
    return WORD.findall(text.lower())


def lexical_features(question: str, texts: Sequence[str]) -> list[list[float]]:
    """One row of :data:`FEATURES` per chunk."""
    docs = [words(t) for t in texts]
    n = len(docs)
    if n == 0:
        return []
    terms = sorted({w for w in words(question) if w not in STOP})  # sums in one order: the
    # same last digits in every process (a set's order follows the string hash seed)
    df = Counter(w for d in docs for w in set(d))
    avg = sum(len(d) for d in docs) / n or 1.0
    idf = {w: math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5)) for w in terms}
    # coverage weights: a question word no chunk has still counts in the denominator
    weight = {w: math.log(1 + (n + 1) / (df[w] + 0.5)) for w in terms}
    total = sum(weight.values()) or 1.0
    bm25, coverage = [], []
    for d in docs:
        tf = Counter(d)
        score = 0.0
        for w in terms:
            if w in tf:
                score += idf[w] * tf[w] * 2.5 / (tf[w] + 1.5 * (0.25 + 0.75 * len(d) / avg))
        bm25.append(score)
        coverage.append(sum(weight[w] for w in terms if w in tf) / total)
    best = max(bm25)
    rows = []
    for b, c in zip(bm25, coverage, strict=True):
        rel = b / best if best > 0 else 0.0
        rows.append([rel, 1.0 if best > 0 and b >= best else 0.0, c])
    return rows


def combine(logit: float, features: Sequence[float], weights: Mapping[str, float]) -> float:
    """The combined logit: ``neural * logit + sum(w_f * f) + bias``."""
    value = weights.get("neural", 1.0) * logit + weights.get("bias", 0.0)
    for name, x in zip(FEATURES, features, strict=True):
        value += weights.get(name, 0.0) * x
    return value
