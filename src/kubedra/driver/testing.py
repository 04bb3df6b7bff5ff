"""A fake kubelet for a driver's own pytest: no cluster, real gRPC over the driver's sockets.

It plays the kubelet's part as the v1.30 plugin manager and DRA manager do it
(pkg/kubelet/pluginmanager/operationexecutor/operation_generator.go,
pkg/kubelet/cm/dra/manager.go): dial the registration socket, ``GetInfo``, check the plugin type
and versions, ``NotifyRegistrationStatus(true)``, dial the returned endpoint; then watch the
published resources and send prepare/unprepare for claims given as ordinary ResourceClaim YAML
(or models) with their allocation, one ``Claim`` per resource handle of this driver::

    async with FakeKubelet(driver.registration_socket) as kubelet:
        assert [i.name for i in await kubelet.resources()] == ["gpu-0"]
        result = await kubelet.prepare(CLAIM_YAML)

Given the ``client`` of a 1.34 API server (:class:`ApiServer` runs one, SQLite in a temporary
directory), it is a 1.34 kubelet: registration picks the first service of the plugin's list it
speaks (``v1.DRAPlugin``, ``v1beta1.DRAPlugin``), its Node exists, and prepare first writes each
v1 claim, with its allocation, to the API (the driver reads it from there), then names it by
namespace, uid and name::

    async with ApiServer(tmp) as client, Driver(..., client=client) as driver, \
            FakeKubelet(driver.registration_socket, client=client) as kubelet:
        result = await kubelet.prepare(V1_CLAIM_YAML)
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import grpc
import msgspec

from kubedra.api import codec
from kubedra.api.core import Node
from kubedra.api.meta import ObjectMeta
from kubedra.api.resource import v1
from kubedra.api.resource import v1alpha2 as api
from kubedra.client import kubeconfig
from kubedra.client.errors import ApiError, is_already_exists
from kubedra.client.rest import Client
from kubedra.driver.claims import ClaimRef, Device
from kubedra.driver.draplugin import V1_SERVICE, V1BETA1_SERVICE
from kubedra.driver.registration import PLUGIN_TYPE
from kubedra.proto import convert
from kubedra.proto.generated import (
    dra_v1_pb2,
    dra_v1_pb2_grpc,
    dra_v1beta1_pb2,
    dra_v1beta1_pb2_grpc,
)
from kubedra.proto.generated import dra_v1alpha3_pb2 as dra_pb2
from kubedra.proto.generated import dra_v1alpha3_pb2_grpc as dra_grpc
from kubedra.proto.generated import pluginregistration_v1_pb2 as reg_pb2
from kubedra.proto.generated import pluginregistration_v1_pb2_grpc as reg_grpc
from kubedra.proto.services import NoService, choose_service
from kubedra.tasks import cancel_and_wait

# Timeouts of the v1.30 kubelet (operation_generator.go, plugin/client.go).
GET_INFO_TIMEOUT = 1.0
NOTIFY_TIMEOUT = 5.0
PREPARE_TIMEOUT = 45.0

#: ``servicesSupportedByKubelet`` of 1.34, newest first, with each one's messages and stub.
KUBELET_SERVICES: dict[str, tuple[Any, Any]] = {
    V1_SERVICE: (dra_v1_pb2, dra_v1_pb2_grpc.DRAPluginStub),
    V1BETA1_SERVICE: (dra_v1beta1_pb2, dra_v1beta1_pb2_grpc.DRAPluginStub),
}

ClaimInput = str | api.ResourceClaim | v1.ResourceClaim | ClaimRef


class RegistrationRejected(AssertionError):
    """The plugin's GetInfo answer is not one the kubelet would register."""


@dataclasses.dataclass(frozen=True)
class PluginInfo:
    type: str
    name: str
    endpoint: str
    supported_versions: list[str]


@dataclasses.dataclass(frozen=True)
class PrepareResult:
    cdi_devices: list[str]
    error: str = ""
    devices: list[Device] = dataclasses.field(default_factory=list)
    """1.34: the devices the driver answered (``cdi_devices`` are their CDI ids, in order)."""


def _parse_claims(claims: Sequence[ClaimInput]) -> list[api.ResourceClaim]:
    out: list[api.ResourceClaim] = []
    for c in claims:
        if isinstance(c, api.ResourceClaim):
            out.append(c)
            continue
        if not isinstance(c, str):
            raise TypeError(f"a 1.30 kubelet takes v1alpha2 claims, not {type(c).__name__}")
        out += [codec.decode(doc, api.ResourceClaim) for doc in codec.load_documents(c) if doc]
    return out


