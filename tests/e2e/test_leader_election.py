"""Leader election through a Lease on a real API server: two candidates, one wins and renews,
release hands over at once, and a leader that stops renewing loses the Lease on expiry."""

from __future__ import annotations

import asyncio
import contextlib
import uuid

from kubedra.api.coordination import Lease
from kubedra.client import kubeconfig
from kubedra.client.leaderelection import LeaderElectionConfig, LeaderElector
from kubedra.client.rest import Client
from tests.e2e.conftest import Server


def elector(client: Client, lease: str, identity: str, duration: float) -> LeaderElector:
    return LeaderElector(client, LeaderElectionConfig(
        name=lease, namespace="default", identity=identity, lease_duration=duration,
        renew_deadline=duration * 0.7, retry_period=0.1))


async def stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def test_one_leader_and_handover(apiserver: Server) -> None:
    lease_name = "le-" + uuid.uuid4().hex[:8]
    async with Client(kubeconfig.load(apiserver.kubeconfig)) as client:
        a, b = elector(client, lease_name, "a", 5.0), elector(client, lease_name, "b", 5.0)
        tasks = {asyncio.create_task(a.acquire()): a, asyncio.create_task(b.acquire()): b}
        done, waiting = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        assert len(done) == 1
        winner = tasks[done.pop()]
        loser_task = waiting.pop()
        loser = tasks[loser_task]
        renewing = asyncio.create_task(winner.keep_renewing())
        await asyncio.sleep(1.0)  # many retry periods: the loser must still be waiting
        assert not loser_task.done() and not loser.leading.is_set()
        lease = await client.get(Lease, lease_name, "default")
        assert lease.spec.holder_identity == winner.config.identity
        transitions = lease.spec.lease_transitions or 0

        await stop(renewing)
        await winner.release()
        # Released, not expired: the other candidate takes over within a few retry periods.
        await asyncio.wait_for(loser_task, 2.0)
        lease = await client.get(Lease, lease_name, "default")
        assert lease.spec.holder_identity == loser.config.identity
        assert (lease.spec.lease_transitions or 0) == transitions + 1


async def test_expired_lease_is_taken_over(apiserver: Server) -> None:
    lease_name = "le-" + uuid.uuid4().hex[:8]
    async with Client(kubeconfig.load(apiserver.kubeconfig)) as client:
        first = elector(client, lease_name, "first", 1.0)
        await first.acquire()  # then never renews (a killed process)
        second = elector(client, lease_name, "second", 1.0)
        started = asyncio.get_running_loop().time()
        await asyncio.wait_for(second.acquire(), 5.0)
        # Not before the lease duration, measured on the candidate's own clock.
        assert asyncio.get_running_loop().time() - started >= 1.0
        lease = await client.get(Lease, lease_name, "default")
        assert lease.spec.holder_identity == "second"
