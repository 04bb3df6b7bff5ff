"""The aiohttp application: one middleware (audit, auth, limits, errors, metrics) and one
dispatcher over the fixed paths (health, metrics, version, discovery, OpenAPI) and the
resource paths."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from kubedra.api.core import Namespace
from kubedra.api.features import FeatureGates
from kubedra.api.meta import ObjectMeta
from kubedra.api.runtimeconfig import RuntimeConfig
from kubedra.api.scheme import DEFAULTS
from kubedra.apiserver import (
    audit,
    connections,
    discovery,
    errors,
    healthz,
    impersonation,
    media,
    objects,
    openapi,
    openapi_proto,
    pki,
)
from kubedra.apiserver.auth import REQUESTOR, USER
from kubedra.apiserver.authn import Authenticator, AuthnOptions
from kubedra.apiserver.authn.serviceaccount import TokenKeys
from kubedra.apiserver.authn.tokenrequest import TokenRequests
from kubedra.apiserver.authz.access import Access
from kubedra.apiserver.authz.attributes import Attributes
from kubedra.apiserver.authz.chain import DEFAULT_MODES
from kubedra.apiserver.gc import GarbageCollector
from kubedra.apiserver.handlers import ResourceHandlers, resolve
from kubedra.apiserver.hub import WatchHub
from kubedra.apiserver.kubernetes_service import ensure_kubernetes_service
from kubedra.apiserver.limits import Door, Limits, is_long_running
from kubedra.apiserver.metrics import GROUP, RESOURCE, VERB, Metrics
from kubedra.apiserver.podlogs import PodLogs
from kubedra.apiserver.registry import EVENT_TTL, Registry
from kubedra.apiserver.replies import JSON, Reply, json_reply
from kubedra.apiserver.rest import Rest
from kubedra.apiserver.tolerationseconds import DEFAULT_SECONDS, DefaultTolerationSeconds
from kubedra.registry.pipeline import MAX_REQUEST_BYTES
from kubedra.storage.contract import Store, StoreError

log = logging.getLogger(__name__)

_BOOT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


@dataclass(frozen=True, slots=True)
class Options:
    gates: FeatureGates = field(default_factory=FeatureGates)  # its release is the server's
    runtime_config: RuntimeConfig = DEFAULTS
    limits: Limits = field(default_factory=Limits)
    connection_limits: connections.ConnectionLimits = field(
        default_factory=connections.ConnectionLimits)
    audit_log: audit.AuditLogConfig | None = None
    bookmark_interval: float = 60.0
    max_watch_seconds: float = 1800.0
    # None: no authentication, every request is an administrator (servers embedded in tests)
    authn: AuthnOptions | None = None
    # None: a fresh signing key (its tokens end with the process)
    service_account_keys: TokenKeys | None = None
    authorization_modes: tuple[str, ...] = DEFAULT_MODES
    gc: bool = True
    watch_window: int = 20_000
    watch_window_bytes: int = 256 << 20
    # what may wait for one watcher's client before its watch is ended
    watch_buffer_bytes: int = 16 << 20
    event_ttl: int = EVENT_TTL  # seconds; 0: Events are kept until deleted
    # DefaultTolerationSeconds admission: not-ready and unreachable tolerations' seconds
    default_toleration_seconds: tuple[int, int] = (DEFAULT_SECONDS, DEFAULT_SECONDS)
    # the kubelet client certificate and the CA of kubelets' serving certificates (pods/log);
    # None: kubelets cannot be reached
    kubelet_tls: ssl.SSLContext | None = None


class ApiServer:
    """Start with :meth:`start`, stop with :meth:`stop` (closes watches first)."""

    def __init__(self, store: Store, options: Options | None = None) -> None:
        self.options = options or Options()
        self.store = store
        self.registry = Registry(self.options.gates, self.options.event_ttl,
                                 self.options.runtime_config)
        self.cache = objects.WireCache()
        self.hub = WatchHub(store, self.cache, self.options.watch_window,
                            self.options.watch_window_bytes, self.options.watch_buffer_bytes)
        self.rest = Rest(self.registry, store, self.cache)
        self.resources = ResourceHandlers(
            self.hub, self.rest,
            bookmark_interval=self.options.bookmark_interval,
            max_watch_seconds=self.options.max_watch_seconds,
        )
        self.resources.default_tolerations = DefaultTolerationSeconds(
            *self.options.default_toleration_seconds)
        self.gc = GarbageCollector(self.registry, self.rest, self.hub)
        keys = self.options.service_account_keys or TokenKeys(pki.new_key())
        self.authn = Authenticator(self.options.authn, keys, self._current_uid)
        self.resources.tokens = TokenRequests(keys, self.rest, self.registry)
        self.resources.logs = PodLogs(self.registry, self.rest, self.options.kubelet_tls)
        self.authz = Access(self.hub, store, self.registry, self.rest,
                            self.options.authorization_modes)
        self.resources.authz = self.authz
        self.metrics = Metrics()
        self.metrics.track_watch_cache(lambda: self.hub.window_bytes,
                                       lambda: len(self.hub.window))
        self.door = Door(self.options.limits, self.metrics)
        self.audit = audit.Auditor(self.options.audit_log)
        self.health = healthz.Health(store)
        self.address = ""
        self._runner: web.ServerRunner | None = None
        self._static: dict[str, bytes] = {}

    # --- lifecycle --------------------------------------------------------------------------

    async def prepare(self) -> None:
        """Start the watch hub and the collector; create the boot namespaces."""
        await self.hub.start()
        await self._boot_namespaces()
        await self.authz.start()
        if self.options.gc:
            await self.gc.start()

    async def start(self, host: str = "127.0.0.1", port: int = 0,
                    ssl_context: object | None = None) -> int:
        await self.prepare()
        self.audit.start()
        # The low-level server: no router or middleware chain, one handler does both.
        server = connections.Server(self.audit.around(self._handle), self.options.connection_limits,
                                    request_factory=self._make_request, access_log=None)
        self._runner = web.ServerRunner(server, handle_signals=False, shutdown_timeout=2.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, ssl_context=ssl_context,  # type: ignore[arg-type]
                           backlog=1024)
        await site.start()
        listener = site._server
        assert listener is not None
        sockets = getattr(listener, "sockets", None) or []
        bound = int(sockets[0].getsockname()[1]) if sockets else port
        self.address = f"{host}:{bound}"
        await ensure_kubernetes_service(self.registry, self.rest, self.store, bound)
        return bound

    async def stop(self) -> None:
        self.resources.streamer.stop()
        await asyncio.sleep(0)
        if self._runner is not None:
            await self._runner.cleanup()
        await self.gc.stop()
        if self.resources.logs is not None:
            await self.resources.logs.close()
        await self.authz.stop()
        await self.hub.stop()
        self.audit.stop()

    async def _boot_namespaces(self) -> None:
        ns = self.registry.namespaces()
        for name in _BOOT_NAMESPACES:
            if await self.store.get(ns.key("", name)) is not None:
                continue
            with contextlib.suppress(errors.ApiError):
                await self.rest.create(ns, "", Namespace(metadata=ObjectMeta(name=name)))

    # --- middleware -------------------------------------------------------------------------

    def _make_request(
        self, message: Any, payload: Any, protocol: Any, writer: Any, task: Any
    ) -> web.BaseRequest:
        return audit.Request(message, payload, protocol, writer, task,
                             asyncio.get_running_loop(), client_max_size=MAX_REQUEST_BYTES)

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        """Auth, limits, errors as Status, metrics; then :meth:`_dispatch`."""
        start = time.perf_counter()
        long_running = is_long_running(request)
        code = 500
        try:
            await self._authenticate(request)
            resp = await self.door.serve(request, self._dispatch, long_running)
            code = resp.status
            return resp
        except errors.ApiError as err:
            code = err.code
            return media.status_reply(request, err)
        except StoreError as failure:
            log.exception("store error on %s %s", request.method, request.path)
            code = 500
            return media.status_reply(request, errors.internal(str(failure)))
        except (ConnectionResetError, asyncio.CancelledError):
            code = 499
            raise
        except web.HTTPException as exc:
            code = exc.status
            raise
        except Exception as unexpected:
            log.exception("unexpected error on %s %s", request.method, request.path)
            code = 500
            return media.status_reply(
                request, errors.internal(f"{type(unexpected).__name__}: {unexpected}"))
        finally:
            if not long_running:
                self.metrics.observe(
                    request.get(VERB, request.method), request.get(GROUP, ""),
                    request.get(RESOURCE, ""), code, time.perf_counter() - start,
                )

    async def _authenticate(self, request: web.BaseRequest) -> None:
        """Who the request is, then whom it impersonates (if it may)."""
        request[USER] = user = await self.authn.authenticate(request)
        acting = impersonation.acting_as(user, request.headers, self.authz.authorize)
        if acting is not None:
            request[REQUESTOR] = user
            request[USER] = acting

    async def _current_uid(self, plural: str, namespace: str, name: str) -> str | None:
        """The uid of a stored core/v1 object (ServiceAccount tokens name theirs)."""
        res = self.registry.get("", "v1", plural)
        kv = await self.store.get(res.key(namespace, name)) if res is not None else None
        return None if kv is None else str(objects.meta(objects.decode(kv.value)).get("uid"))

    # --- dispatch -----------------------------------------------------------------------------

    async def _dispatch(self, request: web.BaseRequest) -> web.StreamResponse:
        path = request.path
        parts = path.split("/")[1:]
        if parts and parts[-1] == "" and len(parts) > 1:
            parts = parts[:-1]
        head = parts[0] if parts else ""
        if not _resource_path(head, parts):
            self.authz.authorize(Attributes(request[USER], request.method.lower(), False,
                                            path=path))
        if head in ("api", "apis") and len(parts) <= 3 - (head == "api") and (
            request.method not in ("GET", "HEAD")
        ):
            raise errors.method_not_allowed(request.method)
        if head == "api":
            if len(parts) == 1:
                return self._discovery_root(request, legacy=True)
            if parts[1] != "v1":
                raise errors.path_not_found()
            if len(parts) == 2:
                return self._resource_list(request, "", "v1")
            return await self._resource(request, "", "v1", parts[2:])
        if head == "apis":
            if len(parts) == 1:
                return self._discovery_root(request, legacy=False)
            group = parts[1]
            if len(parts) == 2:
                return self._api_group(request, group)
            if len(parts) == 3:
                return self._resource_list(request, group, parts[2])
            if group == discovery.CRD_PATH[0] and parts[1:] == discovery.CRD_PATH and (
                request.method in ("GET", "HEAD")
            ):
                return await self._custom_resource_definitions()
            return await self._resource(request, group, parts[2], parts[3:])
        return await self._fixed(request, path)

    async def _resource(
        self, request: web.BaseRequest, group: str, version: str, parts: list[str]
    ) -> web.StreamResponse:
        request[GROUP] = group
        target = resolve(self.registry, group, version, parts)
        return await self.resources.serve(request, target)

    async def _fixed(self, request: web.BaseRequest, path: str) -> web.StreamResponse:
        if request.method not in ("GET", "HEAD"):
            raise errors.method_not_allowed(request.method)
        endpoint, _, check = path[1:].partition("/")
        if endpoint in healthz.ENDPOINTS:
            return await self.health.answer(endpoint, check, request.query)
        if path == "/metrics":
            return web.Response(body=self.metrics.render(),
                                headers={"Content-Type": self.metrics.content_type})
        if path in ("/version", "/version/"):  # go-restful serves both; VersionApi asks "/version/"
            return _json_response(discovery.version_info(self.registry.release))
        if path == "/openapi/v3":
            return self._cached("openapi/v3", lambda: openapi.v3_index(self.registry))
        if path.startswith("/openapi/v3/"):
            gv = path[len("/openapi/v3/"):].strip("/")
            return self._cached(gv, lambda: openapi.v3_document(self.registry, gv))
        if path == "/openapi/v2":
            accept = request.headers.get("Accept", "")
            if any(t in accept for t in openapi_proto.MEDIA_TYPES):
                return self._cached("openapi/v2.pb", lambda: openapi.v2_document(self.registry),
                                    openapi_proto.encode, openapi_proto.CONTENT_TYPE)
            if accept and "json" not in accept and "*/*" not in accept:
                raise errors.path_not_found()
            return self._cached("openapi/v2", lambda: openapi.v2_document(self.registry))
        raise errors.path_not_found()

    def _cached(self, key: str, build: Callable[[], Any], encode: Callable[[Any], bytes]
                = objects.encode, content_type: str = JSON) -> web.Response:
        """Static documents are encoded once; a builder answering None is a 404."""
        data = self._static.get(key)
        if data is None:
            doc = build()
            if doc is None:
                raise errors.path_not_found()
            data = self._static[key] = encode(doc)
        return Reply(body=data, headers={"Content-Type": content_type})

    def _discovery_root(self, request: web.BaseRequest, legacy: bool) -> web.Response:
        request[VERB] = "get"
        version = discovery.aggregated_version(request.headers.get("Accept", ""))
        if version is not None:
            body = discovery.aggregated(self.registry, legacy, version)
            ctype = discovery.AGGREGATED_V2 if version == "v2" else discovery.AGGREGATED_V2BETA1
            return Reply(body=objects.encode(body),
                         headers={"Content-Type": ctype, "Vary": "Accept"})
        if legacy:
            return _json_response(discovery.api_versions(self.address or request.host))
        return _json_response(discovery.api_group_list(self.registry))

    async def _custom_resource_definitions(self) -> web.Response:
        """kubectl's validator looks a kind it cannot find up among the CRDs; none exist."""
        revision = await self.store.current_revision()
        return _json_response(discovery.custom_resource_definition_list(revision))

    def _api_group(self, request: web.BaseRequest, group: str) -> web.Response:
        body = discovery.api_group(self.registry, group)
        if body is None:
            raise errors.path_not_found()
        return _json_response(body)

    def _resource_list(self, request: web.BaseRequest, group: str, version: str) -> web.Response:
        body = discovery.resource_list(self.registry, group, version)
        if body is None:
            raise errors.path_not_found()
        return _json_response(body)


def _resource_path(head: str, parts: list[str]) -> bool:
    """``/api/v1/<resource>...`` and ``/apis/<group>/<version>/<resource>...``: what
    RequestInfo calls resource requests (the handlers authorize those)."""
    return (head == "api" and len(parts) > 2) or (head == "apis" and len(parts) > 3)


def _json_response(body: object, code: int = 200) -> web.Response:
    return json_reply(objects.encode(body), code)


