"""``kubedra apiserver``: serve the API over the embedded SQLite store and write a kubeconfig
that kubectl and the official Python client can use."""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import logging
import os
import secrets
import ssl
import sys
import tempfile
from pathlib import Path

import click
import yaml

from kubedra.api.features import FeatureGateError, parse_feature_gates
from kubedra.apiserver.app import ApiServer, Options
from kubedra.apiserver.auth import AuthFileError, load_token_file
from kubedra.cli.runtime import STOP_SIGNALS, setup_logging
from kubedra.storage.sqlite import SQLiteStore

log = logging.getLogger("kubedra.apiserver")


def _self_signed(data_dir: Path, host: str) -> tuple[Path, Path]:
    """A self-signed serving certificate for ``host`` (and localhost/127.0.0.1)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubedra-apiserver")])
    now = dt.datetime.now(dt.UTC)
    alt: list[x509.GeneralName] = [x509.DNSName("localhost"),
                                   x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    try:
        ip = ipaddress.ip_address(host)
        if str(ip) != "127.0.0.1":
            alt.append(x509.IPAddress(ip))
    except ValueError:
        alt.append(x509.DNSName(host))
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = data_dir / "apiserver.crt", data_dir / "apiserver.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ))
    key_path.chmod(0o600)
    return cert_path, key_path


def write_kubeconfig(path: Path, server: str, token: str | None, ca: Path | None) -> None:
    """Write atomically (readers polling for the file never see half of it)."""
    import base64

    cluster: dict[str, object] = {"server": server}
    if ca is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca.read_bytes()).decode()
    user: dict[str, object] = {"token": token} if token else {}
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "kubedra", "cluster": cluster}],
        "users": [{"name": "kubedra", "user": user}],
        "contexts": [{"name": "kubedra",
                      "context": {"cluster": "kubedra", "user": "kubedra",
                                  "namespace": "default"}}],
        "current-context": "kubedra",
        "preferences": {},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".kubeconfig-")
    with os.fdopen(fd, "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


async def serve(
    data_dir: Path, host: str, port: int, kubeconfig: Path | None, options: Options,
    tls: bool, compaction: tuple[float, int] = (300.0, 1000),
) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    store = await SQLiteStore.open(data_dir / "kubedra.db", compact_interval=compaction[0],
                                   retain=compaction[1])
    server = ApiServer(store, options)
    ssl_ctx: ssl.SSLContext | None = None
    ca: Path | None = None
    if tls:
        ca, key = _self_signed(data_dir, host)
        ssl_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ssl_ctx.load_cert_chain(ca, key)
    try:
        bound = await server.start(host, port, ssl_context=ssl_ctx)
        url = f"{'https' if tls else 'http'}://{host}:{bound}"
        if kubeconfig is not None:
            write_kubeconfig(kubeconfig, url, options.token, ca)
        print(f"kubedra apiserver listening on {url}", file=sys.stderr, flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
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
              "format); system:node:<N> users in system:nodes get the Node authorizer.")
@click.option("--max-requests-inflight", type=int, default=400, show_default=True)
@click.option("--watch-cache-size", type=int, default=20_000, show_default=True,
              help="Recent events kept in memory for watches that resume.")
@click.option("--compaction-interval", type=float, default=300.0, show_default=True,
              help="Seconds between store compactions (0: never).")
@click.option("--compaction-retain", type=int, default=1000, show_default=True,
              help="Revisions of history kept by each compaction.")
@click.option("-v", "--verbose", is_flag=True)
def apiserver(
    data_dir: Path, bind_address: str, port: int, kubeconfig: Path | None, feature_gates: str,
    tls: bool, token: str | None, token_auth_file: Path | None, max_requests_inflight: int,
    watch_cache_size: int,
    compaction_interval: float, compaction_retain: int, verbose: bool,
) -> None:
    """Serve the Kubernetes API (v1.30 REST semantics) on the embedded store."""
    setup_logging(1 if verbose else 0)
    try:
        gates = parse_feature_gates(feature_gates)
    except FeatureGateError as err:
        raise click.BadParameter(str(err), param_hint="--feature-gates") from None
    if token is None:
        # kubectl never sends a bearer token over plain http, so only TLS gets one by default
        token = secrets.token_urlsafe(32) if tls else ""
    try:
        token_users = load_token_file(token_auth_file) if token_auth_file else {}
    except (OSError, AuthFileError) as err:
        raise click.BadParameter(str(err), param_hint="--token-auth-file") from None
    options = Options(gates=gates, max_inflight=max_requests_inflight, token=token or None,
                      token_users=token_users, watch_window=watch_cache_size,
                      tune_collector=True)
    asyncio.run(serve(data_dir, bind_address, port, kubeconfig, options, tls,
                      (compaction_interval, compaction_retain)))
