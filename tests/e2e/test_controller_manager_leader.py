"""Two controller managers on one cluster: one holds ``kube-system/kube-controller-manager``
and runs the controllers, the other waits; stopping the leader hands over at once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kubedra.api.coordination import Lease
from kubedra.cli.credentials import CONTROLLER_MANAGER
from kubedra.cli.localcluster import Component, LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.errors import ApiError
from kubedra.client.rest import Client
from tests.e2e.node_support import eventually

LEASE = "kube-controller-manager"


@pytest.mark.timeout(180)
async def test_one_controller_manager_leads(tmp_path: Path) -> None:
    cluster = LocalCluster(tmp_path, emulated_version="1.30", schedulers=0, verbose=1)
    async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
        second = Component("controller-manager-2", [
            "controller-manager", "--kubeconfig",
            str(cluster.component_kubeconfigs[CONTROLLER_MANAGER]),
            "--identity", "second", "-v"], tmp_path / "logs" / "controller-manager-2.log")

        async def holder() -> str | None:
            try:
                return (await client.get(Lease, LEASE, "kube-system")).spec.holder_identity
            except ApiError:
                return None

        first = await eventually("a leader", holder, 60)
        assert first != "second"
        await second.start()
        try:
            await eventually("the second waiting", lambda: _logged(
                second, "attempting to acquire leader lease kube-system/kube-controller-manager"),
                60)
            await asyncio.sleep(5)  # more than two retry periods
            assert await holder() == first
            assert second.running
            assert "Starting controller" not in second.log_path.read_text()
            assert cluster.controller_manager is not None
            await cluster.controller_manager.stop()  # SIGTERM: the Lease is given up
            async def second_leads() -> bool:
                return await holder() == "second"

            await eventually("the second leading", second_leads, 30)
            await eventually("its controllers started",
                             lambda: _logged(second, "node-lifecycle-controller"), 30)
        finally:
            await second.stop()


async def _logged(c: Component, text: str) -> bool:
    return c.log_path.exists() and text in c.log_path.read_text()
