"""The audit log (``--audit-log-path``): one ``audit.k8s.io/v1`` Event per request stage, at
level Metadata, as JSON lines, rotated as upstream's lumberjack writer rotates.

Every response carries ``Audit-Id`` (the client's ``Audit-ID`` header, or a new UUID made
when first asked), as upstream's ``WithAuditInit`` does with or without a log. The request
path only collects a tuple of facts; a writer thread builds, encodes and writes the events
in batches, so a slow or failing disk never blocks or fails a request: a write error is
logged, the events of that batch are dropped, and the next batch reopens the file.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import random
import sys
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any, Final

from aiohttp import web
from aiohttp.helpers import reify

from kubedra.api.base import Obj
from kubedra.apiserver import objects
from kubedra.apiserver.auth import REQUESTOR, USER, User
from kubedra.apiserver.handlers import TARGET
from kubedra.apiserver.limits import Handler, is_long_running
from kubedra.apiserver.metrics import VERB
from kubedra.registry.identity import uuid4_text

log = logging.getLogger(__name__)

_RECORD = web.RequestKey("audit_record", list)

RESPONSE_STARTED: Final = "ResponseStarted"
RESPONSE_COMPLETE: Final = "ResponseComplete"
PANIC: Final = "Panic"
# what upstream records when no status was written (the connection closed first)
_CLOSED_EARLY: Final[Obj] = {"metadata": {}, "status": "Success",
                             "message": "Connection closed early", "code": 200}
# lumberjack's backup names: <name>-<UTC time>.<ext>
_BACKUP_TIME: Final = "%Y-%m-%dT%H-%M-%S.%f"
_MEGABYTE: Final = 1 << 20
_PENDING_LIMIT: Final = 100_000  # events waiting for the writer before new ones are dropped
_GATHER_SECONDS: Final = 0.05
_ERROR_EVERY: Final = 10.0  # seconds between repeated reports of a failing log


@dataclass(frozen=True, slots=True)
class AuditLogConfig:
    """``--audit-log-path`` (``-`` is standard output), ``--audit-log-maxsize`` (MB before
    rotating; 0 is lumberjack's 100), ``--audit-log-maxbackup`` and ``--audit-log-maxage``
    (days) bound the rotated files (0: keep all)."""

    path: str
    max_size_mb: int = 0
    max_backups: int = 0
    max_age_days: int = 0


class Request(web.BaseRequest):
    """A request whose response, when its headers go out, carries the Audit-Id and, for a
    watch, records the ResponseStarted stage."""

    @reify
    def audit_id(self) -> str:
        """The client's ``Audit-ID``, or a new one (made when first asked: by the response
        header or the log's first event)."""
        return self.headers.get("Audit-ID") or new_audit_id()

    def get(self, key: Any, default: Any = None) -> Any:
        # the state dict's own lookup: the Mapping mixin's raises and catches on every miss
        return self._state.get(key, default)

    async def _prepare_hook(self, response: web.StreamResponse) -> None:
        response.headers["Audit-Id"] = self.audit_id
        record = self.get(_RECORD)
        if record is not None and record[0] is None:
            record[0] = response.status
            record[1].emit(self, RESPONSE_STARTED, {"metadata": {}, "code": response.status})


class Auditor:
    """Wraps the server's handler: the audit ID for every request, and its events when a
    log is configured."""

    def __init__(self, config: AuditLogConfig | None) -> None:
        self.sink = AuditSink(config) if config is not None else None

    def start(self) -> None:
        if self.sink is not None:
            self.sink.start()

    def stop(self) -> None:
        if self.sink is not None:
            self.sink.stop()

    def around(self, handler: Handler) -> Handler:
        """``handler`` itself without a log (each :class:`Request` names its audit ID)."""
        sink = self.sink
        if sink is None:
            return handler

        async def audited(request: web.BaseRequest) -> web.StreamResponse:
            received = time.time()
            long_running = is_long_running(request)
            # [the code the response started with, the sink, when the request arrived]
            record: list[Any] = [None, sink, received]
            if long_running:
                request[_RECORD] = record
            try:
                resp = await handler(request)
            except BaseException:
                if long_running and record[0] is None:
                    sink.emit(request, RESPONSE_STARTED, _CLOSED_EARLY, received)
                sink.emit(request, RESPONSE_COMPLETE, _CLOSED_EARLY, received)
                raise
            status = _response_status(resp)
            if long_running and record[0] is None:
                record[0] = resp.status
                sink.emit(request, RESPONSE_STARTED, status, received)
            stage = PANIC if resp.status == 500 else RESPONSE_COMPLETE
            sink.emit(request, stage, status, received)
            return resp

        return audited


def _response_status(resp: web.StreamResponse) -> Obj:
    """The event's responseStatus: the code, and for a failure the bounded fields of the
    Status the client got."""
    if resp.status < 400 or not isinstance(resp, web.Response):
        return {"metadata": {}, "code": resp.status}
    out: Obj = {"metadata": {}}
    body = resp.body
    if isinstance(body, bytes) and body.startswith(b"{"):
        with contextlib.suppress(ValueError):
            status = objects.decode(body)
            if isinstance(status, dict) and status.get("kind") == "Status":
                for key in ("status", "message", "reason", "details"):
                    if key in status:
                        out[key] = status[key]
    out["code"] = resp.status
    return out


class AuditSink:
    """Events in, JSON lines out on a writer thread."""

    def __init__(self, config: AuditLogConfig) -> None:
        self.config = config
        self.queue: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self.writer = RotatingWriter(config)
        self.dropped = 0
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="audit-log", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Write what is queued, then close the file."""
        if self._thread is not None:
            self.queue.put(None)
            self._thread.join(10)
            self._thread = None
        self.writer.close()

    def emit(self, request: web.BaseRequest, stage: str, status: Obj,
             received: float | None = None) -> None:
        """Queue the event of one stage of ``request`` (its facts, taken now)."""
        if self.queue.qsize() >= _PENDING_LIMIT:
            self.dropped += 1
            return
        record = request.get(_RECORD)
        if received is None:
            received = record[2] if record is not None else time.time()
        assert isinstance(request, Request)
        user, requestor = request.get(USER), request.get(REQUESTOR)
        self.queue.put((
            request.audit_id, stage, request.raw_path, request.get(VERB), request.method,
            requestor or user, user if requestor else None, _source_ips(request),
            request.headers.get("User-Agent"), request.get(TARGET), status, received,
            time.time(),
        ))

    def _run(self) -> None:
        while True:
            item = self.queue.get()
            batch = []
            while item is not None:
                batch.append(_event_line(item))
                if len(batch) >= 4096:
                    break
                try:
                    item = self.queue.get_nowait()
                except queue.Empty:
                    break
            if batch:
                self.writer.write(b"".join(batch))
            if item is None:
                return
            # let events gather: one wake-up and one write per batch, not per request,
            # keeps the thread from contending with the event loop for the interpreter
            time.sleep(_GATHER_SECONDS)


def _event_line(item: tuple[Any, ...]) -> bytes:
    (audit_id, stage, uri, verb, method, user, impersonated, ips, agent, target, status,
     received, stamped) = item
    event: Obj = {
        "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata",
        "auditID": audit_id, "stage": stage, "requestURI": uri,
        "verb": verb or method.lower(), "user": _user_info(user),
    }
    if impersonated is not None:
        event["impersonatedUser"] = _user_info(impersonated)
    event["sourceIPs"] = ips
    if agent:
        event["userAgent"] = agent
    if target is not None:
        kind = target.res.kind
        ref: Obj = {"resource": kind.plural}
        if target.namespace:
            ref["namespace"] = target.namespace
        if target.name:
            ref["name"] = target.name
        if kind.group:
            ref["apiGroup"] = kind.group
        ref["apiVersion"] = kind.version
        if target.subresource:
            ref["subresource"] = target.subresource
        event["objectRef"] = ref
    event["responseStatus"] = status
    event["requestReceivedTimestamp"] = _micro_time(received)
    event["stageTimestamp"] = _micro_time(stamped)
    return objects.encode(event) + b"\n"


def _user_info(user: User | None) -> Obj:
    if user is None:
        return {}
    out: Obj = {"username": user.name}
    if user.uid:
        out["uid"] = user.uid
    if user.groups:
        out["groups"] = list(user.groups)
    if user.extra:
        out["extra"] = {k: list(v) for k, v in user.extra.items()}
    return out


def _source_ips(request: web.BaseRequest) -> list[str]:
    """upstream's SourceIPs: X-Forwarded-For, then X-Real-Ip, then the peer, each once."""
    ips = [ip.strip() for ip in request.headers.get("X-Forwarded-For", "").split(",")
           if ip.strip()]
    for ip in (request.headers.get("X-Real-Ip", "").strip(), request.remote or ""):
        if ip and ip not in ips:
            ips.append(ip)
    return ips


_second: list[Any] = [None, ""]  # the last whole second formatted, and its text


def _micro_time(t: float) -> str:
    """metav1.MicroTime: RFC 3339 with microseconds, UTC (the writer thread formats each
    second once)."""
    sec = int(t)
    micro = round((t - sec) * 1e6)
    if micro == 1_000_000:
        sec, micro = sec + 1, 0
    if _second[0] != sec:
        _second[:] = [sec, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec))]
    return f"{_second[1]}.{micro:06d}Z"


