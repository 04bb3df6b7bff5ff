"""Every field the Pod model serves has a protobuf field with upstream's number, so a pod
written or read in protobuf loses nothing; and a pod using the rare fields (ephemeral
containers, volume sources of every family, security contexts, probes, claims of both
releases, ...) goes through protobuf and back unchanged."""

from __future__ import annotations

from typing import Any

import msgspec
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from kubedra.api import codec, core
from kubedra.proto import kube
from kubedra.proto.generated import apimachinery_runtime_pb2 as runtime_pb2
from kubedra.proto.generated import core_v1_pb2

# messages whose JSON form is a scalar (Quantity, IntOrString, times, FieldsV1, ...)
_LEAVES = {"Quantity", "IntOrString", "Time", "MicroTime", "FieldsV1", "RawExtension"}


def _unwrap(t: Any) -> Any:
    """The type under Optional, list and dict (the value's) layers."""
    while True:
        if isinstance(t, msgspec.inspect.UnionType):
            inner = [x for x in t.types if not isinstance(x, msgspec.inspect.NoneType)]
            if len(inner) != 1:
                return t
            t = inner[0]
        elif isinstance(t, msgspec.inspect.ListType):
            t = t.item_type
        elif isinstance(t, msgspec.inspect.DictType):
            t = t.value_type
        else:
            return t


def _missing(struct: msgspec.inspect.StructType, desc: Descriptor, path: str) -> list[str]:
    fields = kube.json_fields(desc)
    out: list[str] = []
    for f in struct.fields:
        where = f"{path}.{f.encode_name}"
        chain = fields.get(f.encode_name)
        if chain is None:
            if f.encode_name not in ("apiVersion", "kind"):
                out.append(f"{where} (no field in {desc.full_name})")
            continue
        field = chain[-1]
        inner = _unwrap(f.type)
        if isinstance(inner, msgspec.inspect.StructType):
            if field.type != FieldDescriptor.TYPE_MESSAGE:
                out.append(f"{where} (a struct, but {desc.full_name}.{field.name} is scalar)")
                continue
            message = field.message_type
            if message.GetOptions().map_entry:
                message = message.fields_by_name["value"].message_type
            if message.name not in _LEAVES:
                out.extend(_missing(inner, message, where))
    return out


def test_every_field_of_the_pod_model_has_a_protobuf_field() -> None:
    info = msgspec.inspect.type_info(core.Pod)
    assert isinstance(info, msgspec.inspect.StructType)
    assert _missing(info, core_v1_pb2.Pod.DESCRIPTOR, "Pod") == []


class _Spec(msgspec.Struct, rename="camel"):
    containers: list[core.Container] = []
    brand_new: str | None = None


class _Pod(msgspec.Struct):
    spec: _Spec


def test_the_walk_finds_a_field_without_a_number() -> None:
    """The check above can fail: a model field the messages lack is named."""
    info = msgspec.inspect.type_info(_Pod)
    assert isinstance(info, msgspec.inspect.StructType)
    assert _missing(info, core_v1_pb2.Pod.DESCRIPTOR, "Pod") == [
        "Pod.spec.brandNew (no field in k8s.io.api.core.v1.PodSpec)"]


