"""DefaultTolerationSeconds through the API: a created pod gets the not-ready and unreachable
NoExecute tolerations for the flags' seconds unless it has them; updates keep them."""

from __future__ import annotations

from pathlib import Path

import msgspec

from kubedra.api.core import Pod
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from tests.e2e.conftest import apiserver_process
from tests.e2e.dra_workload import kind


def pod(name: str, tolerations: list[dict[str, object]]) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"tolerations": tolerations,
                     "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]}}


def seen(p: Pod) -> list[tuple[str | None, str | None, str | None, int | None]]:
    return [(t.key, t.operator, t.effect, t.toleration_seconds)
            for t in p.spec.tolerations or ()]


async def test_default_tolerations_added_with_the_flags_seconds(tmp_path: Path) -> None:
    with apiserver_process(tmp_path, "--default-not-ready-toleration-seconds", "7",
                           "--default-unreachable-toleration-seconds", "9") as config:
        async with Client(kubeconfig.load(config)) as client:
            await client.create_raw(kind("pods"), pod("plain", []), "default")
            plain = await client.get(Pod, "plain", "default")
            assert seen(plain) == [
                ("node.kubernetes.io/not-ready", "Exists", "NoExecute", 7),
                ("node.kubernetes.io/unreachable", "Exists", "NoExecute", 9)]
            # added before managedFields are computed: the creator owns them (a deviation)
            fields = (plain.metadata.managed_fields or [])[0].fields_v1 or {}
            assert "f:tolerations" in fields.get("f:spec", {}), fields
            own = [{"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                    "effect": "NoExecute", "tolerationSeconds": 3}]
            await client.create_raw(kind("pods"), pod("own", own), "default")
            assert seen(await client.get(Pod, "own", "default")) == [
                ("node.kubernetes.io/unreachable", "Exists", "NoExecute", 3),
                ("node.kubernetes.io/not-ready", "Exists", "NoExecute", 7)]
            # an update keeps them (and the status subresource is never admitted)
            labelled = await client.update(msgspec.structs.replace(
                plain, metadata=msgspec.structs.replace(plain.metadata, labels={"a": "b"})))
            assert seen(labelled) == seen(plain)
            await client.update_status(labelled)
            assert seen(await client.get(Pod, "plain", "default")) == seen(plain)
