"""``--emulated-version``: the releases kubedra emulates and the flag's errors."""

from __future__ import annotations

import pytest

from kubedra.api.release import DEFAULT_RELEASE, R1_30, R1_34, ReleaseError, parse_release


def test_the_two_releases() -> None:
    assert (R1_30.name, R1_30.git_version, R1_30.major, R1_30.minor) == (
        "1.30", "v1.30.0", "1", "30")
    assert (R1_34.name, R1_34.git_version, R1_34.major, R1_34.minor) == (
        "1.34", "v1.34.0", "1", "34")
    assert DEFAULT_RELEASE is R1_34


@pytest.mark.parametrize(("text", "release"), [
    ("1.30", R1_30), ("1.34", R1_34), (" 1.34 ", R1_34), ("kube=1.34", R1_34),
])
def test_parse(text: str, release: object) -> None:
    assert parse_release(text) is release


@pytest.mark.parametrize("text", ["1.31", "v1.34", "1.34.0", "", "134", "wardle=1.34"])
def test_parse_refuses_other_values(text: str) -> None:
    with pytest.raises(ReleaseError) as err:
        parse_release(text)
    assert str(err.value) == (
        f"unsupported emulated version {text!r}: kubedra emulates 1.30, 1.34")
