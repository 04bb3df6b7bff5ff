"""``GET pods/<name>/log``: kube-apiserver's LogREST (pkg/registry/core/pod/rest/log.go and
``pod.LogLocation``): the ``PodLogOptions`` query is checked, the container chosen, and the
request proxied to the kubelet of the pod's node, at the node's address and the port its
``status.daemonEndpoints.kubeletEndpoint`` names, over TLS verified with the cluster CA and
authenticated by the API server's kubelet client certificate. The kubelet's answer is streamed
back as ``text/plain``; its errors become upstream's Status (GenericHttpResponseChecker).

The node's address is its first ``InternalIP``, then ``Hostname`` (kube-apiserver prefers
``Hostname``; simulated nodes have no resolvable host name, see docs/deviations.md).
"""

from __future__ import annotations

import datetime
import ssl
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode

import aiohttp
from aiohttp import web

from kubedra.api.base import Obj
from kubedra.api.goformat import go_quote
from kubedra.apiserver import errors, params
from kubedra.apiserver.registry import Registry
from kubedra.apiserver.rest import Rest
from kubedra.validation import field

#: kube-apiserver's ``--kubelet-port`` default, for a Node that names no port.
DEFAULT_KUBELET_PORT = 10250
_ADDRESS_TYPES = ("InternalIP", "Hostname", "InternalDNS", "ExternalIP", "ExternalDNS")
_RFC3339 = '"2006-01-02T15:04:05Z07:00"'
#: How much of a kubelet's error answer becomes the Status message (upstream's maxReadLength).
MAX_ERROR_BYTES = 50_000
TEXT = "text/plain"


def _since_time(value: str) -> str:
    """A ``sinceTime`` as sent on to the kubelet (RFC 3339, whole seconds), or 400."""
    try:
        parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise errors.bad_request(f"parsing time {go_quote(value)} as {_RFC3339}: cannot "
                                 f"parse {go_quote(value)} as \"2006\"") from None
    if parsed.tzinfo is None:
        raise errors.bad_request(f"parsing time {go_quote(value)} as {_RFC3339}: cannot "
                                 'parse "" as "Z07:00"')
    return parsed.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def kubelet_query(name: str, query: Mapping[str, str]) -> tuple[str, dict[str, str], bool]:
    """(container, the kubelet's query, insecureSkipTLSVerifyBackend) of a ``PodLogOptions``
    query, after ``ValidatePodLogOptions`` (422)."""
    tail = params.parse_int("tailLines", query.get("tailLines"))
    limit = params.parse_int("limitBytes", query.get("limitBytes"))
    since_seconds = params.parse_int("sinceSeconds", query.get("sinceSeconds"))
    since_time = query.get("sinceTime") or None
    errs: field.ErrorList = []
    if tail is not None and tail < 0:
        errs.append(field.invalid(field.Path("tailLines"), tail,
                                  "must be greater than or equal to 0"))
    if limit is not None and limit < 1:
        errs.append(field.invalid(field.Path("limitBytes"), limit, "must be greater than 0"))
    if since_seconds is not None and since_time is not None:
        errs.append(field.forbidden(field.Path(""), "at most one of `sinceTime` or "
                                                    "`sinceSeconds` may be specified"))
    elif since_seconds is not None and since_seconds < 1:
        errs.append(field.invalid(field.Path("sinceSeconds"), since_seconds,
                                  "must be greater than 0"))
    if errs:
        raise errors.invalid("PodLogOptions", "", name, errs)
    out: dict[str, str] = {}
    for flag in ("follow", "previous", "timestamps"):
        if params.parse_bool(flag, query.get(flag)):
            out[flag] = "true"
    if since_seconds is not None:
        out["sinceSeconds"] = str(since_seconds)
    if since_time is not None:
        out["sinceTime"] = _since_time(since_time)
    if tail is not None:
        out["tailLines"] = str(tail)
    if limit is not None:
        out["limitBytes"] = str(limit)
    skip = params.parse_bool("insecureSkipTLSVerifyBackend",
                             query.get("insecureSkipTLSVerifyBackend"))
    return query.get("container", ""), dict(sorted(out.items())), skip


def _names(containers: Any) -> list[str]:
    return [str(c.get("name", "")) for c in containers or () if isinstance(c, dict)]


def choose_container(pod: Obj, container: str) -> str:
    """``validateContainer``: the one container, or the named one if the pod has it."""
    spec = pod.get("spec") or {}
    name = (pod.get("metadata") or {}).get("name", "")
    every = [*_names(spec.get("initContainers")), *_names(spec.get("containers")),
             *_names(spec.get("ephemeralContainers"))]
    if container:
        if container not in every:
            raise errors.bad_request(f"container {container} is not valid for pod {name}")
        return container
    regular = _names(spec.get("containers"))
    if len(regular) == 1:
        return regular[0]
    if not regular:
        raise errors.bad_request(f"a container name must be specified for pod {name}")
    raise errors.bad_request(f"a container name must be specified for pod {name}, choose one "
                             f"of: [{' '.join(every)}]")


