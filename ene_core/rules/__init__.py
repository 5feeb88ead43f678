"""The deterministic rules around a verifier: what a small NLI model cannot read, read exactly.

Amounts, read in one direction: :mod:`.quantities` (numbers and units as written) and
:mod:`.amounts` (amounts with a kind and a bound) read them out of text; :mod:`.grounding` decides
which of a claim's amounts the evidence states, and their rivals; :mod:`.arithmetic` derives
comparisons, differences, totals and products from stated amounts; :mod:`.masking` writes what the
model reads of a claim whose amounts the evidence computes. Beside them: :mod:`.bindings` (a value
or a role the evidence gives to another), :mod:`.polarity` (negation and opposites) and
:mod:`.scope` (a claim wider than its evidence). Each is a pure function of text: offline and
deterministic.
"""

from .amounts import Amount, amounts, same_amount
from .arithmetic import Derivation, derive
from .grounding import computed, rivals, unstated

__all__ = [
    "Amount",
    "Derivation",
    "amounts",
    "computed",
    "derive",
    "rivals",
    "same_amount",
    "unstated",
]
