"""A real API server for the scheduler plugin vectors, and fixture handling.

The server runs in-process on 127.0.0.1 over a temporary SQLite store (garbage collection off:
the vectors' claims are owned by pods that only exist in the test). Objects are created through
the API so they carry server-assigned UIDs and resourceVersions; the plugin's cluster state is
fed by the scheduler's own informers.
"""

from __future__ import annotations

import copy
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from kubedra.api.codec import decode, to_builtins
from kubedra.api.core import Namespace
from kubedra.api.meta import ObjectMeta, TypedObject
from kubedra.api.resource.v1alpha2 import (
    API_VERSION,
    ResourceClaim,
    ResourceClaimParameters,
    ResourceClass,
    ResourceClassParameters,
    ResourceSlice,
)
from kubedra.apiserver.app import ApiServer, Options
from kubedra.client.errors import ApiError, is_already_exists
from kubedra.client.kubeconfig import ClientConfig
from kubedra.client.rest import Client
from kubedra.storage.sqlite import SQLiteStore

KEEP_FINALIZER = "test.kubedra.io/keep"

_MODELS: dict[str, tuple[type[TypedObject], str]] = {
    "claims": (ResourceClaim, "ResourceClaim"),
    "classes": (ResourceClass, "ResourceClass"),
    "resourceSlices": (ResourceSlice, "ResourceSlice"),
    "claimParameters": (ResourceClaimParameters, "ResourceClaimParameters"),
    "classParameters": (ResourceClassParameters, "ResourceClassParameters"),
}


@asynccontextmanager
async def api_client(tmp_path: Path, options: Options | None = None) -> AsyncIterator[Client]:
    """A client of an in-process API server on 127.0.0.1 (GC off unless ``options`` say)."""
    store = await SQLiteStore.open(tmp_path / "kubedra.db", compact_interval=0)
    server = ApiServer(store, options or Options(gc=False))
    try:
        port = await server.start("127.0.0.1", 0)
        async with Client(ClientConfig(server=f"http://127.0.0.1:{port}")) as client:
            yield client
    finally:
        await server.stop()
        await store.close()


_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def set_path(obj: dict[str, Any], path: str, value: Any) -> None:
    """Set ``a.b[0].c`` in a JSON document (creating missing mappings)."""
    steps: list[str | int] = [int(i) if i else k for k, i in _STEP.findall(path)]
    target: Any = obj
    for step in steps[:-1]:
        target = target[step] if isinstance(step, int) else target.setdefault(step, {})
    target[steps[-1]] = value


def get_path(obj: Any, path: str) -> Any:
    for key, index in _STEP.findall(path):
        if obj is None:
            return None
        obj = obj[int(index)] if index else obj.get(key)
    return obj


class Fixtures:
    """Resolves ``"name"`` and ``{"fixture": name, "set": {...}}`` references of a vector."""

    def __init__(self, fixtures: dict[str, Any]) -> None:
        self.fixtures = fixtures

    def find(self, name: str) -> tuple[str, dict[str, Any]]:
        for section, entries in self.fixtures.items():
            if isinstance(entries, dict) and name in entries:
                return section, copy.deepcopy(entries[name])
        raise KeyError(f"no fixture named {name!r}")

    def resolve(self, ref: str | dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The fixture's section and a fresh JSON copy with the ``set`` paths applied."""
        if isinstance(ref, str):
            return self.find(ref)
        if "inline" in ref:
            return "pods", copy.deepcopy(ref["inline"])
        section, raw = self.find(ref["fixture"])
        for path, value in ref.get("set", {}).items():
            set_path(raw, path, value)
        return section, raw


async def create(client: Client, section: str, raw: dict[str, Any]) -> TypedObject:
    """Create the object through the API; then write its status and, for a fixture with
    ``deletionTimestamp``, delete it while a test finalizer keeps it alive."""
    model, kind = _MODELS[section]
    raw = copy.deepcopy(raw)
    status = raw.pop("status", None)
    meta = raw.setdefault("metadata", {})
    deleting = meta.pop("deletionTimestamp", None) is not None
    meta.pop("uid", None)
    if deleting:
        meta["finalizers"] = [*meta.get("finalizers", []), KEEP_FINALIZER]
    await ensure_namespace(client, meta.get("namespace"))
    obj = decode({"apiVersion": API_VERSION, "kind": kind, **raw}, model)
    created = await client.create(obj)
    if status:
        created = await client.update_status(
            decode({**to_builtins(created), "status": status}, model))
    if deleting:
        await client.delete(model, created.metadata.name or "", created.metadata.namespace)
        created = await client.get(model, created.metadata.name or "",
                                   created.metadata.namespace)
    return created


async def ensure_namespace(client: Client, name: str | None) -> None:
    if not name:
        return
    try:
        await client.create(Namespace(api_version="v1", kind="Namespace",
                                      metadata=ObjectMeta(name=name)))
    except ApiError as e:
        if not is_already_exists(e):
            raise


def without_nulls(v: Any) -> Any:
    """Drop null members and empty lists: Go leaves unset fields out of its JSON."""
    if isinstance(v, dict):
        return {k: without_nulls(x) for k, x in v.items() if x is not None and x != []}
    if isinstance(v, list):
        return [without_nulls(x) for x in v]
    return v


def same(got: Any, want: Any) -> bool:
    """JSON equality where a zero value ("" / [] / {} / null) equals an absent field."""
    if want in ("", [], {}, None):
        return got in ("", [], {}, None)
    return bool(without_nulls(got) == without_nulls(want))
