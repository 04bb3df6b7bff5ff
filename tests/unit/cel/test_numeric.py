"""Cross-type numeric comparisons as cel-go v0.17 evaluates them with
``CrossTypeNumericComparisons(true)`` (common/types/compare.go): mixed int/uint/double
ordering at the int64/uint64/double edges, NaN, and ``==`` staying same-type."""

from __future__ import annotations

import pytest

from kubedra.api.resource.v1alpha2 import NamedResourcesAttribute, NamedResourcesIntSlice
from kubedra.cel import CompileError, EnvType, EvalError, compile_expression

MAX_INT = "9223372036854775807"
MIN_INT = "-9223372036854775808"
MAX_UINT = "18446744073709551615u"


@pytest.mark.parametrize("env", list(EnvType))
@pytest.mark.parametrize(("expr", "want"), [
    ("1 < 1.5", True),
    ("2 > 1.5", True),
    ("1 <= 1.0", True),
    ("1 >= 1.0", True),
    ("1.5 > 1", True),
    ("1.0 < 1", False),
    ("1u < 1.5", True),
    ("2.5 >= 2u", True),
    ("1u < 2", True),
    ("2 > 1u", True),
    # int vs uint: a negative int or a uint beyond int64 orders below / above
    ("-1 < 0u", True),
    ("0u > -1", True),
    (f"{MAX_INT} < {MAX_UINT}", True),
    (f"{MAX_UINT} > {MIN_INT}", True),
    (f"{MAX_INT} >= 9223372036854775807u", True),
    (f"{MAX_INT} < 9223372036854775808u", True),
    # doubles beyond the range of the integer type order before/after all of it
    (f"{MAX_INT} < 1e19", True),
    (f"{MIN_INT} > -1e19", True),
    (f"{MAX_UINT} < 1e20", True),
    ("0u > -0.5", True),
    ("0u >= -0.0", True),
    # the integer is compared as a double (float64 rounding, as Go converts)
    (f"{MAX_INT} < 9223372036854775808.0", False),
    (f"{MAX_INT} >= 9223372036854775808.0", True),
    (f"{MIN_INT} <= -9223372036854775808.0", True),
    ("9007199254740993 > 9007199254740992.0", False),
    ("9007199254740993 <= 9007199254740992.0", True),
    (f"{MAX_UINT} >= 18446744073709551616.0", True),
    (f"{MAX_UINT} < 18446744073709551616.0", False),
    ("1 < double('inf')", True),
    (f"{MIN_INT} > double('-inf')", True),
])
def test_mixed_comparisons(env: EnvType, expr: str, want: bool) -> None:
    assert compile_expression(expr, env).evaluate() is want


@pytest.mark.parametrize("expr", [
    "1 < double('NaN')",
    "double('NaN') >= 1",
    "1u <= double('NaN')",
    "double('NaN') > 1u",
    "double('NaN') < 1.0",
    "1.0 >= double('NaN')",
])
def test_nan_cannot_be_ordered(expr: str) -> None:
    with pytest.raises(EvalError) as exc:
        compile_expression(expr).evaluate()
    assert str(exc.value) == "NaN values cannot be ordered"


def test_attributes_against_double_literals() -> None:
    attrs = [NamedResourcesAttribute(name="n", int_=2),
             NamedResourcesAttribute(name="x", int_slice=NamedResourcesIntSlice(ints=[0, 1]))]
    assert compile_expression('attributes.int["n"] > 1.5').evaluate(attrs) is True
    assert compile_expression('attributes.int["n"] < 1.5').evaluate(attrs) is False
    assert compile_expression(
        'attributes.intslice["x"].all(i, i < 0.5) && attributes.int["n"] >= 2u'
    ).evaluate(attrs) is False


@pytest.mark.parametrize(("expr", "types"), [
    ("1 == 1.0", "(int, double)"),
    ("1u != 1", "(uint, int)"),
])
def test_equality_stays_same_type(expr: str, types: str) -> None:
    op = "_==_" if "==" in expr else "_!=_"
    with pytest.raises(CompileError) as exc:
        compile_expression(expr)
    assert f"found no matching overload for '{op}' applied to '{types}'" in exc.value.detail


@pytest.mark.parametrize(("expr", "types"), [
    ("1 < 'a'", "(int, string)"),
    ("true > 1", "(bool, int)"),
    ("[1] <= [2]", "(list(int), list(int))"),
])
def test_other_mixes_do_not_compile(expr: str, types: str) -> None:
    op = next(o for o in ("<=", ">=", "<", ">") if o in expr)
    with pytest.raises(CompileError) as exc:
        compile_expression(expr)
    assert f"found no matching overload for '_{op}_' applied to '{types}'" in exc.value.detail


@pytest.mark.parametrize(("expr", "want"), [
    ("'a' < 'b'", True), ("b'b' <= b'a'", False), ("false < true", True),
    ("duration('1s') > duration('500ms')", True),
    ("timestamp('2024-01-01T00:00:00Z') >= timestamp('2024-01-01T00:00:00Z')", True),
    ("dyn(1) < 1.5", True),
])
def test_same_type_ordering_unchanged(expr: str, want: bool) -> None:
    assert compile_expression(expr).evaluate() is want


def test_helpers_cannot_be_called() -> None:
    with pytest.raises(CompileError) as exc:
        compile_expression("@kubedra_less(1, 2.0)")
    assert "Syntax error" in exc.value.detail


def test_deviation_nan_behind_dyn() -> None:
    """docs/deviations.md: cel-cpp orders a dyn operand itself (cel-go would error)."""
    assert compile_expression("dyn(1) < double('NaN')").evaluate() is False
