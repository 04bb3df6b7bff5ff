"""API discovery: legacy (APIVersions, APIGroupList, APIResourceList) and aggregated
(``apidiscovery.k8s.io/v2``), both generated from the registry.

kubectl 1.30 asks ``/api`` and ``/apis`` for aggregated discovery and only takes the answer
as such when the response Content-Type names it exactly (ecosystem.md §1b.1).
"""

from __future__ import annotations

from kubedra.api.base import Obj
from kubedra.api.release import Release
from kubedra.apiserver.registry import Registry, Resource

AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
AGGREGATED_V2BETA1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
# kubedra serves no custom resources, but answers the CRD list as kube-apiserver does without
# any: kubectl's client-side validation lists CRDs for a kind it finds nowhere else
CRD_PATH = ["apiextensions.k8s.io", "v1", "customresourcedefinitions"]


def aggregated_version(accept: str) -> str | None:
    """``v2`` / ``v2beta1`` when the Accept header asks for aggregated discovery first."""
    for part in accept.split(","):
        fields = [f.strip() for f in part.split(";")]
        if fields[0] not in ("application/json", "*/*"):
            continue
        params = dict(f.split("=", 1) for f in fields[1:] if "=" in f)
        if params.get("as") == "APIGroupDiscoveryList" and params.get("g") == (
            "apidiscovery.k8s.io"
        ) and params.get("v") in ("v2", "v2beta1"):
            return params["v"]
        if fields[0] == "application/json" and not params:
            return None
    return None


def _subresources(res: Resource) -> list[tuple[str, str, str, list[str]]]:
    """(subresource, group, kind, verbs) of a resource's subresources."""
    out: list[tuple[str, str, str, list[str]]] = []
    for sub in res.kind.subresources:
        if sub == "status":
            out.append(("status", res.kind.group, res.kind.kind, ["get", "patch", "update"]))
        elif sub == "binding":
            out.append(("binding", "", "Binding", ["create"]))
        elif sub == "eviction":
            out.append(("eviction", "policy", "Eviction", ["create"]))
        elif sub == "finalize":
            out.append(("finalize", res.kind.group, res.kind.kind, ["update"]))
        elif sub == "log":
            out.append(("log", res.kind.group, res.kind.kind, ["get"]))
        elif sub == "token":
            out.append(("token", "authentication.k8s.io", "TokenRequest", ["create"]))
    return out


def resource_list(registry: Registry, group: str, version: str) -> Obj | None:
    """The APIResourceList of ``/api/v1`` or ``/apis/<group>/<version>``."""
    resources: list[Obj] = []
    for res in registry:
        k = res.kind
        if (k.group, k.version) != (group, version):
            continue
        entry: Obj = {
            "name": k.plural, "singularName": k.singular, "namespaced": k.namespaced,
            "kind": k.kind, "verbs": sorted(k.verbs),
        }
        if k.short_names:
            entry["shortNames"] = list(k.short_names)
        if k.categories:
            entry["categories"] = list(k.categories)
        resources.append(entry)
        for sub, g, kind, verbs in _subresources(res):
            other = {"group": g, "version": "v1"} if g != k.group else {}
            resources.append({
                "name": f"{k.plural}/{sub}", "singularName": "", "namespaced": k.namespaced,
                **other, "kind": kind, "verbs": verbs,
            })
    if not resources:
        return None
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": resources,
    }


def api_versions(address: str) -> Obj:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
    }


def _group(name: str, versions: list[str]) -> Obj:
    """An APIGroup entry; ``versions`` are in priority order, the preferred one first."""
    gvs = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": gvs, "preferredVersion": gvs[0]}


def api_group(registry: Registry, name: str) -> Obj | None:
    versions = registry.group_versions().get(name)
    if not name or not versions:
        return None
    return dict(_group(name, versions), kind="APIGroup", apiVersion="v1")


def api_group_list(registry: Registry) -> Obj:
    groups = [_group(g, vs) for g, vs in registry.group_versions().items() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def _discovery_resource(res: Resource) -> Obj:
    k = res.kind
    entry: Obj = {
        "resource": k.plural,
        "responseKind": {"group": k.group, "version": k.version, "kind": k.kind},
        "scope": "Namespaced" if k.namespaced else "Cluster",
        "singularResource": k.singular,
        "verbs": sorted(k.verbs),
    }
    if k.short_names:
        entry["shortNames"] = list(k.short_names)
    if k.categories:
        entry["categories"] = list(k.categories)
    subs = [
        {"subresource": sub, "responseKind": {"group": g, "version": k.version if g == k.group
                                              else "v1", "kind": kind}, "verbs": verbs}
        for sub, g, kind, verbs in _subresources(res)
    ]
    if subs:
        entry["subresources"] = subs
    return entry


def aggregated(registry: Registry, legacy: bool, version: str = "v2") -> Obj:
    """APIGroupDiscoveryList of the core group (``legacy``) or of every named group."""
    items: list[Obj] = []
    for group, versions in registry.group_versions().items():
        if (group == "") != legacy:
            continue
        gv_entries = []
        for v in versions:
            resources = [
                _discovery_resource(res) for res in registry
                if (res.kind.group, res.kind.version) == (group, v)
            ]
            gv_entries.append({"version": v, "resources": resources, "freshness": "Current"})
        items.append({"metadata": {"name": group, "creationTimestamp": None},
                      "versions": gv_entries})
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": f"apidiscovery.k8s.io/{version}",
        "metadata": {},
        "items": items,
    }


def custom_resource_definition_list(revision: int) -> Obj:
    """The empty ``CustomResourceDefinitionList`` at ``revision``."""
    return {"kind": "CustomResourceDefinitionList", "apiVersion": "apiextensions.k8s.io/v1",
            "metadata": {"resourceVersion": str(revision)}, "items": []}


def version_info(release: Release) -> Obj:
    """``/version``: the emulated release's numbers."""
    return {
        "major": release.major,
        "minor": release.minor,
        "gitVersion": release.git_version,
        "gitCommit": "kubedra",
        "gitTreeState": "clean",
        "buildDate": "2024-04-17T00:00:00Z",
        "goVersion": "go1.22.2",
        "compiler": "gc",
        "platform": "linux/amd64",
    }
