"""``kubedra node-pool``: many simulated nodes in one process, for large local clusters
(``kubedra up --nodes 100``). Each node is a full node agent with its own root directory,
sockets, checkpoint and Lease, and its own example driver serving the upstream sockets in that
root directory. With ``--kubeconfig-dir`` every node is also its own API client, with its
own identity (``DIR/<node>.kubeconfig``, as ``kubedra up`` writes them) and its own watch of
its pods; only the process is shared. Without it the nodes share one client and one watch of
the bound pods (the API server then filters no pod event per node), as well as the process."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import click

from kubedra.api.release import R1_30, R1_34
from kubedra.api.resource.v1alpha2 import NamedResourcesInstance
from kubedra.api.resourceclaim import claim_api
from kubedra.cli.contenttype import (
    DEFAULT,
    content_type_args,
    content_type_option,
    wire,
)
from kubedra.cli.credentials import node_kubeconfig_path, node_serving_paths
from kubedra.cli.kubelet import node_config, node_options, serving
from kubedra.cli.localcluster import Component
from kubedra.cli.runtime import run_until_signalled, setup_logging, until_stopped
from kubedra.client import kubeconfig
from kubedra.client.discovery import discover_release, dra_served
from kubedra.client.rest import Client
from kubedra.driver import Driver, dra_socket_path
from kubedra.driver.example import (
    build,
    generated_devices,
    instance_names,
    publish_when_registered,
)
from kubedra.kubelet.agent import NodeAgent, bound_pods
from kubedra.kubelet.holder import RootDirInUse
from kubedra.kubelet.node import NodeClaimed
from kubedra.tasks import cancel_and_wait
from kubedra.testing import gpu_attributes

MAX_SOCKET_PATH = 107
"""Bytes of a Unix socket path (``sun_path`` less its terminating NUL)."""


NODE_PREFIX = "node-"


def node_names(count: int, first: int = 0, prefix: str = NODE_PREFIX) -> list[str]:
    return [f"{prefix}{i}" for i in range(first, first + count)]


def pool_instances(count: int) -> list[NamedResourcesInstance]:
    """The example driver's instance names with GPU-like attributes, so the manifests in
    ``examples/`` (class filter and claim selector) match half of them."""
    return [NamedResourcesInstance(name=name, attributes=gpu_attributes(i))
            for i, name in enumerate(instance_names(count))]


@click.command("node-pool")
@click.option("--kubeconfig", "kubeconfig_path", type=click.Path(dir_okay=False),
              help="kubeconfig of the API server (default: $KUBECONFIG or ~/.kube/config)")
@click.option("--kubeconfig-dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="each node's own kubeconfig is DIR/<node name>.kubeconfig "
              "(default: every node uses --kubeconfig)")
@click.option("--root-dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="each node's state lives in ROOT/<node name>/")
@click.option("--prefix", default=NODE_PREFIX, show_default=True, help="node names: PREFIX<i>")
@click.option("--first", default=0, show_default=True, help="index of the first node")
@click.option("--count", default=1, show_default=True, help="how many nodes this process runs")
@click.option("--driver-name", default="gpu.example.com", show_default=True)
@click.option("--instances", default=8, show_default=True,
              help="instances each node's example driver publishes")
@click.option("--client-ca-file", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              default=None, help="with --kubeconfig-dir: each node serves its containers' logs "
              "with DIR/<node>.kubelet.crt to clients this CA signed (the API server)")
@node_options
@content_type_option
@click.option("-v", "--verbose", count=True)
def node_pool(kubeconfig_path: str | None, kubeconfig_dir: Path | None, root_dir: Path,
              prefix: str, first: int, count: int, driver_name: str, instances: int,
              client_ca_file: Path | None, cpu: str, memory: str, pods: str,
              labels: tuple[str, ...], taints: tuple[str, ...], content_type: str,
              verbose: int) -> None:
    """Run COUNT node agents, each with the example driver, until SIGINT/SIGTERM."""
    setup_logging(verbose)
    names = node_names(count, first, prefix)
    configs = ({name: kubeconfig.load(node_kubeconfig_path(kubeconfig_dir, name))
                for name in names} if kubeconfig_dir is not None else {})
    shared = kubeconfig.load(kubeconfig_path) if kubeconfig_dir is None else None
    published = pool_instances(instances)
    tls = {name: serving(*node_serving_paths(kubeconfig_dir, name), client_ca_file)
           for name in names} if kubeconfig_dir is not None and client_ca_file else {}

    async def main(stop: asyncio.Event) -> None:
        drivers: list[Driver] = []
        async with contextlib.AsyncExitStack() as clients:
            common = (await clients.enter_async_context(
                Client(shared, user_agent="kubedra-node-pool", wire=wire(content_type)))
                if shared is not None else None)
            agents: list[tuple[NodeAgent, Callable[[], Coroutine[Any, Any, bool]] | None]] = []
            # one node identity may not watch other nodes' pods: sharing needs one client
            bound = bound_pods(common) if common is not None else None
            dra: bool | None = None
            release = R1_30
            try:
                for name in names:
                    client = common if common is not None else (
                        await clients.enter_async_context(
                            Client(configs[name], user_agent=f"kubedra-node-pool/{name}",
                                   wire=wire(content_type))))
                    if dra is None:
                        release = await discover_release(client)
                        dra = await dra_served(client, "node-pool", "the example drivers",
                                               version=claim_api(release).version)
                    root = (root_dir / name).absolute()
                    publishing = None
                    if dra:
                        # on 1.34 the driver reads claims and publishes with the node's client
                        driver, example = build(driver_name, root, root / "cdi", name,
                                                published, client)
                        await driver.start()
                        drivers.append(driver)
                        if driver.release is R1_34:
                            publishing = functools.partial(
                                publish_when_registered, driver, example,
                                generated_devices(instances))
                    config = node_config(name, cpu, memory, pods, labels, taints)
                    config.kubelet_version = release.git_version
                    agent = NodeAgent(client, config, root, bound, dra, release=release,
                                      serving=tls.get(name))
                    agents.append((agent, publishing))
                await until_stopped(stop, *(_node(a, p) for a, p in agents))
            except (NodeClaimed, RootDirInUse) as e:
                raise click.ClickException(str(e)) from None
            finally:
                if bound is not None:
                    await bound.stop()
                for driver in drivers:
                    await driver.stop()

    run_until_signalled(main, control_loop=True)


async def _node(agent: NodeAgent,
                publishing: Callable[[], Coroutine[Any, Any, bool]] | None) -> None:
    """Run ``agent``, and beside it (1.34) its driver's publishing, which waits for the
    agent to take the driver's registration."""
    if publishing is None:
        await agent.run()
        return
    task = asyncio.create_task(publishing())
    try:
        await agent.run()
    finally:
        await cancel_and_wait(task)


