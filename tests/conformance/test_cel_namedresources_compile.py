"""cel-namedresources-compile.json: DRA TestCompile (StoredExpressions), compile + Evaluate."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.api.codec import decode
from kubedra.api.resource.v1alpha2 import NamedResourcesAttribute
from kubedra.cel import CompileError, EnvType, EvalError, compile_expression, prepare
from tests.vectors import load, vector_cases

FILE = "cel-namedresources-compile.json"
CASES = load(FILE)["cases"]


@vector_cases(FILE, CASES)
def test_compile_and_evaluate(case: dict[str, Any]) -> None:
    attrs = [decode(a, NamedResourcesAttribute) for a in case["attributes"]]
    if "expect_compile_error" in case:
        with pytest.raises(CompileError) as exc:
            compile_expression(case["expression"], EnvType.STORED_EXPRESSIONS)
        assert case["expect_compile_error"] in exc.value.detail
        return
    program = compile_expression(case["expression"], EnvType.STORED_EXPRESSIONS)
    if "expect_match_error" in case:
        with pytest.raises(EvalError) as eexc:
            program.evaluate(prepare(attrs))
        assert case["expect_match_error"] in str(eexc.value)
        return
    assert program.evaluate(prepare(attrs)) is case["expect_match"]
    # the unprepared path gives the same answer
    assert program.evaluate(attrs) is case["expect_match"]
