"""``kubedra scheduler``: schedules pods and allocates their structured claims. With leader
election (the default) several replicas can run; only the Lease holder schedules."""

from __future__ import annotations

import asyncio
import logging
import os
import socket

import click

from kubedra.cli.metrics import bound_port, serve_metrics
from kubedra.cli.runtime import run_until_signalled, setup_logging, until_stopped
from kubedra.client import kubeconfig
from kubedra.client.leaderelection import LeaderElectionConfig, LeaderElector
from kubedra.client.rest import Client
from kubedra.scheduler.config import ConfigError, load, resolve
from kubedra.scheduler.scheduler import Scheduler
from kubedra.scheduler.setup import IMPLEMENTS, build_scheduler

log = logging.getLogger("kubedra.scheduler")


@click.command("scheduler")
@click.option("--kubeconfig", "kubeconfig_path", type=click.Path(dir_okay=False),
              help="kubeconfig of the API server (default: $KUBECONFIG or ~/.kube/config)")
@click.option("--scheduler-name", default="default-scheduler", show_default=True)
@click.option("--leader-elect/--no-leader-elect", default=True, show_default=True)
@click.option("--lease-name", default="kube-scheduler", show_default=True)
@click.option("--identity", default="", help="leader-election identity (default: host_pid)")
@click.option("--leader-elect-lease-duration", "lease_duration", default=15.0,
              show_default=True, help="seconds a non-renewed Lease blocks other candidates")
@click.option("--leader-elect-renew-deadline", "renew_deadline", default=10.0,
              show_default=True, help="seconds the leader keeps trying to renew before it stops")
@click.option("--leader-elect-retry-period", "retry_period", default=2.0, show_default=True,
              help="seconds between acquire/renew attempts")
@click.option("--metrics-port", type=int, default=None,
              help="serve Prometheus metrics on 127.0.0.1:PORT/metrics (0 picks a free port)")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="a KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1): "
                   "profiles, plugins per extension point, score weights, "
                   "percentageOfNodesToScore; its profiles replace --scheduler-name")
@click.option("--seed", type=int, default=None,
              help="seed the choice among equally scored nodes, for a reproducible placement")
@click.option("-v", "--verbose", count=True)
def scheduler(kubeconfig_path: str | None, scheduler_name: str, leader_elect: bool,
              lease_name: str, identity: str, lease_duration: float, renew_deadline: float,
              retry_period: float, metrics_port: int | None, config_path: str | None,
              seed: int | None, verbose: int) -> None:
    """Run the scheduler until SIGINT/SIGTERM."""
    setup_logging(verbose)
    profiles = None
    if config_path is not None:
        try:
            profiles = resolve(load(config_path), IMPLEMENTS)
        except ConfigError as e:
            raise click.ClickException(str(e)) from None
    config = kubeconfig.load(kubeconfig_path)
    identity = identity or f"{socket.gethostname()}_{os.getpid()}"

    async def main(stop: asyncio.Event) -> None:
        log.info("Starting Kubernetes Scheduler", {"schedulerName": scheduler_name})
        async with Client(config, user_agent="kubedra-scheduler") as client:
            sched = build_scheduler(client, scheduler_name=scheduler_name, seed=seed,
                                    config=profiles)
            metrics = None
            if metrics_port is not None:
                metrics = await serve_metrics(metrics_port, sched.metrics.registry)
                log.info("Serving metrics", {"address": f"127.0.0.1:{bound_port(metrics)}"})
            try:
                await lead_and_schedule(stop, client, sched)
            finally:
                if metrics is not None:
                    await metrics.cleanup()

    async def lead_and_schedule(stop: asyncio.Event, client: Client, sched: Scheduler) -> None:
        elector = None
        if leader_elect:
            elector = LeaderElector(client, LeaderElectionConfig(
                name=lease_name, identity=identity, lease_duration=lease_duration,
                renew_deadline=renew_deadline, retry_period=retry_period))
            acquired = asyncio.ensure_future(elector.acquire())
            await until_stopped(stop, acquired)
            if stop.is_set():
                return
        work = [sched.run()]
        if elector is not None:
            work.append(elector.keep_renewing())
        try:
            await until_stopped(stop, *work)
        finally:
            await sched.informers.stop()
            if elector is not None and stop.is_set():
                await elector.release()
        if not stop.is_set():
            # As upstream: a replica that lost the Lease exits (to be restarted) rather
            # than keep scheduling next to the new leader.
            raise click.ClickException("leader election lost")

    run_until_signalled(main, control_loop=True)
