"""When a 1.34 node agent deletes ResourceSlices: all of its node's at start, a driver's after
the wiping delay once its last endpoint is gone, not at all when it registers again within the
delay; a failing server is asked again."""

from __future__ import annotations

import asyncio
from typing import Any

from kubedra.api.meta import Status
from kubedra.client.errors import ApiError
from kubedra.kubelet import slicewipe
from kubedra.kubelet.slicewipe import SliceWiper
from kubedra.tasks import cancel_and_wait


class Server:
    def __init__(self, failures: int = 0) -> None:
        self.deleted: list[str] = []
        self.failures = failures

    async def delete_collection(self, model: type[Any], namespace: str | None = None, *,
                                field_selector: str | None = None) -> None:
        if self.failures:
            self.failures -= 1
            raise ApiError(503, Status(message="unavailable"))
        self.deleted.append(field_selector or "")


async def test_wipes(monkeypatch: Any) -> None:
    monkeypatch.setattr(slicewipe, "BACKOFF_INITIAL", 0.01)
    server = Server(failures=2)
    wiper = SliceWiper(server, "n1", delay=0.2)  # type: ignore[arg-type]
    task = asyncio.create_task(wiper.run())
    try:
        await asyncio.wait_for(wiper.wiped.wait(), 5)
        assert server.deleted == ["spec.nodeName=n1"]
        wiper.remove_plugin("a.example.com")
        await asyncio.sleep(0.1)
        wiper.add_plugin("a.example.com")  # back within the delay: nothing deleted
        wiper.remove_plugin("b.example.com")
        wiper.remove_plugin("b.example.com")  # still the first timer
        await asyncio.sleep(0.5)
        assert server.deleted == ["spec.nodeName=n1",
                                  "spec.nodeName=n1,spec.driver=b.example.com"]
    finally:
        await cancel_and_wait(task)
