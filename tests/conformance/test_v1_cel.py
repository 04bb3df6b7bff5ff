"""v1-cel.json: resource.k8s.io/v1 ``device`` selectors (DRA cel/compile_test.go TestCEL):
compile errors, match results and runtime errors of ``prepare_device`` + ``evaluate``.

``expectMaxCost`` is cel-go's own cost model (informational per the file's notes); our
estimate is another unit (docs/deviations.md), so this checks only that both sides agree a
selector is within the 1,000,000 limit."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.api import codec
from kubedra.api.resource.v1 import DeviceAttribute, DeviceCapacity
from kubedra.cel import (
    CompileError,
    DeviceEnv,
    EnvType,
    EvalError,
    PreparedDevice,
    compile_expression,
    prepare_device,
)
from tests.vectors import load, vector_cases

FILE = "v1-cel.json"
CASES = load(FILE)["cases"]
LIMIT = 1_000_000


def _device(raw: dict[str, Any]) -> PreparedDevice:
    return prepare_device(
        raw["driver"],
        codec.decode(raw.get("attributes") or {}, dict[str, DeviceAttribute]),
        codec.decode(raw.get("capacity") or {}, dict[str, DeviceCapacity]),
        raw.get("allowMultipleAllocations"),
    )


@vector_cases(FILE, CASES)
def test_v1_cel(case: dict[str, Any]) -> None:
    env = DeviceEnv(EnvType(case["env"]), case["enableConsumableCapacity"])
    if "expectCompileErrorContains" in case:
        with pytest.raises(CompileError) as exc:
            compile_expression(case["expression"], env)
        assert case["expectCompileErrorContains"] in exc.value.detail, exc.value.detail
        return
    program = compile_expression(case["expression"], env)
    assert (program.max_cost <= LIMIT) == (case["expectMaxCost"] <= LIMIT)
    device = _device(case["device"])
    if "expectMatchErrorContains" in case:
        with pytest.raises(EvalError) as eexc:
            program.evaluate(device)
        assert case["expectMatchErrorContains"] in str(eexc.value), str(eexc.value)
        return
    assert program.evaluate(device) is case["expectMatch"]
