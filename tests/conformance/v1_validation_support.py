"""Shared checks for the v1-validation-*.json vectors (resource.k8s.io/v1, Kubernetes 1.34).

Beyond validation_support: ``{"$rawJSON": S}`` markers become a RawExtension holding the bytes
S verbatim (``msgspec.Raw``), errors of one map's keys compare as a multiset (Go map order),
and ``badValueKind: "object"`` asks for a struct-valued bad value without comparing it.
"""

from __future__ import annotations

import copy
import json
import re
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from kubedra.api import codec
from kubedra.client import kubeconfig as kubeconfig_file
from kubedra.validation.field import ErrorType, FieldError
from kubedra.validation.field import Path as FieldPath
from tests.conformance.validation_support import actual

RAW = "$rawJSON"
# the map-valued fields whose errors come out in Go map order
_MAP_KEY = re.compile(r"^(.*\.(?:attributes|capacity|counters))\[")


def raw_paths(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[tuple[str | int, ...],
                                                                      str]]:
    """Where the ``$rawJSON`` markers sit in an expanded JSON object, with their bytes."""
    if isinstance(value, dict):
        if RAW in value:
            return [(path, value[RAW])]
        return [hit for k, v in value.items() for hit in raw_paths(v, (*path, k))]
    if isinstance(value, list):
        return [hit for i, v in enumerate(value) for hit in raw_paths(v, (*path, i))]
    return []


