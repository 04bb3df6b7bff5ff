"""The kubeconfig file: reading the current context's server, credentials and TLS settings,
and the one document kubedra writes (``kubedra apiserver --kubeconfig``, used by ``up``)."""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


class KubeconfigError(Exception):
    """The kubeconfig is missing, malformed, or names a context that does not exist."""


@dataclass(frozen=True, slots=True)
class ClientConfig:
    server: str
    token: str | None = None
    ca_file: str | None = None
    insecure: bool = False
    client_cert_file: str | None = None
    client_key_file: str | None = None

    def ssl_context(self) -> ssl.SSLContext | bool:
        """What aiohttp needs for ``ssl=``: True for plain defaults, a context otherwise."""
        if not self.server.startswith("https://"):
            return True
        if self.insecure:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        else:
            ctx = ssl.create_default_context(cafile=self.ca_file)
        if self.client_cert_file:
            ctx.load_cert_chain(self.client_cert_file, self.client_key_file)
        return ctx


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


def _file_or_data(body: dict[str, Any], key: str) -> str | None:
    if body.get(key):
        return str(body[key])
    data = body.get(key + "-data")
    if not data:
        return None
    fd, name = tempfile.mkstemp(prefix="kubedra-", suffix=".pem")
    with os.fdopen(fd, "wb") as f:
        f.write(base64.b64decode(data))
    return name


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
    return ClientConfig(
        server=server.rstrip("/"),
        token=str(token) if token else None,
        ca_file=_file_or_data(cluster, "certificate-authority"),
        insecure=bool(cluster.get("insecure-skip-tls-verify", False)),
        client_cert_file=_file_or_data(user, "client-certificate"),
        client_key_file=_file_or_data(user, "client-key"),
    )


def render(server: str, *, token: str | None = None, ca_pem: bytes | None = None,
           name: str = "kubedra") -> str:
    """A kubeconfig document for ``server``, its CA inline, namespace ``default``."""
    cluster: dict[str, Any] = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    user: dict[str, Any] = {"token": token} if token else {}
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": user}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name,
                                                "namespace": "default"}}],
        "current-context": name,
        "preferences": {},
    }
    return yaml.safe_dump(doc, sort_keys=False)


def write(path: Path, server: str, *, token: str | None = None,
          ca_pem: bytes | None = None) -> None:
    """Write :func:`render`'s document atomically and private (0600): readers polling for the
    file never see half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".kubeconfig-")
    with os.fdopen(fd, "w") as f:
        f.write(render(server, token=token, ca_pem=ca_pem))
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
