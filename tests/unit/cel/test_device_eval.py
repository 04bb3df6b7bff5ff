"""Evaluating resource.k8s.io/v1 ``device`` selectors (DRA cel/compile.go ``DeviceMatches``
@v0.34): the prepared device, unknown domains, bad versions, dyn results, the 1.33 semver
library's normalize overloads, the cost limit."""

from __future__ import annotations

import pytest

from kubedra.api.quantity import Quantity
from kubedra.api.resource.v1 import DeviceAttribute, DeviceCapacity
from kubedra.api.resource.v1alpha2 import NamedResourcesAttribute
from kubedra.cel import (
    COST_LIMIT_EXCEEDED,
    CompileError,
    DeviceEnv,
    EnvType,
    EvalError,
    PreparedDevice,
    compile_expression,
    prepare,
    prepare_device,
)

STORED = DeviceEnv()
NEW = DeviceEnv(EnvType.NEW_EXPRESSIONS)
DRIVER = "dra.example.com"


def _device(**attributes: DeviceAttribute) -> PreparedDevice:
    return prepare_device(DRIVER, attributes, {
        "memory": DeviceCapacity(value=Quantity.parse("16Gi")),
        "other.example.com/slots": DeviceCapacity(value=Quantity.parse("4")),
    })


GPU = prepare_device(DRIVER, {
    "model": DeviceAttribute(string="a100"),
    "cores": DeviceAttribute(int_=108),
    "healthy": DeviceAttribute(bool_=True),
    "driverVersion": DeviceAttribute(version="1.2.3"),
    "other.example.com/rack": DeviceAttribute(string="r1"),
}, {
    "memory": DeviceCapacity(value=Quantity.parse("16Gi")),
    "other.example.com/slots": DeviceCapacity(value=Quantity.parse("4")),
})


def _eval(expression: str, device: PreparedDevice = GPU, env: DeviceEnv = STORED) -> bool:
    return compile_expression(expression, env).evaluate(device)


def _error(expression: str, device: PreparedDevice = GPU) -> str:
    with pytest.raises(EvalError) as info:
        _eval(expression, device)
    return str(info.value)


@pytest.mark.parametrize("expression", [
    'device.driver == "dra.example.com" && device.attributes["dra.example.com"].model == "a100"',
    'device.attributes["dra.example.com"].cores > 100',
    'device.attributes["dra.example.com"].healthy',  # a dyn result that is a bool
    'device.attributes["dra.example.com"].driverVersion.isLessThan(semver("1.10.0"))',
    'device.attributes["other.example.com"].rack == "r1"',  # qualified name
    'device.capacity["dra.example.com"].memory.compareTo(quantity("16Gi")) == 0',
    'device.capacity["other.example.com"].slots.isGreaterThan(quantity("3"))',
    'cel.bind(d, device.attributes["dra.example.com"], d.model == "a100" && d.cores == 108)',
    '"other.example.com" in device.attributes && !("x.example.com" in device.attributes)',
    'device.attributes.all(domain, domain in ["dra.example.com", "other.example.com"])',
    'device.attributes["dra.example.com"].size() == 4',
    "device.allowMultipleAllocations == false",
])
def test_matches(expression: str) -> None:
    assert _eval(expression) is True


def test_unqualified_names_go_under_the_driver() -> None:
    device = prepare_device("gpu.example.com", {"model": DeviceAttribute(string="x"),
                                                "gpu.example.com/index": DeviceAttribute(int_=0)},
                            {"memory": DeviceCapacity(value=Quantity.parse("1"))})
    assert _eval('device.attributes["gpu.example.com"].model == "x" && '
                 'device.attributes["gpu.example.com"].index == 0 && '
                 'device.capacity["gpu.example.com"].memory == quantity("1")', device)
    assert _eval("device.attributes.size() == 1 && device.capacity.size() == 1", device)


def test_unknown_domain_is_an_empty_map() -> None:
    assert _eval('device.attributes["nope.example.com"].size() == 0')
    assert _eval('device.capacity["nope.example.com"].size() == 0')
    assert _eval('!("model" in device.attributes["nope.example.com"])')
    assert _eval('cel.bind(attrs, device.attributes, attrs["nope.example.com"].size() == 0)')
    assert _eval('["dra.example.com", "nope.example.com"].all(d, '
                 'device.attributes[d].size() >= 0)')
    # upstream's mapper finds every key, so has() is true; "in" and iteration see real ones
    assert _eval("has(device.attributes.nope)")
    assert _eval('device.attributes[?"nope.example.com"].hasValue()')
    assert _eval("device.attributes.?nope.hasValue()")
    assert _eval('device.capacity[?"nope.example.com"].value().size() == 0')
    assert _eval('device.attributes[?"dra.example.com"].value().model == "a100"')
    assert not _eval('device.attributes["dra.example.com"][?"nope"].hasValue()')
    assert not _eval('"nope.example.com" in device.attributes')
    assert not _eval('device.attributes.exists(d, d == "nope.example.com")')


def test_missing_key_is_no_such_key() -> None:
    assert _error('device.attributes["nope.example.com"].model == "a"') == "no such key: model"
    assert _error('device.attributes["dra.example.com"].nope == 1') == "no such key: nope"
    assert _error('device.capacity["dra.example.com"].nope.isGreaterThan(quantity("0"))') == (
        "no such key: nope")
    assert not _eval('has(device.attributes["dra.example.com"].nope)')


