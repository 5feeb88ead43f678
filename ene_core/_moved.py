"""The module paths of ENE before its packages (0.1 layout), kept importable with a warning.

``import ene_core.grounding`` (or ``from ene_core.oracle import NLIOracle``) still works: a meta
path finder answers the old name with the module that now holds its code, after a
:class:`DeprecationWarning` that names the new path. A module split in two (``ene_core.oracle``)
is answered by a module that looks each name up in its new homes, in order.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from typing import Any

#: old module -> the modules that now hold its names (the first is the one to import instead)
MOVED: dict[str, tuple[str, ...]] = {
    f"ene_core.{old}": tuple(f"ene_core.{new}" for new in homes)
    for old, homes in {
        "answer_streams": ("kit.answer_streams",),
        "arithmetic": ("rules.arithmetic",),
        "assembly": ("engine.assembly",),
        "batcher": ("engine.batcher",),
        "bindings": ("rules.bindings",),
        "citations": ("text.citations",),
        "claims": ("text.claims",),
        "contexts": ("text.contexts",),
        "encoding": ("verifiers.encoding",),
        "grounding": ("rules.grounding", "rules.amounts", "rules.arithmetic"),
        "guard": ("kit.guard",),
        "masking": ("rules.masking",),
        "minimal_set": ("engine.minimal_set",),
        "normalise": ("text.normalise",),
        "oracle": ("verifiers.nli", "verifiers.protocol", "verifiers.verdict"),
        "polarity": ("rules.polarity",),
        "premise": ("engine.premise", "text.words"),
        "pruning": ("kit.pruning",),
        "quantities": ("rules.quantities",),
        "remote": ("service.remote",),
        "report": ("reports.report",),
        "request": ("engine.request",),
        "results": ("kit.results",),
        "rounds": ("engine.rounds",),
        "runs": ("kit.runs",),
        "scope": ("rules.scope",),
        "scoring": ("engine.scoring",),
        "serve": ("service.serve",),
        "short_answers": ("text.short_answers",),
        "streaming": ("engine.streaming",),
        "viewer": ("reports.viewer",),
    }.items()
}
#: names renamed in the move: (old module, old name) -> new name
RENAMED = {("ene_core.grounding", "_derived"): "derivable"}


def warn(old: str, stacklevel: int = 3) -> None:
    homes = " / ".join(MOVED[old])
    warnings.warn(
        f"{old} moved to {homes}; import from there (the old path goes in a later release)",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


class _Split(types.ModuleType):
    """An old module whose names now live in several modules."""

    def __init__(self, name: str, homes: Sequence[str]) -> None:
        super().__init__(name, f"Deprecated: moved to {', '.join(homes)}.")
        self._homes = [importlib.import_module(home) for home in homes]

    def __getattr__(self, name: str) -> Any:
        name = RENAMED.get((self.__name__, name), name)
        for home in self._homes:
            if hasattr(home, name):
                return getattr(home, name)
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __dir__(self) -> list[str]:
        return sorted({n for home in self._homes for n in dir(home)})


class _Loader(importlib.abc.Loader):
    def create_module(self, spec: ModuleSpec) -> types.ModuleType:
        homes = MOVED[spec.name]
        warn(spec.name, stacklevel=3)
        if len(homes) == 1:
            return importlib.import_module(homes[0])
        return _Split(spec.name, homes)

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: the module is the new one (or looks names up in them)."""


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if name not in MOVED:
            return None
        return importlib.util.spec_from_loader(name, _Loader())


def install() -> None:
    """Answer the old module paths (once per process)."""
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


def old_module(name: str) -> types.ModuleType | None:
    """``ene_core.<name>`` as an attribute of the package, for an old module path."""
    full = f"ene_core.{name}"
    return importlib.import_module(full) if full in MOVED else None
