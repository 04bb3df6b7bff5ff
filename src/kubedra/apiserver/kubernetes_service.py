"""The ``kubernetes`` Service in ``default``, which kube-apiserver keeps pointing at itself
(``pkg/controlplane/controller/kubernetesservice``): clients such as ``kubectl cluster-info``
look Services up. Written at start, and corrected when the server's port changed."""

from __future__ import annotations

from kubedra.apiserver.objects import Obj
from kubedra.apiserver.registry import Registry
from kubedra.apiserver.rest import Rest
from kubedra.storage.contract import Store

NAME, NAMESPACE = "kubernetes", "default"
CLUSTER_IP = "10.0.0.1"
"""The first address of kube-apiserver's default ``--service-cluster-ip-range`` (10.0.0.0/24)."""


def _ports(port: int) -> list[Obj]:
    return [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": port}]


async def ensure_kubernetes_service(registry: Registry, rest: Rest, store: Store,
                                    port: int) -> None:
    res = registry.get("", "v1", "services")
    assert res is not None
    if await store.get(res.key(NAMESPACE, NAME)) is None:
        await rest.create(res, NAMESPACE, {
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": NAME, "namespace": NAMESPACE,
                         "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {"ports": _ports(port), "clusterIP": CLUSTER_IP,
                     "clusterIPs": [CLUSTER_IP], "type": "ClusterIP",
                     "sessionAffinity": "None", "ipFamilies": ["IPv4"],
                     "ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster"},
        })
        return
    obj, _ = await rest.get(res, NAMESPACE, NAME)
    if (obj.get("spec") or {}).get("ports") == _ports(port):
        return

    async def repoint(current: Obj) -> Obj:
        current.setdefault("spec", {})["ports"] = _ports(port)
        return current

    await rest.update(res, NAMESPACE, NAME, repoint, admit=False)
