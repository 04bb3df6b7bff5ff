"""``kubedra example-driver``: run the example DRA driver (upstream's e2e test driver) until
SIGINT/SIGTERM; SIGHUP reloads the ``--config`` instance (1.30) or device (1.34) list. With
``--kubeconfig`` of a 1.34 API server it is a 1.34 driver: it reads claims from the API and
publishes its devices as ResourceSlices; without, or on a 1.30 server, a 1.30 one."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
from pathlib import Path

import click

from kubedra.api.release import R1_34
from kubedra.api.resource import v1
from kubedra.cli.runtime import run_until_signalled, setup_logging
from kubedra.client import kubeconfig as kubeconfig_file
from kubedra.client.rest import Client
from kubedra.driver import Driver, SocketPathError
from kubedra.driver.example import (
    ExampleDriver,
    build,
    generated_devices,
    generated_instances,
    load_devices,
    load_instances,
    names_of,
    publish_devices,
    publish_when_registered,
)

log = logging.getLogger("kubedra.example-driver")


@click.command("example-driver")
@click.option("--driver-name", required=True, help="DRA driver name, e.g. gpu.example.com")
@click.option("--root-dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("/var/lib/kubelet"), show_default=True,
              help="kubelet root directory (sockets in plugins_registry/ and plugins/<driver>/)")
@click.option("--instances", type=click.IntRange(min=-1), default=0, show_default=True,
              help="instances (1.30: instance-00, ...) or devices (1.34: device-00, ...) to "
                   "publish; -1 publishes none (1.30: opts out of ListAndWatch)")
@click.option("--cdi-dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("/var/run/cdi"), show_default=True, help="where CDI specs are written")
@click.option("--config", "config", type=click.Path(dir_okay=False, path_type=Path),
              help="YAML file with what to publish instead of --instances (1.30: "
                   "namedResources shape, 1.34: a ResourceSlice spec's devices); reloaded "
                   "on SIGHUP")
@click.option("--node-name", default=None,
              help="this node's name (default: $NODE_NAME, else the host name)")
@click.option("--kubeconfig", "kubeconfig_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="kubeconfig of the API server; on a 1.34 server the driver "
                                 "is a 1.34 one (without: a 1.30 driver)")
@click.option("-v", "--verbose", count=True)
def example_driver(driver_name: str, root_dir: Path, instances: int, cdi_dir: Path,
                   config: Path | None, node_name: str | None, kubeconfig_path: Path | None,
                   verbose: int) -> None:
    """Run the example DRA driver until SIGINT/SIGTERM."""
    setup_logging(verbose)
    node = node_name or os.environ.get("NODE_NAME") or socket.gethostname()
    publish = instances >= 0
    try:
        api = kubeconfig_file.load(kubeconfig_path) if kubeconfig_path is not None else None
    except (OSError, ValueError) as err:
        raise click.ClickException(f"--kubeconfig: {err}") from None
    # the file's shape depends on the era, known from the server once started
    early = config if api is None else None
    try:
        initial = load_instances(early) if early is not None and publish else (
            generated_instances(max(instances, 0)))
    except (OSError, ValueError) as err:
        raise click.ClickException(f"--config: {err}") from None

    def devices() -> list[v1.Device]:
        return load_devices(config) if config is not None else generated_devices(
            max(instances, 0))

    def published(driver: Driver, example: ExampleDriver) -> None:
        """1.30: the instances of a ``--config`` read only now, once the era is known."""
        if config is not None and early is None:
            fresh = load_instances(config)
            driver.publish(fresh)
            example.set_instances(names_of(fresh))

    def reload(driver: Driver, example: ExampleDriver) -> None:
        assert config is not None
        try:
            if driver.release is R1_34:
                fresh_devices = devices()
                publish_devices(driver, example, fresh_devices)
                log.info("SIGHUP: publishing %d devices from %s", len(fresh_devices), config)
                return
            fresh = load_instances(config)
            driver.publish(fresh)
        except (OSError, ValueError) as err:
            log.error("SIGHUP: keeping the current instances: %s", err)
            return
        example.set_instances(names_of(fresh))
        log.info("SIGHUP: published %d instances from %s", len(fresh), config)

    async def run(stop: asyncio.Event, client: Client | None) -> None:
        try:
            driver, example = build(driver_name, root_dir, cdi_dir, node,
                                    initial if publish else None, client)
        except ValueError as err:
            raise click.ClickException(str(err)) from None
        try:
            await driver.start()
        except (SocketPathError, RuntimeError) as err:
            raise click.ClickException(str(err)) from None
        try:
            if publish:
                try:
                    initial_devices = devices() if driver.release is R1_34 else []
                    published(driver, example)
                except (OSError, ValueError) as err:
                    raise click.ClickException(f"--config: {err}") from None
                if driver.release is R1_34 and await publish_when_registered(
                        driver, example, initial_devices, stop):
                    log.info("publishing %d devices in pool %s", len(initial_devices), node)
            if config is not None and publish:
                asyncio.get_running_loop().add_signal_handler(
                    signal.SIGHUP, reload, driver, example)
            await stop.wait()
        finally:
            await driver.stop()

    async def main(stop: asyncio.Event) -> None:
        if api is None:
            await run(stop, None)
            return
        async with Client(api, user_agent=f"kubedra-example-driver/{node}") as client:
            await run(stop, client)

    run_until_signalled(main)