def kubelet_endpoint(node: Obj) -> tuple[str, int]:
    """(address, port) of the node's kubelet."""
    status = node.get("status") or {}
    addresses = [a for a in status.get("addresses") or () if isinstance(a, dict)]
    for kind in _ADDRESS_TYPES:
        for a in addresses:
            if a.get("type") == kind and a.get("address"):
                host = str(a["address"])
                endpoint = (status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}
                port = endpoint.get("Port")
                return host, port if isinstance(port, int) and port > 0 else \
                    DEFAULT_KUBELET_PORT
    known = ", ".join(f"{{{a.get('type')} {a.get('address')}}}" for a in addresses)
    raise errors.internal(f"no preferred addresses found; known addresses: [{known}]")


def kubelet_error(code: int, body: bytes, name: str) -> errors.ApiError:
    """A kubelet's error answer as kube-apiserver words it for ``pods/log``."""
    text = body[:MAX_ERROR_BYTES].decode(errors="replace")
    if code == 500:
        return errors.internal(text)
    if code == 400:
        return errors.bad_request(text)
    reasons = {404: ("NotFound", "the server could not find the requested resource"),
               401: ("Unauthorized", "the server has asked for the client to provide "
                                     "credentials"),
               403: ("Forbidden", text),
               422: ("Invalid", "the server rejected our request due to an error in our "
                                "request")}
    reason, message = reasons.get(code, ("InternalError" if code >= 500 else "Unknown",
                                         f"an error on the server ({text!r}) has prevented "
                                         "the request from succeeding" if code >= 500 else
                                         f"the server responded with the status code {code} "
                                         "but did not return more information"))
    return errors.ApiError(errors.status_body(
        code, reason, f"{message} ( pods/log {name})", {"name": name, "kind": "pods/log"}))


class PodLogs:
    """Proxies ``pods/log`` to the kubelets; ``kubelet_tls``: the API server's kubelet client
    certificate and the CA that signs kubelet serving certificates (None: no kubelet can be
    reached, every log request is a 500 saying so)."""

    def __init__(self, registry: Registry, rest: Rest,
                 kubelet_tls: ssl.SSLContext | None) -> None:
        self.registry = registry
        self.rest = rest
        self.kubelet_tls = kubelet_tls
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            # no bound on connections: each followed log holds one for as long as it runs
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0), auto_decompress=False,
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=10.0))
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def serve(self, request: web.BaseRequest, namespace: str,
                    name: str) -> web.StreamResponse:
        container, query, skip_verify = kubelet_query(name, request.query)
        pods = self.registry.get("", "v1", "pods")
        nodes = self.registry.get("", "v1", "nodes")
        assert pods is not None and nodes is not None
        pod, _ = await self.rest.get(pods, namespace, name)
        container = choose_container(pod, container)
        node_name = (pod.get("spec") or {}).get("nodeName")
        if not node_name:  # not scheduled: no location, an empty answer
            return web.Response(status=200, body=b"", content_type=TEXT)
        node, _ = await self.rest.get(nodes, "", str(node_name))
        host, port = kubelet_endpoint(node)
        if self.kubelet_tls is None:
            raise errors.internal("the API server has no kubelet client certificate")
        url = (f"https://{host}:{port}/containerLogs/{quote(namespace, safe='')}/"
               f"{quote(name, safe='')}/{quote(container, safe='')}")
        if query:
            url += "?" + urlencode(query)
        return await self._proxy(request, url, name,
                                 False if skip_verify else self.kubelet_tls)

    async def _proxy(self, request: web.BaseRequest, url: str, name: str,
                     tls: ssl.SSLContext | bool) -> web.StreamResponse:
        try:
            upstream = await self._client().get(url, ssl=tls)
        except (aiohttp.ClientError, OSError) as failure:
            raise errors.internal(f"Get {go_quote(url)}: {failure}") from None
        try:
            if not 200 <= upstream.status <= 206:
                raise kubelet_error(upstream.status, await upstream.content.read(
                    MAX_ERROR_BYTES), name)
            resp = web.StreamResponse(status=200, headers={"Content-Type": TEXT})
            resp.enable_chunked_encoding()
            await resp.prepare(request)
            try:
                async for chunk in upstream.content.iter_any():
                    await resp.write(chunk)
                await resp.write_eof()
            except (aiohttp.ClientError, ConnectionResetError):
                pass  # either end went away: the stream ends there, as upstream's copy does
            return resp
        finally:
            upstream.release()
