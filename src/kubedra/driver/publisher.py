"""Fan-out of the published device list to every open ``NodeListAndWatchResources`` stream.

Each message is a complete replacement (the v1alpha3 contract): a stream sends the current
list as soon as it opens and again after every :meth:`Publisher.publish`; a stream that falls
behind skips straight to the newest list. The message is built once per publish, not per stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

from kubedra.api.resource import v1alpha2 as api
from kubedra.proto import convert
from kubedra.proto.generated import dra_v1alpha3_pb2 as dra_pb2

# gRPC's default receive limit on the kubelet side (no override upstream).
MAX_MESSAGE_BYTES = 4 * 1024 * 1024


class Publisher:
    def __init__(self, instances: Sequence[api.NamedResourcesInstance] = ()) -> None:
        self._closed = False
        self._changed = asyncio.Event()
        self._message = self._build(instances)

    @staticmethod
    def _build(instances: Sequence[api.NamedResourcesInstance]) -> Any:
        message = dra_pb2.NodeListAndWatchResourcesResponse()
        convert.instances_to_model(instances, message.resources.add())
        size = message.ByteSize()
        if size >= MAX_MESSAGE_BYTES:
            raise ValueError(
                f"{len(instances)} instances encode to {size} bytes, over the kubelet's "
                f"{MAX_MESSAGE_BYTES}-byte gRPC message limit"
            )
        return message

    def publish(self, instances: Sequence[api.NamedResourcesInstance]) -> None:
        """Replace the published list; raises ``ValueError`` (publishing nothing) for a list
        that cannot be sent."""
        self._message = self._build(instances)
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def close(self) -> None:
        """End every stream (on shutdown: a stream would otherwise hold the server open)."""
        self._closed = True
        self._changed.set()

    async def stream(self) -> AsyncIterator[Any]:
        """The current message now, then the newest one after each change, until closed."""
        while not self._closed:
            changed = self._changed
            yield self._message
            await changed.wait()
