"""``kubedra kubelet``: one node agent (the kubelet's DRA half over a simulated container
runtime) until SIGINT/SIGTERM. Drivers register through ``ROOT/plugins_registry``."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

import click

from kubedra.api.core import TAINT_EFFECTS, Taint
from kubedra.api.quantity import Quantity, QuantityError
from kubedra.api.resourceclaim import claim_api
from kubedra.cli.contenttype import content_type_option, wire
from kubedra.cli.duration import Duration
from kubedra.cli.runtime import run_until_signalled, setup_logging, until_stopped
from kubedra.client import kubeconfig
from kubedra.client.discovery import discover_release, dra_served
from kubedra.client.rest import Client
from kubedra.kubelet.agent import NodeAgent
from kubedra.kubelet.checkpoint import CheckpointError
from kubedra.kubelet.holder import RootDirInUse
from kubedra.kubelet.logserver import serving_context
from kubedra.kubelet.node import NodeClaimed, NodeConfig
from kubedra.kubelet.slicewipe import WIPING_DELAY


def parse_label(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise click.BadParameter(f"{text!r}: want KEY=VALUE")
    return key, value


def parse_taint(text: str) -> Taint:
    """``KEY[=VALUE]:EFFECT``, as ``kubectl taint`` and ``--register-with-taints``."""
    head, sep, effect = text.rpartition(":")
    key, _, value = head.partition("=")
    if not sep or not key or effect not in TAINT_EFFECTS:
        raise click.BadParameter(f"{text!r}: want KEY[=VALUE]:EFFECT with EFFECT one of "
                                 f"{', '.join(sorted(TAINT_EFFECTS))}")
    return Taint(key=key, value=value or None, effect=effect)


def node_options(f: click.decorators.FC) -> click.decorators.FC:
    """The Node's shape, shared by every command that runs node agents."""
    for option in reversed([
        click.option("--cpu", default="4", show_default=True, help="cpu capacity"),
        click.option("--memory", default="32Gi", show_default=True, help="memory capacity"),
        click.option("--pods", default="110", show_default=True, help="pod capacity"),
        click.option("--label", "labels", multiple=True, metavar="KEY=VALUE",
                     help="extra Node label (repeatable)"),
        click.option("--taint", "taints", multiple=True, metavar="KEY[=VALUE]:EFFECT",
                     help="Node taint registered with the Node (repeatable)"),
    ]):
        f = option(f)
    return f


def node_config(name: str, cpu: str, memory: str, pods: str, labels: tuple[str, ...],
                taints: tuple[str, ...]) -> NodeConfig:
    for flag, value in (("--cpu", cpu), ("--memory", memory), ("--pods", pods)):
        try:
            Quantity.parse(value)
        except QuantityError as e:
            raise click.BadParameter(f"{flag} {value!r}: {e}") from None
    return NodeConfig(name=name, cpu=cpu, memory=memory, pods=pods,
                      labels=dict(parse_label(label) for label in labels),
                      taints=[parse_taint(t) for t in taints])


def tls_options(f: click.decorators.FC) -> click.decorators.FC:
    """Where the node agent serves its containers' logs from (the kubelet's flags)."""
    for option in reversed([
        click.option("--tls-cert-file", type=click.Path(dir_okay=False, exists=True,
                                                        path_type=Path), default=None,
                     help="serving certificate for /containerLogs (the API server's pods/log); "
                     "without it no logs are served"),
        click.option("--tls-private-key-file", type=click.Path(dir_okay=False, exists=True,
                                                               path_type=Path), default=None,
                     help="its private key"),
        click.option("--client-ca-file", type=click.Path(dir_okay=False, exists=True,
                                                         path_type=Path), default=None,
                     help="CA of the API server's kubelet client certificate"),
    ]):
        f = option(f)
    return f


def serving(cert: Path | None, key: Path | None, client_ca: Path | None) -> ssl.SSLContext | None:
    """The log server's TLS from the three files, all or none given."""
    given = [p for p in (cert, key, client_ca) if p is not None]
    if not given:
        return None
    if cert is None or key is None or client_ca is None:
        raise click.UsageError("--tls-cert-file, --tls-private-key-file and --client-ca-file "
                               "go together")
    try:
        return serving_context(cert, key, client_ca)
    except (OSError, ssl.SSLError) as e:
        raise click.BadParameter(str(e), param_hint="--tls-cert-file") from None


@click.command("kubelet")
@click.option("--kubeconfig", "kubeconfig_path", type=click.Path(dir_okay=False),
              help="kubeconfig of the API server (default: $KUBECONFIG or ~/.kube/config)")
@click.option("--node-name", required=True, help="name of the Node this agent registers")
@click.option("--root-dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="state directory: plugins_registry/, dra_manager_state")
@node_options
@tls_options
@content_type_option
@click.option("--dra-slice-wiping-delay", "wiping_delay", type=Duration(),
              default=f"{WIPING_DELAY:.0f}s", show_default=True,
              help="1.34: how long a DRA driver may stay unregistered before its "
                   "ResourceSlices of this node are deleted (the kubelet's fixed wipingDelay)")
@click.option("-v", "--verbose", count=True)
def kubelet(kubeconfig_path: str | None, node_name: str, root_dir: Path, cpu: str, memory: str,
            pods: str, labels: tuple[str, ...], taints: tuple[str, ...],
            tls_cert_file: Path | None, tls_private_key_file: Path | None,
            client_ca_file: Path | None, content_type: str, wiping_delay: float,
            verbose: int) -> None:
    """Run a node agent until SIGINT/SIGTERM."""
    setup_logging(verbose)
    config = node_config(node_name, cpu, memory, pods, labels, taints)
    tls = serving(tls_cert_file, tls_private_key_file, client_ca_file)
    api = kubeconfig.load(kubeconfig_path)

    async def main(stop: asyncio.Event) -> None:
        async with Client(api, user_agent=f"kubedra-kubelet/{node_name}",
                          wire=wire(content_type)) as client:
            release = await discover_release(client)
            config.kubelet_version = release.git_version
            dra = await dra_served(client, "kubelet", version=claim_api(release).version)
            try:
                agent = NodeAgent(client, config, root_dir.absolute(), dra=dra, release=release,
                                  serving=tls, wiping_delay=wiping_delay)
            except CheckpointError as e:
                raise click.ClickException(f"failed to create claimInfo cache: error calling "
                                           f"GetOrCreate() on checkpoint state: {e}") from None
            try:
                await until_stopped(stop, agent.run())
            except (NodeClaimed, RootDirInUse) as e:
                raise click.ClickException(str(e)) from None

    run_until_signalled(main, control_loop=True)
