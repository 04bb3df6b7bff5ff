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


def _module_names_read_in_functions(source: Path) -> list[str]:
    """Module-level names assigned without ``Final`` that a function reads: compiled, each
    read is a lookup in the module's dict (a ``Final`` is a C constant or static)."""
    tree = ast.parse(source.read_text())
    assigned: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                elts = target.elts if isinstance(target, ast.Tuple) else [target]
                assigned |= {t.id for t in elts if isinstance(t, ast.Name)}
        elif (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
              and "Final" not in ast.unparse(node.annotation)):
            assigned.add(node.target.id)
    return sorted({f"{source.name}: {n.id}" for fn in ast.walk(tree)
                   if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
                   for n in ast.walk(fn)
                   if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                   and n.id in assigned})


def test_the_protobuf_codec_reads_only_final_module_names() -> None:
    """proto/kube.py reads its constants once per field written or read: a name that is not
    ``Final`` cost about 200 dict lookups per Lease encoded."""
    assert _module_names_read_in_functions(ROOT / "src/kubedra/proto/kube.py") == []
