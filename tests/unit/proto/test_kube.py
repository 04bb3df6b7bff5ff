"""The protobuf wire format (kubedra.proto.kube): JSON -> protobuf -> JSON round trips, and
the bytes checked independently, by hand from upstream's field numbers and by the protobuf
runtime's own classes generated from our .proto files; the C encoder (proto/_encode.c)
checked against kube.py's own on every object the round trips encode."""

from __future__ import annotations

import contextlib
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.api import codec, core
from kubedra.proto import kube
from kubedra.proto.generated import apimachinery_meta_v1_pb2 as meta_pb2
from kubedra.proto.generated import apimachinery_runtime_pb2 as runtime_pb2
from kubedra.proto.generated import authentication_v1_pb2, batch_v1_pb2, core_v1_pb2

POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {
        "name": "web", "namespace": "default", "uid": "u-1", "resourceVersion": "7",
        "creationTimestamp": "2024-05-01T10:00:00Z", "labels": {"app": "web"},
        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u0",
                             "controller": True, "blockOwnerDeletion": False}],
        "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "v1",
                           "time": "2024-05-01T10:00:00Z", "fieldsType": "FieldsV1",
                           "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}}}],
    },
    "spec": {
        "volumes": [{"name": "cfg", "configMap": {"name": "cm", "defaultMode": 420}},
                    {"name": "tmp", "emptyDir": {"sizeLimit": "1Gi"}}],
        "containers": [{
            "name": "c", "image": "nginx", "ports": [{"containerPort": 80, "protocol": "TCP"}],
            "env": [{"name": "A", "value": "1"},
                    {"name": "B", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
            "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}, "requests": {"cpu": "1"},
                          "claims": [{"name": "gpu"}]},
            "livenessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 3},
            "readinessProbe": {"tcpSocket": {"port": 8080}},
            "securityContext": {"runAsUser": 0, "privileged": False},
        }],
        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "priority": 0,
        "enableServiceLinks": False, "nodeSelector": {"zone": "a"},
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute",
                         "tolerationSeconds": 300}],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}],
    },
    "status": {
        "phase": "Running", "qosClass": "Burstable", "startTime": "2024-05-01T10:00:01Z",
        "conditions": [{"type": "Ready", "status": "True",
                        "lastTransitionTime": "2024-05-01T10:00:02Z"}],
        "containerStatuses": [{"name": "c", "ready": True, "restartCount": 2, "image": "nginx",
                               "imageID": "sha", "state": {"running": {
                                   "startedAt": "2024-05-01T10:00:01Z"}}}],
    },
}

JOB: dict[str, Any] = {
    "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "d"},
    "spec": {"parallelism": 0, "completions": 1, "suspend": False, "managedBy": "x",
             "selector": {"matchLabels": {"a": "b"}, "matchExpressions": [
                 {"key": "k", "operator": "In", "values": ["v"]}]},
             "podFailurePolicy": {"rules": [{"action": "FailJob", "onExitCodes": {
                 "operator": "In", "values": [1, 42]}}]},
             "template": {"metadata": {"labels": {"a": "b"}},
                          "spec": {"containers": [{"name": "c", "image": "i"}],
                                   "restartPolicy": "Never"}}},
    "status": {"active": 1, "ready": 0, "uncountedTerminatedPods": {"succeeded": ["u"]}},
}

REVIEW: dict[str, Any] = {
    "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "metadata": {},
    "spec": {"user": "bob", "groups": ["g"], "extra": {"scopes": ["a", "b"]},
             "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "n"}},
    "status": {"allowed": True, "reason": "rbac"},
}


LEASE: dict[str, Any] = {
    "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
    "spec": {"holderIdentity": "a", "leaseDurationSeconds": 40, "leaseTransitions": 0,
             "renewTime": "2024-05-01T10:00:00.123456Z"},
}

BINDING: dict[str, Any] = {
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
    "metadata": {"name": "b"},
    "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "bob"}],
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
}

NODE: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
    "spec": {"unschedulable": True, "taints": [
        {"key": "k", "effect": "NoSchedule", "timeAdded": "2024-05-01T10:00:00Z"}]},
    "status": {"capacity": {"cpu": "4", "example.com/gpu": "2"},
               "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
               "conditions": [{"type": "Ready", "status": "True",
                               "lastHeartbeatTime": "2024-05-01T10:00:00Z"}]},
}