def _parse_v1_claims(claims: Sequence[ClaimInput]) -> list[v1.ResourceClaim | ClaimRef]:
    out: list[v1.ResourceClaim | ClaimRef] = []
    for c in claims:
        if isinstance(c, v1.ResourceClaim | ClaimRef):
            out.append(c)
        elif isinstance(c, str):
            out += [codec.decode(d, v1.ResourceClaim) for d in codec.load_documents(c) if d]
        else:
            raise TypeError(f"a 1.34 kubelet takes v1 claims, not {type(c).__name__}")
    return out


class ApiServer:
    """``kubedra apiserver`` in a subprocess (SQLite in ``directory``, a free port on
    127.0.0.1, 1.34 unless ``emulated_version`` says); ``async with`` gives an
    administrator's :class:`~kubedra.client.rest.Client` once it is ready. Its log is
    ``directory/apiserver.log``."""

    def __init__(self, directory: Path | str, emulated_version: str = "1.34",
                 timeout: float = 60.0) -> None:
        self.directory = Path(directory)
        self.kubeconfig = self.directory / "kubeconfig"
        self._version = emulated_version
        self._timeout = timeout
        self._process: asyncio.subprocess.Process | None = None
        self.client: Client | None = None

    async def __aenter__(self) -> Client:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.kubeconfig.unlink(missing_ok=True)
        with (self.directory / "apiserver.log").open("ab") as log:
            self._process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "kubedra", "apiserver", "--data-dir",
                str(self.directory / "data"), "--port", "0", "--kubeconfig", str(self.kubeconfig),
                "--emulated-version", self._version, stdout=log, stderr=log,
                stdin=asyncio.subprocess.DEVNULL)
        try:
            self.client = await self._ready()
        except BaseException:
            await self._stop()
            raise
        return self.client

    async def _ready(self) -> Client:
        deadline = time.monotonic() + self._timeout
        while True:
            assert self._process is not None
            if self._process.returncode is not None:
                raise RuntimeError(f"the API server exited; see {self.directory}/apiserver.log")
            if self.kubeconfig.exists():
                client = Client(kubeconfig.load(self.kubeconfig))
                try:
                    await client.get_path("/readyz")
                    return client
                except (ApiError, OSError):
                    await client.close()
            if time.monotonic() > deadline:
                raise TimeoutError(f"the API server did not become ready in {self._timeout} s")
            await asyncio.sleep(0.1)

    async def _stop(self) -> None:
        if self.client is not None:
            await self.client.close()
            self.client = None
        if self._process is not None and self._process.returncode is None:
            self._process.terminate()
            try:
                await asyncio.wait_for(self._process.wait(), 10)
            except TimeoutError:
                self._process.kill()
                await self._process.wait()

    async def __aexit__(self, *exc: object) -> None:
        await self._stop()


