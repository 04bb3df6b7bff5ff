"""The resource.k8s.io/v1 ``device`` environment (DRA cel/compile.go@v0.34): compile texts,
output type, the gated field, the worst-case estimate."""

from __future__ import annotations

import pytest

from kubedra.cel import CompileError, DeviceEnv, EnvType, compile_expression

STORED = DeviceEnv()
NEW = DeviceEnv(EnvType.NEW_EXPRESSIONS)
NESTED = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"


def _detail(expression: str, env: DeviceEnv = NEW) -> str:
    with pytest.raises(CompileError) as info:
        compile_expression(expression, env)
    return info.value.detail


@pytest.mark.parametrize("env", [STORED, NEW])
@pytest.mark.parametrize("expression", [
    'device.driver == "dra.example.com"',
    'device.attributes["dra.example.com"].model == "a"',
    '"dra.example.com" in device.attributes',
    'device.capacity["dra.example.com"].memory.isGreaterThan(quantity("1Gi"))',
    'device.attributes["dra.example.com"].v.isGreaterThan(semver("1.0.0"))',
    'device.attributes["dra.example.com"].flag',  # dyn is accepted
])
def test_typed_selectors_compile(expression: str, env: DeviceEnv) -> None:
    assert compile_expression(expression, env).expression == expression


def test_compile_errors_read_as_cel_go() -> None:
    assert _detail('device.attributes[true].someBoolean') == (
        "compilation failed: ERROR: <input>:1:18: found no matching overload for '_[_]' "
        "applied to '(map(string, map(string, any)), bool)'\n"
        " | device.attributes[true].someBoolean\n | .................^")
    assert _detail("noSuchVar") == (
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'noSuchVar' "
        "(in container '')\n | noSuchVar\n | ^")
    assert _detail("device.nope").startswith(
        "compilation failed: ERROR: <input>:1:7: undefined field 'nope'\n")


def test_output_may_be_bool_or_dyn() -> None:
    assert _detail("1") == "must evaluate to bool or the unknown type, not int"
    assert _detail('"x"') == "must evaluate to bool or the unknown type, not string"


def test_allow_multiple_allocations_is_gated_in_new_expressions() -> None:
    expression = "device.allowMultipleAllocations == false"
    assert "undefined field 'allowMultipleAllocations'" in _detail(expression)
    compile_expression(expression, DeviceEnv(EnvType.NEW_EXPRESSIONS, True))
    compile_expression(expression, STORED)  # stored expressions ignore feature checks


def test_worst_case_estimate_is_not_capped() -> None:
    inner = "int('1'.find('[0-9]*')) < 100"
    for var in ("z5", "z4", "z3", "z2", "z", "y", "x"):
        inner = f"{NESTED}.all({var}, {inner})"
    # 10^7 innermost iterations: far over the 1,000,000 validation limit, yet it compiles
    assert compile_expression(inner, NEW).max_cost > 1_000_000
    assert compile_expression("true", NEW).max_cost <= 1


def test_the_v1alpha2_env_is_unchanged() -> None:
    with pytest.raises(CompileError) as info:
        compile_expression("device.driver == 'a'", EnvType.NEW_EXPRESSIONS)
    assert "undeclared reference to 'device.driver'" in info.value.detail
    with pytest.raises(CompileError) as info:
        compile_expression("1", EnvType.NEW_EXPRESSIONS)
    assert info.value.detail == "must evaluate to bool"
