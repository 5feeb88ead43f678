"""scripts/thin_swaps.py: the recipe copy with fewer one-span-swap contradictions."""

from __future__ import annotations

import random
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from audit_cues import swapped_span  # noqa: E402
from synth_nli import CONTRADICTION, ENTAILMENT, NEUTRAL, NOT_ENTAILMENT, Pair  # noqa: E402
from thin_swaps import thinned  # noqa: E402

PREMISE = "The ferry leaves the harbour at seven every morning in summer."
SWAPS = ("departs", "sails", "returns", "arrives", "stops")  # each replaces "leaves"
UNRELATED = "Tickets for the crossing can be bought on board."
LABELS = (ENTAILMENT, NEUTRAL, CONTRADICTION, NOT_ENTAILMENT)


def _pair(swapped: bool, label: int, n: int) -> Pair:
    word = SWAPS[n % len(SWAPS)]
    hypothesis = PREMISE.replace("leaves", word) if swapped else UNRELATED
    return Pair(PREMISE, hypothesis, label, f"src{n}")  # no two pairs alike


rows = st.lists(st.tuples(st.booleans(), st.sampled_from(LABELS)), max_size=60)


def test_the_fixture_pairs_are_what_the_cue_reads() -> None:
    assert swapped_span(_pair(True, ENTAILMENT, 1)) == ("leaves", "sails")
    assert swapped_span(_pair(False, ENTAILMENT, 1)) is None


@given(rows, st.sampled_from((0.0, 0.2, 0.33, 0.5, 0.9)), st.integers(0, 5))
def test_only_swap_contradictions_go_and_they_end_at_the_share(
    spec: list[tuple[bool, int]], share: float, seed: int
) -> None:
    pairs = [_pair(s, label, n) for n, (s, label) in enumerate(spec)]
    kept = thinned(pairs, share, random.Random(seed))
    gone = [p for p in pairs if p not in kept]
    # order kept, and nothing but a swap-form contradiction dropped
    assert [p for p in pairs if p in kept] == kept
    assert all(p.label == CONTRADICTION and swapped_span(p) for p in gone)
    swap = [p for p in kept if swapped_span(p)]
    contra = sum(p.label == CONTRADICTION for p in swap)
    assert contra <= share * len(swap) + 1e-9
    if gone:  # dropped only down to the share, never below it by a whole pair
        assert (contra + 1) / (len(swap) + 1) > share


def test_the_same_seed_drops_the_same_pairs() -> None:
    pairs = [_pair(n % 2 == 0, LABELS[n % 4], n) for n in range(200)]
    first = thinned(pairs, 0.1, random.Random(7))
    assert first == thinned(pairs, 0.1, random.Random(7))
    assert len(first) < len(pairs)
