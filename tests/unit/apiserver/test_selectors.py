"""Label and field selectors: parsing and matching as apimachinery does."""

from __future__ import annotations

import pytest

from kubedra.apiserver.selectors import (
    SelectorError,
    parse_field_selector,
    parse_label_selector,
)

LABELS = {"app": "web", "tier": "front", "n": "5"}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("", True),
        ("app=web", True),
        ("app==web", True),
        ("app=db", False),
        ("app!=db", True),
        ("app!=web", False),
        ("missing!=x", True),
        ("app in (web,db)", True),
        ("app in (db)", False),
        ("app notin (db)", True),
        ("app notin (web)", False),
        ("missing notin (web)", True),
        ("app", True),
        ("missing", False),
        ("!missing", True),
        ("!app", False),
        ("app=web,tier=front", True),
        ("app=web,tier=back", False),
        ("n>4", True),
        ("n<4", False),
        ("missing>1", False),
        ("  app = web ,  tier in ( front , back )  ", True),
        ("app=", False),
        ("app in (web,)", True),
    ],
)
def test_label_selector_matches(selector: str, expected: bool) -> None:
    assert parse_label_selector(selector).matches(LABELS) is expected


def test_empty_value_matches_empty_label() -> None:
    assert parse_label_selector("app=").matches({"app": ""})
    assert parse_label_selector("example.com/app=x").matches({"example.com/app": "x"})


@pytest.mark.parametrize(
    "selector",
    ["app=web,", "app in web", "app in ()", "=web", "app=(x)", "a b", "app==web==x",
     "Bad_Key!/x=y", "app=" + "x" * 64, "n>x", "app notin", ",",
     "-bad=1"],
)
def test_label_selector_errors(selector: str) -> None:
    with pytest.raises(SelectorError):
        parse_label_selector(selector)


def test_field_selector_terms_and_escapes() -> None:
    sel = parse_field_selector(r"metadata.name=a\,b,spec.nodeName!=n1")
    assert sel.matches({"metadata.name": "a,b", "spec.nodeName": "n2"})
    assert not sel.matches({"metadata.name": "a,b", "spec.nodeName": "n1"})
    assert parse_field_selector("nodeName=").matches({"nodeName": ""})
    assert parse_field_selector("a==b").matches({"a": "b"})
    assert parse_field_selector("").terms == ()


@pytest.mark.parametrize("selector", ["nodeName", "a=b\\x", "a=b=c"])
def test_field_selector_errors(selector: str) -> None:
    with pytest.raises(SelectorError):
        parse_field_selector(selector)


def test_field_label_check() -> None:
    def check(label: str) -> str | None:
        return None if label == "ok" else f"field label not supported: {label}"

    assert parse_field_selector("ok=1", check).terms
    with pytest.raises(SelectorError, match="field label not supported: nope"):
        parse_field_selector("nope=1", check)
