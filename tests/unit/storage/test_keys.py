from __future__ import annotations

import pytest

from kubedra.storage.keys import prefix_end


@pytest.mark.parametrize(
    ("prefix", "end"),
    [
        ("", None),
        ("/a/", "/a0"),
        ("/registry/pods", "/registry/podt"),
        ("a\U0010ffff", "b"),
        ("\U0010ffff", None),
        ("x\ud7ff", "x\ue000"),
    ],
)
def test_prefix_end(prefix: str, end: str | None) -> None:
    assert prefix_end(prefix) == end


@pytest.mark.parametrize("key", ["/a/", "/a/b", "/a/\U0010ffff", "/a/\u00e9\U0001f600"])
def test_every_key_with_the_prefix_is_below_the_end(key: str) -> None:
    end = prefix_end("/a/")
    assert end is not None and "/a/" <= key < end
    assert key.encode() < end.encode()  # the same order for SQLite's BINARY collation
