"""YAML loading: multi-document streams and the YAML 1.1 pitfalls (ecosystem.md §2.5)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.api import codec, core


def test_multi_document_skips_empty_documents() -> None:
    text = "---\n# only a comment\n---\na: 1\n---\n\n---\nb: 2\n...\n"
    assert codec.load_documents(text) == [{"a": 1}, {"b": 2}]
    assert codec.load_documents(b"") == []


def test_timestamps_stay_strings() -> None:
    (doc,) = codec.load_documents(
        "date: 2024-01-01\nwhen: 2024-05-01T10:00:00Z\nspaced: 2001-12-14 21:59:43.10 -5\n"
    )
    assert doc == {
        "date": "2024-01-01",
        "when": "2024-05-01T10:00:00Z",
        "spaced": "2001-12-14 21:59:43.10 -5",
    }
    json.dumps(doc)


@pytest.mark.parametrize(
    "scalar,value",
    [
        ("no", False),
        ("on", True),
        ("yes", True),
        ("off", False),
        ("010", 8),
        ("0x10", 16),
        ("1_000", 1000),
        ("1e3", "1e3"),
        ("1.0", 1),
        ("1.5", 1.5),
        ("'1.0'", "1.0"),
        ("~", None),
        ("=", "="),
        ("null", None),
        ('"2024-01-01"', "2024-01-01"),
    ],
)
def test_yaml_11_scalars(scalar: str, value: object) -> None:
    assert codec.load_documents(f"v: {scalar}\n") == [{"v": value}]


def test_keys_become_strings() -> None:
    assert codec.load_documents("1: a\n2.5: c\n~: d\n---\ntrue: b\n") == [
        {"1": "a", "2.5": "c", "null": "d"},
        {"true": "b"},
    ]


def test_labels_that_look_like_booleans() -> None:
    # As with kubectl, an unquoted `on` is a boolean, so a string field rejects it.
    (doc,) = codec.load_documents("metadata:\n  name: p\n  labels:\n    enabled: on\n")
    with pytest.raises(codec.DecodeError) as info:
        codec.decode(doc, core.Pod)
    assert info.value.path == "metadata.labels.enabled" or "labels" in info.value.path


@pytest.mark.parametrize(
    "text,message",
    [
        ("a: [1, 2\n", "error parsing YAML"),
        ("a: .nan\n", "not representable in JSON"),
        ("a: !!binary aGVsbG8=\n", "unsupported YAML value of type bytes"),
        ("a: !!set {x, y}\n", "unsupported YAML value of type set"),
        ("a: !!python/object:os.system x\n", "error parsing YAML"),
        ("? [1, 2]\n: x\n", "error parsing YAML|map key"),
        ("a: &x [*x]\n", "aliasing|nested too deeply"),
    ],
)
def test_bad_yaml_is_a_decode_error(text: str, message: str) -> None:
    with pytest.raises(codec.DecodeError, match=message):
        codec.load_documents(text)


def test_alias_bomb_is_bounded() -> None:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    with pytest.raises(codec.DecodeError, match="excessive aliasing"):
        codec.load_documents("\n".join(lines) + "\n")


def test_invalid_utf8() -> None:
    with pytest.raises(codec.DecodeError, match="invalid UTF-8"):
        codec.load_documents(b"a: \xff\n")


def test_json_documents_and_lists() -> None:
    docs = codec.load_documents(
        '{"apiVersion":"v1","kind":"List","items":[{"kind":"Pod","apiVersion":"v1"},'
        '{"kind":"NodeList","items":[{"kind":"Node"}]}]}'
    )
    assert [d["kind"] for d in codec.expand_lists(docs)] == ["Pod", "Node"]


@pytest.mark.parametrize(
    "text",
    [
        "a: " + "[" * 100_000 + "]" * 100_000,
        "- " * 100_000 + "x",
        "a:\n" + "".join(" " * i + "b:\n" for i in range(1, 1200)) + " " * 1200 + "c\n",
    ],
)
def test_deep_nesting_is_refused_before_libyaml(text: str) -> None:
    # libyaml would overflow the C stack (segfault) on the first two
    with pytest.raises(codec.DecodeError, match="nested too deeply"):
        codec.load_documents(text)


def test_moderate_nesting_and_brackets_in_strings_are_fine() -> None:
    text = "a: " + "[" * 50 + "1" + "]" * 50 + '\nsel: \'x["a"] == "{b}"\'\n'
    (doc,) = codec.load_documents(text)
    assert doc["sel"] == 'x["a"] == "{b}"'


def test_dump_yaml_round_trips_examples() -> None:
    from tests.unit.api.samples import example_objects

    docs = [codec.decode_object(raw) for _, raw in example_objects()]
    text = codec.dump_yaml(*docs)
    # every document starts with a separator, then apiVersion first (upstream field order)
    assert text.startswith(f"---\napiVersion: {docs[0].api_version}\n")
    assert text.count("\n---\n") == len(docs) - 1
    assert [codec.decode_object(d) for d in codec.load_documents(text)] == docs


@settings(max_examples=200, deadline=None)
@given(
    value=st.dictionaries(
        st.text(max_size=8),
        st.recursive(
            st.none()
            | st.booleans()
            | st.integers(-(2**63), 2**63 - 1)
            | st.text(max_size=12)
            | st.floats(allow_nan=False, allow_infinity=False),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.text(max_size=6), inner, max_size=3)
            ),
            max_leaves=20,
        ),
        max_size=4,
    )
)
def test_dump_then_load_is_identity(value: dict[str, object]) -> None:
    assert codec.load_documents(codec.dump_yaml(value)) == [value]
