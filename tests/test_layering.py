"""The import rules.

- ``ene_core`` is the framework-free core: it imports nothing from ``ene_integrations`` and works
  without LangChain, LlamaIndex or OpenTelemetry installed.
- No import circles: the import graph of ``ene_core`` and ``ene_integrations`` (module-level,
  lazy and ``TYPE_CHECKING`` imports alike) has no cycle.
- Layers (:data:`LAYERS`, lowest first): a module imports only from its own layer and the layers
  below it; ``reports`` and ``service`` are independent of each other.
- Between the OpenTelemetry and Phoenix adapters the dependency runs one way (``otel`` may import
  ``phoenix``, never the reverse).
- No source file of ``ene_core`` or ``ene_integrations`` is over 800 lines.

docs/architecture.md draws the same picture.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path

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

# Lowest first. ``ene_core``'s own modules are listed one by one, so a new module has to be given
# a layer; the subpackages and ``ene_integrations`` by prefix.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "engine",  # text + contexts -> ENG
        tuple(
            f"ene_core.{name}"
            for name in (
                "errors",
                "normalise",
                "contexts",
                "short_answers",
                "claims",
                "citations",
                "quantities",
                "grounding",
                "masking",
                "arithmetic",
                "bindings",
                "polarity",
                "scope",
                "premise",
                "encoding",
                "oracle",
                "graph",
                "batcher",
                "request",
                "scoring",
                "minimal_set",
                "assembly",
                "rounds",
                "streaming",
                "engine",
                "testing",
            )
        ),
    ),
    (
        "adapter_kit",
        (
            "ene_core.runs",
            "ene_core.results",
            "ene_core.pruning",
            "ene_core.answer_streams",
            "ene_core.guard",
        ),
    ),
    ("reports", ("ene_core.reports",)),
    ("service", ("ene_core.service",)),
    ("cli", ("ene_core.cli",)),
    # the public facade and the re-export shims of old module paths
    (
        "api",
        ("ene_core", "ene_core.serve", "ene_core.remote", "ene_core.viewer", "ene_core.report"),
    ),
    ("integrations", ("ene_integrations",)),
)
INDEPENDENT = (("reports", "service"),)  # neither imports the other
PREFIXED = {"ene_core.reports", "ene_core.service", "ene_core.cli", "ene_integrations"}  # + .*


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
    assert "ene_core" not in graph["ene_core.engine"]
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
    assert {"engine", "adapter_kit", "reports", "service", "cli", "api", "integrations"} == set(
        layers.values()
    )
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
