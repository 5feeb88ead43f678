"""Drop the chunks a question will not need before the model reads them (LangChain).

:class:`ChunkFilterCompressor` is a ``BaseDocumentCompressor`` around
:class:`ene_core.filtering.ChunkFilter`: give it to a ``ContextualCompressionRetriever``, or
use :meth:`ChunkFilterCompressor.as_runnable` as an LCEL step (``{"question", "documents"}`` in,
the kept documents out). Every call records its decision: it is the compressor's
``last_decision``, goes to ``on_decision(decision, documents)``, and is dispatched to the run's
callbacks as the custom event ``"ene_chunk_filter"`` (:data:`FILTER_EVENT`; the dropped chunks'
text, scores and the tokens saved), so a handler can list the dropped chunks as *filtered before
generation*, apart from the chunks the answer did not use.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManager, Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.runnables import RunnableConfig, RunnableLambda
from pydantic import ConfigDict, Field

from ene_core.filtering.model import ChunkFilter, FilterDecision

logger = logging.getLogger("ene.filter")

FILTER_EVENT = "ene_chunk_filter"


def decision_payload(decision: FilterDecision, texts: Sequence[str], question: str) -> dict:
    """The plain-data record of one filter call (what the custom event carries)."""
    return {
        "question": question,
        "kept": list(decision.kept),
        "dropped": [
            {
                "index": i,
                "text": texts[i],
                "score": decision.scores[i] if decision.scores else None,
            }
            for i in decision.dropped
        ],
        "chunks": len(texts),
        "tokens_kept": decision.tokens_kept,
        "tokens_saved": decision.tokens_saved,
        "threshold": decision.threshold,
        "model": decision.model,
        "revision": decision.revision,
        "error": decision.error,
        "duration_ms": decision.duration_ms,
    }


class ChunkFilterCompressor(BaseDocumentCompressor):
    """Keep the documents the chunk filter keeps, in their order; never none of them.

    ``chunk_filter`` defaults to the filter shipped with ENE (loaded once, on first use).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    chunk_filter: Any = None
    on_decision: Callable[[FilterDecision, Sequence[Document]], None] | None = None
    last_decision: FilterDecision | None = Field(default=None, exclude=True)

    def _filter(self) -> ChunkFilter:
        if self.chunk_filter is None:
            self.chunk_filter = ChunkFilter()
        return self.chunk_filter

    def _record(
        self,
        decision: FilterDecision,
        documents: Sequence[Document],
        query: str,
        callbacks: Callbacks | None,
    ) -> None:
        self.last_decision = decision
        if self.on_decision is not None:
            try:
                self.on_decision(decision, documents)
            except Exception:  # a recorder never breaks the chain
                logger.exception("on_decision failed")
        if callbacks is None:
            return
        try:
            manager = CallbackManager.configure(inheritable_callbacks=callbacks)
            if manager.parent_run_id is not None:
                texts = [d.page_content for d in documents]
                manager.on_custom_event(
                    FILTER_EVENT,
                    decision_payload(decision, texts, query),
                    run_id=manager.parent_run_id,
                )
        except Exception:
            logger.exception("could not dispatch the %s event", FILTER_EVENT)

    def compress_documents(
        self,
        documents: Sequence[Document],
        query: str,
        callbacks: Callbacks | None = None,
    ) -> Sequence[Document]:
        """The kept documents (all of them if the filter fails)."""
        documents = list(documents)
        if not documents:
            return []
        decision = self._filter().decide(query, documents)
        self._record(decision, documents, query, callbacks)
        return [documents[i] for i in decision.kept]

    def as_runnable(
        self, question_key: str = "question", documents_key: str = "documents"
    ) -> RunnableLambda:
        """An LCEL step: ``{question_key: str, documents_key: [Document]}`` in, the same dict
        with the kept documents out (other keys pass through)."""

        def step(inputs: dict, config: RunnableConfig) -> dict:
            question = str(inputs.get(question_key) or "")
            kept = self.compress_documents(
                inputs.get(documents_key) or [], question, callbacks=config.get("callbacks")
            )
            return {**inputs, documents_key: list(kept)}

        return RunnableLambda(step, name="ChunkFilter")
