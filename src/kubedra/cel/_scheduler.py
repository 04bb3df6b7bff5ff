"""How selector errors are worded on the scheduler's path (namedresourcesmodel.go and the
DynamicResources plugin, v1.30), so the allocation engine and tests share one source."""

from __future__ import annotations

from typing import Literal


def scheduler_error_text(
    which: Literal["filter", "request"],
    error: Exception | str,
    *,
    node: str,
    driver: str,
    compile_step: bool = False,
) -> str:
    """The Filter status message for a selector error on ``node`` for ``driver``.

    ``evaluate filter CEL expression: <err>`` (or ``request``; ``compile ...`` for the
    compile step) wrapped in ``checking structured parameters failed: checking node "<node>"
    and resources of driver "<driver>": ...``.
    """
    kind = "class filter" if which == "filter" and compile_step else which
    step = "compile" if compile_step else "evaluate"
    inner = f"{step} {kind} CEL expression: {error}"
    return (
        f'checking structured parameters failed: checking node "{node}" and resources of '
        f'driver "{driver}": {inner}'
    )
