"""Thin adapters from frameworks to :mod:`ene_core`: LangChain, LlamaIndex and OpenTelemetry.

Each submodule imports its framework; import the one you use, e.g.
``from ene_integrations.langchain import NecessityCallbackHandler``.
"""