class FakeKubelet:
    def __init__(self, registration_socket: Path | str, *, accept: bool = True,
                 client: Client | None = None, node_name: str = "worker-1") -> None:
        """``client``: a 1.34 API server's (the kubelet is then 1.34), where the kubelet's
        Node ``node_name`` is created and prepared claims are written."""
        self._registration_socket = Path(registration_socket)
        self._accept = accept
        self._client = client
        self.node_name = node_name
        self.service = ""
        """1.34: the DRA service chosen at registration."""
        self._uids: dict[tuple[str, str], str] = {}  # claims written: (namespace, name) -> uid
        self._reg_channel: grpc.aio.Channel | None = None
        self._dra_channel: grpc.aio.Channel | None = None
        self.node: Any = None
        """The raw ``v1alpha3.Node`` stub, for requests the helpers below do not build."""
        self._stream: Any = None
        self._messages: asyncio.Queue[list[api.NamedResourcesInstance] | BaseException] = (
            asyncio.Queue()
        )
        self._reader: asyncio.Task[None] | None = None
        self.info: PluginInfo | None = None

    async def __aenter__(self) -> FakeKubelet:
        await self.register()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def register(self) -> PluginInfo:
        """The registration handshake; raises :class:`RegistrationRejected` (after telling the
        plugin, as the kubelet does) when the plugin is not a v1 DRA plugin."""
        self._reg_channel = grpc.aio.insecure_channel(f"unix:{self._registration_socket}")
        registration = reg_grpc.RegistrationStub(self._reg_channel)
        pb = await registration.GetInfo(reg_pb2.InfoRequest(), timeout=GET_INFO_TIMEOUT)
        info = PluginInfo(pb.type, pb.name, pb.endpoint, list(pb.supported_versions))
        problem = _registration_problem(info, self._registration_socket, self._client is None)
        if problem or not self._accept:
            error = problem or "rejected by the test"
            with contextlib.suppress(grpc.aio.AioRpcError):  # the plugin answers with an error
                await registration.NotifyRegistrationStatus(
                    reg_pb2.RegistrationStatus(plugin_registered=False, error=error),
                    timeout=NOTIFY_TIMEOUT,
                )
            await self.close()
            raise RegistrationRejected(error)
        endpoint = info.endpoint or str(self._registration_socket)
        self._dra_channel = grpc.aio.insecure_channel(f"unix:{endpoint}")
        if self._client is None:
            self.node = dra_grpc.NodeStub(self._dra_channel)
        else:
            self.service = choose_service(info.supported_versions, KUBELET_SERVICES)
            self.node = KUBELET_SERVICES[self.service][1](self._dra_channel)
            await self._ensure_node(self._client)
        await registration.NotifyRegistrationStatus(
            reg_pb2.RegistrationStatus(plugin_registered=True), timeout=NOTIFY_TIMEOUT
        )
        self.info = info
        return info

    async def close(self) -> None:
        if self._reader is not None:
            await cancel_and_wait(self._reader, ignore=(Exception,))
        for channel in (self._dra_channel, self._reg_channel):
            if channel is not None:
                await channel.close()

    # --- NodeListAndWatchResources -------------------------------------------------------

    async def resources(self, timeout: float = 5.0) -> list[api.NamedResourcesInstance]:
        """The next list the driver sends (the first call opens the stream and returns the
        initial list); raises ``grpc.aio.AioRpcError`` when the stream fails (UNIMPLEMENTED for
        a driver that opted out) or ``EOFError`` when the driver ends it."""
        if self._reader is None:
            self._reader = asyncio.create_task(self._read_stream())
        item = await asyncio.wait_for(self._messages.get(), timeout)
        if isinstance(item, BaseException):
            raise item
        return item

    async def _read_stream(self) -> None:
        stream = self.node.NodeListAndWatchResources(dra_pb2.NodeListAndWatchResourcesRequest())
        try:
            async for message in stream:
                instances: list[api.NamedResourcesInstance] = []
                for model in message.resources:
                    named = convert.instances_from_model(model)
                    instances += named.instances if named is not None else []
                self._messages.put_nowait(instances)
            self._messages.put_nowait(EOFError("the driver closed the stream"))
        except grpc.aio.AioRpcError as err:
            self._messages.put_nowait(err)

    # --- prepare / unprepare -------------------------------------------------------------

    def claims_request(self, claims: Sequence[ClaimInput]) -> list[Any]:
        """The ``v1alpha3.Claim`` messages the kubelet would send for ``claims``."""
        assert self.info is not None, "register() first"
        out = []
        for claim in _parse_claims(claims):
            batch = convert.claim_batches(claim).get(self.info.name)
            if not batch:
                raise ValueError(
                    f"claim {claim.metadata.name!r} has no allocation for driver {self.info.name}"
                )
            out += batch
        return out

    async def _ensure_node(self, client: Client) -> None:
        """The Node a kubelet registers (its ResourceSlices' owner)."""
        try:
            await client.create(Node(metadata=ObjectMeta(name=self.node_name)))
        except ApiError as err:
            if not is_already_exists(err):
                raise

    async def write_claim(self, claim: v1.ResourceClaim) -> v1.ResourceClaim:
        """1.34: ``claim`` as the API holds it once created (or found by name) with the given
        status (its allocation), as the scheduler would have written it."""
        assert self._client is not None
        meta = claim.metadata
        try:
            stored = await self._client.create(msgspec.structs.replace(
                claim, metadata=msgspec.structs.replace(meta, uid=None, resource_version=None),
                status=v1.ResourceClaimStatus()))
        except ApiError as err:
            if not is_already_exists(err):
                raise
            stored = await self._client.get(v1.ResourceClaim, meta.name or "", meta.namespace)
        if stored.status != claim.status:
            stored = await self._client.update_status(
                msgspec.structs.replace(stored, status=claim.status))
        self._uids[(stored.metadata.namespace or "", stored.metadata.name or "")] = (
            stored.metadata.uid or "")
        return stored

    async def v1_claims_request(self, claims: Sequence[ClaimInput], write: bool) -> list[Any]:
        """1.34: the claim references the kubelet would send (``ClaimRef`` as given; a claim
        written to the API first when ``write``, else named with the uid it was written with)."""
        assert self.info is not None, "register() first"
        refs: list[ClaimRef] = []
        for c in _parse_v1_claims(claims):
            if isinstance(c, ClaimRef):
                refs.append(c)
                continue
            if write:
                results = c.status.allocation.devices.results if c.status.allocation else None
                if not any(r.driver == self.info.name for r in results or ()):
                    raise ValueError(f"claim {c.metadata.name!r} has no allocation for driver "
                                     f"{self.info.name}")
                c = await self.write_claim(c)
            ns, name = c.metadata.namespace or "", c.metadata.name or ""
            refs.append(ClaimRef(ns, self._uids.get((ns, name), c.metadata.uid or ""), name))
        pb = KUBELET_SERVICES[self.service][0]
        return [pb.Claim(namespace=r.namespace, uid=r.uid, name=r.name) for r in refs]

    async def prepare(self, *claims: ClaimInput) -> dict[str, PrepareResult]:
        """``NodePrepareResources`` for the claims; claim UID -> result. A failed call raises
        ``grpc.aio.AioRpcError`` (1.34: a claim the driver cannot read, or whose uid is not
        the one named)."""
        if self._client is not None:
            refs = await self.v1_claims_request(claims, write=True)
            pb = KUBELET_SERVICES[self.service][0]
            response = await self.node.NodePrepareResources(
                pb.NodePrepareResourcesRequest(claims=refs), timeout=PREPARE_TIMEOUT)
            return {uid: _v1_result(r) for uid, r in response.claims.items()}
        request = dra_pb2.NodePrepareResourcesRequest(claims=self.claims_request(claims))
        response = await self.node.NodePrepareResources(request, timeout=PREPARE_TIMEOUT)
        return {
            uid: PrepareResult(list(r.cdi_devices), r.error) for uid, r in response.claims.items()
        }

    async def unprepare(self, *claims: ClaimInput) -> dict[str, str]:
        """``NodeUnprepareResources`` for the claims; claim UID -> error (``""`` = success)."""
        if self._client is not None:
            refs = await self.v1_claims_request(claims, write=False)
            pb = KUBELET_SERVICES[self.service][0]
            response = await self.node.NodeUnprepareResources(
                pb.NodeUnprepareResourcesRequest(claims=refs), timeout=PREPARE_TIMEOUT)
            return {uid: r.error for uid, r in response.claims.items()}
        request = dra_pb2.NodeUnprepareResourcesRequest(claims=self.claims_request(claims))
        response = await self.node.NodeUnprepareResources(request, timeout=PREPARE_TIMEOUT)
        return {uid: r.error for uid, r in response.claims.items()}


