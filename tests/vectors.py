"""Loading the conformance vectors from ``../shared/vectors`` (never copied into this repo).

Use :func:`load` for a file's JSON with the ``$repeatString`` / ``$generate`` / ``$concat``
macros expanded, and mark each conformance test with ``@pytest.mark.vectors("<file>.json")``
so the run ends with one ``<file>.json: N passed, 0 failed`` line per file;
:func:`vector_cases` does both the mark and the per-case parametrization.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest

REPO = Path(__file__).resolve().parent.parent
VECTORS = Path(os.environ.get("KUBEDRA_VECTORS", REPO.parent / "shared" / "vectors"))
EXAMPLES = REPO / "examples"


def example_files() -> list[Path]:
    """The manifests of ``examples/`` (what ``kubectl apply -f examples/`` applies), then the
    reference objects kept out of it (``examples/reference/``)."""
    return sorted(EXAMPLES.glob("*.yaml")) + sorted((EXAMPLES / "reference").glob("*.yaml"))


def example_files_1_34() -> list[Path]:
    """The manifests of ``examples/v1.34/`` (``kubectl apply -f examples/v1.34/`` on the
    default release's cluster)."""
    return sorted((EXAMPLES / "v1.34").glob("*.yaml"))
_Test = TypeVar("_Test", bound=Callable[..., Any])


@functools.cache
def _raw(name: str) -> Any:
    return json.loads((VECTORS / name).read_text())


def load(name: str) -> Any:
    """The vector file ``name`` with its macros expanded (a fresh copy each call)."""
    return expand(_raw(name))


def expand(v: Any) -> Any:
    if isinstance(v, dict):
        if "$repeatString" in v:
            return v["$repeatString"] * v["count"]
        if "$concat" in v:  # v1-README.md; "$rawJSON" stays a marker for the consumer
            return "".join(expand(x) for x in v["$concat"])
        return {k: expand(x) for k, x in v.items()}
    if isinstance(v, list):
        out: list[Any] = []
        for x in v:
            if isinstance(x, dict) and "$generate" in x:
                out += [expand(_subst(x["$generate"], i)) for i in range(x["count"])]
            else:
                out.append(expand(x))
        return out
    return v


def _subst(v: Any, i: int) -> Any:
    if isinstance(v, str):
        return v.replace("{i}", str(i))
    if isinstance(v, dict):
        return {k: _subst(x, i) for k, x in v.items()}
    if isinstance(v, list):
        return [_subst(x, i) for x in v]
    return v


def case_id(case: dict[str, Any], index: int) -> str:
    """A readable, unique pytest id for a vector case."""
    name = str(case.get("name") or case.get("id") or case.get("input") or "")
    return f"{index}-{name[:60]}"


def vector_cases(name: str, cases: Sequence[dict[str, Any]]) -> Callable[[_Test], _Test]:
    """Mark a test as checking vector file ``name`` and run it once per case (arg ``case``)."""
    ids = [case_id(c, i) for i, c in enumerate(cases)]

    def decorate(test: _Test) -> _Test:
        parametrized: _Test = pytest.mark.parametrize("case", cases, ids=ids)(test)
        marked: _Test = pytest.mark.vectors(name)(parametrized)
        return marked

    return decorate
