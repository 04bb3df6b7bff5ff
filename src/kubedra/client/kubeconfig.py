"""The kubeconfig file: reading the current context's server, credentials and TLS settings,
and the one document kubedra writes (``kubedra apiserver --kubeconfig``, used by ``up``)."""

from __future__ import annotations

import base64
import contextlib
import os
import ssl
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


class KubeconfigError(Exception):
    """The kubeconfig is missing, malformed, or names a context that does not exist."""


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """Server and credentials; certificates and keys as files, or inline PEM (``*_data``),
    as a kubeconfig may give them."""

    server: str
    token: str | None = None
    ca_file: str | None = None
    insecure: bool = False
    client_cert_file: str | None = None
    client_key_file: str | None = None
    ca_data: bytes | None = None
    client_cert_data: bytes | None = None
    client_key_data: bytes | None = None

    def ssl_context(self) -> ssl.SSLContext | bool:
        """What aiohttp needs for ``ssl=``: True for plain defaults, a context otherwise."""
        if not self.server.startswith("https://"):
            return True
        if self.insecure:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        else:
            ctx = ssl.create_default_context(
                cafile=self.ca_file, cadata=self.ca_data.decode() if self.ca_data else None)
        if self.client_cert_file or self.client_cert_data:
            with _as_files(self.client_cert_file, self.client_cert_data,
                           self.client_key_file, self.client_key_data) as (cert, key):
                ctx.load_cert_chain(cert, key)
        return ctx


@contextlib.contextmanager
def _as_files(cert_file: str | None, cert_data: bytes | None, key_file: str | None,
              key_data: bytes | None) -> Iterator[tuple[str, str | None]]:
    """The certificate and key as paths (``load_cert_chain`` reads only files): inline data
    goes to a private temporary directory, removed once read."""
    with tempfile.TemporaryDirectory(prefix="kubedra-") as tmp:
        def path(name: str, given: str | None, data: bytes | None) -> str | None:
            if data is None:
                return given
            out = Path(tmp) / name
            out.write_bytes(data)
            return str(out)

        cert = path("client.crt", cert_file, cert_data)
        assert cert is not None
        yield cert, path("client.key", key_file, key_data)


def default_path() -> Path:
    env = os.environ.get("KUBECONFIG")
    if env:
        return Path(env.split(os.pathsep)[0])
    return Path.home() / ".kube" / "config"


def load(path: str | Path | None = None, context: str | None = None) -> ClientConfig:
    p = Path(path) if path is not None else default_path()
    try:
        doc = yaml.safe_load(p.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise KubeconfigError(f"cannot read kubeconfig {p}: {e}") from e
    if not isinstance(doc, dict):
        raise KubeconfigError(f"kubeconfig {p} is not a mapping")
    return from_dict(doc, context)


def _named(doc: dict[str, Any], section: str, name: str) -> dict[str, Any]:
    for entry in doc.get(section) or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            body = entry.get(section[:-1])
            return body if isinstance(body, dict) else {}
    raise KubeconfigError(f"kubeconfig has no {section[:-1]} named {name!r}")


def _file_and_data(body: dict[str, Any], key: str) -> tuple[str | None, bytes | None]:
    """``<key>`` (a path) and ``<key>-data`` (base64 PEM) of a kubeconfig section."""
    path = str(body[key]) if body.get(key) else None
    data = body.get(key + "-data")
    try:
        return path, base64.b64decode(data, validate=True) if data else None
    except (ValueError, TypeError) as e:
        raise KubeconfigError(f"{key}-data is not base64: {e}") from None


def from_dict(doc: dict[str, Any], context: str | None = None) -> ClientConfig:
    ctx_name = context or doc.get("current-context")
    if not ctx_name:
        raise KubeconfigError("kubeconfig has no current-context")
    ctx = _named(doc, "contexts", ctx_name)
    cluster = _named(doc, "clusters", str(ctx.get("cluster", "")))
    user = _named(doc, "users", str(ctx["user"])) if ctx.get("user") else {}
    server = cluster.get("server")
    if not isinstance(server, str) or not server:
        raise KubeconfigError(f"cluster of context {ctx_name!r} has no server")
    token = user.get("token")
    ca_file, ca_data = _file_and_data(cluster, "certificate-authority")
    cert_file, cert_data = _file_and_data(user, "client-certificate")
    key_file, key_data = _file_and_data(user, "client-key")
    return ClientConfig(
        server=server.rstrip("/"),
        token=str(token) if token else None,
        ca_file=ca_file, ca_data=ca_data,
        insecure=bool(cluster.get("insecure-skip-tls-verify", False)),
        client_cert_file=cert_file, client_cert_data=cert_data,
        client_key_file=key_file, client_key_data=key_data,
    )


@dataclass(frozen=True, slots=True)
class Credentials:
    """What a written kubeconfig's user presents: a client certificate and key (PEM), or a
    bearer token."""

    client_cert: bytes | None = None
    client_key: bytes | None = None
    token: str | None = None

    def user(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.client_cert is not None and self.client_key is not None:
            out["client-certificate-data"] = base64.b64encode(self.client_cert).decode()
            out["client-key-data"] = base64.b64encode(self.client_key).decode()
        if self.token:
            out["token"] = self.token
        return out


def render(server: str, credentials: Credentials = Credentials(), *,
           ca_pem: bytes | None = None, name: str = "kubedra") -> str:
    """A kubeconfig document for ``server``, its CA inline, namespace ``default``."""
    cluster: dict[str, Any] = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": credentials.user()}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name,
                                                "namespace": "default"}}],
        "current-context": name,
        "preferences": {},
    }
    return yaml.safe_dump(doc, sort_keys=False)


def write(path: Path, server: str, credentials: Credentials = Credentials(), *,
          ca_pem: bytes | None = None) -> None:
    """Write :func:`render`'s document atomically and private (0600): readers polling for the
    file never see half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".kubeconfig-")
    with os.fdopen(fd, "w") as f:
        f.write(render(server, credentials, ca_pem=ca_pem))
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def client_config(server: str, credentials: Credentials,
                  ca_pem: bytes | None = None) -> ClientConfig:
    """What loading the kubeconfig :func:`write` makes would give, without the file."""
    return ClientConfig(server=server, token=credentials.token, ca_data=ca_pem,
                        client_cert_data=credentials.client_cert,
                        client_key_data=credentials.client_key)
