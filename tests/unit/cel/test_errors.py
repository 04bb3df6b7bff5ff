"""Error texts: compile details as upstream's validation shows them, runtime texts as cel-go's
``Evaluate`` returns them, and the version-attribute extraction error."""

from __future__ import annotations

import pytest

from kubedra.api.resource.v1alpha2 import NamedResourcesAttribute
from kubedra.cel import (
    CompileError,
    EnvType,
    EvalError,
    compile_expression,
    prepare,
    runtime_error_text,
    validate_selector,
)


def _eval_error(expr: str, attrs: list[NamedResourcesAttribute] | None = None) -> str:
    with pytest.raises(EvalError) as exc:
        compile_expression(expr).evaluate(prepare(attrs or []))
    return str(exc.value)


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        ('attributes.string["gone"] == "x"', "no such key: gone"),
        ('attributes.string.gone == "x"', "no such key: gone"),
        ("1 / 0 == 1", "division by zero"),
        ("1 % 0 == 1", "modulus by zero"),
        ("9223372036854775807 + 1 > 0", "integer overflow"),
        ("[1, 2][5] == 1", "index '5' out of range in list size '2'"),
        ('dyn("a") < 1', "no such overload"),
        ('semver("v1.0").major() == 1', "No Major.Minor.Patch elements found"),
        (
            'quantity("10Mo").isInteger()',
            "quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        ('quantity("10Mm").isInteger()', "unable to parse quantity's suffix"),
        ('quantity("1.5").asInteger() == 1', "cannot convert value to integer"),
        ('"x".find("(") == ""', "Illegal regex: missing ): ("),
    ],
)
def test_runtime_texts(expr: str, text: str) -> None:
    assert _eval_error(expr) == text


def test_error_absorbing_logic_matches_cel() -> None:
    assert compile_expression('attributes.string["x"] == "a" || true').evaluate([]) is True
    assert compile_expression('false && attributes.string["x"] == "a"').evaluate([]) is False
    assert compile_expression('attributes.string[?"x"].orValue("") == ""').evaluate([]) is True
    assert compile_expression('"x" in attributes.string && false').evaluate([]) is False


def test_attribute_of_other_kind_is_missing() -> None:
    attrs = [NamedResourcesAttribute(name="n", int_=1)]
    assert _eval_error('attributes.string["n"] == "1"', attrs) == "no such key: n"


def test_unparsable_version_breaks_every_selector() -> None:
    attrs = [
        NamedResourcesAttribute(name="ok", bool_=True),
        NamedResourcesAttribute(name="v", version="1.0.18446744073709551616"),
    ]
    text = _eval_error("true", attrs)
    # upstream formats the slice index with %q, i.e. as a quoted rune (index 1 -> '\x01')
    assert text == (
        "extract attributes with type version: attribute '\\x01': parse semantic version: "
        'strconv.ParseUint: parsing "18446744073709551616": value out of range'
    )


def test_later_duplicate_attribute_wins() -> None:
    attrs = [NamedResourcesAttribute(name="a", int_=1), NamedResourcesAttribute(name="a", int_=2)]
    assert compile_expression('attributes.int["a"] == 2').evaluate(attrs) is True


def test_compile_details() -> None:
    assert validate_selector("", stored=False) == ""
    assert validate_selector("true", stored=False) is None
    assert validate_selector("nosuchvar", stored=False) == (
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'nosuchvar' "
        "(in container '')\n | nosuchvar\n | ^"
    )
    assert validate_selector("1", stored=False) == "must evaluate to bool"
    assert validate_selector("dyn(true)", stored=False) == "must evaluate to bool"
    detail = validate_selector("?!", stored=False)
    assert detail is not None and "Syntax error" in detail
    # several issues: one block each, joined by newlines
    two = validate_selector("a && b", stored=False)
    assert two is not None and two.count("ERROR: <input>:1:") == 2


def test_ip_only_in_stored_environment() -> None:
    expr = 'isIP("1.2.3.4")'
    new = validate_selector(expr, stored=False)
    assert new is not None and "undeclared reference to 'isIP'" in new
    assert validate_selector(expr, stored=True) is None


def test_compile_error_kind_and_env() -> None:
    with pytest.raises(CompileError) as exc:
        compile_expression("nosuchvar", EnvType.NEW_EXPRESSIONS)
    assert exc.value.kind == "Invalid"


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ('NOT_FOUND: Key not found in map : "a b"', "no such key: a b"),
        ("INVALID_ARGUMENT: divide by zero", "division by zero"),
        ("UNKNOWN: No matching overloads found : _<_(string, int64)", "no such overload"),
        (
            "INTERNAL: Iteration budget exceeded [INTERNAL]",
            "operation cancelled: actual cost limit exceeded",
        ),
        (
            "OUT_OF_RANGE: No Major.Minor.Patch elements found",
            "No Major.Minor.Patch elements found",
        ),
    ],
)
def test_runtime_error_text(raw: str, text: str) -> None:
    assert runtime_error_text(raw) == text
