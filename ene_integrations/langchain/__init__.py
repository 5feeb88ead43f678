"""LangChain and LangGraph adapter: the ENG of every request's answer, and pruning steps.

* :class:`NecessityCallbackHandler` - attach it (``config={"callbacks": [handler]}``) or
  :func:`instrument` the process; each root run (an LCEL chain, a ``create_agent`` agent, a
  LangGraph graph) is evaluated on what its answering model saw and said, off the request path
  by default. The handler only translates callbacks into :class:`ene_core.RunRecorder` events;
  the rules (which answer, which contexts, which question) live in :mod:`ene_core.kit.runs`.
* :func:`tag_context` - mark the step whose output is the context the model saw (after a
  rerank or filter, or when the prompt shows the documents rewritten).
* :func:`report_documents` - tell the handler about documents it cannot see being retrieved
  (``vector_store.similarity_search`` inside a ``@dynamic_prompt`` middleware).
* :class:`ChunkFilterCompressor` - drop the chunks a question will not need *before* the model
  reads them (a ``BaseDocumentCompressor``; ``.as_runnable()`` for LCEL), with ENE's
  :class:`ene_core.ChunkFilter`.
* :class:`NecessityPruner` - a Runnable (LCEL step or graph node) that drops the documents the
  answer did not use; :func:`pruning_middleware` does the same inside ``create_agent``.

Modules: ``handler`` (callbacks -> run model), ``translate`` (LangChain values -> plain values),
``install`` (process-wide ``instrument``), ``pruning`` (``NecessityPruner``, middleware).
"""

# ENE names the single-module adapter (``langchain.py``) also exposed; they live in ene_core
# (``IncompleteRequestError`` is public here too).
from ene_core import (  # noqa: F401
    Engine,
    EvidenceNecessityGraph,
    IncompleteRequestError,
    NecessityDispatcher,
    NecessityResult,
    default_engine,
    prune,
)
from ene_core.kit.pruning import KEEP_POLICIES, KeepPolicy  # noqa: F401
from ene_core.kit.results import ExpiringDict, Mode  # noqa: F401
from ene_core.kit.runs import (  # noqa: F401
    Message,
    RunDecision,
    RunRecorder,
    dispatch_decision,
    normalise,
)

from .filter import FILTER_EVENT, ChunkFilterCompressor
from .handler import (
    CONTEXT_TAG,
    NecessityCallbackHandler,
    report_documents,
    tag_context,
)
from .install import instrument, uninstrument
from .pruning import NecessityPruner, pruning_middleware

__all__ = [
    "CONTEXT_TAG",
    "FILTER_EVENT",
    "ChunkFilterCompressor",
    "IncompleteRequestError",
    "NecessityCallbackHandler",
    "NecessityPruner",
    "instrument",
    "pruning_middleware",
    "report_documents",
    "tag_context",
    "uninstrument",
]
