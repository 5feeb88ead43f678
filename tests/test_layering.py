"""The import rules.

- ``ene_core`` is the framework-free core: it imports nothing from ``ene_integrations`` and works
  without LangChain, LlamaIndex or OpenTelemetry installed.
- No import circles: the import graph of ``ene_core`` and ``ene_integrations`` (module-level,
  lazy and ``TYPE_CHECKING`` imports alike) has no cycle.
- Layers (:data:`LAYERS`, lowest first): a module imports only from its own layer and the layers
  below it; ``reports`` and ``service`` are independent of each other.
- Between the OpenTelemetry and Phoenix adapters the dependency runs one way (``otel`` may import
  ``phoenix``, never the reverse).
- No source file of ``ene_core`` or ``ene_integrations`` is over 800 lines, and ``ene_core`` keeps
  its code in packages (at most 8 top-level modules that define code).
- The amount rules read in one direction (quantities, amounts, arithmetic, grounding), and a
  claim's walk through them never calls back into a module that called it.
- The old module paths still import, with a DeprecationWarning that names the new path.

docs/architecture.md draws the same picture.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ADAPTER_LIBRARIES = ("langchain", "langchain_core", "llama_index", "opentelemetry", "phoenix")


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, anywhere in it (inside functions too), relative ones
    resolved against its package."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


# -- the import graph ---------------------------------------------------------------------------
PACKAGES = ("ene_core", "ene_integrations")
MAX_LINES = 800

# Lowest first: a module imports only from its own layer and those below. Each of ``ene_core``'s
# packages is a layer (by prefix), so a new module in one has its layer already; a new top-level
# module of ``ene_core`` has to be given one here.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("ene_core.errors",)),
    ("text", ("ene_core.text",)),  # answers, claims, contexts, words: no model
    ("verifiers", ("ene_core.verifiers", "ene_core.testing")),  # what scores a pair
    ("rules", ("ene_core.rules",)),  # the deterministic checks around a verifier
    ("engine", ("ene_core.graph", "ene_core.engine")),  # text + contexts -> ENG
    ("adapter_kit", ("ene_core.kit", "ene_core.filtering")),  # what every adapter shares
    ("reports", ("ene_core.reports",)),
    ("service", ("ene_core.service",)),
    ("cli", ("ene_core.cli",)),
    ("api", ("ene_core", "ene_core._moved")),  # the public facade and the old module paths
    ("integrations", ("ene_integrations",)),
)
INDEPENDENT = (("reports", "service"),)  # neither imports the other
PREFIXED = {  # + .*
    "ene_core.text",
    "ene_core.verifiers",
    "ene_core.rules",
    "ene_core.engine",
    "ene_core.kit",
    "ene_core.filtering",
    "ene_core.reports",
    "ene_core.service",
    "ene_core.cli",
    "ene_integrations",
}
MAX_TOP_LEVEL_MODULES = 8  # top-level modules of ene_core that define code


def module_files() -> dict[str, Path]:
    """Every module of the project by dotted name (a package by its ``__init__``)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def internal_imports(path: Path, modules: Iterable[str]) -> set[str]:
    """The project modules a file imports, anywhere in it (functions and ``TYPE_CHECKING``
    blocks too). ``from pkg import name`` is an import of ``pkg.name`` when that is a module,
    else of ``pkg``. Importing ``a.b.c`` also runs ``a/__init__`` and ``a.b/__init__``: those
    count too, unless they are packages of the importer itself (already being imported)."""
    known = set(modules)
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            for alias in node.names:
                targets.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    own = {".".join(name.split(".")[:i]) for i in range(1, len(name.split(".")))}
    found = set()
    for target in targets:
        if target.split(".")[0] not in PACKAGES:
            continue
        parts = target.split(".")
        found.update(
            parent
            for parent in (".".join(parts[:i]) for i in range(1, len(parts)))
            if parent not in own
        )
        found.add(target)
    return {m for m in found if m in known and m != name.removesuffix(".__init__")}


