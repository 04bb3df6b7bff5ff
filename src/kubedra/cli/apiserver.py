"""``kubedra apiserver``: serve the API over the embedded SQLite store (or an etcd cluster,
shared by several replicas), over HTTPS with the cluster CA's certificates, and write an
administrator's kubeconfig that kubectl and the official Python client can use."""

from __future__ import annotations

import asyncio
import logging
import math
import secrets
import ssl
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import click

from kubedra.api.features import FeatureGateError, FeatureGates, parse_feature_gates
from kubedra.api.goformat import parse_duration
from kubedra.api.quantity import Quantity, QuantityError
from kubedra.api.release import DEFAULT_RELEASE, ReleaseError, parse_release
from kubedra.api.runtimeconfig import RuntimeConfigError, parse_runtime_config
from kubedra.api.scheme import registered
from kubedra.apiserver.app import ApiServer, Options
from kubedra.apiserver.audit import AuditLogConfig
from kubedra.apiserver.auth import ADMIN as ADMIN_USER
from kubedra.apiserver.authn import AuthnOptions
from kubedra.apiserver.authn.serviceaccount import (
    DEFAULT_ISSUER,
    KeyFileError,
    TokenKeys,
    load_private_key,
    load_public_keys,
)
from kubedra.apiserver.authn.tokenfile import AuthFileError, load_token_file
from kubedra.apiserver.authz.chain import ModeError, parse_modes
from kubedra.apiserver.connections import ConnectionLimits
from kubedra.apiserver.limits import Limits
from kubedra.apiserver.pki import ClusterPki, client_context
from kubedra.apiserver.tolerationseconds import DEFAULT_SECONDS
from kubedra.cli.credentials import (
    ADMIN,
    KUBELET_CLIENT,
    KUBELET_CLIENT_FILES,
    LOOPBACK,
    Identity,
    certificate,
)
from kubedra.cli.datadir import private_directory
from kubedra.cli.runtime import run_until_signalled, setup_logging, until_stopped
from kubedra.cli.singletons import collect_while_leading, replica_identity
from kubedra.client import kubeconfig as kubeconfig_file
from kubedra.storage.contract import StoreError
from kubedra.storage.etcd import EtcdConfig, EtcdConfigError
from kubedra.storage.factory import open_store

log = logging.getLogger("kubedra.apiserver")


@dataclass(frozen=True, slots=True)
class Serving:
    """How the server is reached and who its own kubeconfig (and loopback client) is."""

    pki: ClusterPki
    tls: bool = True
    client_ca: Path | None = None
    admin_token: str | None = None

    def context(self, host: str) -> ssl.SSLContext | None:
        if not self.tls:
            log.warning("serving plain HTTP (--no-tls): credentials and objects cross the "
                        "network unencrypted and unauthenticated")
            return None
        self.pki.ensure_serving(host)
        return self.pki.server_context(self.client_ca or self.pki.ca_cert)

    def credentials(self, who: Identity) -> tuple[kubeconfig_file.Credentials, bytes | None]:
        """A client certificate for ``who`` over TLS, the admin token without."""
        if self.tls:
            return certificate(self.pki, who)
        return kubeconfig_file.Credentials(token=self.admin_token), None


async def serve(
    stop: asyncio.Event, data_dir: Path, host: str, port: int, kubeconfig: Path | None,
    options: Options, serving: Serving, compaction: tuple[float, int] = (300.0, 1000),
    etcd: EtcdConfig | None = None,
) -> None:
    """Serve until ``stop`` is set; the kubeconfig is written once the port is bound."""
    private_directory(data_dir)
    store = await open_store(data_dir, etcd, compact_interval=compaction[0],
                             retain=compaction[1])
    if etcd is not None:  # replicas may share the cluster: the Lease holder collects garbage
        options = replace(options, gc=False)
    server = ApiServer(store, options)
    ssl_ctx = serving.context(host)
    try:
        bound = await server.start(host, port, ssl_context=ssl_ctx)
        url = f"{'https' if serving.tls else 'http'}://{host}:{bound}"
        if kubeconfig is not None:
            credentials, ca_pem = serving.credentials(ADMIN)
            kubeconfig_file.write(kubeconfig, url, credentials, ca_pem=ca_pem)
        print(f"kubedra apiserver listening on {url} (Kubernetes "
              f"{server.registry.release.git_version})", file=sys.stderr, flush=True)
        if etcd is None:
            await stop.wait()
        else:
            loopback = kubeconfig_file.client_config(url, *serving.credentials(LOOPBACK))
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
@click.option("--emulated-version", default=DEFAULT_RELEASE.name, show_default=True,
              help="The Kubernetes release served: 1.34 (resource.k8s.io/v1) or 1.30 "
              "(resource.k8s.io/v1alpha2); it sets the APIs, the feature gates' defaults and "
              "/version.")
