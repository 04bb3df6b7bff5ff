"""``kubedra up``: a whole local cluster in one command.

Starts the API server on the embedded SQLite store (or on etcd: ``--etcd-servers``, or
``--etcd`` for a local etcd with its data in the data dir; ``--apiservers N`` replicas over it),
the scheduler and the controller manager as separate processes (so both cores are used),
writes a kubeconfig, optionally creates fake Nodes with ResourceSlices, and stops everything
cleanly on Ctrl-C, SIGTERM or SIGHUP. A component that exits is restarted; one that keeps
exiting stops the cluster. A second ``up`` on the same data dir or port fails at once, without
touching the running cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

import click

from kubedra.api.release import DEFAULT_RELEASE, ReleaseError, parse_release
from kubedra.cli.contenttype import content_type_option
from kubedra.cli.fakenodes import create_fake_nodes, keep_alive, slices_served
from kubedra.cli.kubectl import DEFAULT as KUBECTL_DEFAULT
from kubedra.cli.kubectl import RELEASES as KUBECTL_RELEASES
from kubedra.cli.kubectl import cached_kubectl
from kubedra.cli.localcluster import ClusterError, LocalCluster
from kubedra.cli.nodepool import node_names, pool_components
from kubedra.cli.runtime import run_until_signalled, setup_logging, until_stopped
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from kubedra.storage.etcd.server import EtcdNotFoundError, describe_etcd

RESTART_LIMIT = 5


@click.command("up")
@click.option("--data-dir", type=click.Path(file_okay=False), default="kubedra-data",
              show_default=True, help="where the SQLite store, kubeconfig and logs live")
@click.option("--port", default=6443, show_default=True,
              help="API server port on 127.0.0.1 (with several replicas, their front's)")
@click.option("--fake-nodes", default=0, show_default=True,
              help="create this many Nodes (no node agent needed), on 1.30 each with a "
                   "ResourceSlice of GPU-like instances (1.34: Nodes only)")
@click.option("--nodes", default=0, show_default=True,
              help="run this many simulated nodes (node-0, ...): node agents, each with the "
                   "example driver publishing its devices (1.30: instances)")
@click.option("--nodes-per-process", default=25, show_default=True,
              help="node agents hosted by one process")
@click.option("--instances", default=8, show_default=True,
              help="devices (1.34) or named-resource instances (1.30) per node (fake or "
                   "simulated)")
@click.option("--driver", default="gpu.example.com", show_default=True,
              help="driver name of the nodes' ResourceSlices")
@click.option("--feature-gates", default="JobManagedBy=true", show_default=True,
              help="passed to the API server and the controller manager (the release's "
                   "upstream defaults apply to the rest)")
@click.option("--emulated-version", default=DEFAULT_RELEASE.name, show_default=True,
              help="the Kubernetes release the cluster serves: 1.34 (resource.k8s.io/v1) or "
                   "1.30 (resource.k8s.io/v1alpha2); the components learn it from discovery")
@click.option("--runtime-config", default="",
              help="passed to the API server: group/version=true|false[,...] "
                   "(resource.k8s.io/v1beta1=true)")
@click.option("--etcd-servers", default=None,
              help="store objects in this etcd cluster (http://host:port[,...]) instead of "
                   "the SQLite file")
@click.option("--etcd", "local_etcd", is_flag=True,
              help="run a local etcd (the bundled binary; data in the data dir) and store "
                   "objects there")
@click.option("--apiservers", default=1, show_default=True, type=click.IntRange(1),
              help="API server replicas (more than one needs etcd), behind a front on --port "
                   "that every client dials: the cluster works while any one is down")
@click.option("--scheduler-metrics-port", type=int, default=None,
              help="the scheduler serves Prometheus metrics on 127.0.0.1:PORT/metrics")
@click.option("--seed", type=int, default=None,
              help="passed to the scheduler: equally scored nodes are drawn reproducibly")
@click.option("--scheduler-config", type=click.Path(exists=True, dir_okay=False),
              default=None, help="passed to the scheduler as --config "
                                 "(a KubeSchedulerConfiguration file)")
@click.option("--controller-manager-metrics-port", type=int, default=None,
              help="the controller manager serves Prometheus metrics on "
                   "127.0.0.1:PORT/metrics (0: a free port, in its log)")
@content_type_option
@click.option("-v", "--verbose", count=True)
def up(data_dir: str, port: int, fake_nodes: int, nodes: int, nodes_per_process: int,
       instances: int, driver: str, feature_gates: str, emulated_version: str,
       runtime_config: str, etcd_servers: str | None,
       local_etcd: bool, apiservers: int, scheduler_metrics_port: int | None,
       seed: int | None, scheduler_config: str | None,
       controller_manager_metrics_port: int | None, content_type: str, verbose: int) -> None:
    """Run a local cluster until Ctrl-C."""
    setup_logging(verbose)
    try:
        release = parse_release(emulated_version)
    except ReleaseError as err:
        raise click.BadParameter(str(err), param_hint="--emulated-version") from None
    if local_etcd and etcd_servers:
        raise click.UsageError("--etcd and --etcd-servers exclude each other")
    if nodes and fake_nodes:
        raise click.UsageError(
            "--nodes and --fake-nodes exclude each other: both make the Nodes node-0, node-1, "
            "..., and an agent would take over a fake Node; choose one")
    scheduler_args = _metrics_args(scheduler_metrics_port)
    if seed is not None:
        scheduler_args += ["--seed", str(seed)]
    if scheduler_config is not None:
        scheduler_args += ["--config", str(Path(scheduler_config).resolve())]
    try:
        if local_etcd:
            click.echo(describe_etcd())
        cluster = LocalCluster(Path(data_dir).resolve(), port=port, verbose=verbose,
                               feature_gates=feature_gates, emulated_version=release.name,
                               runtime_config=runtime_config, scheduler_args=scheduler_args,
                               controller_manager_args=_metrics_args(
                                   controller_manager_metrics_port),
                               etcd_servers=etcd_servers,
                               etcd_members=1 if local_etcd else 0, apiservers=apiservers,
                               content_type=content_type)
    except (ClusterError, EtcdNotFoundError) as e:
        raise click.UsageError(str(e)) from e
    cluster.node_names = node_names(nodes)
    cluster.others += pool_components(cluster.data_dir, nodes, nodes_per_process, instances,
                                      driver, verbose, content_type)

    async def main(stop: asyncio.Event) -> None:
        try:
            await cluster.start()
        except ClusterError as e:  # nothing is running: one line says why
            await cluster.stop()
            raise click.ClickException(str(e)) from e
        try:
            async with Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
                if fake_nodes:
                    await create_fake_nodes(client, fake_nodes, instances, driver,
                                            attributes=True, slices=await slices_served(client))
                await _up(stop, cluster, client, node_names(fake_nodes))
        finally:
            await cluster.stop()
            click.echo("kubedra stopped.")

    async def _up(stop: asyncio.Event, cluster: LocalCluster, client: Client,
                  fakes: list[str]) -> None:
        replicas = (f" (front of {', '.join(cluster.servers)})"
                    if cluster.front is not None else "")
        click.echo(
            f"kubedra is up: API server {cluster.server}{replicas}, "
            f"data in {cluster.data_dir}\n"
            f"  export KUBECONFIG={cluster.kubeconfig_path}\n"
            f"  kubectl get nodes,resourceslices\n"
            f"  kubectl apply -f {EXAMPLES[release.name]}\n"
            f"{_kubectl_line(release.name)}\n"
            f"logs: {cluster.data_dir / 'logs'}. Press Ctrl-C to stop.")
        # the fake Nodes' heartbeat, so the node lifecycle controller sees them alive
        await until_stopped(stop, supervise(stop, cluster),
                            keep_alive(client, fakes, release.git_version))

    run_until_signalled(main)


EXAMPLES = {"1.30": "examples/", "1.34": "examples/v1.34/"}
"""The repository's example manifests for each release's DRA API."""


def _kubectl_line(release: str) -> str:
    """Where the kubectl of the emulated release is (or how to fetch it)."""
    version = KUBECTL_RELEASES[release].version
    binary = cached_kubectl(release)
    if binary is None:
        fetch = ("`make kubectl` (kubedra fetch-kubectl)" if release == KUBECTL_DEFAULT
                 else f"`kubedra fetch-kubectl --version {release}`")
        return f"kubectl {version}: {fetch} fetches it"
    return f"kubectl {version}: {binary}"


def _metrics_args(port: int | None) -> list[str]:
    return [] if port is None else ["--metrics-port", str(port)]


async def supervise(stop: asyncio.Event, cluster: LocalCluster) -> None:
    """Restart components that exit; give up (and stop all) when one keeps failing."""
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.5)
        for c in cluster.components:
            proc = c.process
            if stop.is_set() or proc is None or proc.returncode is None:
                continue
            if time.monotonic() - c.started_at > 60:
                c.restarts = 0
            c.restarts += 1
            if c.restarts > RESTART_LIMIT:
                click.echo(f"{c.name} keeps exiting (see {c.log_path}); stopping.", err=True)
                stop.set()
                return
            click.echo(f"{c.name} exited with {proc.returncode}; restarting.", err=True)
            await c.start()
