"""The node agent's HTTPS endpoint the API server's ``pods/log`` proxies to: the kubelet's
``GET /containerLogs/{namespace}/{pod}/{container}`` (pkg/kubelet/server/server.go), with its
query options, its texts and codes, over TLS with the node's serving certificate.

Only the API server may call it: a client certificate signed by the cluster CA whose common
name is :data:`API_SERVER_USER` (kube-apiserver's ``--kubelet-client-certificate``). Upstream's
kubelet asks the API server (a SubjectAccessReview of ``nodes/proxy``) instead; the check here
is the simpler one docs/deviations.md names. No certificate is upstream's 401, another user its
403 text.
"""

from __future__ import annotations

import contextlib
import datetime
import logging
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from kubedra.api.core import Pod
from kubedra.kubelet.containerlogs import ContainerLogs, LogOptions

log = logging.getLogger(__name__)

API_SERVER_USER = "kube-apiserver-kubelet-client"
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False", ""})


def serving_context(cert: Path, key: Path, client_ca: Path) -> ssl.SSLContext:
    """TLS over the node's serving certificate; client certificates signed by ``client_ca``
    are asked for (their absence is answered 401, not a failed handshake)."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    ctx.load_verify_locations(cafile=str(client_ca))
    ctx.verify_mode = ssl.CERT_OPTIONAL
    return ctx


class LogUnavailable(Exception):
    """The kubelet's ``validateContainerLogStatus`` texts (a 400)."""


def instance(pod: Pod, container: str, previous: bool) -> int:
    """Which run of ``container`` the logs are read from, by the container's status."""
    name = pod.metadata.name
    status = next((s for s in pod.status.container_statuses or () if s.name == container), None)
    if status is None:
        raise LogUnavailable(f'container "{container}" in pod "{name}" is not available')
    state = status.state if isinstance(status.state, dict) else {}
    last = status.last_state if isinstance(status.last_state, dict) else {}
    restarts = status.restart_count or 0
    if previous:
        if "terminated" not in last:
            raise LogUnavailable(
                f'previous terminated container "{container}" in pod "{name}" not found')
        return restarts - 1
    if "running" in state or "terminated" in state:
        return restarts
    if "terminated" in last:
        return restarts - 1
    reason = (state.get("waiting") or {}).get("reason")
    if reason:
        raise LogUnavailable(f'container "{container}" in pod "{name}" is waiting to start: '
                             f"{reason}")
    raise LogUnavailable(f'container "{container}" in pod "{name}" is waiting to start - '
                         "no logs yet")


def _bool(value: str | None) -> bool:
    if value is None or value in _FALSE:
        return False
    if value in _TRUE:
        return True
    raise ValueError(value)


def _int(value: str | None) -> int | None:
    return None if value is None or value == "" else int(value)


def parse_options(query: Any) -> tuple[LogOptions, bool]:
    """(options, previous) from the query the API server sends; ``ValueError`` if it cannot
    be decoded, ``LookupError`` if it decodes to invalid options."""
    tail = query.get("tail")  # the older name; "all" is no limit
    tail_lines = _int(query.get("tailLines") if tail is None else
                      (None if tail == "all" else tail))
    limit = _int(query.get("limitBytes"))
    since_seconds = _int(query.get("sinceSeconds"))
    since_time = query.get("sinceTime")
    since: float | None = None
    if since_time:
        since = datetime.datetime.fromisoformat(since_time.replace("Z", "+00:00")).timestamp()
    if ((tail_lines is not None and tail_lines < 0) or (limit is not None and limit < 1)
            or (since_seconds is not None and (since_seconds < 1 or since_time))):
        raise LookupError
    if since_seconds is not None:
        since = datetime.datetime.now(datetime.UTC).timestamp() - since_seconds
    return LogOptions(follow=_bool(query.get("follow")), timestamps=_bool(
        query.get("timestamps")), tail_lines=tail_lines, since=since,
        limit_bytes=limit), _bool(query.get("previous"))


def _text(status: int, text: str) -> web.Response:
    return web.Response(status=status, text=text)


def _user(request: web.BaseRequest) -> str | None:
    transport = request.transport
    cert = transport.get_extra_info("peercert") if transport is not None else None
    if not cert:
        return None
    for rdn in cert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                return str(value)
    return ""


class LogServer:
    """``pod(namespace, name)``: the pod as this node runs it, or None."""

    def __init__(self, logs: ContainerLogs, pod: Callable[[str, str], Pod | None],
                 context: ssl.SSLContext, host: str) -> None:
        self.logs = logs
        self.pod = pod
        self.context = context
        self.host = host
        self._runner: web.AppRunner | None = None

    async def start(self, port: int = 0) -> int:
        """Listen on ``host:port`` (0: a free port); the port bound."""
        app = web.Application()
        app.router.add_get("/containerLogs/{namespace}/{pod}/{container}", self._logs)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False,
                                     shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, port, ssl_context=self.context)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        return int(sockets[0].getsockname()[1]) if sockets else port

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _logs(self, request: web.Request) -> web.StreamResponse:
        user = _user(request)
        if user is None:
            return _text(401, "Unauthorized")
        if user != API_SERVER_USER:
            return _text(403, f"Forbidden (user={user}, verb=get, resource=nodes, "
                              "subresource=proxy)")
        namespace = request.match_info["namespace"]
        name = request.match_info["pod"]
        container = request.match_info["container"]
        try:
            opts, previous = parse_options(request.query)
        except LookupError:
            return _text(422, '{"message": "Invalid request."}')
        except ValueError:
            return _text(400, '{"message": "Unable to decode query."}')
        pod = self.pod(namespace, name)
        if pod is None:
            return _text(404, f'pod "{name}" does not exist')
        if not any(c.name == container for c in [*(pod.spec.init_containers or ()),
                                                 *pod.spec.containers]):
            return _text(404, f'container "{container}" not found in pod "{name}"')
        try:
            path = self.logs.path(pod, container, instance(pod, container, previous))
        except LogUnavailable as e:
            return _text(400, str(e))
        resp = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await resp.prepare(request)
        with contextlib.suppress(FileNotFoundError, ConnectionResetError):
            await self.logs.read(path, opts, resp.write)
        with contextlib.suppress(ConnectionResetError):
            await resp.write_eof()
        return resp
