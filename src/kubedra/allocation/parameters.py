"""Class and claim parameters: lookup by reference, ``generatedFrom`` index, upstream defaults.

Upstream v1.30 scanned a namespace list for ``generatedFrom`` and silently took the first match;
we keep an index and report several matches as an error (upstream 1.31 behaviour).
"""

from __future__ import annotations

from kubedra.api.resource import (
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


def kobj(namespace: str | None, name: str | None) -> str:
    """klog.KObj formatting: ``ns/name``, or just ``name`` without a namespace."""
    return f"{namespace}/{name or ''}" if namespace else name or ""


ClassGenKey = tuple[str, str, str, str]  # apiGroup, kind, name, namespace
ClaimGenKey = tuple[str, str, str, str]  # namespace, apiGroup, kind, name


class ParameterStore:
    """ResourceClassParameters and ResourceClaimParameters by name and by ``generatedFrom``."""

    def __init__(self) -> None:
        self._class: dict[tuple[str, str], ResourceClassParameters] = {}
        self._claim: dict[tuple[str, str], ResourceClaimParameters] = {}
        self._class_gen: dict[ClassGenKey, set[tuple[str, str]]] = {}
        self._claim_gen: dict[ClaimGenKey, set[tuple[str, str]]] = {}

    @staticmethod
    def _class_gen_key(obj: ResourceClassParameters) -> ClassGenKey | None:
        g = obj.generated_from
        return None if g is None else (g.api_group, g.kind, g.name, g.namespace)

    @staticmethod
    def _claim_gen_key(obj: ResourceClaimParameters) -> ClaimGenKey | None:
        g = obj.generated_from
        ns = obj.metadata.namespace or ""
        return None if g is None else (ns, g.api_group, g.kind, g.name)

    def upsert_class_parameters(self, obj: ResourceClassParameters) -> None:
        key = (obj.metadata.namespace or "", obj.metadata.name or "")
        self.delete_class_parameters(*key)
        self._class[key] = obj
        gen = self._class_gen_key(obj)
        if gen is not None:
            self._class_gen.setdefault(gen, set()).add(key)

    def delete_class_parameters(self, namespace: str, name: str) -> None:
        old = self._class.pop((namespace, name), None)
        gen = None if old is None else self._class_gen_key(old)
        if gen is not None:
            self._class_gen[gen].discard((namespace, name))
            if not self._class_gen[gen]:
                del self._class_gen[gen]

    def upsert_claim_parameters(self, obj: ResourceClaimParameters) -> None:
        key = (obj.metadata.namespace or "", obj.metadata.name or "")
        self.delete_claim_parameters(*key)
        self._claim[key] = obj
        gen = self._claim_gen_key(obj)
        if gen is not None:
            self._claim_gen.setdefault(gen, set()).add(key)

    def delete_claim_parameters(self, namespace: str, name: str) -> None:
        old = self._claim.pop((namespace, name), None)
        gen = None if old is None else self._claim_gen_key(old)
        if gen is not None:
            self._claim_gen[gen].discard((namespace, name))
            if not self._claim_gen[gen]:
                del self._claim_gen[gen]

    # --- resolution (DR lookupClassParameters / lookupClaimParameters) -----------------------

    def class_parameters(self, cls: ResourceClass) -> ResourceClassParameters:
        ref = cls.parameters_ref
        if ref is None:
            return ResourceClassParameters()
        if ref.api_group == GROUP and ref.kind == CLASS_PARAMETERS_KIND:
            found = self._class.get((ref.namespace, ref.name))
            if found is None:
                raise ParameterError(
                    f"class parameters {kobj(ref.namespace, ref.name)} not found",
                    unresolvable=True,
                )
            return found
        # v1.30 lists in the class's namespace: "" for a cluster-scoped class = all namespaces.
        what = f"{ref.kind}.{ref.api_group} {kobj(cls.metadata.namespace, ref.name)}"
        gen = (ref.api_group, ref.kind, ref.name, ref.namespace)
        return self._class[_single(self._class_gen.get(gen, set()), "class", what)]

    def claim_parameters(self, claim: ResourceClaim, cls: ResourceClass) -> ResourceClaimParameters:
        ref = claim.spec.parameters_ref
        ns = claim.metadata.namespace or ""
        if ref is None:
            return default_claim_parameters(cls)
        if ref.api_group == GROUP and ref.kind == CLAIM_PARAMETERS_KIND:
            found = self._claim.get((ns, ref.name))
            if found is None:
                raise ParameterError(
                    f"claim parameters {kobj(ns, ref.name)} not found", unresolvable=True
                )
            return found
        what = f"{ref.kind}.{ref.api_group} {kobj(ns, ref.name)}"
        gen = (ns, ref.api_group, ref.kind, ref.name)
        return self._claim[_single(self._claim_gen.get(gen, set()), "claim", what)]


def _single(keys: set[tuple[str, str]], which: str, what: str) -> tuple[str, str]:
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
