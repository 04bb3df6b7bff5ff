"""``kubedra example-driver``: run the example DRA driver (upstream's e2e test driver) until
SIGINT/SIGTERM; SIGHUP reloads the ``--config`` instance list."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
from pathlib import Path

import click

from kubedra.cli.runtime import run_until_signalled, setup_logging
from kubedra.driver import SocketPathError
from kubedra.driver.example import build, generated_instances, load_instances, names_of

log = logging.getLogger("kubedra.example-driver")


@click.command("example-driver")
@click.option("--driver-name", required=True, help="DRA driver name, e.g. gpu.example.com")
@click.option("--root-dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("/var/lib/kubelet"), show_default=True,
              help="kubelet root directory (sockets in plugins_registry/ and plugins/<driver>/)")
@click.option("--instances", type=click.IntRange(min=-1), default=0, show_default=True,
              help="instances to publish (instance-00, ...); -1 opts out of ListAndWatch")
@click.option("--cdi-dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("/var/run/cdi"), show_default=True, help="where CDI specs are written")
@click.option("--config", "config", type=click.Path(dir_okay=False, path_type=Path),
              help="YAML file with the instances to publish instead of --instances "
                   "(namedResources shape); reloaded on SIGHUP")
@click.option("--node-name", default=None,
              help="this node's name (default: $NODE_NAME, else the host name)")
@click.option("-v", "--verbose", count=True)
def example_driver(driver_name: str, root_dir: Path, instances: int, cdi_dir: Path,
                   config: Path | None, node_name: str | None, verbose: int) -> None:
    """Run the example DRA driver until SIGINT/SIGTERM."""
    setup_logging(verbose)
    node = node_name or os.environ.get("NODE_NAME") or socket.gethostname()
    publish = instances >= 0
    try:
        initial = load_instances(config) if config is not None and publish else (
            generated_instances(max(instances, 0)))
    except (OSError, ValueError) as err:
        raise click.ClickException(f"--config: {err}") from None
    try:
        driver, example = build(driver_name, root_dir, cdi_dir, node,
                                initial if publish else None)
    except ValueError as err:
        raise click.ClickException(str(err)) from None

    def reload() -> None:
        assert config is not None
        try:
            fresh = load_instances(config)
            driver.publish(fresh)
        except (OSError, ValueError) as err:
            log.error("SIGHUP: keeping the current instances: %s", err)
            return
        example.set_instances(names_of(fresh))
        log.info("SIGHUP: published %d instances from %s", len(fresh), config)

    async def main(stop: asyncio.Event) -> None:
        if config is not None and publish:
            asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, reload)
        try:
            await driver.start()
        except SocketPathError as err:
            raise click.ClickException(str(err)) from None
        try:
            await stop.wait()
        finally:
            await driver.stop()

    run_until_signalled(main)
