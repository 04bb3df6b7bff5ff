"""Recording core/v1 Events about objects, as client-go's event recorder does (simplified:
one Event per occurrence, no aggregation)."""

from __future__ import annotations

import datetime
import logging
import uuid

from kubedra.api.kinds import by_gvk
from kubedra.api.meta import TypedObject
from kubedra.client.errors import ApiError
from kubedra.client.rest import Client

log = logging.getLogger(__name__)
_EVENT = by_gvk("", "v1", "Event")


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class EventRecorder:
    def __init__(self, client: Client, component: str) -> None:
        self.client = client
        self.component = component

    async def record(self, obj: TypedObject, event_type: str, reason: str, message: str) -> None:
        """Best effort: failing to record an event never fails the caller's work."""
        assert _EVENT is not None
        meta = obj.metadata
        namespace = meta.namespace or "default"
        now = _now()
        body = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{meta.name}.{uuid.uuid4().hex[:16]}", "namespace": namespace},
            "involvedObject": {"apiVersion": obj.api_version, "kind": obj.kind,
                               "name": meta.name, "namespace": meta.namespace,
                               "uid": meta.uid, "resourceVersion": meta.resource_version},
            "reason": reason, "message": message, "type": event_type,
            "source": {"component": self.component},
            "firstTimestamp": now, "lastTimestamp": now, "count": 1,
            "reportingComponent": self.component, "reportingInstance": "",
        }
        try:
            await self.client.create_raw(_EVENT, body, namespace)
        except (ApiError, OSError) as e:
            log.info("could not record event %s on %s: %s", reason, meta.name, e)
