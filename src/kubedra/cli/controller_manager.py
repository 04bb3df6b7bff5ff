"""``kubedra controller-manager``: the ResourceClaim, Job, TTL-after-finished, node lifecycle
and taint eviction controllers against an API server, with their Prometheus metrics on
``--metrics-port``. With leader election (the default) several replicas can run; only the
holder of the Lease ``kube-system/kube-controller-manager`` runs the controllers."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import Any, Protocol

import click

from kubedra.api.batch import Job
from kubedra.api.core import Pod
from kubedra.api.features import FeatureGateError, FeatureGates, parse_feature_gates
from kubedra.api.release import RELEASES, Release
from kubedra.api.resourceclaim import claim_api
from kubedra.cli.contenttype import content_type_option, wire
from kubedra.cli.duration import Duration
from kubedra.cli.leaderelect import leader_election_options, run_as_leader
from kubedra.cli.metrics import bound_port, serve_metrics
from kubedra.cli.runtime import run_until_signalled, setup_logging
from kubedra.client import kubeconfig
from kubedra.client.discovery import discover_release, dra_served
from kubedra.client.informer import Informers, run_informed
from kubedra.client.leaderelection import LeaderElectionConfig
from kubedra.client.rest import Client
from kubedra.controllers.job.controller import JobController, JobControllerConfig
from kubedra.controllers.job.ttl import TTLAfterFinishedController
from kubedra.controllers.nodelifecycle import NodeLifecycleConfig, NodeLifecycleController
from kubedra.controllers.resourceclaim import RESOURCE_CLAIM_WORKERS, ResourceClaimController
from kubedra.controllers.tainteviction import TaintEvictionController

CONTROLLERS = ("job-controller", "node-lifecycle-controller", "resourceclaim-controller",
               "taint-eviction-controller", "ttl-after-finished-controller")
"""Upstream's names, for ``--controllers``."""


def _check_gates(value: str) -> None:
    """Refuse at once a ``--feature-gates`` value no release takes (which release's defaults
    it applies to is learnt from the server later)."""
    errors = []
    for release in RELEASES:
        try:
            parse_feature_gates(value, FeatureGates.for_release(release))
            return
        except FeatureGateError as err:
            errors.append(err)
    raise click.BadParameter(str(errors[0]), param_hint="--feature-gates")


def _gates(value: str, release: Release) -> FeatureGates:
    """``--feature-gates`` over the defaults of the release the server emulates."""
    try:
        return parse_feature_gates(value, FeatureGates.for_release(release))
    except FeatureGateError as err:
        raise click.BadParameter(str(err), param_hint="--feature-gates") from None


def _controllers(value: str) -> frozenset[str]:
    """``--controllers``: ``*`` is every controller, ``NAME`` adds one, ``-NAME`` takes one
    away."""
    names = [n.strip() for n in value.split(",") if n.strip()]
    for name in names:
        if name != "*" and name.lstrip("-") not in CONTROLLERS:
            raise click.BadParameter(f'"{name.lstrip("-")}" is not in the list of known '
                                     f"controllers", param_hint="--controllers")
    enabled = {n for n in names if not n.startswith("-")}
    if "*" in enabled:
        enabled |= set(CONTROLLERS)
    return frozenset(enabled - {"*"} - {n[1:] for n in names if n.startswith("-")})


@click.command("controller-manager")
@click.option("--kubeconfig", "kubeconfig_path", type=click.Path(dir_okay=False),
              help="kubeconfig of the API server (default: $KUBECONFIG or ~/.kube/config)")
@click.option("--workers", default=4, show_default=True,
              help="concurrent syncs of the Job and TTL-after-finished controllers")
@click.option("--concurrent-resource-claim-syncs", "claim_workers", type=click.IntRange(min=1),
              default=RESOURCE_CLAIM_WORKERS, show_default=True,
              help="concurrent syncs of the ResourceClaim controller (upstream v1.30 runs 10)")
@click.option("--feature-gates", default="",
              help="A=true,B=false (upstream gate names; JobManagedBy decides whether Jobs "
                   "with a custom spec.managedBy are left to their controller)")
@click.option("--metrics-port", type=click.IntRange(0, 65535), default=None,
              help="serve Prometheus metrics on 127.0.0.1:PORT/metrics (0: a free port, "
                   "printed on stderr)")
@click.option("--job-pod-failure-backoff", type=click.FloatRange(min=0), default=10.0,
              show_default=True, help="seconds before re-creating a Job's first failed pod "
                                      "(doubling per further failure)")
@click.option("--job-pod-failure-backoff-max", type=click.FloatRange(min=0), default=600.0,
              show_default=True, help="cap of the pod re-creation back-off, seconds")
@click.option("--job-sync-batch-period", type=click.FloatRange(min=0), default=1.0,
              show_default=True, help="seconds pod events of one Job are batched into a sync")
@click.option("--controllers", default="*", show_default=True,
              help="controllers to run: * for all, NAME to add one, -NAME to leave one out "
                   f"({', '.join(CONTROLLERS)})")
@click.option("--node-monitor-period", type=Duration(), default="5s", show_default=True,
              help="how often the node lifecycle controller judges the Nodes' health")
