"""``kubedra apiserver``: serve the API over the embedded SQLite store (or an etcd cluster,
shared by several replicas) and write a kubeconfig that kubectl and the official Python
client can use."""

from __future__ import annotations

import asyncio
import logging
import secrets
import ssl
import sys
from dataclasses import replace
from pathlib import Path

import click

from kubedra.api.features import FeatureGateError, parse_feature_gates
from kubedra.api.quantity import Quantity, QuantityError
from kubedra.apiserver import tls as serving
from kubedra.apiserver.app import ApiServer, Options
from kubedra.apiserver.auth import AuthFileError, load_token_file
from kubedra.apiserver.authz.chain import ModeError, parse_modes
from kubedra.cli.runtime import run_until_signalled, setup_logging, until_stopped
from kubedra.cli.singletons import collect_while_leading, replica_identity
from kubedra.client import kubeconfig as kubeconfig_file
from kubedra.storage.contract import StoreError
from kubedra.storage.etcd import EtcdConfig, EtcdConfigError
from kubedra.storage.factory import open_store

log = logging.getLogger("kubedra.apiserver")


async def serve(
    stop: asyncio.Event, data_dir: Path, host: str, port: int, kubeconfig: Path | None,
    options: Options, tls: bool, compaction: tuple[float, int] = (300.0, 1000),
    etcd: EtcdConfig | None = None,
) -> None:
    """Serve until ``stop`` is set; the kubeconfig is written once the port is bound."""
    data_dir.mkdir(parents=True, exist_ok=True)
    store = await open_store(data_dir, etcd, compact_interval=compaction[0],
                             retain=compaction[1])
    if etcd is not None:  # replicas may share the cluster: the Lease holder collects garbage
        options = replace(options, gc=False)
    server = ApiServer(store, options)
    ssl_ctx: ssl.SSLContext | None = None
    ca_pem: bytes | None = None
    ca_file: str | None = None
    if tls:
        cert = serving.self_signed(data_dir, host)
        ssl_ctx = cert.server_context()
        ca_pem = cert.cert.read_bytes()
        ca_file = str(cert.cert)
    try:
        bound = await server.start(host, port, ssl_context=ssl_ctx)
        url = f"{'https' if tls else 'http'}://{host}:{bound}"
        if kubeconfig is not None:
            kubeconfig_file.write(kubeconfig, url, token=options.token, ca_pem=ca_pem)
        print(f"kubedra apiserver listening on {url}", file=sys.stderr, flush=True)
        if etcd is None:
            await stop.wait()
        else:
            loopback = kubeconfig_file.ClientConfig(server=url, token=options.token,
                                                    ca_file=ca_file)
            await until_stopped(stop, collect_while_leading(server, loopback,
                                                            replica_identity(bound)))
        log.info("shutting down")
    finally:
        await server.stop()
        await store.close()


