"""Leader election for the replicated components (the scheduler, the controller manager): their
shared ``--leader-elect`` flags, and running a component's work only while it holds the Lease
(:mod:`kubedra.client.leaderelection`)."""

from __future__ import annotations

import asyncio
import functools
import os
import socket
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import click

from kubedra.cli.runtime import until_stopped
from kubedra.client.leaderelection import LeaderElectionConfig, LeaderElector
from kubedra.client.rest import Client

R = TypeVar("R")


def leader_election_options(lease: str) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """The flags; the command then gets ``election``: the Lease ``kube-system/<lease>`` to
    hold, or None under ``--no-leader-elect``."""
    def decorate(command: Callable[..., R]) -> Callable[..., R]:
        @functools.wraps(command)
        def with_election(*args: Any, leader_elect: bool, lease_name: str, identity: str,
                          lease_duration: float, renew_deadline: float, retry_period: float,
                          **kwargs: Any) -> R:
            election = LeaderElectionConfig(
                name=lease_name, identity=identity or f"{socket.gethostname()}_{os.getpid()}",
                lease_duration=lease_duration, renew_deadline=renew_deadline,
                retry_period=retry_period) if leader_elect else None
            return command(*args, election=election, **kwargs)

        decorated: Callable[..., R] = with_election
        for option in reversed([
            click.option("--leader-elect/--no-leader-elect", default=True, show_default=True,
                         help="hold a Lease while working, so one replica of several works"),
            click.option("--leader-elect-resource-name", "--lease-name", "lease_name",
                         default=lease, show_default=True,
                         help="the Lease's name in kube-system"),
            click.option("--identity", default="",
                         help="leader-election identity (default: host_pid)"),
            click.option("--leader-elect-lease-duration", "lease_duration", default=15.0,
                         show_default=True,
                         help="seconds a non-renewed Lease blocks other candidates"),
            click.option("--leader-elect-renew-deadline", "renew_deadline", default=10.0,
                         show_default=True,
                         help="seconds the leader keeps trying to renew before it stops"),
            click.option("--leader-elect-retry-period", "retry_period", default=2.0,
                         show_default=True, help="seconds between acquire/renew attempts"),
        ]):
            decorated = option(decorated)
        return decorated
    return decorate


async def run_as_leader(stop: asyncio.Event, client: Client,
                        election: LeaderElectionConfig | None,
                        work: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Wait for the Lease (unless ``election`` is None), then run ``work()`` while renewing it
    until ``stop``. A clean stop gives the Lease up so another replica takes over at once; a
    replica that lost it exits (as upstream: to be restarted) rather than keep working next
    to the new leader."""
    elector = None
    if election is not None:
        elector = LeaderElector(client, election)
        acquired = asyncio.ensure_future(elector.acquire())
        await until_stopped(stop, acquired)
        if stop.is_set():
            return
    jobs = [work()]
    if elector is not None:
        jobs.append(elector.keep_renewing())
    try:
        await until_stopped(stop, *jobs)
    finally:
        if elector is not None and stop.is_set():
            await elector.release()
    if not stop.is_set():
        raise click.ClickException("leader election lost")
