"""The Kubernetes ``quantity`` and URL libraries and DRA's ``semver`` library, in Python.

Values travel as protobuf messages whose key identifies the value (see _proto.py); the Python
objects are recovered through small LRU caches, so repeated selectors do not re-parse.
Error texts are upstream's: ``resource.ParseQuantity`` and blang ``Parse`` messages,
``cannot convert value to integer``.

Overload ids and signatures follow apiserver:pkg/cel/library/{quantity,urls}.go@v0.30.0 and
DRA:structured/namedresources/cel/semverlib.go@v0.30.0; the v1 device env adds the normalize
overloads of apiserver:pkg/cel/library/semverlib.go@v0.34 (``semver(s, normalize)``).
``compareTo``/``isGreaterThan``/``isLessThan`` exist for Quantity and Semver; cel-cpp
dispatches at run time by argument *kind* (both are messages), so one implementation serves
both and switches on the class.
"""

from __future__ import annotations

import functools
import urllib.parse
from typing import Any, Final

from cel_expr_python import cel

from kubedra.api.goformat import go_quote
from kubedra.api.quantity import Quantity, QuantityError
from kubedra.api.semver import SemverError, Version
from kubedra.cel import _cost
from kubedra.cel._decl import Overloads, overload
from kubedra.cel._proto import QUANTITY, SEMVER, URL, QuantityMsg, SemverMsg, URLMsg

T = cel.Type
QT: Final = T(QUANTITY)
ST: Final = T(SEMVER)
UT: Final = T(URL)
_CACHE: Final = 4096


# ----------------------------------------------------------------------------- conversions


@functools.lru_cache(maxsize=_CACHE)
def _quantity_from_key(key: str) -> Quantity:
    return Quantity.from_value_key(key)


@functools.lru_cache(maxsize=_CACHE)
def _semver_from_key(key: str) -> Version:
    return Version.parse(key)


def quantity_msg(q: Quantity) -> Any:
    """The CEL value of a Quantity (a ``kubernetes.Quantity`` message)."""
    return QuantityMsg(kubedra_value_key=q.value_key())


def semver_msg(v: Version) -> Any:
    """The CEL value of a version; the key drops build metadata (``EQ`` ignores it)."""
    key = f"{v.major}.{v.minor}.{v.patch}"
    if v.pre:
        key += "-" + ".".join(str(p) for p in v.pre)
    return SemverMsg(kubedra_value_key=key)


@functools.lru_cache(maxsize=_CACHE)
def version_msg(s: str) -> Any:
    """The CEL value of a version attribute (blang ``semver.Parse``, strict; raises
    SemverError)."""
    return semver_msg(Version.parse(s))


def to_quantity(m: Any) -> Quantity:
    return _quantity_from_key(m.kubedra_value_key)


def to_semver(m: Any) -> Version:
    return _semver_from_key(m.kubedra_value_key)


def from_cel(m: Any) -> Any:
    """Python value of a message result (Quantity / Version / URL string); others unchanged."""
    if isinstance(m, QuantityMsg):
        return to_quantity(m)
    if isinstance(m, SemverMsg):
        return to_semver(m)
    if isinstance(m, URLMsg):
        return m.kubedra_value_key
    return m


# ----------------------------------------------------------------------------- quantity


@functools.lru_cache(maxsize=_CACHE)
def _parse_quantity_msg(s: str) -> Any:
    _cost.charge(len(s))  # only parsing costs; a cache hit is O(1)
    return quantity_msg(Quantity.parse(s))


_quantity = _parse_quantity_msg


def _is_quantity(s: str) -> bool:
    try:
        _parse_quantity_msg(s)
    except QuantityError:
        return False
    return True


def _sign(m: Any) -> int:
    return to_quantity(m).sign()


def _compare(a: Any, b: Any) -> int:
    if a.__class__ is SemverMsg:
        return to_semver(a).compare(to_semver(b))
    return to_quantity(a).cmp(to_quantity(b))


