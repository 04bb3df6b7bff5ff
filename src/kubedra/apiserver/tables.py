"""``meta.k8s.io/v1`` Table output for ``kubectl get`` (upstream's server-side printers).

Columns per kind follow ``pkg/printers/internalversion/printers.go`` of v1.30, and of v1.34
for the ``resource.k8s.io/v1`` generation (the same columns in each of its versions); kinds
without a printer get upstream's default ``Name``/``Age`` columns.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from aiohttp import web

from kubedra.api.base import Obj, dig
from kubedra.api.scheme import DEVICE_VERSIONS, GVR, RBAC, RESOURCE
from kubedra.apiserver.registry import Resource

Cell = str | int | None  # None: a Go nil pointer, JSON null
Column = tuple[str, str, str, int]  # name, type, format, priority
Printer = Callable[[Obj], list[Cell]]


def wants_table(request: web.BaseRequest) -> bool:
    accept = request.headers.get("Accept", "")
    if "as=Table" not in accept:
        return False
    for part in accept.split(","):
        items = {kv.split("=", 1)[0].strip(): kv.split("=", 1)[1].strip()
                 for kv in part.split(";")[1:] if "=" in kv}
        if items.get("as") == "Table" and items.get("g") == "meta.k8s.io":
            return True
    return False


def human_duration(seconds: float) -> str:
    """apimachinery ``duration.HumanDuration``."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        years = hours // 24 // 365
        return f"{years}y" if dy == 0 else f"{years}y{dy}d"
    return f"{hours // 24 // 365}y"


def _since(ts: Any) -> str:
    if not isinstance(ts, str) or not ts:
        return "<unknown>"
    try:
        when = dt.datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return "<unknown>"
    return human_duration((dt.datetime.now(dt.UTC) - when).total_seconds())


def _name(obj: Obj) -> str:
    return str(dig(obj, "metadata", "name") or "")


def _age(obj: Obj) -> str:
    return _since(dig(obj, "metadata", "creationTimestamp"))


def _text(v: Any) -> str:
    return "" if v is None else str(v)


def _pod_row(pod: Obj) -> list[Cell]:
    statuses = dig(pod, "status", "containerStatuses") or []
    total = len(dig(pod, "spec", "containers") or [])
    ready = sum(1 for c in statuses if isinstance(c, dict) and c.get("ready"))
    restarts = sum(int(c.get("restartCount") or 0) for c in statuses if isinstance(c, dict))
    reason = dig(pod, "status", "reason") or dig(pod, "status", "phase") or ""
    for c in statuses:
        waiting = dig(c, "state", "waiting", "reason")
        terminated = dig(c, "state", "terminated", "reason")
        if (waiting and waiting != "ContainerCreating") or terminated:
            reason = waiting or terminated
    if dig(pod, "metadata", "deletionTimestamp"):
        reason = "Terminating"
    return [_name(pod), f"{ready}/{total}", str(reason), restarts, _age(pod),
            _text(dig(pod, "status", "podIP")) or "<none>",
            _text(dig(pod, "spec", "nodeName")) or "<none>",
            _text(dig(pod, "status", "nominatedNodeName")) or "<none>", "<none>"]


def _node_row(node: Obj) -> list[Cell]:
    conditions = dig(node, "status", "conditions") or []
    status = "Unknown"
    for c in conditions:
        if isinstance(c, dict) and c.get("type") == "Ready":
            status = "Ready" if c.get("status") == "True" else "NotReady"
    if dig(node, "spec", "unschedulable"):
        status += ",SchedulingDisabled"
    labels = dig(node, "metadata", "labels") or {}
    roles = sorted(k.split("/", 1)[1] for k in labels
                   if k.startswith("node-role.kubernetes.io/") and "/" in k)
    addresses = dig(node, "status", "addresses") or []

    def address(kind: str) -> str:
        for a in addresses:
            if isinstance(a, dict) and a.get("type") == kind:
                return str(a.get("address", ""))
        return "<none>"

    info = dig(node, "status", "nodeInfo") or {}
    return [_name(node), status, ",".join(roles) or "<none>", _age(node),
            _text(info.get("kubeletVersion")), address("InternalIP"), address("ExternalIP"),
            _text(info.get("osImage")) or "<unknown>", _text(info.get("kernelVersion")) or
            "<unknown>", _text(info.get("containerRuntimeVersion")) or "<unknown>"]