def test_bad_version_fails_every_evaluation_on_the_device() -> None:
    device = _device(model=DeviceAttribute(string="a"), v=DeviceAttribute(version="1.02.3"))
    text = 'attribute v: parse semantic version: Minor number must not contain leading zeroes "02"'
    assert _error("true", device) == text
    assert _error('device.attributes["dra.example.com"].model == "a"', device) == text
    assert device.error == text


def test_attribute_without_value_is_unsupported() -> None:
    device = _device(empty=DeviceAttribute())
    assert _error("true", device) == "attribute empty: unsupported attribute value"


@pytest.mark.parametrize(("expression", "text"), [
    ('device.attributes["dra.example.com"].cores',
     "CEL result of type int could not be converted to bool: "
     "unsupported type conversion from 'int' to bool"),
    ('device.attributes["dra.example.com"].model',
     "CEL result of type string could not be converted to bool: "
     "unsupported native conversion from string to 'bool'"),
    ('device.attributes["dra.example.com"].driverVersion',
     "CEL result of type kubernetes.Semver could not be converted to bool: "
     "type conversion error from 'Semver' to 'bool'"),
    ("dyn(1.5)", "CEL result of type double could not be converted to bool: "
     "type conversion error from Double to 'bool'"),
    ("dyn([true])", "CEL result of type list could not be converted to bool: "
     "type conversion error from list to 'bool'"),
    ("dyn(null)", "CEL result of type null_type could not be converted to bool: "
     "type conversion error from 'null_type' to 'bool'"),
    ('dyn(quantity("1"))', "CEL result of type kubernetes.Quantity could not be converted "
     "to bool: type conversion error from 'Quantity' to 'bool'"),
])
def test_dyn_result_that_is_not_bool(expression: str, text: str) -> None:
    assert _error(expression) == text


def test_allow_multiple_allocations() -> None:
    shared = prepare_device(DRIVER, None, None, allow_multiple_allocations=True)
    enabled = DeviceEnv(EnvType.NEW_EXPRESSIONS, consumable_capacity=True)
    assert _eval("device.allowMultipleAllocations", shared, enabled)
    assert not _eval("device.allowMultipleAllocations", _device(), enabled)


@pytest.mark.parametrize(("expression", "expected"), [
    ('semver("v1.2.3", true) == semver("1.2.3")', True),
    ('semver("1.2", true) == semver("1.2.0")', True),
    ('semver("01.002.0003", true) == semver("1.2.3")', True),
    ('semver("v1", true).major() == 1', True),
    ('semver("1.0.0-01a", true) == semver("1.0.0-01a")', True),
    ('isSemver("v1.0.0", true)', True),
    ('isSemver("v1.0.0", false)', False),
    ('isSemver("v1.0.0")', False),
    ('isSemver("1.0-alpha", true)', False),
    ('isSemver("1.0.0-alpha+x", true)', True),
])
def test_semver_normalize(expression: str, expected: bool) -> None:
    assert _eval(expression, env=NEW) is expected


def test_semver_normalize_errors() -> None:
    assert _error('semver("1.0-alpha", true).major() == 1') == (
        "short version cannot contain PreRelease/Build meta data")
    assert _error('semver("v1.0.0").major() == 1') == (
        'Invalid character(s) found in major number "v1"')


def test_normalize_overloads_are_not_in_the_v1alpha2_env() -> None:
    with pytest.raises(CompileError) as info:
        compile_expression('isSemver("v1", true)', EnvType.STORED_EXPRESSIONS)
    assert "isSemver" in info.value.detail
    assert compile_expression('isSemver("v1")', EnvType.STORED_EXPRESSIONS)


def test_estimate_over_the_limit_stops_evaluation() -> None:
    loop = "true"
    for var in ("a", "b", "c", "d", "e", "f", "g"):
        loop = f"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all({var}, {loop})"
    program = compile_expression(loop, STORED)  # stored selectors are not limited at compile
    assert program.max_cost > 1_000_000
    assert _error(loop) == COST_LIMIT_EXCEEDED


def test_programs_and_inputs_of_the_two_eras_do_not_mix() -> None:
    device_program = compile_expression("true", STORED)
    named_program = compile_expression("true", EnvType.STORED_EXPRESSIONS)
    with pytest.raises(TypeError):
        device_program.evaluate(prepare([NamedResourcesAttribute(name="a", int_=1)]))
    with pytest.raises(TypeError):
        named_program.evaluate(GPU)


def test_prepared_device_serves_many_programs() -> None:
    programs = [compile_expression(f"device.attributes[\"{DRIVER}\"].cores > {n}", STORED)
                for n in (0, 100, 200)]
    assert [p.evaluate(GPU) for p in programs] == [True, True, False]


def test_deviation_literal_map_of_the_domain_map_type() -> None:
    # the rewrite picks lookups by the checked type map(string, map(string, dyn)); a literal of
    # exactly that type answers {} where upstream says "no such key: x" (docs/deviations.md)
    assert _eval('{"a": {"b": dyn(1)}}["x"].size() == 0')
    assert _error('{"a": {"b": 1}}["x"].size() == 0') == "no such key: x"
