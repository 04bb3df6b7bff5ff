"""kubedra.api.quantity / semver behaviour beyond the vectors: upstream quirks we keep and the
bounds that keep hostile values cheap."""

from __future__ import annotations

import pytest

from kubedra.api.goformat import go_quote
from kubedra.api.quantity import (
    ERR_ARITH_RANGE,
    ERR_NUMERIC,
    MAX_DIGITS,
    Quantity,
    QuantityError,
)
from kubedra.api.semver import Version
from tests.timing import within


def test_fast_path_keeps_the_input_string() -> None:
    # ParseQuantity caches the input when it is "canonical enough": String() returns it.
    assert str(Quantity.parse("+1")) == "+1"
    assert str(Quantity.parse("1E3")) == "1E3"
    assert Quantity.parse("1E3").canonical() == "1e3"
    assert str(Quantity.parse("1.0")) == "1"
    assert str(Quantity.parse("0.5Ki")) == "512"


def test_representation_drives_integer_and_float_views() -> None:
    assert Quantity.parse("1000m").is_integer() is False  # int64Amount{1000, -3}
    assert Quantity.parse("0.5Ki").is_integer() is False  # inf.Dec
    assert Quantity.parse("12E").as_int64() is None  # 12e18 overflows int64
    assert Quantity.parse("1.1").as_approximate_float() == 11 * 0.1
    with pytest.raises(QuantityError, match="cannot convert value to integer"):
        Quantity.parse("1.5").as_integer()


def test_add_and_sub_follow_int64amount_rules() -> None:
    q = Quantity.parse("50k").add(20).sub(Quantity.parse("100k"))
    assert q.as_integer() == -49980
    assert Quantity().add(Quantity.parse("1Ki")).format == "BinarySI"  # zero takes y's format
    assert Quantity.parse("9Ei").add(Quantity.parse("9Ei")) > Quantity.parse("9Ei")


def test_equality_ordering_hash_by_value() -> None:
    a, b = Quantity.parse("200M"), Quantity.parse("0.2G")
    assert a == b and hash(a) == hash(b) and a.cmp(b) == 0
    assert Quantity.parse("50M") < Quantity.parse("50Mi")
    assert Quantity.parse("-1") < Quantity.parse("0") < Quantity.parse("1n")
    assert Quantity.from_value_key(a.value_key()) == a


@pytest.mark.timing
@pytest.mark.parametrize(
    "text", ["1e2147483647", "1e-2147483648", "1234567890123456789012e2000000000", "9" * MAX_DIGITS]
)
def test_hostile_inputs_are_cheap(text: str) -> None:
    with within(0.5, text[:20]):
        q = Quantity.parse(text)
        str(q), q.cmp(Quantity.parse("1")), q.as_approximate_float(), q.is_integer()


def test_bounds() -> None:
    with pytest.raises(QuantityError, match=ERR_NUMERIC):
        Quantity.parse("9" * (MAX_DIGITS + 1))
    with pytest.raises(QuantityError, match=ERR_ARITH_RANGE):
        Quantity.parse("1e5000").add(Quantity.parse("1"))


def test_unmarshal_trims_like_unmarshal_json() -> None:
    assert Quantity.unmarshal(" 1Gi\n") == Quantity.parse("1Gi")
    with pytest.raises(QuantityError):
        Quantity.parse(" 1Gi")


def test_semver_equality_ignores_build_and_go_quote() -> None:
    assert Version.parse("1.0.0+a") == Version.parse("1.0.0+b")
    assert hash(Version.parse("1.0.0+a")) == hash(Version.parse("1.0.0"))
    assert Version.parse("1.0.0-alpha") < Version.parse("1.0.0")
    assert go_quote("a\x01\n\u00e9") == '"a\\x01\\né"'
