"""A running DRA driver: the registration and DRA gRPC servers on their unix sockets.

The Python shape of kubeletplugin.Start (k8s.io/dynamic-resource-allocation kubeletplugin/
draplugin.go, v0.30 and v0.34): the DRA server starts first so it is ready when the kubelet,
prompted by the registration socket, dials it; stopping removes the registration socket first
(the kubelet then deregisters the plugin) and the DRA socket last. Paths default to upstream's
conventions under the kubelet root directory.

Two eras, one :class:`Driver`: the API server decides. Given a client of a server that serves
``resource.k8s.io/v1`` (1.34), the driver offers ``v1.DRAPlugin`` and ``v1beta1.DRAPlugin``,
reads each claim from the API and publishes its own ResourceSlices; otherwise (no client, or a
1.30 server) it is 1.30's ``v1alpha3`` driver, and the kubelet publishes for it.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType

import grpc

from kubedra.api.release import R1_30, R1_34, Release
from kubedra.api.resource import v1alpha2 as api
from kubedra.client.discovery import RESOURCE, served_versions
from kubedra.client.rest import Client
from kubedra.driver import sockets
from kubedra.driver.claims import PrepareClaimsFunc, UnprepareClaimsFunc
from kubedra.driver.draplugin import V1_SERVICE, V1BETA1_SERVICE, Batches, add_services
from kubedra.driver.node import NodeService, PrepareFunc, UnprepareFunc
from kubedra.driver.publisher import Publisher
from kubedra.driver.registration import SUPPORTED_VERSIONS, Registrar, RegistrationStatus
from kubedra.driver.resourceslices import (
    DriverResources,
    ErrorHandler,
    Owner,
    ResourceSliceController,
)
from kubedra.proto.generated import dra_v1alpha3_pb2_grpc as dra_grpc
from kubedra.proto.generated import pluginregistration_v1_pb2_grpc as reg_grpc
from kubedra.tasks import cancel_and_wait

DEFAULT_ROOT_DIR = Path("/var/lib/kubelet")
log = logging.getLogger(__name__)

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def default_logging() -> None:
    """INFO to stderr when the root logger has no handler yet, as ``logging.basicConfig``
    decides; a program that configured logging keeps its own."""
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)


def registration_socket_path(root_dir: Path, driver_name: str) -> Path:
    return root_dir / "plugins_registry" / f"{driver_name}-reg.sock"


def dra_socket_path(root_dir: Path, driver_name: str) -> Path:
    return root_dir / "plugins" / driver_name / "dra.sock"


class Driver:
    """One DRA driver. Use ``async with Driver(...)`` or :meth:`start`/:meth:`stop`, or
    :meth:`run` to serve until SIGTERM/SIGINT.

    1.30: ``prepare(claim)`` returns the claim's fully qualified CDI device names;
    ``unprepare(claim)`` undoes it. Both are called once per claim, concurrently for different
    claims; raise :class:`~kubedra.driver.ClaimError` to fail one claim.
    ``publish_resources=False`` opts out of ``NodeListAndWatchResources`` (the kubelet then
    publishes no ResourceSlice).

    1.34 (``client`` of a server serving ``resource.k8s.io/v1``): ``prepare_claims(claims)``
    gets a batch of v1 ResourceClaims, read from the API (allocated, uid as the kubelet named
    it), and answers claim uid -> :class:`~kubedra.driver.PrepareResult` (or an exception for
    one claim); ``unprepare_claims(refs)`` answers uid -> ``None`` or an exception. Calls are
    serialized unless ``serialize=False``. ``services`` are the gRPC services offered, in the
    kubelet's order of preference. :meth:`publish_resources` publishes ResourceSlices owned
    by the Node ``node_name``; their controller reports its errors to ``handle_error``.
    ``kubelet_dra_socket`` is the DRA socket path as the kubelet sees it (another mount
    namespace), sent as the registration endpoint; it defaults to ``dra_socket``.
    ``interceptors`` wrap the DRA server's calls (upstream's ``GRPCInterceptor`` option).
    """

    def __init__(
        self,
        name: str,
        *,
        prepare: PrepareFunc | None = None,
        unprepare: UnprepareFunc | None = None,
        prepare_claims: PrepareClaimsFunc | None = None,
        unprepare_claims: UnprepareClaimsFunc | None = None,
        client: Client | None = None,
        node_name: str = "",
        node_uid: str = "",
        serialize: bool = True,
        services: Sequence[str] = (V1_SERVICE, V1BETA1_SERVICE),
        handle_error: ErrorHandler | None = None,
        root_dir: Path | str = DEFAULT_ROOT_DIR,
        registration_socket: Path | str | None = None,
        dra_socket: Path | str | None = None,
        kubelet_dra_socket: Path | str | None = None,
        instances: Sequence[api.NamedResourcesInstance] = (),
        publish_resources: bool = True,
        shutdown_grace: float = 5.0,
        interceptors: Sequence[grpc.aio.ServerInterceptor] = (),
    ) -> None:
        if not name:
            raise ValueError("driver name must be set")
        if (prepare is None) != (unprepare is None) or (
                (prepare_claims is None) != (unprepare_claims is None)):
            raise ValueError("prepare and unprepare callbacks come in pairs")
        if prepare is None and prepare_claims is None:
            raise ValueError("a driver needs prepare/unprepare (1.30) or "
                             "prepare_claims/unprepare_claims (1.34)")
        if not services:
            raise ValueError("no supported DRA gRPC API is implemented and enabled")
        root = Path(root_dir)
        self.name = name
        self.registration_socket = Path(
            registration_socket or registration_socket_path(root, name)
        ).absolute()
        self.dra_socket = Path(dra_socket or dra_socket_path(root, name)).absolute()
        endpoint = str(kubelet_dra_socket or self.dra_socket)
        self._publisher = Publisher(instances) if publish_resources else None
        self._node = (NodeService(prepare, unprepare, self._publisher)
                      if prepare is not None and unprepare is not None else None)
        self._batches = (Batches(client, prepare_claims, unprepare_claims, serialize)
                         if client is not None and prepare_claims is not None
                         and unprepare_claims is not None else None)
        self._client = client
        self._services = list(services)
        self.node_name = node_name
        self._node_uid = node_uid
        self._handle_error = handle_error
        self._slices: ResourceSliceController | None = None
        self._slices_started: asyncio.Task[None] | None = None
        self._registrar = Registrar(name, endpoint)
        self.release: Release | None = None
        """The era the driver serves (known once started): ``R1_30`` or ``R1_34``."""
        self._grace = shutdown_grace
        self._interceptors = list(interceptors)
        self._dra_server: grpc.aio.Server | None = None
        self._reg_server: grpc.aio.Server | None = None

    # --- state ---------------------------------------------------------------------------

    @property
    def registration_status(self) -> RegistrationStatus | None:
        """What the kubelet last reported via NotifyRegistrationStatus (``None`` before)."""
        return self._registrar.status

    @property
    def registered(self) -> asyncio.Event:
        """Set while the kubelet has accepted the registration."""
        return self._registrar.registered

    async def wait_registered(self, timeout: float | None = None) -> RegistrationStatus:
        await asyncio.wait_for(self._registrar.registered.wait(), timeout)
        status = self._registrar.status
        assert status is not None
        return status

    @property
    def prepared(self) -> dict[str, list[str]]:
        """1.30: claim UID -> CDI devices of the claims currently prepared through this
        process."""
        return self._node.prepared if self._node is not None else {}

    def publish(self, instances: Sequence[api.NamedResourcesInstance]) -> None:
        """Replace the published instances; every open stream gets the new list at once.
        Call it from the event loop's thread (``loop.call_soon_threadsafe`` from others)."""
        if self._publisher is None:
            raise RuntimeError(f"driver {self.name} was started with publish_resources=False")
        self._publisher.publish(instances)

    def publish_resources(self, resources: DriverResources) -> None:
        """1.34: publish ``resources`` as this node's ResourceSlices (the first call starts the
        ResourceSlice controller, later ones update it). It returns at once: the slices are
        written in the background, and refused ones reported to ``handle_error``."""
        if self.release is not R1_34 or self._client is None:
            raise RuntimeError(f"driver {self.name} publishes ResourceSlices only on a 1.34 "
                               "API server (started with its client)")
        if not self.node_name:
            raise RuntimeError("no NodeName was set to publish resources")
        if self._slices is not None:
            self._slices.publish_resources(resources)
            return
        self._slices = ResourceSliceController(
            self._client, self.name, Owner.node(self.node_name, self._node_uid),
            resources=resources, error_handler=self._handle_error)
        # it syncs once its informer has listed the driver's slices (retrying on its own)
        self._slices_started = asyncio.create_task(self._slices.start())

    async def _choose_release(self) -> Release:
        """1.34 when the driver has a client and its server serves ``resource.k8s.io/v1``."""
        if self._client is None or not await served_versions(self._client, RESOURCE, ("v1",)):
            if self._node is None:
                raise RuntimeError(f"driver {self.name}: prepare_claims/unprepare_claims need "
                                   "a client of a 1.34 API server (resource.k8s.io/v1)")
            return R1_30
        if self._batches is None:
            raise RuntimeError(f"driver {self.name}: the API server serves resource.k8s.io/v1 "
                               "(1.34): prepare_claims/unprepare_claims are needed")
        return R1_34

    # --- lifecycle -----------------------------------------------------------------------

    async def start(self) -> None:
        self.release = await self._choose_release()
        if self.release is R1_34:
            batches = self._batches
            assert batches is not None
            self._registrar.offer(self._services)
            self._dra_server = await self._serve(
                self.dra_socket, lambda s: add_services(batches, s, self._services),
                self._interceptors)
        else:
            node = self._node
            self._registrar.offer(SUPPORTED_VERSIONS)
            self._dra_server = await self._serve(
                self.dra_socket, lambda s: dra_grpc.add_NodeServicer_to_server(node, s),
                self._interceptors)
        try:
            self._reg_server = await self._serve(
                self.registration_socket,
                lambda s: reg_grpc.add_RegistrationServicer_to_server(self._registrar, s),
            )
        except BaseException:
            await self._stop_server(self._dra_server, self.dra_socket, 0)
            raise
        log.info(
            "driver %s serving: registration %s, DRA %s%s",
            self.name,
            self.registration_socket,
            self.dra_socket,
            f" ({', '.join(self._services)})" if self.release is R1_34 else "",
        )

    @staticmethod
    async def _serve(
        path: Path,
        add: Callable[[grpc.aio.Server], None],
        interceptors: Sequence[grpc.aio.ServerInterceptor] = (),
    ) -> grpc.aio.Server:
        sockets.claim_socket_path(path)
        server = grpc.aio.server(interceptors=interceptors)
        add(server)
        try:
            server.add_insecure_port(f"unix:{path}")
        except RuntimeError as err:
            raise sockets.SocketPathError(f"cannot listen on {path}: {err}") from None
        await server.start()
        return server

    async def stop(self) -> None:
        """Stop serving and remove both sockets: registration first, then the DRA server after
        up to ``shutdown_grace`` seconds for calls in progress."""
        await self._stop_server(self._reg_server, self.registration_socket, 0)
        self._reg_server = None
        self._registrar.registered.clear()
        if self._publisher is not None:
            self._publisher.close()
        if self._slices_started is not None:
            await cancel_and_wait(self._slices_started)
            self._slices_started = None
        if self._slices is not None:
            await self._slices.stop()
            self._slices = None
        await self._stop_server(self._dra_server, self.dra_socket, self._grace)
        self._dra_server = None
        if self._node is not None:
            self._node.cancel_running()

    @staticmethod
    async def _stop_server(server: grpc.aio.Server | None, path: Path, grace: float) -> None:
        """Stop ``server`` and remove its socket; without a server of ours, leave ``path``."""
        if server is None:
            return
        try:
            await server.stop(grace)
        finally:
            sockets.release_socket_path(path)

    async def __aenter__(self) -> Driver:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Serve until ``stop`` is set or SIGTERM/SIGINT arrives, then stop cleanly. As a
        program's main loop, it logs at INFO to stderr unless the program set up logging."""
        default_logging()
        stop = stop or asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        try:
            async with self:
                await stop.wait()
        finally:
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)