EVENT: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "d"},
    "involvedObject": {"kind": "Pod", "name": "p"}, "reason": "R", "count": 1,
    "eventTime": "2024-05-01T10:00:00.000001Z", "series": {
        "count": 2, "lastObservedTime": "2024-05-01T10:00:01.500000Z"},
}


SERVICE: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "d"},
    "spec": {"ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": "web"},
                       {"port": 443, "targetPort": 8443}],
             "selector": {"app": "web"}, "clusterIP": "10.0.0.9", "clusterIPs": ["10.0.0.9"],
             "type": "ClusterIP", "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
             "internalTrafficPolicy": "Cluster", "sessionAffinity": "None"},
    "status": {"loadBalancer": {}},
}


def encoded(obj: dict[str, Any]) -> bytes:
    """``kube.encode(obj)``, and the same bytes from kube.py's encoder alone: the C encoder,
    where built, writes exactly what kube.py would, or declines."""
    data = kube.encode(obj)
    plan = kube._kind_plan(obj["apiVersion"], obj["kind"])
    if plan is not None and plan.native is not None:
        native, plan.native = plan.native, None
        try:
            assert kube.encode(obj) == data
        finally:
            plan.native = native
    return data


def test_the_c_encoder_is_built_with_the_compiled_modules() -> None:
    assert (kube._NATIVE is not None) == (not kube.__file__.endswith(".py"))


@pytest.mark.parametrize("obj", [
    {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "YWJj"}},
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
     "status": {"capacity": {"cpu": 4}}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n\ud800"}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n", "generation": 1 << 70}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n", "labels": {"a": 1}}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}, "spec": {"x": 1}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"creationTimestamp": "today"}},
], ids=["bytes", "number-quantity", "surrogate", "overflow", "int-label", "unknown-key",
        "bad-time"])
def test_what_the_c_encoder_declines_is_encoded_or_refused_as_before(
        obj: dict[str, Any]) -> None:
    try:
        data = encoded(obj)
    except kube.ConversionError:
        return
    assert kube.decode(data)["metadata"] == obj["metadata"]


@pytest.mark.parametrize(
    "obj", [POD, JOB, REVIEW, LEASE, BINDING, NODE, EVENT, SERVICE],
    ids=["pod", "job", "review", "lease", "binding", "node", "event", "service"])
def test_json_protobuf_json_is_the_same_object(obj: dict[str, Any]) -> None:
    data = encoded(obj)
    assert data.startswith(b"k8s\x00")
    assert kube.decode(data) == obj