def _job_row(job: Obj) -> list[Cell]:
    completions = dig(job, "spec", "completions")
    succeeded = int(dig(job, "status", "succeeded") or 0)
    done = f"{succeeded}/{completions}" if completions is not None else f"{succeeded}/1 of " \
        f"{dig(job, 'spec', 'parallelism') or 1}"
    start = dig(job, "status", "startTime")
    end = dig(job, "status", "completionTime")
    duration = ""
    if isinstance(start, str) and start:
        try:
            t0 = dt.datetime.fromisoformat(start.replace("Z", "+00:00"))
            t1 = (dt.datetime.fromisoformat(end.replace("Z", "+00:00"))
                  if isinstance(end, str) and end else dt.datetime.now(dt.UTC))
            duration = human_duration((t1 - t0).total_seconds())
        except ValueError:
            duration = ""
    containers = dig(job, "spec", "template", "spec", "containers") or []
    names = ",".join(str(c.get("name", "")) for c in containers if isinstance(c, dict))
    images = ",".join(str(c.get("image", "")) for c in containers if isinstance(c, dict))
    sel = dig(job, "spec", "selector", "matchLabels") or {}
    selector = ",".join(f"{k}={v}" for k, v in sorted(sel.items())) or "<none>"
    return [_name(job), done, duration, _age(job), names, images, selector]


def _event_row(ev: Obj) -> list[Cell]:
    inv = ev.get("involvedObject") or {}
    last = ev.get("lastTimestamp") or ev.get("eventTime") or dig(ev, "metadata",
                                                                   "creationTimestamp")
    obj = f"{str(inv.get('kind', '')).lower()}/{inv.get('name', '')}"
    src = dig(ev, "source", "component") or ev.get("reportingComponent") or ""
    return [_since(last), _text(ev.get("type")), _text(ev.get("reason")), obj,
            _text(ev.get("message")).strip(), _text(inv.get("fieldPath")), _text(src),
            _since(ev.get("firstTimestamp") or last), int(ev.get("count") or 1), _name(ev)]


def _claim_state(claim: Obj) -> str:
    parts: list[str] = []
    if dig(claim, "metadata", "deletionTimestamp"):
        parts.append("deleted")
    if dig(claim, "status", "allocation"):
        parts.append("allocated")
        if dig(claim, "status", "reservedFor"):
            parts.append("reserved")
    elif not parts:
        parts.append("pending")
    return ",".join(parts)


def _generated_from(obj: Obj) -> str:
    ref = obj.get("generatedFrom")
    if isinstance(ref, dict):
        group = ref.get("apiGroup")
        kind = ref.get("kind", "")
        return f"{kind}.{group}/{ref.get('name', '')}" if group else f"{kind}/{ref.get('name')}"
    return "<none>"


def _device_claim_state(claim: Obj) -> str:
    """``resourceClaimState`` of 1.34: ``pending`` only while not being deleted."""
    deleting = bool(dig(claim, "metadata", "deletionTimestamp"))
    parts = ["deleted"] if deleting else []
    if dig(claim, "status", "allocation"):
        parts.append("allocated")
        if dig(claim, "status", "reservedFor"):
            parts.append("reserved")
    elif not deleting:
        parts.append("pending")
    return ",".join(parts)


def _service_row(svc: Obj) -> list[Cell]:
    """printService: ports as ``443/TCP`` (``80:30080/TCP`` with a node port)."""
    spec = svc.get("spec") or {}
    ports = []
    for port in spec.get("ports") or ():
        node = f":{port['nodePort']}" if port.get("nodePort") else ""
        ports.append(f"{port.get('port')}{node}/{port.get('protocol') or 'TCP'}")
    selector = ",".join(f"{k}={v}" for k, v in sorted((spec.get("selector") or {}).items()))
    external = ",".join(spec.get("externalIPs") or ()) or "<none>"
    return [_name(svc), _text(spec.get("type")), _text(spec.get("clusterIP")) or "<none>",
            external, ",".join(ports) or "<none>", _age(svc), selector or "<none>"]


