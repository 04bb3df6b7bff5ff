"""The example driver behind ``kubedra example-driver``: upstream's e2e test driver in Python.

Mirrors test/e2e/dra/test-driver/app/kubeletplugin.go@v1.30: instances ``instance-00``, ...;
prepare turns vendor parameters into environment edits (class parameters ``admin_<k>=<v>``,
claim and request parameters ``user_<k>=<v>``; each a JSON object of strings), checks that every
allocated instance is published and unused and that the claim was allocated for this node, and
writes ``<cdi-dir>/<driver>-<uid>.json``; unprepare removes the file and checks that the handle
is the one prepared. Unlike upstream, whose one device is ``claim-<uid>``, a structured claim
gets one device per allocated instance (``claim-<uid>-<instance>``), each with the claim's env.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from kubedra.api import codec
from kubedra.api.quantity import Quantity
from kubedra.api.resource import v1alpha2 as api
from kubedra.driver import cdi
from kubedra.driver.claims import Claim, ClaimError
from kubedra.driver.plugin import Driver


def instance_names(count: int) -> list[str]:
    """Upstream's names for ``count`` instances: ``instance-00``, ``instance-01``, ..."""
    return [f"instance-{i:02d}" for i in range(count)]


def generated_instances(count: int) -> list[api.NamedResourcesInstance]:
    """``count`` instances with one attribute of each common kind (names are DNS subdomains)."""
    return [
        api.NamedResourcesInstance(
            name=name,
            attributes=[
                api.NamedResourcesAttribute(name="model", string="example-gpu"),
                api.NamedResourcesAttribute(name="memory", quantity=Quantity.parse("16Gi")),
                api.NamedResourcesAttribute(name="driver-version", version="1.30.0"),
                api.NamedResourcesAttribute(name="numa", int_=i % 2),
                api.NamedResourcesAttribute(name="mig-capable", bool_=i % 2 == 0),
            ],
        )
        for i, name in enumerate(instance_names(count))
    ]


def load_instances(path: Path) -> list[api.NamedResourcesInstance]:
    """The ``instances`` of a YAML/JSON file shaped like ``namedResources`` of a ResourceSlice
    (``instances: [{name: ..., attributes: [{name: ..., string: ...}]}]``)."""
    docs = [d for d in codec.load_documents(path.read_bytes()) if d is not None]
    if len(docs) != 1:
        raise codec.DecodeError(f"{path}: want one YAML document, got {len(docs)}")
    return codec.decode(docs[0], api.NamedResourcesResources).instances


def _env_from(raw: Any, prefix: str, env: dict[str, str]) -> None:
    """``extractParameters``: a JSON object of strings -> ``<prefix>_<key>`` variables."""
    if raw is None:
        return
    if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
        raise ClaimError(f"decoding {prefix} parameters: want a JSON object of strings")
    env.update({f"{prefix}_{k}": v for k, v in raw.items()})


@dataclasses.dataclass
class _Prepared:
    handle: Any
    instances: list[str]


class ExampleDriver:
    """The callbacks and device bookkeeping; ``publish`` is wired to a :class:`Driver`'s."""

    def __init__(self, driver_name: str, cdi_dir: Path, node_name: str) -> None:
        self.driver_name = driver_name
        self.cdi_dir = cdi_dir
        self.node_name = node_name
        self.kind = f"{driver_name}/test"
        cdi.check_kind(self.kind)
        self.instances: set[str] = set()
        self._in_use: set[str] = set()
        self._prepared: dict[str, _Prepared] = {}

    def set_instances(self, names: Iterable[str]) -> None:
        self.instances = set(names)

    def spec_path(self, claim_uid: str) -> Path:
        return self.cdi_dir / f"{self.driver_name}-{claim_uid}.json"

    async def prepare(self, claim: Claim) -> list[str]:
        env: dict[str, str] = {}
        node_name, allocated = self._parameters(claim, env)
        if node_name and self.node_name and node_name != self.node_name:
            raise ClaimError(
                f"claim was allocated for {json.dumps(node_name)}, cannot be prepared on "
                f"{json.dumps(self.node_name)}"
            )
        env_list = [f"{k}={v}" for k, v in sorted(env.items())]
        base = f"claim-{claim.uid}"
        devices = {f"{base}-{name}": env_list for name in allocated} or {base: env_list}
        cdi.write_spec(self.spec_path(claim.uid), cdi.make_spec(self.kind, devices))
        self._in_use.update(allocated)
        self._prepared[claim.uid] = _Prepared(_handle_of(claim), allocated)
        return [cdi.qualified_name(self.kind, name) for name in devices]

    def _parameters(self, claim: Claim, env: dict[str, str]) -> tuple[str, list[str]]:
        """(node name, allocated instances), filling ``env``; upstream's checks and texts."""
        handle = claim.structured
        if handle is None:
            try:
                classic = json.loads(claim.resource_handle)
                env.update(classic.get("EnvVars") or {})
                return str(classic.get("NodeName") or ""), []
            except (ValueError, AttributeError, TypeError) as err:
                raise ClaimError(f"unmarshal resource handle: {err}") from None
        _env_from(handle.vendor_class_parameters, "admin", env)
        _env_from(handle.vendor_claim_parameters, "user", env)
        allocated: list[str] = []
        for result in handle.results:
            _env_from(result.vendor_request_parameters, "user", env)
            if result.named_resources is None:
                raise ClaimError("missing named resources allocation result")
            name = result.named_resources.name
            if not name:
                raise ClaimError("empty named resources instance name")
            if name not in self.instances:
                raise ClaimError(f"unknown allocated instance {json.dumps(name)}")
            if name in self._in_use or name in allocated:
                raise ClaimError(f"resource instance {json.dumps(name)} used more than once")
            allocated.append(name)
        return handle.node_name, allocated

    async def unprepare(self, claim: Claim) -> None:
        try:
            cdi.remove_spec(self.spec_path(claim.uid))
        except OSError as err:
            raise ClaimError(f"error removing CDI file: {err}") from None
        prepared = self._prepared.get(claim.uid)
        if prepared is None:
            return  # idempotent
        actual = _handle_of(claim)
        if actual != prepared.handle:
            raise ClaimError(
                "difference between expected (-) and actual resource handle (+):\n"
                f"- {_render(prepared.handle)}\n+ {_render(actual)}"
            )
        del self._prepared[claim.uid]
        self._in_use.difference_update(prepared.instances)


def _handle_of(claim: Claim) -> Any:
    return claim.structured if claim.structured is not None else claim.resource_handle


def _render(handle: Any) -> str:
    return handle if isinstance(handle, str) else codec.encode(handle).decode()


def names_of(instances: Sequence[api.NamedResourcesInstance]) -> list[str]:
    return [i.name for i in instances]


def build(
    driver_name: str,
    root_dir: Path,
    cdi_dir: Path,
    node_name: str,
    instances: Sequence[api.NamedResourcesInstance] | None,
) -> tuple[Driver, ExampleDriver]:
    """The example driver wired into a :class:`Driver`; ``instances=None`` opts out of
    publishing (``--instances -1``)."""
    example = ExampleDriver(driver_name, cdi_dir, node_name)
    example.set_instances(names_of(instances or ()))
    driver = Driver(
        driver_name,
        prepare=example.prepare,
        unprepare=example.unprepare,
        root_dir=root_dir,
        instances=instances or (),
        publish_resources=instances is not None,
    )
    return driver, example
