"""The ``kubernetes`` Service in ``default``, which kube-apiserver keeps pointing at itself
(``pkg/controlplane/controller/kubernetesservice``): clients such as ``kubectl cluster-info``
look Services up. Written at start, and corrected when the server's port changed."""

from __future__ import annotations

from kubedra.api.base import Obj
from kubedra.api.codec import to_builtins
from kubedra.api.core import Service, ServicePort, ServiceSpec
from kubedra.api.meta import ObjectMeta
from kubedra.apiserver.errors import ApiError
from kubedra.apiserver.registry import Registry
from kubedra.apiserver.rest import Rest
from kubedra.storage.contract import Store

NAME, NAMESPACE = "kubernetes", "default"
CLUSTER_IP = "10.0.0.1"
"""The first address of kube-apiserver's default ``--service-cluster-ip-range`` (10.0.0.0/24)."""


def _ports(port: int) -> list[ServicePort]:
    return [ServicePort(name="https", protocol="TCP", port=443, target_port=port)]


async def ensure_kubernetes_service(registry: Registry, rest: Rest, store: Store,
                                    port: int) -> None:
    res = registry.get("", "v1", "services")
    assert res is not None
    if await store.get(res.key(NAMESPACE, NAME)) is None:
        try:
            await rest.create(res, NAMESPACE, Service(
                api_version="v1", kind="Service",
                metadata=ObjectMeta(name=NAME, namespace=NAMESPACE,
                                    labels={"component": "apiserver", "provider": "kubernetes"}),
                spec=ServiceSpec(ports=_ports(port), cluster_ip=CLUSTER_IP,
                                 cluster_ips=[CLUSTER_IP], type="ClusterIP",
                                 session_affinity="None", ip_families=["IPv4"],
                                 ip_family_policy="SingleStack",
                                 internal_traffic_policy="Cluster")))
            return
        except ApiError as err:
            if err.code != 409:  # a replica over the same etcd created it first: repoint below
                raise
    wanted = to_builtins(_ports(port))
    obj, _ = await rest.get(res, NAMESPACE, NAME)
    if (obj.get("spec") or {}).get("ports") == wanted:
        return

    async def repoint(current: Obj) -> Obj:
        current.setdefault("spec", {})["ports"] = wanted
        return current

    await rest.update(res, NAMESPACE, NAME, repoint, admit=False)
