"""Library behaviour not covered by vectors, and the cel-go differences we pin
(docs/deviations.md, "CEL selectors")."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.api.quantity import Quantity
from kubedra.api.semver import Version
from kubedra.cel import CompileError, EnvType, EvalError, compile_expression


def value(expr: str, env: EnvType = EnvType.STORED_EXPRESSIONS) -> Any:
    return compile_expression(expr, env, require_bool=False).evaluate_value()


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        ('"abc".charAt(1)', "b"),
        ('"abc".charAt(3)', ""),
        ('"héllo".indexOf("l")', 2),
        ('"hello".indexOf("l", 3)', 3),
        ('"hello".lastIndexOf("l")', 3),
        ('"hello".lastIndexOf("")', 5),
        ('"AbC".lowerAscii() + "AbC".upperAscii()', "abcABC"),
        ('"aaa".replace("a", "b", 2)', "bba"),
        ('"a,b,c".split(",", 2)', ["a", "b,c"]),
        ('"abc".split("")', ["a", "b", "c"]),
        ('"hello".substring(1, 3)', "el"),
        ('" \\t x \\n".trim()', "x"),
        ('["a", "b"].join("-")', "a-b"),
        ('strings.quote("a\\nb")', '"a\\nb"'),
        ('"%d/%s/%.2f".format([3, "x", 1.5])', "3/x/1.50"),
        ("[1, 2, 3].sum()", 6),
        ("[1.5, 2.5].sum()", 4.0),
        ("[3, 1].min()", 1),
        ('["b", "a"].max()', "b"),
        ("[1, 2, 2].isSorted()", True),
        ("[1, 2, 2].lastIndexOf(2)", 2),
        ('[quantity("1"), quantity("1000m")].indexOf(quantity("1000m"))', 0),
        ("sets.contains([1, 2, 3], [2])", True),
        ("sets.equivalent([1, 2], [2, 1, 1])", True),
        ("sets.intersects([1], [2])", False),
        ('"abc 123".find("[0-9]+")', "123"),
        ('"123 abc 456".findAll("[0-9]+")', ["123", "456"]),
        ('"a1b2c3".findAll("[0-9]", 2)', ["1", "2"]),
        ('url("https://u@example.com:8080/p?x=1").getHost()', "example.com:8080"),
        ('url("https://[::1]:80/p").getHostname()', "::1"),
        ('url("https://example.com/p").getPort()', ""),
        ('isURL("not a url")', False),
        ("[1, 2][?5].orValue(0)", 0),
        ('{"a": 1}[?"b"].hasValue()', False),
        ('sign(quantity("-1"))', -1),
        ('quantity("1Ki") == quantity("1024")', True),
        ('quantity("1").add(1) == quantity("2")', True),
        ('semver("1.0.0+build") == semver("1.0.0")', True),
        ('semver("18446744073709551615.0.0").major()', -1),
        ('cidr("10.1.2.3/16").masked() == cidr("10.1.0.0/16")', True),
        ('cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16")', True),
        ('ip("10.0.0.1").isGlobalUnicast()', True),
        ('ip.isCanonical("2001:db8::1")', True),
    ],
)
def test_values(expr: str, want: Any) -> None:
    assert value(expr) == want


def test_object_results() -> None:
    q = value('quantity("1.5Gi").add(quantity("512Mi"))')
    assert isinstance(q, Quantity) and q == Quantity.parse("2Gi")
    v = value('semver("1.2.3-rc.1")')
    assert isinstance(v, Version) and str(v) == "1.2.3-rc.1"


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        ('"abc".charAt(4)', "index out of range: 4"),
        ('"".indexOf("a")', "index out of range: 0"),
        ('"hello".substring(3, 1)', "invalid substring range. start: 3, end: 1"),
        ("[].max()", "max called on empty list"),
        ('ip("::ffff:1.2.3.4")', "IPv4-mapped IPv6 address is not allowed: ::ffff:1.2.3.4"),
        ('url("")', 'URL parse error during conversion from string: parse "": empty url'),
        (
            'url("a b")',
            'URL parse error during conversion from string: parse "a b": invalid URI for request',
        ),
    ],
)
def test_errors(expr: str, text: str) -> None:
    with pytest.raises(EvalError) as exc:
        value(expr)
    assert str(exc.value) == text


# --- pinned deviations (see docs/deviations.md) ------------------------------------------


def test_heterogeneous_literals_rejected_like_cel_go() -> None:
    with pytest.raises(CompileError) as exc:
        compile_expression('[1, "a"].size() == 2')
    assert exc.value.detail == (
        "compilation failed: ERROR: <input>:1:5: expected type 'int' but found 'string'\n"
        ' | [1, "a"].size() == 2\n | ....^'
    )
    # format() arguments are exempt, dyn is compatible with anything
    assert compile_expression('"%s %d".format(["a", 1]) == "a 1"').evaluate([]) is True
    assert compile_expression("[1, dyn(2)].size() == 2").evaluate([]) is True


def test_deviation_no_string_conversion_of_ip() -> None:
    with pytest.raises(CompileError):
        compile_expression('string(ip("1.2.3.4")) == "1.2.3.4"')


def test_deviation_uint_min_max_sum_return_int() -> None:
    assert value("[1u, 2u].max()") == 2
    assert compile_expression("type([1u, 2u].max()) == int").evaluate([]) is True


def test_deviation_quantity_integer_view_follows_value() -> None:
    # upstream keeps 1000m as int64Amount{1000, -3}: isInteger() false there, true here
    assert value('quantity("1000m").isInteger()') is True
    assert value('quantity("1.5").isInteger()') is False


def test_deviation_list_elements_of_lists_have_no_index_of() -> None:
    with pytest.raises(CompileError):
        compile_expression("[[1]].indexOf([1]) == 0")


def test_internal_key_field_is_not_selectable() -> None:
    with pytest.raises(CompileError) as exc:
        compile_expression('quantity("1").kubedra_value_key == "1e0"')
    assert "not supported" in exc.value.detail


@pytest.mark.parametrize(
    ("expr", "detail"),
    [
        ('"a".matches("(")', 'invalid matches argument\n | "a".matches("(")\n | ............^'),
        (
            'duration("1x") > duration("1s")',
            'invalid duration argument\n | duration("1x") > duration("1s")\n | .........^',
        ),
        (
            'timestamp("x") > timestamp("y")',
            'invalid timestamp argument\n | timestamp("x") > timestamp("y")\n | ..........^',
        ),
    ],
)
def test_literal_validators(expr: str, detail: str) -> None:
    # the 1.29 validators: bad literals are compile errors (the first issue is shown here)
    with pytest.raises(CompileError) as exc:
        compile_expression(expr)
    first = exc.value.detail.removeprefix("compilation failed: ").split("\nERROR")[0]
    assert first.split(": ", 2)[2] == detail


def test_regex_of_find_is_checked_at_run_time() -> None:
    # only matches() is validated upstream; find/findAll report Illegal regex when run
    with pytest.raises(EvalError) as exc:
        compile_expression('"x".find("(") == ""').evaluate([])
    assert str(exc.value).startswith("Illegal regex: ")


def test_deviation_iteration_budget() -> None:
    # cel-cpp stops after 10,000 comprehension iterations; upstream's cost limit allows more
    from kubedra.api.resource.v1alpha2 import NamedResourcesAttribute, NamedResourcesIntSlice
    from kubedra.cel import COST_LIMIT_EXCEEDED, prepare

    def ints(n: int) -> list[NamedResourcesAttribute]:
        return [NamedResourcesAttribute(name="l", int_slice=NamedResourcesIntSlice(ints=[0] * n))]

    program = compile_expression('attributes.intslice["l"].all(x, x == 0)')
    assert program.evaluate(prepare(ints(9_000))) is True
    with pytest.raises(EvalError) as exc:
        program.evaluate(prepare(ints(10_001)))
    assert str(exc.value) == COST_LIMIT_EXCEEDED


def test_deviation_authz_library_not_declared() -> None:
    with pytest.raises(CompileError) as exc:
        compile_expression('"x".path() == "x"')
    assert "undeclared reference to 'path'" in exc.value.detail