def pool_components(data_dir: Path, nodes: int, per_process: int, instances: int, driver: str,
                    verbose: int = 0, content_type: str = DEFAULT) -> list[Component]:
    """The ``node-pool`` processes of ``kubedra up --nodes``: ``node-0`` ... in chunks of
    ``per_process`` nodes, state and kubeconfigs under ``DATA/nodes/``."""
    longest = dra_socket_path(data_dir / "nodes" / node_names(1, max(nodes - 1, 0))[0], driver)
    if nodes and len(os.fsencode(longest)) > MAX_SOCKET_PATH:
        raise click.UsageError(f"--data-dir {data_dir} is too deep for the nodes' sockets "
                               f"({longest} exceeds {MAX_SOCKET_PATH} bytes)")
    vflag = ["-" + "v" * verbose] if verbose else []
    out = []
    for first in range(0, nodes, max(per_process, 1)):
        count = min(per_process, nodes - first)
        out.append(Component(
            f"nodes-{first}-{first + count - 1}",
            ["node-pool", "--kubeconfig-dir", str(data_dir / "nodes"),
             "--client-ca-file", str(data_dir / "pki" / "ca.crt"),
             "--root-dir", str(data_dir / "nodes"), "--first", str(first), "--count", str(count),
             "--driver-name", driver, "--instances", str(instances), *vflag,
             *content_type_args(content_type)],
            data_dir / "logs" / f"nodes-{first}.log"))
    return out