_SECRET = {"name": "s"}
RARE: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "rare", "namespace": "default"},
    "spec": {
        "containers": [{
            "name": "app", "image": "busybox",
            "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}],
            "securityContext": {
                "runAsUser": 0, "runAsNonRoot": False, "procMount": "Default",
                "capabilities": {"add": ["NET_ADMIN"], "drop": ["ALL"]},
                "seLinuxOptions": {"level": "s0:c1"},
                "windowsOptions": {"runAsUserName": "u", "hostProcess": False},
                "seccompProfile": {"type": "Localhost", "localhostProfile": "p.json"},
                "appArmorProfile": {"type": "RuntimeDefault"}},
            "livenessProbe": {"exec": {"command": ["true"]}, "failureThreshold": 3,
                              "terminationGracePeriodSeconds": 0},
            "readinessProbe": {"grpc": {"port": 9000, "service": ""}},
            "startupProbe": {"httpGet": {"path": "/up", "port": 80, "scheme": "HTTPS",
                                         "httpHeaders": [{"name": "X", "value": "1"}]}},
            "lifecycle": {"preStop": {"sleep": {"seconds": 5}},
                          "postStart": {"tcpSocket": {"port": "http"}}},
            "env": [{"name": "F", "valueFrom": {"fileKeyRef": {
                "volumeName": "cfg", "path": "env", "key": "K", "optional": False}}},
                    {"name": "R", "valueFrom": {"resourceFieldRef": {
                        "resource": "limits.cpu", "divisor": "1m"}}}],
            "envFrom": [{"prefix": "P_", "configMapRef": {"name": "cm", "optional": True}}],
            "volumeMounts": [{"name": "cfg", "mountPath": "/cfg", "readOnly": True,
                              "recursiveReadOnly": "Enabled"}],
            "volumeDevices": [{"name": "blk", "devicePath": "/dev/xvda"}],
            "resources": {"claims": [{"name": "gpu", "request": "one"}]},
        }],
        "initContainers": [{"name": "sidecar", "image": "busybox", "restartPolicy": "Always"}],
        "ephemeralContainers": [{
            "name": "debug", "image": "busybox", "targetContainerName": "app",
            "stdin": True, "tty": True, "securityContext": {"privileged": True}}],
        "volumes": [
            {"name": "cfg", "projected": {"defaultMode": 420, "sources": [
                {"configMap": {"name": "cm", "items": [{"key": "a", "path": "a", "mode": 0}]}},
                {"secret": {"name": "s", "optional": False}},
                {"downwardAPI": {"items": [{"path": "labels",
                                            "fieldRef": {"fieldPath": "metadata.labels"}}]}},
                {"serviceAccountToken": {"audience": "api", "expirationSeconds": 3600,
                                         "path": "token"}},
                {"clusterTrustBundle": {"signerName": "x/y", "path": "ca.pem",
                                        "labelSelector": {"matchLabels": {"a": "b"}}}},
            ]}},
            {"name": "csi", "csi": {"driver": "d.example.com", "readOnly": False,
                                    "volumeAttributes": {"k": "v"},
                                    "nodePublishSecretRef": _SECRET}},
            {"name": "eph", "ephemeral": {"volumeClaimTemplate": {
                "metadata": {"labels": {"t": "1"}},
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "",
                         "resources": {"requests": {"storage": "1Gi"}},
                         "dataSourceRef": {"kind": "VolumeSnapshot", "name": "snap",
                                           "apiGroup": "snapshot.storage.k8s.io"}}}}},
            {"name": "blk", "persistentVolumeClaim": {"claimName": "pvc", "readOnly": True}},
            {"name": "nfs", "nfs": {"server": "10.0.0.1", "path": "/x"}},
            {"name": "iscsi", "iscsi": {"targetPortal": "1.2.3.4:3260", "iqn": "iqn.x",
                                        "lun": 0, "portals": ["1.2.3.5"],
                                        "secretRef": _SECRET, "initiatorName": ""}},
            {"name": "fc", "fc": {"targetWWNs": ["w"], "lun": 0}},
            {"name": "azure", "azureDisk": {"diskName": "d", "diskURI": "u",
                                            "readOnly": False, "cachingMode": "None"}},
            {"name": "img", "image": {"reference": "registry/x:1", "pullPolicy": "Always"}},
            {"name": "dapi", "downwardAPI": {"items": [{"path": "cpu", "resourceFieldRef": {
                "containerName": "app", "resource": "requests.cpu"}}], "defaultMode": 0}},
            {"name": "host", "hostPath": {"path": "/var", "type": ""}},
            {"name": "flex", "flexVolume": {"driver": "f", "options": {"a": "b"}}},
            {"name": "rbd", "rbd": {"monitors": ["m"], "image": "i", "secretRef": _SECRET}},
            {"name": "ceph", "cephfs": {"monitors": ["m"], "secretRef": _SECRET}},
            {"name": "scale", "scaleIO": {"gateway": "g", "system": "s", "secretRef": _SECRET}},
            {"name": "git", "gitRepo": {"repository": "https://x", "revision": "r"}},
            {"name": "gce", "gcePersistentDisk": {"pdName": "pd", "partition": 1}},
        ],
        "securityContext": {
            "runAsUser": 1000, "fsGroup": 0, "supplementalGroups": [5, 6],
            "supplementalGroupsPolicy": "Strict", "seLinuxChangePolicy": "Recursive",
            "sysctls": [{"name": "net.core.somaxconn", "value": "1024"}],
            "appArmorProfile": {"type": "Localhost", "localhostProfile": "k8s-default"},
            "windowsOptions": {"gmsaCredentialSpecName": "g"}},
        "hostAliases": [{"ip": "10.1.2.3", "hostnames": ["a.local", "b.local"]}],
        "readinessGates": [{"conditionType": "example.com/ready"}],
        "topologySpreadConstraints": [{
            "maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
            "minDomains": 2, "nodeAffinityPolicy": "Honor", "matchLabelKeys": ["rev"]}],
        "overhead": {"cpu": "250m", "memory": "120Mi"},
        "runtimeClassName": "kata", "preemptionPolicy": "Never", "priority": 0,
        "dnsConfig": {"nameservers": ["1.1.1.1"], "options": [{"name": "ndots", "value": "2"}]},
        "os": {"name": "linux"}, "hostUsers": False, "setHostnameAsFQDN": False,
        "shareProcessNamespace": True,
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                               "mismatchLabelKeys": ["x"]}}]}},
        "schedulingGates": [{"name": "wait"}],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-tpl"},
                           {"name": "old", "source": {"resourceClaimName": "c"}}],
    },
    "status": {
        "phase": "Running", "hostIPs": [{"ip": "10.0.0.2"}], "resize": "InProgress",
        "ephemeralContainerStatuses": [{
            "name": "debug", "ready": False, "restartCount": 0, "image": "busybox",
            "imageID": "", "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                                                    "finishedAt": "2024-05-01T10:00:09Z"}},
            "lastState": {}}],
        "containerStatuses": [{
            "name": "app", "ready": True, "restartCount": 1, "image": "busybox",
            "imageID": "sha", "started": True, "state": {"waiting": {"reason": "X"}},
            "lastState": {}, "allocatedResources": {"cpu": "1"},
            "resources": {"limits": {"cpu": "1"}},
            "volumeMounts": [{"name": "cfg", "mountPath": "/cfg", "readOnly": True,
                              "recursiveReadOnly": "Enabled"}]}],
        "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "rare-gpu-x"}],
    },
}


