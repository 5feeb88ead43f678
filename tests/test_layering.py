"""The import rules: ``ene_core`` is the framework-free core (it imports nothing from
``ene_integrations`` and works without LangChain, LlamaIndex or OpenTelemetry installed), and
between the OpenTelemetry and Phoenix adapters the dependency runs one way (``otel`` may import
``phoenix``, never the reverse)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
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