def test_fields_of_upstreams_files_we_lacked_round_trip() -> None:
    """Fields added when our files were checked against upstream's generated.proto: 1.34's pod,
    container, node and service fields, and BoundObjectReference's uid, named uID upstream."""
    pod = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
        "spec": {"hostnameOverride": "h", "containers": [{
            "name": "c", "restartPolicy": "Never", "restartPolicyRules": [
                {"action": "Restart", "exitCodes": {"operator": "In", "values": [42, 7]}}]}]},
        "status": {
            "observedGeneration": 3,
            "conditions": [{"type": "Ready", "status": "True", "observedGeneration": 3}],
            "extendedResourceClaimStatus": {"resourceClaimName": "p-extended", "requestMappings": [
                {"containerName": "c", "resourceName": "example.com/gpu", "requestName": "r"}]},
            "containerStatuses": [{
                "name": "c", "ready": True, "restartCount": 1, "image": "i", "imageID": "sha",
                "stopSignal": "SIGTERM",
                "user": {"linux": {"uid": 0, "gid": 0, "supplementalGroups": [5, 6]}},
                "allocatedResourcesStatus": [{"name": "claim:c/r", "resources": [
                    {"resourceID": "dev-0", "health": "Healthy"}]}]}]},
    }
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {
        "features": {"supplementalGroupsPolicy": False}, "nodeInfo": {"swap": {"capacity": 0}}}}
    service = dict(SERVICE, spec=dict(
        SERVICE["spec"], sessionAffinity="ClientIP",
        sessionAffinityConfig={"clientIP": {"timeoutSeconds": 10800}}))
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
               "metadata": {"name": "sa", "namespace": "d"}, "spec": {
                   "audiences": ["a"], "boundObjectRef": {
                       "kind": "Pod", "apiVersion": "v1", "name": "p", "uid": "u-1"}}}
    for obj in (pod, node, service, request):
        assert kube.decode(kube.encode(obj)) == obj
    raw = runtime_pb2.Unknown.FromString(kube.encode(request)[4:]).raw
    assert authentication_v1_pb2.TokenRequest.FromString(raw).spec.boundObjectRef.uID == "u-1"


def test_the_pod_reads_back_as_our_model() -> None:
    pod = codec.decode(kube.decode(kube.encode(POD)), core.Pod)
    assert codec.to_builtins(pod)["spec"]["containers"][0]["resources"]["limits"] == {
        "cpu": "500m", "memory": "1Gi"}


def test_bytes_as_upstream_numbers_them() -> None:
    """A Namespace named ``a``, written out by hand from upstream's field numbers:
    Unknown{typeMeta(1){apiVersion(1) kind(2)}, raw(2)=Namespace{metadata(1){name(1)}}}."""
    type_meta = b"\x0a\x02v1" + b"\x12\x09Namespace"
    raw = b"\x0a\x03" + b"\x0a\x01a"
    expected = b"k8s\x00" + b"\x0a" + bytes([len(type_meta)]) + type_meta + \
        b"\x12" + bytes([len(raw)]) + raw
    obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}
    assert kube.encode(obj) == expected
    assert kube.decode(expected) == obj


def test_the_runtimes_own_classes_read_what_we_write() -> None:
    """The protobuf runtime's classes generated from our .proto files, not our converter,
    read the special types as upstream writes them."""
    unknown = runtime_pb2.Unknown.FromString(kube.encode(POD)[4:])
    assert (unknown.typeMeta.apiVersion, unknown.typeMeta.kind) == ("v1", "Pod")
    pod = core_v1_pb2.Pod.FromString(unknown.raw)
    assert pod.metadata.creationTimestamp.seconds == 1714557600
    assert pod.metadata.managedFields[0].fieldsV1.Raw == b'{"f:metadata":{"f:labels":{".":{}}}}'
    container = pod.spec.containers[0]
    assert container.resources.limits["cpu"].string == "500m"
    assert (container.livenessProbe.handler.httpGet.port.type,
            container.livenessProbe.handler.httpGet.port.strVal) == (1, "http")
    assert (container.readinessProbe.handler.tcpSocket.port.type,
            container.readinessProbe.handler.tcpSocket.port.intVal) == (0, 8080)
    assert container.env[1].valueFrom.secretKeyRef.localObjectReference.name == "s"
    assert pod.spec.volumes[0].volumeSource.configMap.localObjectReference.name == "cm"
    # a Go pointer keeps its zero; a Go value's zero is not written
    assert pod.spec.HasField("priority") and pod.spec.priority == 0
    assert pod.spec.HasField("enableServiceLinks") and not pod.spec.enableServiceLinks
    job = batch_v1_pb2.Job.FromString(runtime_pb2.Unknown.FromString(kube.encode(JOB)[4:]).raw)
    assert job.spec.HasField("parallelism") and list(job.spec.podFailurePolicy.rules[0]
                                                    .onExitCodes.values) == [1, 42]


