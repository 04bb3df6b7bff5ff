"""The identities of a local cluster's components and the kubeconfigs that carry them: a
client certificate from the cluster CA (CN = user, O = groups) and the CA to verify the
server with. The certificates come from :mod:`kubedra.apiserver.pki`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kubedra.apiserver.pki import ClusterPki, write_pair
from kubedra.client import kubeconfig
from kubedra.kubelet.logserver import API_SERVER_USER


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
#: The API server to the node agents (``pods/log``): the one client they serve.
KUBELET_CLIENT = Identity(API_SERVER_USER)
#: ``CERT_DIR/<name>.crt`` and ``.key``: the API server's kubelet client certificate.
KUBELET_CLIENT_FILES = "apiserver-kubelet-client"


def node_identity(node: str) -> Identity:
    return Identity(f"system:node:{node}", ("system:nodes",))


def node_kubeconfig_path(nodes_dir: Path, node: str) -> Path:
    """``DATA/nodes/<node>.kubeconfig``."""
    return nodes_dir / f"{node}.kubeconfig"


def node_serving_paths(nodes_dir: Path, node: str) -> tuple[Path, Path]:
    """``DATA/nodes/<node>.kubelet.crt`` and ``.key``: the node agent's serving certificate."""
    return nodes_dir / f"{node}.kubelet.crt", nodes_dir / f"{node}.kubelet.key"


def write_node_serving(pki: ClusterPki, nodes_dir: Path, node: str,
                       address: str = "127.0.0.1") -> tuple[Path, Path]:
    """A serving certificate for node ``node`` at ``address`` (as a kubelet's: CN
    ``system:node:<node>``, O ``system:nodes``), from the cluster CA."""
    who = node_identity(node)
    paths = node_serving_paths(nodes_dir, node)
    write_pair(pki.authority().issue(who.user, who.groups, hosts=(address, node)), *paths)
    return paths


def certificate(pki: ClusterPki, who: Identity) -> tuple[kubeconfig.Credentials, bytes]:
    """A fresh client certificate for ``who`` and the CA (PEM) that signed it."""
    ca = pki.authority()
    pair = ca.issue(who.user, who.groups)
    return kubeconfig.Credentials(client_cert=pair.cert, client_key=pair.key), ca.pem


def write_kubeconfig(pki: ClusterPki, path: Path, server: str, who: Identity) -> None:
    """A kubeconfig at ``path`` for ``who`` talking to ``server``."""
    credentials, ca_pem = certificate(pki, who)
    kubeconfig.write(path, server, credentials, ca_pem=ca_pem)
