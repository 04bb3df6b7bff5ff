"""``kubedra controller-manager``: the ResourceClaim controller (and later the Job
controller) against an API server."""

from __future__ import annotations

import asyncio

import click

from kubedra.cli.runtime import run_until_signalled, setup_logging, until_stopped
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from kubedra.controllers.resourceclaim import ResourceClaimController


@click.command("controller-manager")
@click.option("--kubeconfig", "kubeconfig_path", type=click.Path(dir_okay=False),
              help="kubeconfig of the API server (default: $KUBECONFIG or ~/.kube/config)")
@click.option("--workers", default=4, show_default=True, help="concurrent syncs per controller")
@click.option("-v", "--verbose", count=True)
def controller_manager(kubeconfig_path: str | None, workers: int, verbose: int) -> None:
    """Run the control loops: ResourceClaim (templates, reservations, deallocation)."""
    setup_logging(verbose)
    config = kubeconfig.load(kubeconfig_path)

    async def main(stop: asyncio.Event) -> None:
        async with Client(config, user_agent="kubedra-controller-manager") as client:
            claims = ResourceClaimController(client, workers=workers)
            try:
                await until_stopped(stop, claims.run())
            finally:
                await claims.stop()

    run_until_signalled(main)