def _is_greater(a: Any, b: Any) -> bool:
    return _compare(a, b) == 1


def _is_less(a: Any, b: Any) -> bool:
    return _compare(a, b) == -1


def _as_float(m: Any) -> float:
    return to_quantity(m).as_approximate_float()


def _as_integer(m: Any) -> int:
    return to_quantity(m).as_integer()


def _is_integer(m: Any) -> bool:
    return to_quantity(m).is_integer()


def _add(a: Any, b: Any) -> Any:
    return quantity_msg(to_quantity(a).add(to_quantity(b)))


def _add_int(a: Any, b: int) -> Any:
    return quantity_msg(to_quantity(a).add(b))


def _sub(a: Any, b: Any) -> Any:
    return quantity_msg(to_quantity(a).sub(to_quantity(b)))


def _sub_int(a: Any, b: int) -> Any:
    return quantity_msg(to_quantity(a).sub(b))


# ----------------------------------------------------------------------------- semver


@functools.lru_cache(maxsize=_CACHE)
def _parse_semver_msg(s: str) -> Any:
    _cost.charge(len(s))  # only parsing costs; a cache hit is O(1)
    return semver_msg(Version.parse(s))


_semver = _parse_semver_msg


def _is_semver(s: str) -> bool:
    try:
        _parse_semver_msg(s)
    except SemverError:
        return False
    return True


def _normalize_semver(s: str) -> str:
    """apiserver's ``normalizeAndParse`` before the parse: drop a leading ``v``, strip leading
    zeros of the dot-separated parts, pad ``1`` / ``1.2`` to three parts."""
    parts = s.removeprefix("v").split(".", 2)
    for i, p in enumerate(parts):
        if len(p) > 1:
            p = p.lstrip("0")
            parts[i] = p if p[:1].isdigit() and p[:1].isascii() else "0" + p
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def _semver_normalize(s: str, normalize: bool) -> Any:
    return _parse_semver_msg(_normalize_semver(s) if normalize else s)


def _is_semver_normalize(s: str, normalize: bool) -> bool:
    try:
        _semver_normalize(s, normalize)
    except SemverError:
        return False
    return True


def _go_int(u: int) -> int:
    """``types.Int(uint64)``: values >= 2^63 wrap to negative."""
    return u - (1 << 64) if u >= 1 << 63 else u


def _major(m: Any) -> int:
    return _go_int(to_semver(m).major)


def _minor(m: Any) -> int:
    return _go_int(to_semver(m).minor)


def _patch(m: Any) -> int:
    return _go_int(to_semver(m).patch)


# ----------------------------------------------------------------------------- URL


class _URLError(ValueError):
    pass


def _url_error(s: str, reason: str) -> _URLError:
    """Go's ``*url.Error`` text (``parse "<url>": <reason>``) as the URL library wraps it."""
    prefix = "URL parse error during conversion from string"
    return _URLError(f"{prefix}: parse {go_quote(s)}: {reason}")


@functools.lru_cache(maxsize=_CACHE)
def _parse_url(s: str) -> urllib.parse.SplitResult:
    """Approximates Go ``url.ParseRequestURI``: absolute URI or absolute path, no fragment."""
    if not s:
        raise _url_error(s, "empty url")
    parts = urllib.parse.urlsplit(s, allow_fragments=False)
    if not parts.scheme and not s.startswith("/"):
        raise _url_error(s, "invalid URI for request")
    if any(c in s for c in " \x7f") or any(ord(c) < 0x20 for c in s):
        raise _url_error(s, "invalid character in URL")
    return parts


def _url(s: str) -> Any:
    _cost.charge(len(s))
    _parse_url(s)
    return URLMsg(kubedra_value_key=s)


def _is_url(s: str) -> bool:
    _cost.charge(len(s))
    try:
        _parse_url(s)
    except _URLError:
        return False
    return True


def _u(m: Any) -> urllib.parse.SplitResult:
    return _parse_url(m.kubedra_value_key)


def _get_scheme(m: Any) -> str:
    return _u(m).scheme


