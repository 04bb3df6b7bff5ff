"""The identities of a local cluster's components and the kubeconfigs that carry them: a
client certificate from the cluster CA (CN = user, O = groups) and the CA to verify the
server with. The certificates come from :mod:`kubedra.apiserver.pki`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kubedra.apiserver.pki import ClusterPki
from kubedra.client import kubeconfig


@dataclass(frozen=True, slots=True)
class Identity:
    user: str
    groups: tuple[str, ...] = ()


ADMIN = Identity("kubernetes-admin", ("system:masters",))
#: Who the API server is to itself (its loopback client).
LOOPBACK = Identity("system:apiserver", ("system:masters",))
SCHEDULER = Identity("system:kube-scheduler")
CONTROLLER_MANAGER = Identity("system:kube-controller-manager")
#: The replicas' front asking each one's /readyz (a public path: no group needed).
FRONT = Identity("kubedra:front")


def node_identity(node: str) -> Identity:
    return Identity(f"system:node:{node}", ("system:nodes",))


def node_kubeconfig_path(nodes_dir: Path, node: str) -> Path:
    """``DATA/nodes/<node>.kubeconfig``."""
    return nodes_dir / f"{node}.kubeconfig"


def certificate(pki: ClusterPki, who: Identity) -> tuple[kubeconfig.Credentials, bytes]:
    """A fresh client certificate for ``who`` and the CA (PEM) that signed it."""
    ca = pki.authority()
    pair = ca.issue(who.user, who.groups)
    return kubeconfig.Credentials(client_cert=pair.cert, client_key=pair.key), ca.pem


def write_kubeconfig(pki: ClusterPki, path: Path, server: str, who: Identity) -> None:
    """A kubeconfig at ``path`` for ``who`` talking to ``server``."""
    credentials, ca_pem = certificate(pki, who)
    kubeconfig.write(path, server, credentials, ca_pem=ca_pem)
