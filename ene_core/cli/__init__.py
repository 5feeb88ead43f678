"""The ``ene`` command line and the batch tool behind ``ene eval``.

- :mod:`~ene_core.cli.commands`: argument parsing, the subcommands and :func:`main` (the ``ene``
  console script; ``python -m ene_core.cli`` runs it too);
- :mod:`~ene_core.cli.batch` and :mod:`~ene_core.cli.outputs`: ``ene eval`` (JSONL requests in,
  ENG JSONL out; atomic output and ``--resume``); :mod:`~ene_core.cli.progress`: its progress bar;
- :mod:`~ene_core.cli.ray_backend`: ``ene eval --backend ray`` on Ray Data.
"""

from ..errors import EneError  # noqa: F401  (``ene_core.cli`` was one module that exposed it)
from ..service.options import ENGINE_OPTIONS, build_engine, engine_options
from .commands import (
    EVAL_EPILOG,
    EXAMPLE_LINES,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PARTIAL,
    EXIT_USAGE,
    SUBCOMMANDS,
    main,
    make_parser,
    render,
)

__all__ = [
    "ENGINE_OPTIONS",
    "EVAL_EPILOG",
    "EXAMPLE_LINES",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_PARTIAL",
    "EXIT_USAGE",
    "SUBCOMMANDS",
    "build_engine",
    "engine_options",
    "main",
    "make_parser",
    "render",
]