def test_messages_built_by_the_runtime_decode() -> None:
    """A Namespace built with the generated classes as a Go client fills it (every value
    field written, zero time as an empty message) reads as its JSON."""
    ns = core_v1_pb2.Namespace()
    ns.metadata.name = "t1"
    ns.metadata.creationTimestamp.SetInParent()  # Go's zero time: empty, JSON null
    ns.spec.finalizers.append("kubernetes")
    env = runtime_pb2.Unknown(raw=ns.SerializeToString())
    env.typeMeta.apiVersion, env.typeMeta.kind = "v1", "Namespace"
    assert kube.decode(b"k8s\x00" + env.SerializeToString()) == {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "t1"},
        "spec": {"finalizers": ["kubernetes"]}}


def test_watch_frames() -> None:
    stream = (kube.watch_frame("ADDED", kube.encode(POD))
              + kube.watch_frame("DELETED", kube.encode(JOB)))
    buffer = bytearray(stream[:-3])  # the second event not all there yet
    assert list(kube.watch_events(buffer)) == [("ADDED", POD)]
    buffer += stream[-3:]
    assert list(kube.watch_events(buffer)) == [("DELETED", JOB)] and buffer == b""
    size = int.from_bytes(stream[:4], "big")
    event = meta_pb2.WatchEvent.FromString(stream[4:4 + size])
    assert event.type == "ADDED" and event.object.raw.startswith(b"k8s\x00")


def test_unknown_field_numbers_are_refused_not_dropped() -> None:
    raw = core_v1_pb2.Namespace(metadata={"name": "a"}).SerializeToString() + b"\xa8\x06\x01"
    env = runtime_pb2.Unknown(raw=raw, typeMeta={"apiVersion": "v1", "kind": "Namespace"})
    with pytest.raises(kube.ConversionError, match="field 101 is not known"):
        kube.decode(b"k8s\x00" + env.SerializeToString())


def test_json_keys_without_a_field_cannot_be_encoded() -> None:
    with pytest.raises(kube.ConversionError, match=r"spec\.bogus"):
        kube.encode({"apiVersion": "v1", "kind": "Namespace", "spec": {"bogus": 1}})
    with pytest.raises(kube.ConversionError, match="no protobuf form"):
        kube.encode({"apiVersion": "v9", "kind": "Nothing"})


def test_bad_bytes_raise_conversion_errors_only() -> None:
    good = kube.encode(POD)
    rng = random.Random(46)
    bad = [b"", b"k8s", b"{}", b"k8s\x01" + good[4:]]
    bad += [good[:n] for n in range(0, len(good), 7)]
    for _ in range(300):
        flipped = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            flipped[rng.randrange(4, len(flipped))] = rng.randrange(256)
        bad.append(bytes(flipped))
    for data in bad:
        with contextlib.suppress(kube.ConversionError):
            kube.decode(data)


names = st.text(st.characters(codec=None, categories=["Ll", "Nd"]), min_size=1, max_size=20)


@settings(max_examples=150, deadline=None)
@given(name=names, labels=st.dictionaries(names, st.text(max_size=30), max_size=5),
       generation=st.integers(min_value=1, max_value=2**63 - 1),
       grace=st.one_of(st.none(), st.integers(min_value=0, max_value=2**63 - 1)),
       finalizers=st.lists(names, max_size=3),
       seconds=st.integers(min_value=1, max_value=253402300799))
def test_round_trip_property(name: str, labels: dict[str, str], generation: int,
                             grace: int | None, finalizers: list[str], seconds: int) -> None:
    from kubedra.api.meta import format_time
    meta: dict[str, Any] = {"name": name, "generation": generation,
                            "creationTimestamp": format_time(seconds)}
    if labels:
        meta["labels"] = labels
    if grace is not None:
        meta["deletionGracePeriodSeconds"] = grace
    if finalizers:
        meta["finalizers"] = finalizers
    obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}
    assert kube.decode(encoded(obj)) == obj
