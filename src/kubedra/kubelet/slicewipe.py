"""ResourceSlices on a 1.34 node: the drivers publish their own, so the kubelet only removes
what no usable driver stands behind (upstream 1.34 ``DRAPluginManager``, dra-v1 spec §11.4):
every slice of the node when the agent starts (no driver has registered yet), and a driver's
slices on the node once it has had no registered endpoint for ``delay`` (30 s), unless it
registers again meanwhile. Deletion is one DeleteCollection by field selector, retried with
backoff (1 s doubling, at most 5 min apart) until the server takes it.
"""

from __future__ import annotations

import asyncio
import logging

from kubedra.api.resource.v1 import ResourceSlice
from kubedra.client.errors import ApiError, is_not_found
from kubedra.client.rest import Client
from kubedra.tasks import cancel_and_wait

log = logging.getLogger(__name__)

WIPING_DELAY = 30.0
BACKOFF_INITIAL = 1.0
BACKOFF_MAX = 300.0


class SliceWiper:
    def __init__(self, client: Client, node_name: str, delay: float = WIPING_DELAY) -> None:
        self.client = client
        self.node_name = node_name
        self.delay = delay
        self.wiped = asyncio.Event()  # the start-up wipe is done
        self._pending: dict[str, asyncio.Task[None]] = {}

    async def run(self) -> None:
        try:
            await self.wipe()
            self.wiped.set()
            await asyncio.Event().wait()
        finally:
            await cancel_and_wait(*self._pending.values())

    def add_plugin(self, driver: str) -> None:
        """The driver is usable again: its pending wipe is cancelled."""
        task = self._pending.pop(driver, None)
        if task is not None:
            log.info("driver %s registered again: its ResourceSlices stay", driver)
            task.cancel()

    def remove_plugin(self, driver: str) -> None:
        """The driver's last endpoint went away: wipe after the delay (once)."""
        if driver not in self._pending:
            self._pending[driver] = asyncio.create_task(self._wipe_later(driver),
                                                        name=f"wipe {driver}")

    async def _wipe_later(self, driver: str) -> None:
        await asyncio.sleep(self.delay)
        await self.wipe(driver)
        self._pending.pop(driver, None)

    async def wipe(self, driver: str = "") -> None:
        """Delete the node's slices (of ``driver`` only, if given)."""
        selector = f"spec.nodeName={self.node_name}" + (f",spec.driver={driver}" if driver
                                                         else "")
        delay = BACKOFF_INITIAL
        while True:
            try:
                await self.client.delete_collection(ResourceSlice, field_selector=selector)
                log.info("deleted ResourceSlices %s", selector)
                return
            except Exception as e:  # the server away, credentials not taken yet: retry
                if isinstance(e, ApiError) and is_not_found(e):
                    return
                log.info("deleting ResourceSlices %s failed (retrying): %s", selector, e)
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKOFF_MAX)
