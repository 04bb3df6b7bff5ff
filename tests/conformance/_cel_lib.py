"""Shared runner for the CEL library vector files (expect_value / runtime / compile errors)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from kubedra.api.quantity import Quantity
from kubedra.api.semver import Version
from kubedra.cel import CompileError, EnvType, EvalError, compile_expression


def run_case(case: dict[str, Any]) -> None:
    """Evaluate ``case["expr"]`` in NewExpressions (which includes every function tested)."""
    expr = case["expr"]
    if "expect_compile_errors_regex" in case:
        with pytest.raises(CompileError) as exc:
            compile_expression(expr, EnvType.NEW_EXPRESSIONS, require_bool=False)
        for rx in case["expect_compile_errors_regex"]:
            assert re.search(rx, exc.value.detail), (rx, exc.value.detail)
        return
    program = compile_expression(expr, EnvType.NEW_EXPRESSIONS, require_bool=False)
    if "expect_runtime_error_regex" in case:
        with pytest.raises(EvalError) as eexc:
            program.evaluate_value()
        assert re.search(case["expect_runtime_error_regex"], str(eexc.value)), str(eexc.value)
        return
    got = program.evaluate_value()
    want = case["expect_value"]
    if isinstance(want, dict) and "quantity" in want:
        assert isinstance(got, Quantity)
        assert got.cmp(Quantity.parse(want["quantity"])) == 0
    elif isinstance(want, dict) and "semver" in want:
        assert isinstance(got, Version)
        assert got == Version.parse(want["semver"])
    elif case.get("expect_type") == "double":
        assert isinstance(got, float) and got == want
    else:
        assert type(got) is type(want) and got == want
