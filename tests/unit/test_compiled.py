"""What mypyc's compiled modules ask of their source (docs/architecture.md, "Compiled
modules") and ``mypy --strict`` does not check."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _load_setup() -> ModuleType:
    """setup.py as a module (it installs only when run as the main script)."""
    spec = importlib.util.spec_from_file_location("kubedra_setup", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_SETUP = _load_setup()


def compiled_sources() -> list[Path]:
    return [ROOT / source for source in _SETUP.compiled_sources()]


def _rebound_exception_names(source: Path) -> list[str]:
    found = []
    for fn in ast.walk(ast.parse(source.read_text())):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        caught: dict[str, set[str]] = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.ExceptHandler) and node.name and node.type is not None:
                caught.setdefault(node.name, set()).add(ast.unparse(node.type))
        found += [f"{source.name}:{fn.lineno} {fn.name}: {name} catches {sorted(types)}"
                  for name, types in caught.items() if len(types) > 1]
    return found


def _cancellation_caught(source: Path) -> list[str]:
    """Places that swallow CancelledError: a ``suppress`` naming it, or an ``except`` naming
    it that does not end by raising it again."""
    found = []
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("suppress"):
            caught = " ".join(ast.unparse(arg) for arg in node.args)
        elif isinstance(node, ast.ExceptHandler) and node.type is not None and not (
                isinstance(node.body[-1], ast.Raise) and node.body[-1].exc is None):
            caught = ast.unparse(node.type)
        else:
            continue
        if "CancelledError" in caught:
            found.append(f"{source.name}:{node.lineno}")
    return found


def test_the_compiled_list_names_real_sources() -> None:
    sources = compiled_sources()
    assert len(sources) > 50 and all(s.exists() for s in sources)
    interpreted = _SETUP.INTERPRETED
    assert all((ROOT / "src" / path).exists() for path in interpreted)


def test_no_compiled_function_catches_two_types_under_one_name() -> None:
    """Compiled, the name is typed by its first ``except``: catching another type under it
    raises TypeError (an API server answer would become a panic)."""
    assert [line for s in compiled_sources() for line in _rebound_exception_names(s)] == []


def test_no_compiled_coroutine_catches_a_cancellation() -> None:
    """Compiled, a coroutine that catches the CancelledError of a task it awaits while
    another exception propagates lets it escape: they await ``kubedra.tasks`` instead."""
    assert [line for s in compiled_sources() for line in _cancellation_caught(s)] == []
