"""Name and label checks of apimachinery ``pkg/util/validation`` (v0.30), with upstream texts.

Each ``is_*`` function returns the list of problems (empty when the value is fine), exactly the
strings Go returns, so callers wrap them into ``Invalid`` field errors. Lengths are byte
lengths and regexes are matched against the whole text (Go anchors ``^...$``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
QUALIFIED_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character"
)
_QNAME_CHAR = "[A-Za-z0-9]"
_QNAME_EXT_CHAR = "[-A-Za-z0-9_.]"
_QUALIFIED_NAME_FMT = "(" + _QNAME_CHAR + _QNAME_EXT_CHAR + "*)?" + _QNAME_CHAR
_QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_LABEL_VALUE_FMT = "(" + _QUALIFIED_NAME_FMT + ")?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character"
)

_C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"
_C_IDENTIFIER_MSG = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of "
    "alphanumeric characters or '_'"
)

_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT)
_C_IDENTIFIER_RE = re.compile(_C_IDENTIFIER_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_QUALIFIED_NAME_RE = re.compile(_QUALIFIED_NAME_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)

#: A name check in the shape of Go's ``ValidateNameFunc(name, prefix) []string``.
NameFn = Callable[[str, bool], list[str]]


def _blen(value: str) -> int:
    return len(value.encode())


_VALID_REMEMBERED = 8192


def _remember_valid(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """``check`` with a memory of the values it passed: every write validates the same few
    names and label keys again (a pod's labels on each status update). Only valid values
    are kept, at most a few thousand (each a few hundred bytes at most); the set starts over when
    full."""
    valid: set[str] = set()

    def remembered(value: str) -> list[str]:
        if value in valid:
            return []
        errs = check(value)
        if not errs:
            if len(valid) >= _VALID_REMEMBERED:
                valid.clear()
            valid.add(value)
        return errs

    remembered.__doc__ = check.__doc__
    return remembered


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """Go's ``RegexError`` (note the ``', '`` before each ``or``, giving two spaces)."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    parts = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {parts}regex used for validation is '{fmt}')"


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def empty_error() -> str:
    return "must be non-empty"


@_remember_valid
def is_dns1123_label(value: str) -> list[str]:
    errs: list[str] = []
    if _blen(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


@_remember_valid
def is_dns1123_subdomain(value: str) -> list[str]:
    errs: list[str] = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


@_remember_valid
def is_qualified_name(value: str) -> list[str]:
    """A label key / annotation key / finalizer: ``[prefix/]name``."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + empty_error())
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part " + empty_error())
    elif _blen(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not _QUALIFIED_NAME_RE.fullmatch(name):
        errs.append(
            "name part "
            + regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


@_remember_valid
def is_valid_label_value(value: str) -> list[str]:
    errs: list[str] = []
    if _blen(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_c_identifier(value: str) -> list[str]:
    """``IsCIdentifier`` (device attribute and capacity names of resource.k8s.io/v1)."""
    if _C_IDENTIFIER_RE.fullmatch(value):
        return []
    return [regex_error(_C_IDENTIFIER_MSG, _C_IDENTIFIER_FMT, "my_name", "MY_NAME", "MyName")]


def _mask_trailing_dash(name: str) -> str:
    """generateName prefixes may end in '-': check them as if it were a letter (upstream)."""
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    """``NameIsDNSSubdomain``: the name rule of every resource.k8s.io kind (and pods)."""
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    """``NameIsDNSLabel``: namespaces (``ValidateNamespaceName``)."""
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)