def _binding_row(b: Obj) -> list[Any]:
    """``printRoleBinding``: the role, then who by kind."""
    ref = b.get("roleRef") or {}
    subjects = [s for s in b.get("subjects") or () if isinstance(s, dict)]

    def of(kind: str) -> str:
        return ", ".join(
            f"{s.get('namespace') or ''}/{s.get('name')}" if kind == "ServiceAccount"
            else str(s.get("name")) for s in subjects if s.get("kind") == kind)
    return [_name(b), f"{ref.get('kind')}/{ref.get('name')}", _age(b), of("User"),
            of("Group"), of("ServiceAccount")]


_BINDING_COLUMNS: tuple[Column, ...] = (
    ("Name", "string", "name", 0), ("Role", "string", "", 0), ("Age", "string", "", 0),
    ("Users", "string", "", 1), ("Groups", "string", "", 1),
    ("ServiceAccounts", "string", "", 1))
_S = "string"
_NAME_AGE: tuple[tuple[Column, ...], Printer] = (
    (("Name", _S, "name", 0), ("Age", _S, "", 0)), lambda o: [_name(o), _age(o)])
#: The printers of the v1 generation, one per resource, bound to each of its served versions.
_DEVICES: dict[str, tuple[tuple[Column, ...], Printer]] = {
    "deviceclasses": _NAME_AGE,
    "resourceclaims": (
        (("Name", _S, "name", 0), ("State", _S, "", 0), ("Age", _S, "", 0)),
        lambda o: [_name(o), _device_claim_state(o), _age(o)]),
    "resourceclaimtemplates": _NAME_AGE,
    # spec.nodeName is a pointer: null when the slice is not for one node
    "resourceslices": (
        (("Name", _S, "name", 0), ("Node", _S, "", 0), ("Driver", _S, "", 0),
         ("Pool", _S, "", 0), ("Age", _S, "", 0)),
        lambda o: [_name(o), dig(o, "spec", "nodeName"), _text(dig(o, "spec", "driver")),
                   _text(dig(o, "spec", "pool", "name")), _age(o)]),
}
#: Columns and row of each served version, keyed as the resource table
#: (:data:`kubedra.api.scheme.SCHEME`) by (group, version, plural).
PRINTERS: dict[GVR, tuple[tuple[Column, ...], Printer]] = {
    ("", "v1", "pods"): (
        (("Name", _S, "name", 0), ("Ready", _S, "", 0), ("Status", _S, "", 0),
         ("Restarts", _S, "", 0), ("Age", _S, "", 0), ("IP", _S, "", 1), ("Node", _S, "", 1),
         ("Nominated Node", _S, "", 1), ("Readiness Gates", _S, "", 1)),
        _pod_row),
    ("", "v1", "nodes"): (
        (("Name", _S, "name", 0), ("Status", _S, "", 0), ("Roles", _S, "", 0),
         ("Age", _S, "", 0), ("Version", _S, "", 0), ("Internal-IP", _S, "", 1),
         ("External-IP", _S, "", 1), ("OS-Image", _S, "", 1), ("Kernel-Version", _S, "", 1),
         ("Container-Runtime", _S, "", 1)),
        _node_row),
    ("", "v1", "namespaces"): (
        (("Name", _S, "name", 0), ("Status", _S, "", 0), ("Age", _S, "", 0)),
        lambda o: [_name(o), _text(dig(o, "status", "phase")), _age(o)]),
    ("batch", "v1", "jobs"): (
        (("Name", _S, "name", 0), ("Completions", _S, "", 0), ("Duration", _S, "", 0),
         ("Age", _S, "", 0), ("Containers", _S, "", 1), ("Images", _S, "", 1),
         ("Selector", _S, "", 1)),
        _job_row),
    ("", "v1", "events"): (
        (("Last Seen", _S, "", 0), ("Type", _S, "", 0), ("Reason", _S, "", 0),
         ("Object", _S, "", 0), ("Message", _S, "", 0), ("Subobject", _S, "", 1),
         ("Source", _S, "", 1), ("First Seen", _S, "", 1), ("Count", "integer", "", 1),
         ("Name", _S, "", 1)),
        _event_row),
    ("", "v1", "services"): (
        (("Name", _S, "name", 0), ("Type", _S, "", 0), ("Cluster-IP", _S, "", 0),
         ("External-IP", _S, "", 0), ("Port(s)", _S, "", 0), ("Age", _S, "", 0),
         ("Selector", _S, "", 1)),
        _service_row),
    ("", "v1", "serviceaccounts"): (
        (("Name", _S, "name", 0), ("Secrets", "integer", "", 0), ("Age", _S, "", 0)),
        lambda o: [_name(o), len(o.get("secrets") or ()), _age(o)]),
    ("coordination.k8s.io", "v1", "leases"): (
        (("Name", _S, "name", 0), ("Holder", _S, "", 0), ("Age", _S, "", 0)),
        lambda o: [_name(o), _text(dig(o, "spec", "holderIdentity")), _age(o)]),
    (RESOURCE, "v1alpha2", "resourceclasses"): (
        (("Name", _S, "name", 0), ("DriverName", _S, "", 0), ("Age", _S, "", 0)),
        lambda o: [_name(o), _text(o.get("driverName")), _age(o)]),
    (RESOURCE, "v1alpha2", "resourceclaims"): (
        (("Name", _S, "name", 0), ("ResourceClassName", _S, "", 0),
         ("AllocationMode", _S, "", 0), ("State", _S, "", 0), ("Age", _S, "", 0)),
        lambda o: [_name(o), _text(dig(o, "spec", "resourceClassName")),
                   _text(dig(o, "spec", "allocationMode")), _claim_state(o), _age(o)]),
    (RESOURCE, "v1alpha2", "resourceclaimtemplates"): (
        (("Name", _S, "name", 0), ("ResourceClassName", _S, "", 0),
         ("AllocationMode", _S, "", 0), ("Age", _S, "", 0)),
        lambda o: [_name(o), _text(dig(o, "spec", "spec", "resourceClassName")),
                   _text(dig(o, "spec", "spec", "allocationMode")), _age(o)]),
    (RESOURCE, "v1alpha2", "podschedulingcontexts"): (
        (("Name", _S, "name", 0), ("SelectedNode", _S, "", 0), ("Age", _S, "", 0),
         ("PotentialNodes", _S, "", 1)),
        lambda o: [_name(o), _text(dig(o, "spec", "selectedNode")), _age(o),
                   ",".join(dig(o, "spec", "potentialNodes") or []) or "<none>"]),
    (RESOURCE, "v1alpha2", "resourceslices"): (
        (("Name", _S, "name", 0), ("Node", _S, "", 0), ("Driver", _S, "", 0),
         ("Age", _S, "", 0)),
        lambda o: [_name(o), _text(o.get("nodeName")), _text(o.get("driverName")), _age(o)]),
    (RESOURCE, "v1alpha2", "resourceclaimparameters"): (
        (("Name", _S, "name", 0), ("GeneratedFrom", _S, "", 0), ("Age", _S, "", 0)),
        lambda o: [_name(o), _generated_from(o), _age(o)]),
    (RESOURCE, "v1alpha2", "resourceclassparameters"): (
        (("Name", _S, "name", 0), ("GeneratedFrom", _S, "", 0), ("Age", _S, "", 0)),
        lambda o: [_name(o), _generated_from(o), _age(o)]),
    (RBAC, "v1", "rolebindings"): (_BINDING_COLUMNS, _binding_row),
    (RBAC, "v1", "clusterrolebindings"): (_BINDING_COLUMNS, _binding_row),
    **{(RESOURCE, version, plural): printer for plural, printer in _DEVICES.items()
       for version in DEVICE_VERSIONS},
}
_DEFAULT: tuple[tuple[Column, ...], Printer] = (
    (("Name", _S, "name", 0), ("Created At", "date", "", 0)),
    lambda o: [_name(o), _text(dig(o, "metadata", "creationTimestamp"))],
)


def _row_object(obj: Obj, include: str) -> Obj | None:
    if include == "None":
        return None
    if include == "Object":
        return obj
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": obj.get("metadata") or {}}


def table(res: Resource, items: list[Obj], include_object: str = "Metadata") -> Obj:
    columns, printer = PRINTERS.get(res.kind.gvr, _DEFAULT)
    rows: list[Obj] = []
    for obj in items:
        row: Obj = {"cells": printer(obj)}
        ref = _row_object(obj, include_object)
        if ref is not None:
            row["object"] = ref
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {},
        "columnDefinitions": [
            {"name": n, "type": t, "format": f, "description": "", "priority": p}
            for n, t, f, p in columns
        ],
        "rows": rows,
    }
