"""Hostile selectors: each is rejected at compile time or stopped during evaluation by the
cost units alone (the meter's wall-clock backstop switched off, so a loaded machine cannot
be what stops them), and the units track the time: each case ends within BOUND seconds
(typically < 0.05 s, see the package docstring for the limits involved)."""

from __future__ import annotations

import contextlib
import math

import pytest

from kubedra.api.resource.v1alpha2 import (
    NamedResourcesAttribute,
    NamedResourcesIntSlice,
    NamedResourcesStringSlice,
)
from kubedra.cel import (
    COST_LIMIT_EXCEEDED,
    CompileError,
    EvalError,
    Prepared,
    _cost,
    clear_cache,
    compile_expression,
    prepare,
)
from tests.timing import within

BOUND = 3.0  # seconds (tests/timing.py scales it); the real figures are far lower


def _literal(n: int) -> str:
    return "[" + ",".join(["0"] * n) + "]"


@pytest.fixture
def units_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Evaluations end by the meter's units alone: its wall-clock backstop is switched off."""
    monkeypatch.setattr(_cost, "WALL_LIMIT_SECONDS", math.inf)


@pytest.fixture(scope="module")
def big() -> Prepared:
    return prepare(
        [
            NamedResourcesAttribute(
                name="big", int_slice=NamedResourcesIntSlice(ints=list(range(100_000)))
            ),
            NamedResourcesAttribute(name="s", string="a" * 1000),
            NamedResourcesAttribute(name="blob", string="a" * 1_000_000),
            NamedResourcesAttribute(
                name="ss", string_slice=NamedResourcesStringSlice(strings=["x" * 100] * 1000)
            ),
        ]
    )


COMPILE_REJECTED = {
    "literal-loop": f"{_literal(3000)}.all(x, {_literal(1500)}.size() > 0)",
    "deep-parens": "(" * 40 + "true" + ")" * 40,
    "deep-plus": " + ".join(["1"] * 40) + " > 0",
    "too-long": "true && " * 2000 + "true",
    "codepoints": "'" + "a" * 200_000 + "' == ''",
}

BIG = 'attributes.intslice["big"]'
BLOB = 'attributes.string["blob"]'
LIST = "[" + ",".join(str(i) for i in range(1000)) + "]"
STRING_WORK = {
    "concat-loop": f"{LIST}.all(i, ({BLOB} + {BLOB} + {BLOB}).size() > 0)",
    "size-loop": f"{LIST}.all(i, size({BLOB}) > 0 && {BLOB}.size() > 0)",
    "matches-loop": f'{LIST}.all(i, {BLOB}.matches("a+b?$"))',
    "contains-loop": f'{LIST}.all(i, {BLOB}.contains("aaaaaaaaaaaaaaaaaaab") == false)',
    "prefix-loop": f'{LIST}.all(i, {BLOB}.startsWith("a") && {BLOB}.endsWith("a"))',
    "nested-lists": f'{LIST}.all(i, attributes.stringslice["ss"].all(x, (x + x).size() > 0))',
}
EVAL_STOPPED = {
    "nested-unknown": f"{BIG}.all(x, {BIG}.all(y, y >= 0))",
    "sum-in-loop": 'attributes.intslice["big"].all(x, attributes.intslice["big"].sum() > 0)',
    "replace-chain": '"a"' + '.replace("a", "aaaaaaaaaa")' * 12 + ' == ""',
    "join-loop": 'attributes.stringslice["ss"].map(x, '
    'attributes.stringslice["ss"].join(",")).size() > 0',
    "list-concat-loop": 'attributes.intslice["big"].all(x, '
    '(attributes.intslice["big"] + attributes.intslice["big"]).size() > 0)',
    "map-quadratic": 'attributes.intslice["big"].map(x, x).size() > 0',
    "filter-map": 'attributes.intslice["big"].filter(x, x > 0).map(x, x * 2).size() > 0',
    "in-loop": 'attributes.intslice["big"].exists(x, x in attributes.intslice["big"])',
    "exists-one": 'attributes.intslice["big"].exists_one(x, x == 5)',
    "split-loop": 'attributes.intslice["big"].all(x, attributes.string["s"].split("").size() > 0)',
    "indexof-loop": f"{BIG}.exists(x, {BIG}.indexOf(9) == x)",
    # string work charged by operand size (before: up to 24 s with a 1 MB attribute)
    **STRING_WORK,
}
LINEAR = [
    '"%s".format([attributes.intslice["big"]]) != ""',
    'attributes.string["s"].matches("(a*)*b") || attributes.string["s"].find("(a|aa)*c") == ""',
    'attributes.intslice["big"].isSorted()',
]