# audit IDs only need to be unique, not unpredictable: a generator seeded once from the
# system, instead of a getrandom system call on every request
_ids = random.Random(os.urandom(32))


def new_audit_id() -> str:
    """A random version 4 UUID."""
    return uuid4_text(_ids.getrandbits(128))


class RotatingWriter:
    """Appends to the log file, rotating it past ``max_size`` as lumberjack does: the full
    file is renamed ``<name>-<UTC time>.<ext>`` and a new one begins; backups beyond
    ``max_backups`` or older than ``max_age`` are removed."""

    def __init__(self, config: AuditLogConfig) -> None:
        self.config = config
        self.max_bytes = (config.max_size_mb or 100) * _MEGABYTE
        self.path = Path(config.path)
        self._file: IO[bytes] | None = None
        self._size = 0
        self._failing_since: float | None = None
        self._reported = 0.0
        self._lost = 0

    def write(self, data: bytes) -> None:
        try:
            if self.config.path == "-":
                sys.stdout.buffer.write(data)
                sys.stdout.buffer.flush()
                return
            if self._file is not None and self._size + len(data) > self.max_bytes:
                self._rotate()
            if self._file is None:
                self._open()
            assert self._file is not None
            self._file.write(data)
            self._file.flush()
            self._size += len(data)
        except OSError as err:
            self._failed(err, data.count(b"\n"))
            return
        if self._failing_since is not None:
            log.warning("audit log %s is writable again; %d events were lost", self.path,
                        self._lost)
            self._failing_since = None
            self._lost = 0

    def close(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._file = os.fdopen(fd, "ab")
        self._size = os.fstat(fd).st_size

    def _rotate(self) -> None:
        self.close()
        stamp = datetime.now(UTC).strftime(_BACKUP_TIME)[:-3]  # milliseconds
        backup = self.path.with_name(f"{self.path.stem}-{stamp}{self.path.suffix}")
        os.replace(self.path, backup)
        self._prune()

    def _prune(self) -> None:
        backups = sorted(self._backups(), reverse=True)  # newest first
        keep = self.config.max_backups
        cutoff = (datetime.now(UTC) - timedelta(days=self.config.max_age_days)
                  if self.config.max_age_days else None)
        for n, (when, path) in enumerate(backups):
            if (keep and n >= keep) or (cutoff is not None and when < cutoff):
                with contextlib.suppress(OSError):
                    path.unlink()

    def _backups(self) -> list[tuple[datetime, Path]]:
        prefix, suffix = f"{self.path.stem}-", self.path.suffix
        out = []
        for path in self.path.parent.iterdir():
            name = path.name
            if not (name.startswith(prefix) and name.endswith(suffix)):
                continue
            stamp = name[len(prefix):len(name) - len(suffix)]
            try:
                when = datetime.strptime(stamp, "%Y-%m-%dT%H-%M-%S.%f").replace(tzinfo=UTC)
            except ValueError:
                continue
            out.append((when, path))
        return out

    def _failed(self, err: OSError, events: int) -> None:
        """Drop the batch, close the file (the next batch reopens it), report now and
        then."""
        self.close()
        self._lost += events
        now = time.monotonic()
        if self._failing_since is None:
            self._failing_since = now
        if now - self._reported >= _ERROR_EVERY:
            self._reported = now
            log.error("audit log %s cannot be written (%s); %d events lost so far",
                      self.path, err, self._lost)
