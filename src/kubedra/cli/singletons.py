"""Server-side loops that must run once per cluster (garbage collection), behind a Lease.

Every API server replica over one etcd could collect garbage; only the holder of the
coordination.k8s.io Lease ``kube-system/kubedra-apiserver-gc`` does. The election is the
scheduler's (client-go's algorithm), run over a loopback client to the replica itself, as
kube-apiserver's own post-start hooks use a loopback client. A replica that loses the Lease
stops collecting and competes again; one that shuts down cleanly hands the Lease over.
"""

from __future__ import annotations

import logging
import os
import socket

from kubedra.apiserver.app import ApiServer
from kubedra.client.kubeconfig import ClientConfig
from kubedra.client.leaderelection import LeaderElectionConfig, LeaderElector
from kubedra.client.rest import Client

log = logging.getLogger(__name__)

GC_LEASE = "kubedra-apiserver-gc"


def replica_identity(port: int) -> str:
    return f"{socket.gethostname()}_{os.getpid()}_{port}"


async def collect_while_leading(
    server: ApiServer, loopback: ClientConfig, identity: str, *, retry_period: float = 2.0
) -> None:
    """Run until cancelled: hold the Lease, and run the collector only while holding it."""
    async with Client(loopback, user_agent="kubedra-apiserver") as client:
        elector = LeaderElector(
            client, LeaderElectionConfig(name=GC_LEASE, identity=identity,
                                         retry_period=retry_period))
        try:
            while True:
                await elector.acquire()
                await server.gc.start()
                try:
                    await elector.keep_renewing()
                finally:
                    await server.gc.stop()
                log.warning("%s lost %s; garbage collection paused", identity, GC_LEASE)
        finally:
            if elector.leading.is_set():
                await elector.release()
