"""docs/deviations.md keeps its promise: every entry names a test that pins it, and each
test named exists (its file, and its function when one is named)."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "deviations.md"
#: ``tests/<path>.py`` or ``tests/<path>.py::test_name`` (a ``[case]`` after it is free text)
REFERENCE = re.compile(r"\b(tests/[\w/]+\.py)(?:::(\w+))?")


def entries() -> list[tuple[int, str]]:
    """(first line, text) of each entry: a top-level bullet and the lines that continue it."""
    found: list[tuple[int, list[str]]] = []
    open_entry = False
    for number, line in enumerate(DOC.read_text().splitlines(), 1):
        if line.startswith("- "):
            found.append((number, [line]))
            open_entry = True
        elif open_entry and line.startswith(" ") and line.strip():
            found[-1][1].append(line.strip())
        else:
            open_entry = False
    return [(number, " ".join(lines)) for number, lines in found]


@cache
def _functions(path: str) -> set[str]:
    tree = ast.parse((ROOT / path).read_text())
    return {node.name for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def test_the_document_has_its_entries() -> None:
    assert len(entries()) > 80


def test_every_entry_names_a_test() -> None:
    missing = [f"line {number}: {text[:70]}" for number, text in entries()
               if not REFERENCE.search(text)]
    assert not missing, "entries without a tests/…py reference:\n" + "\n".join(missing)


def test_every_named_test_exists() -> None:
    wrong = []
    for number, text in entries():
        for path, function in REFERENCE.findall(text):
            if not (ROOT / path).is_file():
                wrong.append(f"line {number}: no file {path}")
            elif function and function not in _functions(path):
                wrong.append(f"line {number}: no {function} in {path}")
    assert not wrong, "\n".join(wrong)
