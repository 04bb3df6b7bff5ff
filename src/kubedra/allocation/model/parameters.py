"""The named-resources model's class and claim parameters: lookup by reference, the
``generatedFrom`` index, upstream defaults.

Upstream v1.30 scanned a namespace list for ``generatedFrom`` and silently took the first match;
we keep an index and report several matches as an error (upstream 1.31 behaviour).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from kubedra.api.meta import kobj
from kubedra.api.resource.v1alpha2 import (
    GROUP,
    DriverRequests,
    NamedResourcesRequest,
    ResourceClaim,
    ResourceClaimParameters,
    ResourceClass,
    ResourceClassParameters,
    ResourceRequest,
)

CLASS_PARAMETERS_KIND = "ResourceClassParameters"
CLAIM_PARAMETERS_KIND = "ResourceClaimParameters"


class ParameterError(Exception):
    """Parameters cannot be resolved.

    ``unresolvable`` = the pod cannot be scheduled until objects change (upstream's
    UnschedulableAndUnresolvable); otherwise it is an error status (retry with backoff).
    """

    def __init__(self, message: str, *, unresolvable: bool) -> None:
        super().__init__(message)
        self.message = message
        self.unresolvable = unresolvable


GenKey = tuple[str, str, str, str]  # who the parameters were generated from
NameKey = tuple[str, str]  # namespace, name
P = TypeVar("P", ResourceClassParameters, ResourceClaimParameters)


class _Parameters(Generic[P]):
    """One kind of parameters by (namespace, name), plus the names generated from each origin."""

    def __init__(self, gen_key: Callable[[P], GenKey | None]) -> None:
        self.by_name: dict[NameKey, P] = {}
        self._by_gen: dict[GenKey, set[NameKey]] = {}
        self._gen_key: Callable[[P], GenKey | None] = gen_key

    def upsert(self, obj: P) -> None:
        key = (obj.metadata.namespace or "", obj.metadata.name or "")
        self.delete(key)
        self.by_name[key] = obj
        gen = self._gen_key(obj)
        if gen is not None:
            self._by_gen.setdefault(gen, set()).add(key)

    def delete(self, key: NameKey) -> None:
        old = self.by_name.pop(key, None)
        gen = None if old is None else self._gen_key(old)
        if gen is not None:
            self._by_gen[gen].discard(key)
            if not self._by_gen[gen]:
                del self._by_gen[gen]

    def generated_from(self, gen: GenKey) -> set[NameKey]:
        return self._by_gen.get(gen, set())


def _class_gen_key(obj: ResourceClassParameters) -> GenKey | None:
    g = obj.generated_from
    return None if g is None else (g.api_group, g.kind, g.name, g.namespace)


def _claim_gen_key(obj: ResourceClaimParameters) -> GenKey | None:
    g = obj.generated_from
    ns = obj.metadata.namespace or ""
    return None if g is None else (ns, g.api_group, g.kind, g.name)


class ParameterStore:
    """ResourceClassParameters and ResourceClaimParameters by name and by ``generatedFrom``."""

    def __init__(self) -> None:
        self._class = _Parameters(_class_gen_key)
        self._claim = _Parameters(_claim_gen_key)

    def upsert_class_parameters(self, obj: ResourceClassParameters) -> None:
        self._class.upsert(obj)

    def delete_class_parameters(self, namespace: str, name: str) -> None:
        self._class.delete((namespace, name))

    def upsert_claim_parameters(self, obj: ResourceClaimParameters) -> None:
        self._claim.upsert(obj)

    def delete_claim_parameters(self, namespace: str, name: str) -> None:
        self._claim.delete((namespace, name))

    # --- resolution (DR lookupClassParameters / lookupClaimParameters) -----------------------

    def class_parameters(self, cls: ResourceClass) -> ResourceClassParameters:
        ref = cls.parameters_ref
        if ref is None:
            return ResourceClassParameters()
        if ref.api_group == GROUP and ref.kind == CLASS_PARAMETERS_KIND:
            found = self._class.by_name.get((ref.namespace, ref.name))
            if found is None:
                raise ParameterError(
                    f"class parameters {kobj(ref.namespace, ref.name)} not found",
                    unresolvable=True,
                )
            return found
        # v1.30 lists in the class's namespace: "" for a cluster-scoped class = all namespaces.
        what = f"{ref.kind}.{ref.api_group} {kobj(cls.metadata.namespace, ref.name)}"
        gen = (ref.api_group, ref.kind, ref.name, ref.namespace)
        return self._class.by_name[_single(self._class.generated_from(gen), "class", what)]

    def claim_parameters(self, claim: ResourceClaim, cls: ResourceClass) -> ResourceClaimParameters:
        ref = claim.spec.parameters_ref
        ns = claim.metadata.namespace or ""
        if ref is None:
            return default_claim_parameters(cls)
        if ref.api_group == GROUP and ref.kind == CLAIM_PARAMETERS_KIND:
            found = self._claim.by_name.get((ns, ref.name))
            if found is None:
                raise ParameterError(
                    f"claim parameters {kobj(ns, ref.name)} not found", unresolvable=True
                )
            return found
        what = f"{ref.kind}.{ref.api_group} {kobj(ns, ref.name)}"
        gen = (ns, ref.api_group, ref.kind, ref.name)
        return self._claim.by_name[_single(self._claim.generated_from(gen), "claim", what)]


def _single(keys: set[NameKey], which: str, what: str) -> NameKey:
    """Exactly one ``generatedFrom`` match, else the upstream (1.31) not-found / multiple error."""
    matches = sorted(keys)
    if not matches:
        message = f"generated {which} parameters for {what} not found"
        raise ParameterError(message, unresolvable=True)
    if len(matches) > 1:
        found = " ".join(kobj(ns, n) for ns, n in matches)
        raise ParameterError(
            f"multiple generated {which} parameters for {what} found: [{found}]",
            unresolvable=False,
        )
    return matches[0]


def default_claim_parameters(cls: ResourceClass) -> ResourceClaimParameters:
    """No parametersRef: shareable, one instance of anything from the class's driver."""
    return ResourceClaimParameters(
        shareable=True,
        driver_requests=[
            DriverRequests(
                driver_name=cls.driver_name,
                requests=[ResourceRequest(named_resources=NamedResourcesRequest(selector="true"))],
            )
        ],
    )