def import_graph() -> dict[str, set[str]]:
    modules = module_files()
    return {name: internal_imports(path, modules) for name, path in modules.items()}


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The import circles: each strongly connected component of more than one module (or a
    module importing itself), sorted (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def layer_of(module: str) -> str:
    best = ""
    layer = ""
    for name, members in LAYERS:
        for member in members:
            exact = module == member
            below = member in PREFIXED and module.startswith(member + ".")
            if (exact or below) and len(member) > len(best):
                best, layer = member, name
    if not layer:
        raise AssertionError(f"{module} has no layer: add it to LAYERS in tests/test_layering.py")
    return layer


def test_the_scan_sees_relative_lazy_and_absolute_imports(tmp_path: Path) -> None:
    module = ROOT / "ene_integrations" / "otel.py"
    seen = imported_modules(module)
    assert "ene_integrations.phoenix" in seen  # `from .phoenix import ...` inside a function
    assert "ene_integrations._attributes" in seen


def test_ene_core_imports_nothing_from_ene_integrations() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            m for m in imported_modules(path) if m.split(".")[0] == "ene_integrations"
        )
        for path in sorted((ROOT / "ene_core").rglob("*.py"))
    }
    assert {k: v for k, v in offenders.items() if v} == {}
    assert len(offenders) >= 15  # the scan did see the package


def test_ene_core_never_imports_an_adapter_library() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            m for m in imported_modules(path) if m.split(".")[0] in ADAPTER_LIBRARIES
        )
        for path in sorted((ROOT / "ene_core").rglob("*.py"))
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_otel_and_phoenix_depend_one_way() -> None:
    phoenix = imported_modules(ROOT / "ene_integrations" / "phoenix.py")
    assert not {m for m in phoenix if m.startswith("ene_integrations.otel")}
    shared = imported_modules(ROOT / "ene_integrations" / "_attributes.py")
    assert not {m for m in shared if m.startswith("ene_integrations")}