def _v1_result(r: Any) -> PrepareResult:
    devices = [Device(d.pool_name, d.device_name, list(d.cdi_device_ids), list(d.request_names))
               for d in r.devices]
    return PrepareResult([i for d in devices for i in d.cdi_device_ids], r.error, devices)


def _registration_problem(info: PluginInfo, socket: Path, semver: bool = True) -> str:
    """The kubelet's objection to ``info`` (its error text), ``""`` when it would register.
    1.30 (``semver``): the gist of HighestSupportedVersion, some ``[v]1.x[.y]`` entry; 1.34:
    one of the services it speaks."""
    if info.type != PLUGIN_TYPE:
        return (
            "RegisterPlugin error -- no handler registered for plugin type: "
            f"{info.type} at socket {socket}"
        )
    if not semver:
        try:
            choose_service(info.supported_versions, KUBELET_SERVICES)
        except NoService as err:
            return ("RegisterPlugin error -- plugin validation failed with err: invalid "
                    f"supported gRPC versions of DRA driver plugin {info.name} at endpoint "
                    f"{info.endpoint}: {err}")
        return ""
    if not any(_major_is_one(v) for v in info.supported_versions):
        return (
            "RegisterPlugin error -- plugin validation failed with err: none of the versions "
            f"{info.supported_versions} are supported"
        )
    return ""


def _major_is_one(version: str) -> bool:
    parts = version.strip().removeprefix("v").split(".")
    return len(parts) >= 2 and parts[0] == "1" and all(p.isdigit() for p in parts[:2])
