"""Chunk filtering before generation (issue 55): drop retrieved chunks a question will not need.

* :class:`ChunkFilter` - ``ChunkFilter()`` loads the default filter shipped in the package
  (``ene_core/models/chunk-filter``: a two-layer delta on top of ``ene-nli-mini``, offline, CPU);
  ``scores(question, chunks)``, ``keep(question, chunks)`` (indices kept, input order) and
  ``decide(question, chunks)`` (a :class:`FilterDecision`: kept, dropped, scores, tokens saved,
  error). It fails open: any error keeps every chunk, is logged and recorded.
* :func:`select` - the keep rule (threshold, ``min_keep``, ``max_keep``, never empty).
* :func:`pairs_from_eng` / :func:`pairs_from_engs` - needed / not-needed labels from ENGs.
* :func:`train_filter` - train and calibrate a filter (``ene train-filter`` runs it on ENGs).

Modules: ``model`` (ChunkFilter), ``network`` (the network and its files), ``labels`` (labels
from ENGs), ``training`` (the training loop, split, checkpoints, calibration), ``cli``
(``ene train-filter``), ``_text`` (chunk text from strings, Documents, nodes).
"""

from .labels import needed_contexts, pairs_from_eng, pairs_from_engs
from .model import ChunkFilter, FilterDecision, select
from .training import Pair, train_filter

__all__ = [
    "ChunkFilter",
    "FilterDecision",
    "Pair",
    "needed_contexts",
    "pairs_from_eng",
    "pairs_from_engs",
    "select",
    "train_filter",
]