@click.option("--node-monitor-grace-period", type=Duration(), default="40s",
              show_default=True, help="how long a Node may go without a Lease renewal or a "
                                      "Ready heartbeat before its conditions become Unknown")
@click.option("--node-startup-grace-period", type=Duration(), default="1m0s",
              show_default=True, help="the same for a Node that never posted its status, "
                                      "counted from its creation")
@click.option("--node-eviction-rate", type=click.FloatRange(min=0), default=0.1,
              show_default=True, help="Nodes per second given the NoExecute taint, per zone")
@click.option("--secondary-node-eviction-rate", type=click.FloatRange(min=0), default=0.01,
              show_default=True, help="the same in a partially disrupted zone of a large "
                                      "cluster")
@click.option("--unhealthy-zone-threshold", type=click.FloatRange(0, 1), default=0.55,
              show_default=True, help="share of unready Nodes (more than 2) that makes a zone "
                                      "partially disrupted")
@click.option("--large-cluster-size-threshold", type=click.IntRange(min=0), default=50,
              show_default=True, help="Nodes above which a zone counts as large")
@leader_election_options("kube-controller-manager")
@content_type_option
@click.option("-v", "--verbose", count=True)
def controller_manager(kubeconfig_path: str | None, workers: int, claim_workers: int,
                       feature_gates: str, metrics_port: int | None, job_pod_failure_backoff: float,
                       job_pod_failure_backoff_max: float, job_sync_batch_period: float,
                       controllers: str, node_monitor_period: float,
                       node_monitor_grace_period: float, node_startup_grace_period: float,
                       node_eviction_rate: float, secondary_node_eviction_rate: float,
                       unhealthy_zone_threshold: float, large_cluster_size_threshold: int,
                       election: LeaderElectionConfig | None, content_type: str,
                       verbose: int) -> None:
    """Run the control loops: ResourceClaim, Job, TTL after finished, node lifecycle, taint
    eviction."""
    setup_logging(verbose)
    _check_gates(feature_gates)
    enabled = _controllers(controllers)
    node_config = NodeLifecycleConfig(
        monitor_period=node_monitor_period, grace_period=node_monitor_grace_period,
        startup_grace_period=node_startup_grace_period, eviction_rate=node_eviction_rate,
        secondary_eviction_rate=secondary_node_eviction_rate,
        unhealthy_zone_threshold=unhealthy_zone_threshold,
        large_cluster_size_threshold=large_cluster_size_threshold)
    config = kubeconfig.load(kubeconfig_path)

    async def main(stop: asyncio.Event) -> None:
        runner = None
        if metrics_port is not None:
            runner = await serve_metrics(metrics_port)
            print(f"metrics on http://127.0.0.1:{bound_port(runner)}/metrics", file=sys.stderr,
                  flush=True)
        async with Client(config, user_agent="kubedra-controller-manager",
                          wire=wire(content_type)) as client:
            release = await discover_release(client)
            gates = _gates(feature_gates, release)
            job_config = JobControllerConfig(
                gates=gates, workers=workers,
                sync_batch_period=job_sync_batch_period,
                pod_backoff_base=job_pod_failure_backoff,
                pod_backoff_max=job_pod_failure_backoff_max)
            claims = "resourceclaim-controller" in enabled and await dra_served(
                client, "controller-manager", "the resourceclaim-controller",
                claim_api(release).version)
            # one watch per kind for all the controllers, cached without managedFields
            # (kube-controller-manager's shared informers trim them)
            informers = Informers(client, trim_managed_fields=True)
            running: list[Controller] = []
            if claims:
                running.append(ResourceClaimController(client, release=release, gates=gates,
                                                       workers=claim_workers,
                                                       informers=informers))
            stopping: list[Callable[[], Awaitable[None]]] = [informers.stop]
            jobs = None
            if enabled & {"job-controller", "ttl-after-finished-controller"}:
                jobs = JobController(client, job_config, jobs=informers.get(Job),
                                     pods=informers.get(Pod))
                stopping.append(jobs.stop)
                if "job-controller" in enabled:
                    running.append(jobs)
                if "ttl-after-finished-controller" in enabled:
                    running.append(TTLAfterFinishedController(client, jobs.jobs,
                                                              workers=workers))
            if "node-lifecycle-controller" in enabled:
                nodes = NodeLifecycleController(client, informers, node_config)
                running.append(nodes)
                stopping.append(nodes.stop)
            if "taint-eviction-controller" in enabled:
                evictions = TaintEvictionController(client, informers)
                running.append(evictions)
                stopping.append(evictions.stop)

            async def run_all() -> None:
                # Jobs are listed before the shared pods, as the Job controller needs (see
                # JobController.run), whichever controller starts the pod informer.
                first = [jobs.jobs] if jobs is not None else []
                await run_informed(first, lambda: _gather(c.run() for c in running))

            try:
                await run_as_leader(stop, client, election, run_all)
            finally:
                for close in stopping:
                    await close()
                if runner is not None:
                    with contextlib.suppress(Exception):
                        await runner.cleanup()

    run_until_signalled(main, control_loop=True)


class Controller(Protocol):
    async def run(self) -> None: ...


async def _gather(work: Iterable[Coroutine[Any, Any, None]]) -> None:
    await asyncio.gather(*work)
