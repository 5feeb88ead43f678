"""The engine as a service: :mod:`~ene_core.service.serve` (``ene serve``: a Ray Serve
deployment with an HTTP JSON API) and :mod:`~ene_core.service.remote` (its client,
:class:`~ene_core.service.remote.RemoteEngine`, which has the engine's public surface).

Nothing is imported here, so importing the package loads neither Ray nor httpx.
"""
