"""Every row the verifier reads is counted in ``stats.forward_pairs``: the first readings, the
second reading of a premise read again as its leading sentences, claims re-read with a rival
amount, sentences read alone for a binding, cited chunks alone. The shipped model, wrapped only
to count the rows it is given."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from ene_core import NecessityEngine, NLIOracle

pytest.importorskip("torch")


class CountingOracle(NLIOracle):
    """The shipped verifier, counting the rows each call hands it."""

    rows = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.read: list[tuple[str, str]] = []  # every row, as (premise, claim)

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Any]:
        self.rows += len(pairs)
        return super().score(pairs)

    def score_parts(
        self,
        pairs: Sequence[tuple[Sequence[str], str]],
        on_scored: Callable[..., None] | None = None,
    ) -> list[Any]:
        self.rows += len(pairs)
        self.read += [("".join(parts), claim) for parts, claim in pairs]
        return super().score_parts(pairs, on_scored)


REQUESTS = [
    {  # a rival amount: the claim is re-read with 330 in its place
        "answer": "The tower is 500 metres tall [2]. The museum opens at 9 am [1].",
        "contexts": [
            "The city museum opens at 9 am and closes at 6 pm.",
            "The Eiffel Tower is in Paris. The tower is 330 metres tall.",
            "Bananas are yellow.",
        ],
    },
    {  # a unique role given to another: sentences opening like the claim read alone
        "answer": "The first bridge over the river was built by Smith.",
        "contexts": [
            "The first bridge over the river was built by Jones in 1820. Smith built the second "
            "bridge over the river in 1850.",
            "The river floods every spring.",
        ],
    },
    {  # a weak sentence packed with the best one: the premise is read twice
        "answer": "Owls hunt at night. Owls have excellent hearing.",
        "contexts": [
            "Most owls hunt at night and sleep during the day, hidden in trees.",
            "Owls have excellent hearing. Their feathers are soft.",
            "Some birds migrate south. Penguins cannot fly. Ducks swim well in cold water.",
        ],
        "question": "What do owls do?",
    },
]


def test_forward_pairs_count_every_row_the_model_reads() -> None:
    oracle = CountingOracle()
    engine = NecessityEngine(oracle, cache_size=0)
    try:
        engs = engine.evaluate_many(REQUESTS)
    finally:
        engine.close()
    assert oracle.rows > 0
    assert sum(e.stats.forward_pairs for e in engs) == oracle.rows
    assert sum(e.stats.focus_pairs for e in engs) > 0  # second readings were among them
    assert engs[0].claims[0].status == "contradicted"  # the rival reading ran


def test_no_row_is_read_twice_and_every_row_is_counted() -> None:
    """Readings are cached on their own: a premise that is another's focus, or a focus that two
    premises share (leave-one-out drops a weak sentence and keeps the leading one), is read
    once; the verdicts are those of an engine that reads every premise afresh."""
    oracle = CountingOracle()
    engine = NecessityEngine(oracle)
    fresh = NecessityEngine(oracle, cache_size=0)
    try:
        engs = engine.evaluate_many(REQUESTS)
        rows = oracle.rows
        again = fresh.evaluate_many(REQUESTS)
    finally:
        engine.close()
        fresh.close()
    assert len(set(oracle.read[:rows])) == rows  # each (premise, claim) once
    assert sum(e.stats.forward_pairs for e in engs) == rows
    assert sum(e.stats.forward_pairs for e in again) == oracle.rows - rows > rows
    for eng, other in zip(engs, again, strict=True):
        assert eng.verdicts() == other.verdicts()
        assert [c.p_entail for c in eng.claims] == [c.p_entail for c in other.claims]
        assert [c.necessary for c in eng.claims] == [c.necessary for c in other.claims]
