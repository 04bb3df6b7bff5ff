"""``kubedra scheduler``: schedules pods and allocates their structured claims. With leader
election (the default) several replicas can run; only the Lease holder schedules."""

from __future__ import annotations

import asyncio
import logging

import click

from kubedra.api.release import R1_34
from kubedra.api.resourceclaim import claim_api
from kubedra.cli.contenttype import content_type_option, wire
from kubedra.cli.leaderelect import leader_election_options, run_as_leader
from kubedra.cli.metrics import bound_port, serve_metrics
from kubedra.cli.runtime import run_until_signalled, setup_logging
from kubedra.client import kubeconfig
from kubedra.client.discovery import discover_release, dra_served
from kubedra.client.leaderelection import LeaderElectionConfig
from kubedra.client.rest import Client
from kubedra.scheduler.config import ConfigError, KubeSchedulerConfiguration, load, resolve
from kubedra.scheduler.setup import IMPLEMENTS, build_scheduler

log = logging.getLogger("kubedra.scheduler")


@click.command("scheduler")
@click.option("--kubeconfig", "kubeconfig_path", type=click.Path(dir_okay=False),
              help="kubeconfig of the API server (default: $KUBECONFIG or ~/.kube/config)")
@click.option("--scheduler-name", default="default-scheduler", show_default=True)
@leader_election_options("kube-scheduler")
@click.option("--metrics-port", type=int, default=None,
              help="serve Prometheus metrics on 127.0.0.1:PORT/metrics (0 picks a free port)")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="a KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1): "
                   "profiles, plugins per extension point, score weights, "
                   "percentageOfNodesToScore, DynamicResources' filterTimeout (1.34); its "
                   "profiles replace --scheduler-name")
@click.option("--seed", type=int, default=None,
              help="seed the choice among equally scored nodes, for a reproducible placement")
@content_type_option
@click.option("-v", "--verbose", count=True)
def scheduler(kubeconfig_path: str | None, scheduler_name: str,
              election: LeaderElectionConfig | None, metrics_port: int | None,
              config_path: str | None, seed: int | None, content_type: str,
              verbose: int) -> None:
    """Run the scheduler until SIGINT/SIGTERM."""
    setup_logging(verbose)
    file: KubeSchedulerConfiguration | None = None
    if config_path is not None:
        try:
            file = load(config_path)
            resolve(file, IMPLEMENTS, R1_34)  # 1.34 takes whatever 1.30 takes, and args
        except ConfigError as e:
            raise click.ClickException(str(e)) from None
    config = kubeconfig.load(kubeconfig_path)

    async def main(stop: asyncio.Event) -> None:
        log.info("Starting Kubernetes Scheduler", {"schedulerName": scheduler_name})
        async with Client(config, user_agent="kubedra-scheduler",
                          wire=wire(content_type)) as client:
            release = await discover_release(client)
            profiles = None
            if file is not None:
                try:  # plugin args are the release's
                    profiles = resolve(file, IMPLEMENTS, release)
                except ConfigError as e:
                    raise click.ClickException(str(e)) from None
            dra = await dra_served(client, "scheduler", "the DynamicResources plugin",
                                   version=claim_api(release).version)
            sched = build_scheduler(client, scheduler_name=scheduler_name, seed=seed,
                                    config=profiles, dra=dra, release=release)
            metrics = None
            if metrics_port is not None:
                metrics = await serve_metrics(metrics_port, sched.metrics.registry)
                log.info("Serving metrics", {"address": f"127.0.0.1:{bound_port(metrics)}"})
            try:
                await run_as_leader(stop, client, election, sched.run)
            finally:
                await sched.informers.stop()
                if metrics is not None:
                    await metrics.cleanup()

    run_until_signalled(main, control_loop=True)
