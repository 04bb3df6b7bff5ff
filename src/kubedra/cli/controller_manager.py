"""``kubedra controller-manager``: the ResourceClaim, Job and TTL-after-finished controllers
against an API server, with their Prometheus metrics on ``--metrics-port``."""

from __future__ import annotations

import asyncio
import contextlib
import sys

import click

from kubedra.api.batch import Job
from kubedra.api.core import Pod
from kubedra.api.features import FeatureGateError, FeatureGates, parse_feature_gates
from kubedra.cli.metrics import bound_port, serve_metrics
from kubedra.cli.runtime import run_until_signalled, setup_logging, until_stopped
from kubedra.client import kubeconfig
from kubedra.client.informer import Informers, run_informed
from kubedra.client.rest import Client
from kubedra.controllers.job.controller import JobController, JobControllerConfig
from kubedra.controllers.job.ttl import TTLAfterFinishedController
from kubedra.controllers.resourceclaim import RESOURCE_CLAIM_WORKERS, ResourceClaimController


def _gates(value: str) -> FeatureGates:
    try:
        return parse_feature_gates(value)
    except FeatureGateError as err:
        raise click.BadParameter(str(err), param_hint="--feature-gates") from None


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
@click.option("-v", "--verbose", count=True)
def controller_manager(kubeconfig_path: str | None, workers: int, claim_workers: int,
                       feature_gates: str, metrics_port: int | None, job_pod_failure_backoff: float,
                       job_pod_failure_backoff_max: float, job_sync_batch_period: float,
                       verbose: int) -> None:
    """Run the control loops: ResourceClaim, Job, TTL after finished."""
    setup_logging(verbose)
    job_config = JobControllerConfig(
        gates=_gates(feature_gates), workers=workers, sync_batch_period=job_sync_batch_period,
        pod_backoff_base=job_pod_failure_backoff, pod_backoff_max=job_pod_failure_backoff_max)
    config = kubeconfig.load(kubeconfig_path)

    async def main(stop: asyncio.Event) -> None:
        runner = None
        if metrics_port is not None:
            runner = await serve_metrics(metrics_port)
            print(f"metrics on http://127.0.0.1:{bound_port(runner)}/metrics", file=sys.stderr,
                  flush=True)
        async with Client(config, user_agent="kubedra-controller-manager") as client:
            # one watch per kind for all three controllers, cached without managedFields
            # (kube-controller-manager's shared informers trim them)
            informers = Informers(client, trim_managed_fields=True)
            claims = ResourceClaimController(client, workers=claim_workers,
                                             informers=informers)
            jobs = JobController(client, job_config, jobs=informers.get(Job),
                                 pods=informers.get(Pod))
            ttl = TTLAfterFinishedController(client, jobs.jobs, workers=workers)
            try:
                # Jobs are listed before the shared pods, as the Job controller needs (see
                # JobController.run), whichever controller starts the pod informer.
                await run_informed([jobs.jobs], lambda: until_stopped(
                    stop, claims.run(), jobs.run(), ttl.run()))
            finally:
                await claims.stop()
                await jobs.stop()
                if runner is not None:
                    with contextlib.suppress(Exception):
                        await runner.cleanup()

    run_until_signalled(main, control_loop=True)
