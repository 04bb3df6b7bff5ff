"""The example driver behind ``kubedra example-driver``: upstream's e2e test driver in Python,
in both eras.

1.34 (test/e2e/dra/test-driver/app/kubeletplugin.go@v1.34): devices ``device-00``, ... with
typed attributes and capacity in the node's own pool (named after the node), published as
ResourceSlices; prepare reads the claim's results for this driver and, per request, the opaque
configs for this driver that apply to it (from the class: ``admin_<k>=<v>``, from the claim:
``user_<k>=<v>``) plus ``claim_<claim>_<request>=true``, and writes
``<cdi-dir>/<driver>-<uid>.json`` with one device ``claim-<uid>-<request>`` per request; it
refuses a device it does not publish or one another claim holds.

1.30 (test/e2e/dra/test-driver/app/kubeletplugin.go@v1.30): instances ``instance-00``, ...;
prepare turns vendor parameters into environment edits (class parameters ``admin_<k>=<v>``,
claim and request parameters ``user_<k>=<v>``; each a JSON object of strings), checks that every
allocated instance is published and unused and that the claim was allocated for this node, and
writes ``<cdi-dir>/<driver>-<uid>.json``; unprepare removes the file and checks that the handle
is the one prepared. Unlike upstream, whose one device is ``claim-<uid>``, a structured claim
gets one device per allocated instance (``claim-<uid>-<instance>``), each with the claim's env.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kubedra.api import codec
from kubedra.api.quantity import Quantity
from kubedra.api.resource import v1
from kubedra.api.resource import v1alpha2 as api
from kubedra.client.rest import Client
from kubedra.driver import cdi
from kubedra.driver.claims import Claim, ClaimError, ClaimRef, Device, PrepareResult
from kubedra.driver.draplugin import base_request
from kubedra.driver.plugin import Driver
from kubedra.driver.resourceslices import DriverResources, Pool, Slice
from kubedra.tasks import cancel_and_wait


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


def device_names(count: int) -> list[str]:
    """1.34: ``device-00``, ``device-01``, ..."""
    return [f"device-{i:02d}" for i in range(count)]


def generated_devices(count: int) -> list[v1.Device]:
    """``count`` v1 devices with an attribute of each type and a memory capacity."""
    return [
        v1.Device(
            name=name,
            attributes={
                "model": v1.DeviceAttribute(string="example-gpu"),
                "driverVersion": v1.DeviceAttribute(version="1.34.0"),
                "numa": v1.DeviceAttribute(int_=i % 2),
                "migCapable": v1.DeviceAttribute(bool_=i % 2 == 0),
            },
            capacity={"memory": v1.DeviceCapacity(value=Quantity.parse("16Gi"))},
        )
        for i, name in enumerate(device_names(count))
    ]


def load_devices(path: Path) -> list[v1.Device]:
    """1.34: the ``devices`` of a YAML/JSON file shaped like a v1 ResourceSlice's ``spec``
    (``devices: [{name: ..., attributes: {numa: {int: 1}}, capacity: ...}]``)."""
    docs = [d for d in codec.load_documents(path.read_bytes()) if d is not None]
    if len(docs) != 1 or not isinstance(docs[0], dict) or "devices" not in docs[0]:
        raise codec.DecodeError(f"{path}: want one YAML document with a devices list")
    return [codec.decode(d, v1.Device) for d in docs[0]["devices"] or ()]


def node_resources(node_name: str, devices: Sequence[v1.Device]) -> DriverResources:
    """The devices as the node's own pool, in slices of at most 128 devices."""
    return DriverResources(pools={node_name: Pool(
        slices=[Slice(devices=c) for c in v1.slice_chunks(devices)])})


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
        self._prepared_v1: dict[str, list[Device]] = {}
        self._held: dict[str, set[str]] = {}  # 1.34: claim uid -> its devices

    def set_instances(self, names: Iterable[str]) -> None:
        """What the driver publishes: 1.30 instance names, or 1.34 device names."""
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


    # --- 1.34 ---------------------------------------------------------------------------

    async def prepare_claims(
            self, claims: list[v1.ResourceClaim]) -> Mapping[str, PrepareResult | Exception]:
        out: dict[str, PrepareResult | Exception] = {}
        for claim in claims:
            uid = claim.metadata.uid or ""
            try:
                out[uid] = PrepareResult(devices=self._prepare_v1(claim))
            except ClaimError as err:
                out[uid] = err
        return out

    def _prepare_v1(self, claim: v1.ResourceClaim) -> list[Device]:
        uid = claim.metadata.uid or ""
        done = self._prepared_v1.get(uid)
        if done is not None:
            return done  # idempotent: the kubelet asks again after a restart
        assert claim.status.allocation is not None  # the SDK checked
        allocation = claim.status.allocation.devices
        results = [r for r in allocation.results or () if r.driver == self.driver_name]
        taken: set[str] = set()
        for r in results:
            if r.pool != self.node_name or r.device not in self.instances:
                raise ClaimError(f"unknown allocated device {json.dumps(r.pool + '/' + r.device)}")
            if r.device in self._in_use or r.device in taken:
                raise ClaimError(f"device {json.dumps(r.device)} used more than once")
            taken.add(r.device)
        envs: dict[str, list[str]] = {}  # CDI device -> its environment
        devices: list[Device] = []
        for r in results:
            request = base_request(r.request)
            env: dict[str, str] = {}
            for i, config in enumerate(allocation.config or ()):
                opaque = config.opaque
                if opaque is None or opaque.driver != self.driver_name or (
                        config.requests and r.request not in config.requests
                        and request not in config.requests):
                    continue
                kind = "admin" if config.source == v1.ALLOCATION_CONFIG_SOURCE_CLASS else "user"
                try:
                    _env_from(opaque.parameters, kind, env)
                except ClaimError as err:
                    raise ClaimError(f"parameters in config #{i}: {err}") from None
            name = re.sub(r"[^a-zA-Z0-9]", "_", f"claim_{claim.metadata.name}_{request}")
            env[name] = "true"
            cdi_name = f"claim-{uid}-{request}"
            envs[cdi_name] = [f"{k}={v}" for k, v in sorted(env.items())]
            devices.append(Device(r.pool, r.device, [cdi.qualified_name(self.kind, cdi_name)],
                                  [r.request]))
        if envs:
            cdi.write_spec(self.spec_path(uid), cdi.make_spec(self.kind, envs))
        self._in_use.update(taken)
        self._prepared_v1[uid] = devices
        self._held[uid] = taken
        return devices

    async def unprepare_claims(self, refs: list[ClaimRef]) -> Mapping[str, Exception | None]:
        out: dict[str, Exception | None] = {}
        for ref in refs:
            try:
                cdi.remove_spec(self.spec_path(ref.uid))
            except OSError as err:
                out[ref.uid] = ClaimError(f"error removing CDI file: {err}")
                continue
            self._prepared_v1.pop(ref.uid, None)
            self._in_use.difference_update(self._held.pop(ref.uid, set()))
            out[ref.uid] = None
        return out


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
    client: Client | None = None,
) -> tuple[Driver, ExampleDriver]:
    """The example driver wired into a :class:`Driver` for both eras (1.34 with a ``client``
    of a 1.34 server: see :func:`publish_devices`); ``instances=None`` opts out of
    publishing (``--instances -1``)."""
    example = ExampleDriver(driver_name, cdi_dir, node_name)
    example.set_instances(names_of(instances or ()))
    driver = Driver(
        driver_name,
        prepare=example.prepare,
        unprepare=example.unprepare,
        prepare_claims=example.prepare_claims,
        unprepare_claims=example.unprepare_claims,
        client=client,
        node_name=node_name,
        root_dir=root_dir,
        instances=instances or (),
        publish_resources=instances is not None,
    )
    return driver, example


def publish_devices(driver: Driver, example: ExampleDriver, devices: Sequence[v1.Device]) -> None:
    """1.34: publish ``devices`` as the node's pool, and prepare only those from now on."""
    driver.publish_resources(node_resources(example.node_name, devices))
    example.set_instances(d.name for d in devices)


async def publish_when_registered(driver: Driver, example: ExampleDriver,
                                  devices: Sequence[v1.Device],
                                  stop: asyncio.Event | None = None) -> bool:
    """1.34: :func:`publish_devices` once the kubelet has accepted the driver (False when
    ``stop`` came first). A starting kubelet deletes every ResourceSlice of its node before
    it takes registrations (upstream runs a node's drivers only once it is up): slices
    written earlier would be wiped, and put back only after the controller's sync delay."""
    waits = [asyncio.ensure_future(driver.registered.wait())]
    if stop is not None:
        waits.append(asyncio.ensure_future(stop.wait()))
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        await cancel_and_wait(*waits)
    if not driver.registered.is_set():
        return False
    publish_devices(driver, example, devices)
    return True