@click.option("--runtime-config", default="",
              help="group/version=true|false[,...] (also api/all, api/ga, api/beta, "
              "api/alpha): turn on a version the release has but does not serve by default "
              "(resource.k8s.io/v1beta1=true), or turn one off.")
@click.option("--tls/--no-tls", default=True, show_default=True,
              help="Serve HTTPS with a serving certificate from the cluster CA (made in "
              "--cert-dir on first start); --no-tls serves plain HTTP.")
@click.option("--cert-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The cluster CA, the serving certificate and the ServiceAccount signing "
              "key (default: DATA_DIR/pki; replicas share one).")
@click.option("--client-ca-file", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              default=None, help="Client certificates signed by this CA authenticate "
              "(CN = user, O = groups); default: the cluster CA.")
@click.option("--kubelet-client-certificate", default=None,
              type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Client certificate presented to the node agents for pods/log (CN "
              f"{KUBELET_CLIENT.user}); default: CERT_DIR/{KUBELET_CLIENT_FILES}.crt, made on "
              "first start.")
@click.option("--kubelet-client-key", default=None,
              type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Its private key (with --kubelet-client-certificate).")
@click.option("--kubelet-certificate-authority", default=None,
              type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="CA bundle verifying the node agents' serving certificates (default: the "
              "cluster CA).")
@click.option("--token", default=None,
              help="A bearer token for an administrator (system:masters); with --no-tls a "
              "random one is made for the written kubeconfig.")
@click.option("--token-auth-file", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              default=None, help='CSV lines token,user,uid,"group1,group2" (kube-apiserver '
              "format); system:node:<N> users in system:nodes are nodes.")
@click.option("--anonymous-auth", type=click.BOOL, default=False, show_default=True,
              is_flag=False, flag_value=True,
              help="Requests without credentials are system:anonymous instead of 401.")
@click.option("--service-account-signing-key-file", default=None,
              type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Private key (RSA or P-256) signing ServiceAccount tokens (default: "
              "CERT_DIR/sa.key, made on first start).")
@click.option("--service-account-key-file", "service_account_key_files", multiple=True,
              type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="PEM keys verifying ServiceAccount tokens (repeatable; default: the "
              "signing key).")
@click.option("--service-account-issuer", default=DEFAULT_ISSUER, show_default=True,
              help="The iss of the tokens issued and accepted; also their audience.")
@click.option("--authorization-mode", default="Node,RBAC", show_default=True,
              help="Ordered authorizers: AlwaysAllow, AlwaysDeny, Node, RBAC (system:masters "
              "is always allowed).")
@click.option("--max-requests-inflight", type=int, default=400, show_default=True,
              help="Read-only requests served at once (watches excluded); more get 429.")
@click.option("--max-mutating-requests-inflight", type=int, default=200, show_default=True,
              help="Mutating requests served at once; more get 429.")
@click.option("--request-timeout", default="1m0s", show_default=True,
              help="Longest a request (not a watch) may take before a 504 (a Go duration; "
              "?timeout= may shorten it).")
@click.option("--event-ttl", default="1h0m0s", show_default=True,
              help="How long Events are kept after their last write (a Go duration; 0: for "
              "ever).")
@click.option("--max-connections", type=int, default=10_000, show_default=True,
              help="Open client connections; more are answered 429 and closed.")
@click.option("--audit-log-path", default=None,
              help="Write audit.k8s.io/v1 events (level Metadata) here as JSON lines "
              "('-': standard output).")
@click.option("--audit-log-maxsize", type=int, default=0, show_default=True,
              help="Megabytes before the audit log is rotated (0: 100).")
@click.option("--audit-log-maxbackup", type=int, default=0, show_default=True,
              help="Rotated audit logs kept (0: all).")
@click.option("--audit-log-maxage", type=int, default=0, show_default=True,
              help="Days a rotated audit log is kept (0: no limit).")
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
@click.option("--default-not-ready-toleration-seconds", type=click.IntRange(min=0),
              default=DEFAULT_SECONDS, show_default=True,
              help="tolerationSeconds of the notReady:NoExecute toleration added to every pod "
                   "that has none")
@click.option("--default-unreachable-toleration-seconds", type=click.IntRange(min=0),
              default=DEFAULT_SECONDS, show_default=True,
              help="tolerationSeconds of the unreachable:NoExecute toleration added to every "
                   "pod that has none")
@click.option("-v", "--verbose", count=True, help="-v: info, -vv: debug.")
def apiserver(
    data_dir: Path, bind_address: str, port: int, kubeconfig: Path | None, feature_gates: str,
    emulated_version: str, runtime_config: str,
    tls: bool, cert_dir: Path | None, client_ca_file: Path | None,
    kubelet_client_certificate: Path | None, kubelet_client_key: Path | None,
    kubelet_certificate_authority: Path | None, token: str | None,
    token_auth_file: Path | None, anonymous_auth: bool,
    service_account_signing_key_file: Path | None,
    service_account_key_files: tuple[Path, ...], service_account_issuer: str,
    authorization_mode: str,
    max_requests_inflight: int,
    max_mutating_requests_inflight: int, request_timeout: str, event_ttl: str,
    max_connections: int,
    audit_log_path: str | None, audit_log_maxsize: int, audit_log_maxbackup: int,
    audit_log_maxage: int, watch_cache_size: int, watch_cache_bytes: str,
    compaction_interval: float, compaction_retain: int, etcd_servers: str | None,
    etcd_cafile: Path | None, etcd_certfile: Path | None, etcd_keyfile: Path | None,
    default_not_ready_toleration_seconds: int, default_unreachable_toleration_seconds: int,
    verbose: int,
) -> None:
    """Serve the Kubernetes API (v1.30 REST semantics; the APIs of --emulated-version) on the
    embedded store."""
    setup_logging(verbose)
    try:
        release = parse_release(emulated_version)
    except ReleaseError as err:
        raise click.BadParameter(str(err), param_hint="--emulated-version") from None
    try:
        gates = parse_feature_gates(feature_gates, FeatureGates.for_release(release))
    except FeatureGateError as err:
        raise click.BadParameter(str(err), param_hint="--feature-gates") from None
    try:
        served = parse_runtime_config(runtime_config, registered(release))
    except RuntimeConfigError as err:
        raise click.BadParameter(str(err), param_hint="--runtime-config") from None
    try:
        event_seconds = parse_duration(event_ttl)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--event-ttl") from None
    if event_seconds < 0:
        raise click.BadParameter("must not be negative", param_hint="--event-ttl")
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
    pki = ClusterPki(cert_dir or data_dir / "pki")
    if token is None and not tls:
        token = secrets.token_urlsafe(32)  # the written kubeconfig's credential
    try:
        tokens = load_token_file(token_auth_file) if token_auth_file else {}
    except (OSError, AuthFileError) as err:
        raise click.BadParameter(str(err), param_hint="--token-auth-file") from None
    if token:
        tokens[token] = ADMIN_USER
    try:
        signing = load_private_key(service_account_signing_key_file
                                   or pki.ensure_service_account_key())
        verify = [k for f in service_account_key_files for k in load_public_keys(f)]
    except KeyFileError as err:
        raise click.BadParameter(str(err), param_hint="--service-account-key-file") from None
    keys = TokenKeys(signing, service_account_issuer, verify or None)
    try:
        modes = parse_modes(authorization_mode)
    except ModeError as err:
        raise click.BadParameter(str(err), param_hint="--authorization-mode") from None
    try:
        timeout = parse_duration(request_timeout)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--request-timeout") from None
    if timeout <= 0:
        raise click.BadParameter("must be positive", param_hint="--request-timeout")
    limits = Limits(max_requests_inflight=max_requests_inflight,
                    max_mutating_requests_inflight=max_mutating_requests_inflight,
                    request_timeout=timeout)
    audit_log = AuditLogConfig(audit_log_path, audit_log_maxsize, audit_log_maxbackup,
                               audit_log_maxage) if audit_log_path else None
    options = Options(gates=gates, runtime_config=served, limits=limits, audit_log=audit_log,
                      connection_limits=ConnectionLimits(max_connections=max_connections),
                      authn=AuthnOptions(tokens=tokens, anonymous=anonymous_auth),
                      service_account_keys=keys, authorization_modes=modes,
                      watch_window=watch_cache_size,
                      watch_window_bytes=_byte_count(watch_cache_bytes),
                      event_ttl=math.ceil(event_seconds),
                      default_toleration_seconds=(default_not_ready_toleration_seconds,
                                                  default_unreachable_toleration_seconds))
    if (kubelet_client_certificate is None) != (kubelet_client_key is None):
        raise click.BadParameter("give both or neither of --kubelet-client-certificate and "
                                 "--kubelet-client-key", param_hint="--kubelet-client-key")
    kubelet_files = ((kubelet_client_certificate, kubelet_client_key)
                     if kubelet_client_certificate and kubelet_client_key else
                     pki.ensure_client(KUBELET_CLIENT_FILES, KUBELET_CLIENT.user))
    try:
        kubelet_tls = client_context(*kubelet_files, kubelet_certificate_authority or pki.ca_cert)
    except (OSError, ssl.SSLError) as err:
        raise click.BadParameter(str(err), param_hint="--kubelet-client-certificate") from None
    options = replace(options, kubelet_tls=kubelet_tls)
    serving = Serving(pki, tls, client_ca_file, token)
    try:
        run_until_signalled(lambda stop: serve(stop, data_dir, bind_address, port, kubeconfig,
                                               options, serving,
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