@pytest.mark.parametrize("expr", COMPILE_REJECTED.values(), ids=COMPILE_REJECTED.keys())
def test_rejected_at_compile_time(expr: str) -> None:
    with pytest.raises(CompileError) as exc:
        compile_expression(expr)
    assert exc.value.detail.startswith("compilation failed: ")


@pytest.mark.parametrize("expr", EVAL_STOPPED.values(), ids=EVAL_STOPPED.keys())
def test_stopped_during_evaluation(expr: str, big: Prepared, units_only: None) -> None:
    program = compile_expression(expr)
    with pytest.raises(EvalError) as exc:
        program.evaluate(big)
    assert str(exc.value) == COST_LIMIT_EXCEEDED


@pytest.mark.parametrize("expr", STRING_WORK.values(), ids=STRING_WORK.keys())
def test_string_work_is_fine_on_ordinary_strings(expr: str) -> None:
    small = prepare([
        NamedResourcesAttribute(name="blob", string="aaa"),
        NamedResourcesAttribute(name="ss", string_slice=NamedResourcesStringSlice(strings=["b"])),
    ])
    assert compile_expression(expr).evaluate(small) is True


def test_string_costs_follow_cel_go() -> None:
    """One ⌈0.1·n⌉ walk per call: concatenating a 1 MB string with itself costs 200,001 units
    of the 1,000,000 and the size of the result as much again, so twice fits, three times
    does not."""
    one = prepare([NamedResourcesAttribute(name="blob", string="a" * 1_000_000)])
    two = " && ".join(f"({BLOB} + {BLOB}).size() > {i}" for i in range(2))
    assert compile_expression(two).evaluate(one) is True
    with pytest.raises(EvalError, match="cost limit"):
        compile_expression(two + f" && ({BLOB} + {BLOB}).size() > 5").evaluate(one)


def test_same_selector_is_fine_on_small_data() -> None:
    # The data-dependent bound only trips for big attribute lists: upstream-like behaviour.
    small = prepare(
        [NamedResourcesAttribute(name="big", int_slice=NamedResourcesIntSlice(ints=[1, 2, 3]))]
    )
    assert compile_expression(EVAL_STOPPED["map-quadratic"]).evaluate(small) is True
    assert compile_expression(EVAL_STOPPED["sum-in-loop"]).evaluate(small) is True


@pytest.mark.parametrize("expr", LINEAR)
def test_large_but_linear_work_completes(expr: str, big: Prepared, units_only: None) -> None:
    assert compile_expression(expr).evaluate(big) is True
    assert _cost._METER.used < _cost.RUNTIME_COST_LIMIT


@pytest.mark.timing
@pytest.mark.parametrize("expr", [*COMPILE_REJECTED.values(), *EVAL_STOPPED.values(), *LINEAR],
                         ids=[*COMPILE_REJECTED.keys(), *EVAL_STOPPED.keys(), *LINEAR])
def test_units_track_the_time(expr: str, big: Prepared, units_only: None) -> None:
    """Each case above ends quickly: the units charge what the time is spent on."""
    clear_cache()
    with within(BOUND, expr[:40]), contextlib.suppress(CompileError, EvalError):
        compile_expression(expr).evaluate(big)