def _without_raw(value: Any) -> Any:
    if isinstance(value, dict):
        if RAW in value:
            return None
        return {k: _without_raw(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_raw(v) for v in value]
    return value


def _attribute(obj: Any, json_name: str) -> str:
    for f in msgspec.structs.fields(type(obj)):
        if f.encode_name == json_name:
            return f.name
    raise KeyError(json_name)


def decode(raw: dict[str, Any], model: type[Any]) -> Any:
    """``raw`` as ``model``; each ``$rawJSON`` field holds its bytes as ``msgspec.Raw``."""
    obj = codec.decode(_without_raw(raw), model)
    for path, text in raw_paths(raw):
        parent: Any = obj
        for step in path[:-1]:
            parent = parent[step] if isinstance(step, int) else getattr(
                parent, _attribute(parent, step))
        last = path[-1]
        assert isinstance(last, str)
        setattr(parent, _attribute(parent, last), msgspec.Raw(text.encode()))
    return obj


def json_text(raw: dict[str, Any]) -> bytes:
    """The object as a JSON document with each ``$rawJSON`` value's bytes written verbatim
    (only valid JSON can travel this way: over HTTP the rest is a decoding error)."""
    holes = raw_paths(raw)
    marked = _mark(raw, [p for p, _ in holes])
    text = msgspec.json.encode(marked).decode()
    for i, (_, value) in enumerate(holes):
        text = text.replace(f'"\\u0000raw{i}\\u0000"', value, 1)
    return text.encode()


def _mark(value: Any, holes: Sequence[tuple[str | int, ...]], path: tuple[str | int, ...] = ()
          ) -> Any:
    if path in holes:
        return f"\0raw{holes.index(path)}\0"
    if isinstance(value, dict):
        return {k: _mark(v, holes, (*path, k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_mark(v, holes, (*path, i)) for i, v in enumerate(value)]
    return value


def _groups(items: list[dict[str, Any]]) -> list[Any]:
    """Consecutive errors under one map's keys become one sorted group."""
    out: list[Any] = []
    for item in items:
        m = _MAP_KEY.match(item["field"])
        key = m.group(1) if m else None
        if key is not None and out and isinstance(out[-1], tuple) and out[-1][0] == key:
            out[-1][1].append(item)
        elif key is not None:
            out.append((key, [item]))
        else:
            out.append(item)
    return [(g[0], sorted(g[1], key=repr)) if isinstance(g, tuple) else g for g in out]


def expected(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    want: list[dict[str, Any]] = []
    for exp in errors:
        item = {"type": exp["type"], "field": exp["field"], "detail": exp.get("detail", "")}
        if "badValue" in exp:
            item["badValue"] = exp["badValue"]
        elif exp.get("badValueKind") == "object":
            item["badValue"] = "<object>"
        want.append(item)
    return want


def observed(errors: list[FieldError]) -> list[dict[str, Any]]:
    got = actual(errors)
    for item in got:
        if isinstance(item.get("badValue"), dict):
            item["badValue"] = "<object>"  # a Go struct: its rendering is not compared
    return got


def assert_errors(errors: list[FieldError], want: list[dict[str, Any]]) -> None:
    """Same errors as the vector, in order, map-key runs as multisets."""
    assert _groups(observed(errors)) == _groups(expected(want))
    for e in errors:
        assert str(e).startswith(f"{e.field}: ")


# --- the server's answer: causes of a 422, kubectl's rendering of them ----------------------

#: Errors v1 defaulting removes over HTTP (each case's ``defaultingChangesOutcome`` note):
#: allocationMode "" becomes ExactCount (count 1), a toleration's operator "" becomes Equal.
_DEFAULTED = (
    ("FieldValueNotSupported", re.compile(r".*\.allocationMode$"), ""),
    ("FieldValueRequired", re.compile(r".*\.tolerations\[\d+\]\.operator$"), None),
)


def after_defaulting(case: dict[str, Any]) -> list[dict[str, Any]]:
    """The errors a server answers: the vector's, less those its note says v1 defaulting
    removes."""
    errors: list[dict[str, Any]] = case["errors"]
    if "defaultingChangesOutcome" not in case:
        return errors
    return [e for e in errors if not any(
        e["type"] == kind and path.match(e["field"])
        and (value is None or e.get("badValue") == value)
        for kind, path, value in _DEFAULTED)]


def cause_pattern(exp: dict[str, Any]) -> re.Pattern[str]:
    """The ``<field>: <message>`` of an expected error as apimachinery v0.34 renders it; a
    struct-valued bad value (``badValueKind: object``) matches any JSON object."""
    kind = ErrorType(exp["type"])
    detail = exp.get("detail", "")
    if exp.get("badValueKind") == "object":
        head = FieldError(kind, FieldPath(exp["field"]), "", detail, True).body()
        value_head = head.split('""', 1)[0]
        return re.compile(re.escape(f"{exp['field']}: {value_head}") + r"\{.*\}"
                          + re.escape(f": {detail}" if detail else ""), re.S)
    value = exp.get("badValue", "")
    body = FieldError(kind, FieldPath(exp["field"]), value, detail, True).body()
    return re.compile(re.escape(f"{exp['field']}: {body}"), re.S)


def assert_causes(texts: Sequence[str], errors: list[dict[str, Any]]) -> None:
    """``texts`` (``<field>: <message>`` each, repeats once) are exactly ``errors``."""
    patterns = [cause_pattern(e) for e in errors]
    unique = list(dict.fromkeys(texts))
    assert len(unique) == len({p.pattern for p in patterns}), (unique, errors)
    for text in unique:
        assert any(p.fullmatch(text) for p in patterns), (text, errors)
    for p in patterns:
        assert any(p.fullmatch(t) for t in unique), (p.pattern, unique)


class Server:
    """A running ``kubedra apiserver`` spoken to over HTTPS as its administrator."""

    def __init__(self, kubeconfig: Path) -> None:
        config = kubeconfig_file.load(kubeconfig)
        self.base = config.server.rstrip("/")
        self.headers = {"Content-Type": "application/json"}
        if config.token:
            self.headers["Authorization"] = f"Bearer {config.token}"
        context = config.ssl_context()
        self.ssl = context if isinstance(context, ssl.SSLContext) else None

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Poll ``/readyz`` until it answers 200."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                request = urllib.request.Request(self.base + "/readyz", headers=self.headers)
                with urllib.request.urlopen(request, context=self.ssl, timeout=5) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            assert time.monotonic() < deadline, "the API server did not become ready"
            time.sleep(0.1)

    def call(self, method: str, path: str, body: bytes | None = None) -> tuple[int, Any]:
        request = urllib.request.Request(self.base + path, data=body, method=method,
                                         headers=self.headers)
        try:
            with urllib.request.urlopen(request, context=self.ssl, timeout=60) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())


def _collection(obj: dict[str, Any]) -> str:
    plural = {"ResourceSlice": "resourceslices", "DeviceClass": "deviceclasses",
              "ResourceClaim": "resourceclaims",
              "ResourceClaimTemplate": "resourceclaimtemplates"}[obj["kind"]]
    namespace = obj.get("metadata", {}).get("namespace")
    where = f"namespaces/{namespace}/" if namespace else ""
    return f"/apis/resource.k8s.io/v1/{where}{plural}"


def causes(answer: dict[str, Any]) -> list[str]:
    """The ``<field>: <message>`` of each cause of a 422 Status."""
    return [f"{c['field']}: {c['message']}" for c in answer["details"]["causes"]]


def server_errors(server: Server, case: dict[str, Any], name: str) -> tuple[int, Any]:
    """The case's request on ``server``: a dry-run create, or for ``updateStatus`` the old
    claim created as ``name`` with its status written, then the new status written."""
    obj = copy.deepcopy(case["object"])
    if case["operation"] == "create":
        return server.call("POST", _collection(obj) + "?dryRun=All", json_text(obj))
    assert case["operation"] == "updateStatus", case["operation"]
    old = copy.deepcopy(case["oldObject"])
    for o in (obj, old):
        o["metadata"]["name"] = name
        o["metadata"].pop("resourceVersion", None)
        o["metadata"].pop("deletionTimestamp", None)
    code, stored = server.call("POST", _collection(old), json_text(old))
    assert code == 201, stored
    item = f"{_collection(old)}/{name}/status"
    if old.get("status"):
        stored["status"] = old["status"]
        code, stored = server.call("PUT", item, msgspec.json.encode(stored))
        assert code == 200, stored
    obj["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"]
    return server.call("PUT", item, json_text(obj))


def through_server(case: dict[str, Any]) -> list[dict[str, Any]]:
    """What a server (or ``kubedra validate``) answers for a case: the vector's errors less
    those defaulting removes and the missing namespace, which a request's URL supplies."""
    return [e for e in after_defaulting(case)
            if not (e["field"] == "metadata.namespace" and e["type"] == "FieldValueRequired")]


def cli_causes(stderr: str, kind: str, name: str) -> list[str]:
    """The causes ``kubedra validate`` printed for one invalid object (kubectl's format:
    one inline, several as ``* `` items; a cause may span lines)."""
    head = f'The {kind} "{name}" is invalid: '
    assert stderr.startswith(head), stderr
    rest = stderr[len(head):].removesuffix("\n")
    if not rest.startswith("\n* "):
        return [rest]
    return rest[len("\n* "):].split("\n* ")


def cli_gates(case: dict[str, Any]) -> list[str]:
    gates = case.get("featureGates") or {}
    if not gates:
        return []
    return ["--feature-gates", ",".join(f"{k}={str(v).lower()}" for k, v in gates.items())]
