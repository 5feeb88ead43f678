"""Moved: the Ray Data backend of ``ene eval`` lives in :mod:`ene_core.cli.ray_backend`.

Ray is ENE's scale-out engine, not a framework adapter, and ``ene_core`` must not import
``ene_integrations``; this module keeps the old import path working.
"""

from ene_core.cli.ray_backend import EvaluationActor, eval_with_ray, split_lines

__all__ = ["EvaluationActor", "eval_with_ray", "split_lines"]