@click.command()
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Directory of the SQLite store (created if missing).")
@click.option("--bind-address", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, default=6443, show_default=True, help="0 picks a free port.")
@click.option("--kubeconfig", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write a kubeconfig for this server here.")
@click.option("--feature-gates", default="", help="A=true,B=false (upstream gate names).")
@click.option("--tls/--no-tls", default=False, help="Serve HTTPS with a self-signed cert.")
@click.option("--token", default=None,
              help="Bearer token clients must send (default: random with --tls, none without).")
@click.option("--token-auth-file", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              default=None, help='CSV lines token,user,uid,"group1,group2" (kube-apiserver '
              "format); system:node:<N> users in system:nodes are nodes.")
@click.option("--authorization-mode", default="Node,RBAC", show_default=True,
              help="Ordered authorizers: AlwaysAllow, AlwaysDeny, Node, RBAC (system:masters "
              "is always allowed).")
@click.option("--max-requests-inflight", type=int, default=400, show_default=True)
@click.option("--watch-cache-size", type=int, default=20_000, show_default=True,
              help="Recent events kept in memory for watches that resume.")
@click.option("--watch-cache-bytes", default="256Mi", show_default=True,
              help="Bound on the memory those events hold (a quantity: 64Mi, 1Gi).")
@click.option("--compaction-interval", type=float, default=300.0, show_default=True,
              help="Seconds between store compactions (0: never).")
@click.option("--compaction-retain", type=int, default=1000, show_default=True,
              help="Revisions of history kept by each compaction.")
@click.option("--etcd-servers", default=None,
              help="http(s)://host:port[,...] of an etcd cluster to store objects in instead "
              "of the SQLite file (several API servers may share one cluster).")
@click.option("--etcd-cafile", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="CA bundle to verify the etcd servers' certificates.")
@click.option("--etcd-certfile", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Client certificate for etcd (with --etcd-keyfile).")
@click.option("--etcd-keyfile", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Client key for etcd.")
@click.option("-v", "--verbose", count=True, help="-v: info, -vv: debug.")
def apiserver(
    data_dir: Path, bind_address: str, port: int, kubeconfig: Path | None, feature_gates: str,
    tls: bool, token: str | None, token_auth_file: Path | None, authorization_mode: str,
    max_requests_inflight: int,
    watch_cache_size: int, watch_cache_bytes: str,
    compaction_interval: float, compaction_retain: int, etcd_servers: str | None,
    etcd_cafile: Path | None, etcd_certfile: Path | None, etcd_keyfile: Path | None,
    verbose: int,
) -> None:
    """Serve the Kubernetes API (v1.30 REST semantics) on the embedded store."""
    setup_logging(verbose)
    try:
        gates = parse_feature_gates(feature_gates)
    except FeatureGateError as err:
        raise click.BadParameter(str(err), param_hint="--feature-gates") from None
    etcd = None
    if etcd_servers is not None:
        try:
            etcd = EtcdConfig.parse(etcd_servers, cafile=etcd_cafile, certfile=etcd_certfile,
                                    keyfile=etcd_keyfile)
        except EtcdConfigError as err:
            raise click.BadParameter(str(err), param_hint="--etcd-servers") from None
    elif etcd_cafile or etcd_certfile or etcd_keyfile:
        raise click.BadParameter("the etcd TLS files need --etcd-servers",
                                 param_hint="--etcd-servers")
    if token is None:
        # kubectl never sends a bearer token over plain http, so only TLS gets one by default
        token = secrets.token_urlsafe(32) if tls else ""
    try:
        token_users = load_token_file(token_auth_file) if token_auth_file else {}
    except (OSError, AuthFileError) as err:
        raise click.BadParameter(str(err), param_hint="--token-auth-file") from None
    try:
        modes = parse_modes(authorization_mode)
    except ModeError as err:
        raise click.BadParameter(str(err), param_hint="--authorization-mode") from None
    options = Options(gates=gates, max_inflight=max_requests_inflight, token=token or None,
                      token_users=token_users, authorization_modes=modes,
                      watch_window=watch_cache_size,
                      watch_window_bytes=_byte_count(watch_cache_bytes),
                      tune_collector=True)
    try:
        run_until_signalled(lambda stop: serve(stop, data_dir, bind_address, port, kubeconfig,
                                               options, tls,
                                               (compaction_interval, compaction_retain), etcd))
    except StoreError as err:  # etcd unreachable at start, or lost for longer than fail-over
        raise click.ClickException(f"store: {err}") from None


def _byte_count(text: str) -> int:
    """A byte size written as a Kubernetes quantity (``256Mi``)."""
    try:
        value = Quantity.parse(text).as_int64()
    except QuantityError as err:
        raise click.BadParameter(str(err), param_hint="--watch-cache-bytes") from None
    if value is None or value <= 0:
        raise click.BadParameter(f"{text!r} is not a positive byte count",
                                 param_hint="--watch-cache-bytes")
    return value
