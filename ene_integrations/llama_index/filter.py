"""Drop the nodes a question will not need before synthesis (LlamaIndex).

:class:`ChunkFilterPostprocessor` is a ``BaseNodePostprocessor`` around
:class:`ene_core.filtering.ChunkFilter`:
``index.as_query_engine(node_postprocessors=[ChunkFilterPostprocessor()])``. Every call records
its decision: it is the postprocessor's ``last_decision``, goes to
``on_decision(decision, nodes)``, and is emitted on LlamaIndex's instrumentation dispatcher as a
:class:`ChunkFilterEvent` (the dropped nodes' text, scores and the tokens saved), so a handler can
list the dropped chunks as *filtered before generation*, apart from the chunks the answer did not
use.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle
from pydantic import Field

from ene_core.filtering._text import chunk_text
from ene_core.filtering.model import ChunkFilter, FilterDecision

logger = logging.getLogger("ene.filter")
dispatcher = get_dispatcher(__name__)


class ChunkFilterEvent(BaseEvent):
    """One filter call: what was kept and dropped before synthesis."""

    question: str = ""
    kept: list[int] = Field(default_factory=list)
    dropped: list[dict[str, Any]] = Field(default_factory=list)
    chunks: int = 0
    tokens_kept: int = 0
    tokens_saved: int = 0
    threshold: float = 0.0
    model: str | None = None
    revision: str | None = None
    error: str | None = None

    @classmethod
    def class_name(cls) -> str:
        return "ChunkFilterEvent"


class ChunkFilterPostprocessor(BaseNodePostprocessor):
    """Keep the nodes the chunk filter keeps, in their order; never none of them.

    ``chunk_filter`` defaults to the filter shipped with ENE (loaded once, on first use).
    """

    chunk_filter: Any = Field(default=None, exclude=True)
    on_decision: Callable[[FilterDecision, Sequence[NodeWithScore]], None] | None = Field(
        default=None, exclude=True
    )
    last_decision: FilterDecision | None = Field(default=None, exclude=True)

    @classmethod
    def class_name(cls) -> str:
        return "ChunkFilterPostprocessor"

    def _filter(self) -> ChunkFilter:
        if self.chunk_filter is None:
            self.chunk_filter = ChunkFilter()
        return self.chunk_filter

    def _postprocess_nodes(
        self,
        nodes: list[NodeWithScore],
        query_bundle: QueryBundle | None = None,
    ) -> list[NodeWithScore]:
        nodes = list(nodes)
        if not nodes:
            return []
        question = query_bundle.query_str if query_bundle is not None else ""
        decision = self._filter().decide(question, nodes)
        self._record(decision, nodes, question)
        return [nodes[i] for i in decision.kept]

    def _record(
        self, decision: FilterDecision, nodes: Sequence[NodeWithScore], question: str
    ) -> None:
        self.last_decision = decision
        if self.on_decision is not None:
            try:
                self.on_decision(decision, nodes)
            except Exception:  # a recorder never breaks the query
                logger.exception("on_decision failed")
        try:
            dropped = []
            for i in decision.dropped:
                try:
                    text = chunk_text(nodes[i])
                except TypeError:
                    text = ""
                dropped.append(
                    {
                        "index": i,
                        "node_id": getattr(nodes[i], "node_id", None),
                        "text": text,
                        "score": decision.scores[i] if decision.scores else None,
                    }
                )
            dispatcher.event(
                ChunkFilterEvent(
                    question=question,
                    kept=list(decision.kept),
                    dropped=dropped,
                    chunks=len(nodes),
                    tokens_kept=decision.tokens_kept,
                    tokens_saved=decision.tokens_saved,
                    threshold=decision.threshold,
                    model=decision.model,
                    revision=decision.revision,
                    error=decision.error,
                )
            )
        except Exception:
            logger.exception("could not emit the ChunkFilterEvent")