def _get_host(m: Any) -> str:
    return _u(m).netloc.rpartition("@")[2]


def _get_hostname(m: Any) -> str:
    host = _get_host(m)
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host[1:]
    return host.rpartition(":")[0] if ":" in host else host


def _get_port(m: Any) -> str:
    host = _get_host(m)
    tail = host[host.find("]") + 1 :] if host.startswith("[") else host
    return tail.rpartition(":")[2] if ":" in tail else ""


def _get_escaped_path(m: Any) -> str:
    return _u(m).path


def _get_query(m: Any) -> dict[str, list[str]]:
    query = _u(m).query
    _cost.charge(len(query))
    return urllib.parse.parse_qs(query, keep_blank_values=True)


# ----------------------------------------------------------------------------- declarations


def quantity_and_semver_overloads() -> Overloads:
    """Overloads of the quantity library (base env >= 1.28) and DRA's semver library.

    The semver comparisons have no implementation of their own: see the module docstring."""
    b, i, d, s = T.BOOL, T.INT, T.DOUBLE, T.STRING
    return [
        overload("quantity", "string_to_quantity", QT, [s], _quantity, member=False),
        overload("isQuantity", "is_quantity_string", b, [s], _is_quantity, member=False),
        overload("sign", "quantity_sign", i, [QT], _sign, member=False),
        overload("isGreaterThan", "quantity_is_greater_than", b, [QT, QT], _is_greater),
        overload("isGreaterThan", "semver_is_greater_than", b, [ST, ST]),
        overload("isLessThan", "quantity_is_less_than", b, [QT, QT], _is_less),
        overload("isLessThan", "semver_is_less_than", b, [ST, ST]),
        overload("compareTo", "quantity_compare_to", i, [QT, QT], _compare),
        overload("compareTo", "semver_compare_to", i, [ST, ST]),
        overload("asApproximateFloat", "quantity_get_float", d, [QT], _as_float),
        overload("asInteger", "quantity_get_int", i, [QT], _as_integer),
        overload("isInteger", "quantity_is_integer", b, [QT], _is_integer),
        overload("add", "quantity_add", QT, [QT, QT], _add),
        overload("add", "quantity_add_int", QT, [QT, i], _add_int),
        overload("sub", "quantity_sub", QT, [QT, QT], _sub),
        overload("sub", "quantity_sub_int", QT, [QT, i], _sub_int),
        overload("semver", "string_to_semver", ST, [s], _semver, member=False),
        overload("isSemver", "is_semver_string", b, [s], _is_semver, member=False),
        overload("major", "semver_major", i, [ST], _major),
        overload("minor", "semver_minor", i, [ST], _minor),
        overload("patch", "semver_patch", i, [ST], _patch),
    ]


def semver_normalize_overloads() -> Overloads:
    """The apiserver semver library's version 1 overloads (base env >= 1.33)."""
    b, s = T.BOOL, T.STRING
    return [
        overload("semver", "string_bool_to_semver", ST, [s, b], _semver_normalize,
                 member=False),
        overload("isSemver", "is_semver_string_bool", b, [s, b], _is_semver_normalize,
                 member=False),
    ]


def url_overloads() -> Overloads:
    """Overloads of the Kubernetes URL library (base env 1.0)."""
    b, s = T.BOOL, T.STRING
    return [
        overload("url", "string_to_url", UT, [s], _url, member=False),
        overload("isURL", "is_url_string", b, [s], _is_url, member=False),
        overload("getScheme", "url_get_scheme", s, [UT], _get_scheme),
        overload("getHost", "url_get_host", s, [UT], _get_host),
        overload("getHostname", "url_get_hostname", s, [UT], _get_hostname),
        overload("getPort", "url_get_port", s, [UT], _get_port),
        overload("getEscapedPath", "url_get_escaped_path", s, [UT], _get_escaped_path),
        overload("getQuery", "url_get_query", T("map<string,list<string>>"), [UT], _get_query),
    ]
