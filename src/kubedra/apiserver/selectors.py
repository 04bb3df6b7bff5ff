"""Label and field selectors as apimachinery parses and matches them.

Label selectors: ``a=b``, ``a==b``, ``a!=b``, ``a in (x,y)``, ``a notin (x)``, ``a``, ``!a``,
``a>1``, ``a<1``, comma-separated (AND). Field selectors: ``k=v``, ``k==v``, ``k!=v`` with
backslash escapes. Malformed selectors raise :class:`SelectorError` (the server's 400).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass


class SelectorError(ValueError):
    """A selector that does not parse."""


_KEY_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_DNS1123_SUB = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def _check_key(key: str) -> None:
    prefix, _, name = key.rpartition("/")
    ok = bool(name) and len(name) <= 63 and _KEY_NAME.fullmatch(name) is not None
    if "/" in key:
        ok = ok and 0 < len(prefix) <= 253 and _DNS1123_SUB.fullmatch(prefix) is not None
    if not ok:
        raise SelectorError(f"unable to parse requirement: invalid label key {key!r}")


def _check_value(value: str) -> None:
    if len(value) > 63 or _LABEL_VALUE.fullmatch(value) is None:
        raise SelectorError(f"unable to parse requirement: invalid label value: {value!r}")


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    op: str  # "in", "notin", "exists", "!exists", "gt", "lt"
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.op
        if op == "exists":
            return self.key in labels
        if op == "!exists":
            return self.key not in labels
        if op == "in":
            return self.key in labels and labels[self.key] in self.values
        if op == "notin":
            return self.key not in labels or labels[self.key] not in self.values
        if self.key not in labels:
            return False
        try:
            have = int(labels[self.key])
        except ValueError:
            return False
        want = int(next(iter(self.values)))
        return have > want if op == "gt" else have < want


_TOKEN = re.compile(r"\s*(!=|==|=|!|\(|\)|,|>|<|[^\s!=(),<>]+)")


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None:  # pragma: no cover - the pattern matches any non-space char
            raise SelectorError(f"unable to parse requirement: {text[pos:]!r}")
        out.append(m.group(1))
        pos = m.end()
    return out


_OPERATORS = frozenset({"=", "==", "!=", "!", "(", ")", ",", ">", "<"})


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise SelectorError("unable to parse requirement: unexpected end of selector")
        self.i += 1
        return tok

    def identifier(self, what: str) -> str:
        tok = self.take()
        if tok in _OPERATORS:
            raise SelectorError(f"found '{tok}', expected: {what}")
        return tok

    def requirement(self) -> Requirement:
        negated = self.peek() == "!"
        if negated:
            self.take()
        key = self.identifier("identifier")
        _check_key(key)
        if negated:
            return Requirement(key, "!exists")
        nxt = self.peek()
        if nxt is None or nxt == ",":
            return Requirement(key, "exists")
        op = self.take()
        if op in ("=", "=="):
            return Requirement(key, "in", frozenset({self.value()}))
        if op == "!=":
            return Requirement(key, "notin", frozenset({self.value()}))
        if op in (">", "<"):
            raw = self.identifier("integer")
            try:
                int(raw)
            except ValueError:
                raise SelectorError(
                    f"unable to parse requirement: for 'Gt', 'Lt' operators, the value must "
                    f"be an integer: {raw!r}"
                ) from None
            return Requirement(key, "gt" if op == ">" else "lt", frozenset({raw}))
        if op in ("in", "notin"):
            return Requirement(key, op, self.value_set())
        raise SelectorError(
            f"found '{op}', expected: '=', '!=', '==', 'in', notin'"
        )

    def value(self) -> str:
        tok = self.peek()
        if tok is None or tok == ",":
            return ""
        if tok in _OPERATORS:
            raise SelectorError(f"found '{tok}', expected: identifier")
        self.take()
        _check_value(tok)
        return tok

    def value_set(self) -> frozenset[str]:
        if self.take() != "(":
            raise SelectorError("found '(', expected: '(' after 'in'/'notin'")
        values: set[str] = set()
        expect_value = True
        while True:
            tok = self.take()
            if tok == ")":
                if expect_value and values:
                    values.add("")
                break
            if tok == ",":
                if expect_value:
                    values.add("")
                expect_value = True
                continue
            if not expect_value or tok in _OPERATORS:
                raise SelectorError(f"found '{tok}', expected: ',' or ')'")
            _check_value(tok)
            values.add(tok)
            expect_value = False
        if not values:
            raise SelectorError("for 'in', 'notin' operators, values set can't be empty")
        return frozenset(values)


@dataclass(frozen=True, slots=True)
class LabelSelector:
    requirements: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        have = labels or {}
        return all(r.matches(have) for r in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements


def parse_label_selector(text: str) -> LabelSelector:
    p = _Parser(text)
    reqs: list[Requirement] = []
    while p.peek() is not None:
        reqs.append(p.requirement())
        nxt = p.peek()
        if nxt is None:
            break
        if nxt != ",":
            raise SelectorError(f"found '{nxt}', expected: ',' or 'end of string'")
        p.take()
        if p.peek() is None:
            raise SelectorError("found '', expected: identifier after ','")
    return LabelSelector(tuple(reqs))


@dataclass(frozen=True, slots=True)
class FieldTerm:
    field: str
    value: str
    equal: bool


@dataclass(frozen=True, slots=True)
class FieldSelector:
    terms: tuple[FieldTerm, ...]

    def matches(self, fields: Mapping[str, str]) -> bool:
        return all((fields.get(t.field, "") == t.value) == t.equal for t in self.terms)



def _split_unescaped(text: str, sep: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            cur.append(text[i : i + 2])
            i += 2
            continue
        if c == sep:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    parts.append("".join(cur))
    return parts


def _unescape(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            if i + 1 >= len(text) or text[i + 1] not in "\\,=!":
                raise SelectorError(f"invalid field selector: {text}: invalid escape sequence")
            out.append(text[i + 1])
            i += 2
            continue
        if c in ",=":
            raise SelectorError(f"invalid field selector: {text}: unescaped reserved character")
        out.append(c)
        i += 1
    return "".join(out)


def _find_operator(term: str) -> tuple[int, str] | None:
    i = 0
    while i < len(term):
        if term[i] == "\\":
            i += 2
            continue
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return i, op
        i += 1
    return None


def parse_field_selector(
    text: str, check_label: Callable[[str], str | None] | None = None
) -> FieldSelector:
    """Parse ``text``; ``check_label`` returns an error message for unsupported labels."""
    terms: list[FieldTerm] = []
    if text.strip() == "":
        return FieldSelector(())
    for raw in _split_unescaped(text, ","):
        found = _find_operator(raw)
        if found is None:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{raw}'")
        pos, op = found
        label = raw[:pos].strip()
        value = _unescape(raw[pos + len(op) :])
        if check_label is not None:
            msg = check_label(label)
            if msg is not None:
                raise SelectorError(msg)
        terms.append(FieldTerm(label, value, op != "!="))
    return FieldSelector(tuple(terms))
