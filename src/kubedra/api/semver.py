"""Semantic versions exactly as ``github.com/blang/semver/v4`` v4.0.0 ``Parse``/``Compare``.

Why not the ``semver`` package: it accepts numbers above 2^64-1 and its error texts differ, and
Kubernetes surfaces blang's texts (``No Major.Minor.Patch elements found``) in CEL errors.
Equality and hashing follow ``Version.EQ``: build metadata is ignored.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Final

from kubedra.api.goformat import go_quote

_UINT64_MAX: Final = (1 << 64) - 1
_NUMBERS: Final = frozenset("0123456789")
_ALPHANUM: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")


class SemverError(ValueError):
    """A blang ``Parse`` error; ``str(e)`` is blang's (or strconv's) text."""


def _only(s: str, allowed: frozenset[str]) -> bool:
    return all(c in allowed for c in s)


def _parse_uint(s: str) -> int:
    """``strconv.ParseUint(s, 10, 64)`` for a string of ASCII digits."""
    if not s:
        raise SemverError(f"strconv.ParseUint: parsing {go_quote(s)}: invalid syntax")
    v = int(s) if len(s) <= 20 else _UINT64_MAX + 1
    if v > _UINT64_MAX:
        raise SemverError(f"strconv.ParseUint: parsing {go_quote(s)}: value out of range")
    return v


def _number(s: str, what: str) -> int:
    if not _only(s, _NUMBERS):
        raise SemverError(f"Invalid character(s) found in {what.lower()} number {go_quote(s)}")
    if len(s) > 1 and s[0] == "0":
        raise SemverError(f"{what} number must not contain leading zeroes {go_quote(s)}")
    return _parse_uint(s)


def _prerelease(s: str) -> int | str:
    if not s:
        raise SemverError("Prerelease is empty")
    if _only(s, _NUMBERS):
        if len(s) > 1 and s[0] == "0":
            raise SemverError(
                f"Numeric PreRelease version must not contain leading zeroes {go_quote(s)}"
            )
        return _parse_uint(s)
    if _only(s, _ALPHANUM):
        return s
    raise SemverError(f"Invalid character(s) found in prerelease {go_quote(s)}")


def _cmp_pre(a: int | str, b: int | str) -> int:
    if isinstance(a, int) and isinstance(b, int):
        return (a > b) - (a < b)
    if isinstance(a, str) and isinstance(b, str):
        return (a > b) - (a < b)
    return -1 if isinstance(a, int) else 1


@dataclass(frozen=True, slots=True, eq=False)
class Version:
    """A parsed version; prerelease identifiers are ints (numeric) or strings."""

    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()
    build: tuple[str, ...] = field(default=())

    @staticmethod
    def parse(s: str) -> Version:
        """blang ``semver.Parse`` (strict); raises SemverError with blang's text."""
        return _parse_cached(s)

    def compare(self, o: Version) -> int:
        """blang ``Version.Compare``: -1, 0 or 1; build metadata never matters."""
        for a, b in ((self.major, o.major), (self.minor, o.minor), (self.patch, o.patch)):
            if a != b:
                return 1 if a > b else -1
        if not self.pre or not o.pre:
            return (not self.pre) - (not o.pre)
        for a2, b2 in zip(self.pre, o.pre, strict=False):
            c = _cmp_pre(a2, b2)
            if c:
                return c
        return (len(self.pre) > len(o.pre)) - (len(self.pre) < len(o.pre))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self.compare(other) == 0

    def __hash__(self) -> int:
        return hash((self.major, self.minor, self.patch, self.pre))

    def __lt__(self, other: Version) -> bool:
        return self.compare(other) < 0

    def __str__(self) -> str:
        s = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            s += "-" + ".".join(str(p) for p in self.pre)
        if self.build:
            s += "+" + ".".join(self.build)
        return s


@functools.lru_cache(maxsize=4096)
def _parse_cached(s: str) -> Version:
    if not s:
        raise SemverError("Version string empty")
    parts = s.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    major = _number(parts[0], "Major")
    minor = _number(parts[1], "Minor")
    rest = parts[2]
    build: list[str] = []
    pre_strs: list[str] = []
    plus = rest.find("+")
    if plus >= 0:
        build = rest[plus + 1 :].split(".")
        rest = rest[:plus]
    dash = rest.find("-")
    if dash >= 0:
        pre_strs = rest[dash + 1 :].split(".")
        rest = rest[:dash]
    patch = _number(rest, "Patch")
    pre = tuple(_prerelease(p) for p in pre_strs)
    for b in build:
        if not b:
            raise SemverError("Build meta data is empty")
        if not _only(b, _ALPHANUM):
            raise SemverError(f"Invalid character(s) found in build meta data {go_quote(b)}")
    return Version(major, minor, patch, pre, tuple(build))
