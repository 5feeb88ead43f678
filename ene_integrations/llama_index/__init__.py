"""LlamaIndex adapter: every answer gets its Evidence Necessity Graph, the app's objects untouched.

>>> from ene_integrations.llama_index import instrument
>>> handler = instrument()                      # once, at start-up; idempotent
>>> response = query_engine.query("...")
>>> handler.result(response, timeout=5).eng     # by the response object, or by request id

How it works. ``instrument()`` registers an event handler and a span handler on LlamaIndex's
root instrumentation dispatcher and translates what they see into one evaluation per answer,
decided by the framework-free run model (:class:`ene_core.RunRecorder`):

* **synthesis** (``synthesize`` / ``asynthesize`` span): contexts = the nodes the synthesizer
  was given (after postprocessing; for a sub-question engine the "Sub question / Response"
  pairs, not the raw chunks), answer = its response text (streams: when exhausted), question =
  the chat user's message when inside a chat engine, else the query. Request id: the span id.
* **combination** (a synthesizer's ``get_response`` outside a synthesis, e.g. a multi-selector
  router combining its engines' answers): contexts = the texts it combined.
* **agent run** (``FunctionAgent``, ``ReActAgent``, ``AgentWorkflow``): tool results and the LLM
  calls' messages are recorded; answer = the ``AgentOutput`` the run returned, contexts = the
  tool outputs in the input of the LLM call that wrote it, question = the user's message.
* **workflow run** (any other ``Workflow`` whose steps call an LLM themselves): the nodes its
  retrievals returned and its LLM calls are recorded; answer = the ``StopEvent``'s result,
  contexts = those nodes in the input of the call that wrote it. Look it up by ``run()``'s handler.

A context that carries an inner request's answer (a query engine tool's output, a sub-answer, a
router branch) names it in ``metadata["ene_source"]``; :meth:`NecessityHandler.linked` returns
those inner results, so necessity can be followed down to the chunks. The span tree tells which
engine call returned which answer, so ``handler.result(obj)`` works on what the call returned.

Never touches the app's objects: results are found by the returned object's identity (a weak
reference, never an attribute or a metadata key) or by request id, through
``handler.result`` / ``aresult``, ``on_result`` callbacks and tracing spans. With
``attach_metadata=True`` the handler also writes ``metadata["ene_request_id"]`` (and
``metadata["ene"]`` when the graph is ready, i.e. in inline mode) into the object an engine call
returns, in the caller's thread before the call returns; never later, never from another thread.

Never breaks the host: LlamaIndex silently swallows handler exceptions, so every handler body
logs and records its own failure as an ENG-less result. State that outlives a call is bounded:
open spans by a size cap; object identities (weak), retrieval positions and results by a TTL and
a size cap.

Pruning: :func:`prune_unused` / :func:`aprune_unused` return a copy of a ``Response``,
``AgentChatResponse`` or consumed streaming response whose ``source_nodes`` are the minimal
sufficient set, or of an ``AgentOutput`` whose tool outputs keep only the sources it needed;
:class:`NecessityQueryEngine` wraps a query (or chat) engine and :class:`NecessityChatEngine` a
chat engine to do so on every call.

Modules: ``handler`` (event and span taps -> run model), ``translate`` (LlamaIndex values -> run
model values), ``streams`` (stream taps), ``install`` (process-wide ``instrument``), ``pruning``
(``prune_unused``), ``engines`` (``NecessityQueryEngine``, ``NecessityChatEngine``).
"""

# ENE names the single-module adapter (``llama_index.py``) also exposed; they live in ene_core.
from ene_core import (  # noqa: F401
    Engine,
    EvidenceNecessityGraph,
    ExpiringDict,
    IncompleteRequestError,
    InvalidInputError,
    Message,
    NecessityDispatcher,
    NecessityResult,
    RunRecorder,
    default_engine,
    dispatch_decision,
    prune,
)
from ene_core.graph import SOURCE_KEY  # noqa: F401
from ene_core.kit.pruning import KeepPolicy  # noqa: F401
from ene_core.kit.results import Mode  # noqa: F401
from ene_core.kit.runs import normalise  # noqa: F401
from ene_core.text.contexts import stable_id  # noqa: F401

from .engines import NecessityChatEngine, NecessityQueryEngine
from .filter import ChunkFilterEvent, ChunkFilterPostprocessor
from .handler import NecessityHandler
from .install import installed_handler, instrument, uninstrument
from .pruning import aprune_unused, prune_unused

__all__ = [
    "ChunkFilterEvent",
    "ChunkFilterPostprocessor",
    "NecessityChatEngine",
    "NecessityHandler",
    "NecessityQueryEngine",
    "aprune_unused",
    "installed_handler",
    "instrument",
    "prune_unused",
    "uninstrument",
]