def test_ene_core_works_with_the_adapter_libraries_blocked() -> None:
    """In a fresh interpreter where importing LangChain, LlamaIndex, OpenTelemetry, Phoenix or
    Ray fails, ``ene_core`` imports, evaluates, and runs its CLI."""
    script = textwrap.dedent(
        f"""
        import importlib.abc, sys

        BLOCKED = {(*ADAPTER_LIBRARIES, "ray")!r}

        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in BLOCKED:
                    raise ImportError(f"blocked by the test: {{name}}")
                return None

        sys.meta_path.insert(0, Block())
        import ene_core, ene_core.cli, ene_core.cli.batch, ene_core.cli.ray_backend
        import ene_core.reports.viewer
        from ene_core.testing import KeywordOracle

        eng = ene_core.NecessityEngine(KeywordOracle()).evaluate("Owls hunt.", ["Owls hunt."])
        assert eng.counts.supported == 1
        assert ene_core.cli.main(["schema"]) == 0
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
        assert not loaded, loaded
        print("OK")
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("OK")


def test_the_old_ray_import_path_still_works() -> None:
    from ene_core.cli import ray_backend
    from ene_integrations import ray

    assert ray.eval_with_ray is ray_backend.eval_with_ray
    assert ray.split_lines is ray_backend.split_lines


def test_the_cycle_finder_finds_circles_and_nothing_else() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"a"}, "b": set()}) == [["a"]]
    assert cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_the_graph_sees_submodules_packages_and_lazy_imports() -> None:
    graph = import_graph()
    assert "ene_core.cli.batch" in graph["ene_core.cli.commands"]  # `from . import batch` lazily
    assert "ene_core.service.options" in graph["ene_core.cli.ray_backend"]  # inside a method
    assert "ene_core.service.remote" in graph["ene_core"]  # the facade's lazy __getattr__
    assert "ene_core.cli.outputs" in graph["ene_core.cli.batch"]  # under TYPE_CHECKING
    # importing ene_core.cli.ray_backend runs ene_core/cli/__init__ first
    assert {"ene_core.cli", "ene_core.cli.ray_backend"} <= graph["ene_integrations.ray"]
    # a module's own packages are not edges: they are already being imported
    assert "ene_core" not in graph["ene_core.engine.necessity"]
    assert "ene_core.cli" not in graph["ene_core.cli.batch"]


def test_no_import_circles() -> None:
    graph = import_graph()
    assert len(graph) >= 50  # the scan did see both packages
    assert cycles(graph) == []


def test_every_import_goes_down_the_layers() -> None:
    order = [name for name, _ in LAYERS]
    upward = sorted(
        f"{module} ({layer_of(module)}) imports {target} ({layer_of(target)})"
        for module, targets in import_graph().items()
        for target in targets
        if order.index(layer_of(target)) > order.index(layer_of(module))
        or tuple(sorted((layer_of(module), layer_of(target)))) in INDEPENDENT
    )
    assert upward == []


def test_the_layers_name_every_module_once() -> None:
    layers = {module: layer_of(module) for module in module_files()}
    assert {name for name, _ in LAYERS} == set(layers.values())
    listed = [m for _, members in LAYERS for m in members if m not in PREFIXED]
    assert len(listed) == len(set(listed))
    assert not set(listed) - set(layers), "LAYERS names a module that does not exist"


def test_no_source_file_is_over_800_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in module_files().values()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def _defines_code(path: Path) -> bool:
    """Whether a module defines anything: a function, a class or a name other than ``__all__``."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(not (isinstance(t, ast.Name) and t.id.startswith("__")) for t in targets):
                return True
    return False


def test_ene_core_keeps_its_code_in_packages() -> None:
    top = sorted(p.name for p in (ROOT / "ene_core").glob("*.py") if _defines_code(p))
    assert "graph.py" in top  # the scan sees what defines code
    assert not _defines_code(ROOT / "ene_core" / "text" / "__init__.py")  # re-exports only
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


# the amount rules, each reading only from the ones before it
AMOUNT_RULES = (
    "ene_core.rules.quantities",  # numbers and units as written
    "ene_core.rules.amounts",  # amounts out of text
    "ene_core.rules.arithmetic",  # what stated amounts derive
    "ene_core.rules.grounding",  # which of a claim's amounts the evidence states; rivals
)


def test_the_amount_rules_import_in_one_direction() -> None:
    graph = import_graph()
    for i, module in enumerate(AMOUNT_RULES):
        later = set(AMOUNT_RULES[i + 1 :])
        assert not graph[module] & later, f"{module} imports {graph[module] & later}"


def _module_walk(run: Callable[[], object]) -> list[list[str]]:
    """The stacks of amount-rule modules seen at every call made while ``run`` runs, each stack
    with a module's consecutive frames folded into one."""
    import inspect

    stacks: list[list[str]] = []

    def profile(frame: Any, event: str, arg: object) -> None:
        if event != "call":
            return
        mods = []
        for info in inspect.getouterframes(frame, 0)[::-1]:
            name = info.frame.f_globals.get("__name__", "")
            if name in AMOUNT_RULES and (not mods or mods[-1] != name):
                mods.append(name)
        stacks.append(mods)

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return stacks


def test_a_claim_enters_each_amount_rule_once_per_stage() -> None:
    """Following a claim through the amount rules (what the evidence states, what it computes,
    what a comparison derives), no module is called back by a module it called."""
    from ene_core.rules.arithmetic import derive
    from ene_core.rules.grounding import computed, rivals, unstated

    claim = "The 2 km walk took about 40 minutes, 15 minutes longer than the 25 minute ride."
    premise = "The ride takes 25 minutes. The walk of 2 km takes 40 minutes, from 1998 to 2004."
    found: list[list[str]] = []
    found += _module_walk(lambda: unstated(claim + " ", premise))
    found += _module_walk(lambda: computed(claim + "  ", premise))
    found += _module_walk(lambda: [rivals(a, premise, claim=claim) for a in unstated(claim, "")])
    found += _module_walk(lambda: derive(claim + "   ", premise.split(". ")))
    assert {m for stack in found for m in stack} == set(AMOUNT_RULES)  # every module walked
    back = [stack for stack in found if len(stack) != len(set(stack))]
    assert back == []


def test_old_module_paths_still_import_with_a_warning() -> None:
    """Every old path answers with the new module's names, after a DeprecationWarning naming
    the new path; the public names stay where they were."""
    import importlib
    import warnings

    import ene_core
    from ene_core import _moved

    for old, homes in _moved.MOVED.items():
        sys.modules.pop(old, None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module = importlib.import_module(old)
        assert any(
            issubclass(w.category, DeprecationWarning) and homes[0] in str(w.message)
            for w in caught
        ), old
        new = importlib.import_module(homes[0])
        for name in getattr(new, "__all__", ()):
            assert getattr(module, name) is getattr(new, name), (old, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from ene_core.grounding import _derived, amounts  # split: names from each new home
        from ene_core.oracle import NLIOracle, Scores, decide

        from ene_core.rules.amounts import amounts as new_amounts
        from ene_core.rules.arithmetic import derivable

    assert (_derived, amounts) == (derivable, new_amounts)
    assert (NLIOracle, Scores, decide) == (ene_core.NLIOracle, ene_core.Scores, ene_core.decide)
    for name in ene_core.__all__:
        assert getattr(ene_core, name) is not None
