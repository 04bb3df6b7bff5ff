"""RBAC policy rules compiled for lookups (upstream ``rbac.RulesAllow`` and
``validation.Covers``, as hash lookups instead of a scan over rules).

A :class:`Permissions` maps ``(verb, apiGroup, resource)`` keys, each possibly ``*``, to the
resource names allowed (``None``: every name), so a check is at most a dozen dict lookups
whatever the number of rules.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kubedra.api.base import Obj

ALL = "*"


@dataclass(frozen=True, slots=True)
class Rule:
    """A PolicyRule as stored (lists as tuples, absent lists empty)."""

    verbs: tuple[str, ...]
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    @classmethod
    def of(cls, rule: Obj) -> Rule:
        def strings(key: str) -> tuple[str, ...]:
            value = rule.get(key)
            return tuple(str(v) for v in value) if isinstance(value, list) else ()

        return cls(strings("verbs"), strings("apiGroups"), strings("resources"),
                   strings("resourceNames"), strings("nonResourceURLs"))

    def to_json(self) -> Obj:
        out: Obj = {"verbs": list(self.verbs)}
        for key, value in (("apiGroups", self.api_groups), ("resources", self.resources),
                           ("resourceNames", self.resource_names),
                           ("nonResourceURLs", self.non_resource_urls)):
            if value:
                out[key] = list(value)
        return out

    def atoms(self) -> Iterable[Rule]:
        """``BreakdownRule``: one verb, group, resource and name (or URL) per rule."""
        for verb in self.verbs:
            for group in self.api_groups:
                for resource in self.resources:
                    for name in self.resource_names or ("",):
                        yield Rule((verb,), (group,), (resource,), (name,) if name else ())
            for url in self.non_resource_urls:
                yield Rule((verb,), non_resource_urls=(url,))

    def compact(self) -> str:
        """``CompactString``: how escalation errors list a missing rule."""
        parts = []
        for label, value in (("APIGroups", self.api_groups), ("Resources", self.resources),
                             ("ResourceNames", self.resource_names),
                             ("NonResourceURLs", self.non_resource_urls),
                             ("Verbs", self.verbs)):
            if value:
                parts.append(f"{label}:[" + " ".join(f'"{v}"' for v in value) + "]")
        return "{" + ", ".join(parts) + "}"


def rules_of(obj: Obj) -> list[Rule]:
    rules = obj.get("rules")
    return [Rule.of(r) for r in rules if isinstance(r, dict)] if isinstance(rules, list) else []


class Permissions:
    """The union of some rules, keyed for lookup."""

    __slots__ = ("_resources", "_url_prefixes", "_urls")

    def __init__(self, rules: Iterable[Rule] = ()) -> None:
        self._resources: dict[tuple[str, str, str], frozenset[str] | None] = {}
        self._urls: set[tuple[str, str]] = set()
        self._url_prefixes: dict[str, list[str]] = {}
        for rule in rules:
            self.add(rule)

    def add(self, rule: Rule) -> None:
        names = frozenset(rule.resource_names) if rule.resource_names else None
        for verb in rule.verbs:
            for group in rule.api_groups:
                for resource in rule.resources:
                    key = (verb, group, resource)
                    if key in self._resources:
                        had = self._resources[key]
                        names_now = None if had is None or names is None else had | names
                        self._resources[key] = names_now
                    else:
                        self._resources[key] = names
            for url in rule.non_resource_urls:
                if url.endswith(ALL):
                    self._url_prefixes.setdefault(verb, []).append(url[:-1])
                else:
                    self._urls.add((verb, url))

    def allows(self, verb: str, group: str, resource: str, name: str) -> bool:
        """``resource`` is the combined form (``pods/status``); an empty ``name`` needs a
        rule without resourceNames."""
        sub = resource.partition("/")[2]
        resources = (resource, ALL, f"{ALL}/{sub}") if sub else (resource, ALL)
        for v in (verb, ALL):
            for g in (group, ALL):
                for r in resources:
                    key = (v, g, r)
                    if key in self._resources:
                        names = self._resources[key]
                        if names is None or (name and name in names):
                            return True
        return False

    def allows_url(self, verb: str, path: str) -> bool:
        for v in (verb, ALL):
            if (v, path) in self._urls:
                return True
            if any(path.startswith(p) for p in self._url_prefixes.get(v, ())):
                return True
        return False

    def covers(self, rule: Rule) -> bool:
        """Every atom of ``rule`` is allowed (``Covers``: a ``*`` the owner lacks is not
        covered by the owner's literal values)."""
        for atom in rule.atoms():
            if atom.non_resource_urls:
                if not self.allows_url(atom.verbs[0], atom.non_resource_urls[0]):
                    return False
            elif not self.allows(atom.verbs[0], atom.api_groups[0], atom.resources[0],
                                 atom.resource_names[0] if atom.resource_names else ""):
                return False
        return True


def compact_missing(missing: Iterable[Rule]) -> list[Rule]:
    """``CompactRules``: atoms that differ only in verb become one rule, sorted as
    upstream sorts them (by their text)."""
    merged: dict[tuple[tuple[str, ...], ...], list[str]] = {}
    for atom in missing:
        key = (atom.api_groups, atom.resources, atom.resource_names, atom.non_resource_urls)
        verbs = merged.setdefault(key, [])
        if atom.verbs[0] not in verbs:
            verbs.append(atom.verbs[0])
    out = [Rule(tuple(v), *k) for k, v in merged.items()]
    return sorted(out, key=Rule.compact)
