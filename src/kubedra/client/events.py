"""Recording core/v1 Events about objects, as client-go's event recorder does: every event
goes through the :class:`~kubedra.client.eventcorrelator.EventCorrelator`, so repeats of one
occurrence patch a single Event's ``count`` and ``lastTimestamp`` instead of piling up
objects. Every component records its events through this one recorder."""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Callable

from kubedra.api.core import Event, EventSource, ObjectReference
from kubedra.api.meta import ObjectMeta, TypedObject, format_time
from kubedra.client.errors import ApiError, is_not_found
from kubedra.client.eventcorrelator import Decision, EventCorrelator
from kubedra.client.rest import Client

log = logging.getLogger(__name__)


class EventRecorder:
    def __init__(self, client: Client, component: str, *,
                 clock: Callable[[], float] = time.time) -> None:
        self.client = client
        self.component = component
        self._clock = clock
        self.correlator = EventCorrelator(clock)
        # one write at a time per correlation key (a repeat must see the first one's name)
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = (
            weakref.WeakValueDictionary())

    async def record(self, obj: TypedObject, event_type: str, reason: str, message: str) -> None:
        """Best effort: failing to record an event never fails the caller's work."""
        decision = self.correlator.correlate(self._event(obj, event_type, reason, message))
        if decision is None:
            log.debug("dropped event %s on %s: too many from this source", reason,
                      obj.metadata.name)
            return
        lock = self._locks.get(decision.key)
        if lock is None:
            lock = self._locks[decision.key] = asyncio.Lock()
        async with lock:
            try:
                self.correlator.written(await self._write(decision))
            except (ApiError, OSError) as e:
                log.info("could not record event %s on %s: %s", reason, obj.metadata.name, e)

    def _event(self, obj: TypedObject, event_type: str, reason: str, message: str) -> Event:
        meta = obj.metadata
        now = self._clock()
        stamp = format_time(now)
        return Event(
            metadata=ObjectMeta(name=f"{meta.name}.{int(now * 1e9):x}",
                                namespace=meta.namespace or "default"),
            involved_object=ObjectReference(
                kind=obj.kind, namespace=meta.namespace, name=meta.name, uid=meta.uid,
                api_version=obj.api_version, resource_version=meta.resource_version),
            reason=reason, message=message, type=event_type,
            source=EventSource(component=self.component),
            first_timestamp=stamp, last_timestamp=stamp, count=1,
            reporting_component=self.component, reporting_instance="")

    async def _write(self, decision: Decision) -> Event:
        event = decision.event
        if decision.patch is not None:
            try:
                return await self.client.patch(
                    Event, event.metadata.name or "", decision.patch,
                    namespace=event.metadata.namespace, patch_type="strategic")
            except ApiError as e:
                if not is_not_found(e):  # the Event expired: write it anew
                    raise
        event.metadata.resource_version = None
        return await self.client.create(event)