def test_a_pod_with_rare_fields_goes_through_protobuf_unchanged() -> None:
    data = kube.encode(RARE)
    back = kube.decode(data)
    assert back["spec"] == RARE["spec"]
    # the status's Go values JSON always writes (a container's ready, restartCount) are
    # unmarked typed fields: the model writes them again, so the model's forms agree
    assert codec.to_builtins(codec.decode(back, core.Pod)) == codec.to_builtins(
        codec.decode(RARE, core.Pod))
    assert back["status"]["ephemeralContainerStatuses"][0]["state"]["terminated"][
        "exitCode"] == 0


def test_rare_fields_have_upstreams_numbers() -> None:
    """Read by the runtime's classes, and one tag written out by hand: PodSpec's
    ephemeralContainers is field 34, wire type 2 (tag 274: 0x92 0x02)."""
    pod = core_v1_pb2.Pod.FromString(runtime_pb2.Unknown.FromString(kube.encode(RARE)[4:]).raw)
    debug = pod.spec.ephemeralContainers[0]
    assert (debug.targetContainerName, debug.ephemeralContainerCommon.name) == ("app", "debug")
    assert debug.ephemeralContainerCommon.securityContext.privileged
    sources = pod.spec.volumes[0].volumeSource.projected.sources
    assert sources[3].serviceAccountToken.expirationSeconds == 3600
    assert sources[0].configMap.localObjectReference.name == "cm"
    assert pod.spec.volumes[2].volumeSource.ephemeral.volumeClaimTemplate.spec \
        .resources.requests["storage"].string == "1Gi"
    assert pod.spec.securityContext.HasField("fsGroup") and pod.spec.securityContext.fsGroup == 0
    spec = core_v1_pb2.PodSpec()
    spec.ephemeralContainers.add().targetContainerName = "app"
    assert spec.SerializeToString().startswith(b"\x92\x02")
