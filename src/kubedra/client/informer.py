"""Informers: a local cache of one kind kept current by list-then-watch.

The informer lists (page by page, at one resourceVersion), then watches from that version.
When a watch ends it resumes from the last version seen (bookmarks advance it too); when the
server answers 410 Gone it lists again and reports the differences as events, so handlers
always see a consistent sequence of adds, updates and deletes.

As client-go's reflector, connection problems and API errors are retried with backoff for as
long as it takes. Anything else (a bug, an event that cannot be decoded) is logged with its
traceback and answered by a fresh list; an informer failing that way again and again raises
:class:`InformerFailed` out of :func:`run_informed`, so that its process exits non-zero and
its supervisor restarts it instead of it staying up with a dead cache.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any, Generic, TypeVar

from kubedra.api.meta import TypedObject
from kubedra.client.errors import ApiError, is_gone
from kubedra.client.rest import Client
from kubedra.tasks import cancel_and_wait

T = TypeVar("T", bound=TypedObject)
log = logging.getLogger(__name__)

AddHandler = Callable[[T], None]
UpdateHandler = Callable[[T, T], None]
DeleteHandler = Callable[[T], None]

MAX_UNEXPECTED_FAILURES = 8
"""Unexpected failures in a row (with backoff up to 5 s: about 20 s) before giving up."""


class InformerFailed(Exception):
    """An informer kept failing in ways a relist did not cure."""


def object_key(obj: TypedObject) -> str:
    """``namespace/name`` for namespaced objects, ``name`` otherwise (client-go's key)."""
    meta = obj.metadata
    return f"{meta.namespace}/{meta.name}" if meta.namespace else str(meta.name)


class Informer(Generic[T]):
    def __init__(self, client: Client, model: type[T], *, namespace: str | None = None,
                 label_selector: str | None = None, field_selector: str | None = None,
                 page_size: int = 500, watch_timeout: tuple[int, int] = (300, 600),
                 max_failures: int = MAX_UNEXPECTED_FAILURES,
                 trim_managed_fields: bool = False) -> None:
        """``trim_managed_fields``: cache objects without ``metadata.managedFields``, as
        upstream's components keep them (kube-controller-manager's shared informers,
        kube-scheduler's pods): no controller reads them, they are most of a written
        object's metadata, and an update sent from a cached object then leaves the
        server's record as it is instead of carrying it back."""
        self.client = client
        self.model = model
        self.trim_managed_fields = trim_managed_fields
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.page_size = page_size
        self.watch_timeout = watch_timeout
        self.max_failures = max_failures
        self.store: dict[str, T] = {}
        self.resource_version = ""
        self._adds: list[AddHandler[T]] = []
        self._updates: list[UpdateHandler[T]] = []
        self._deletes: list[DeleteHandler[T]] = []
        self._synced = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def add_handler(self, *, on_add: AddHandler[T] | None = None,
                    on_update: UpdateHandler[T] | None = None,
                    on_delete: DeleteHandler[T] | None = None) -> None:
        """Handlers run on the event loop, in event order; they must not block."""
        if on_add:
            self._adds.append(on_add)
        if on_update:
            self._updates.append(on_update)
        if on_delete:
            self._deletes.append(on_delete)

    def get(self, name: str, namespace: str | None = None) -> T | None:
        return self.store.get(f"{namespace}/{name}" if namespace else name)

    def list(self) -> list[T]:
        return list(self.store.values())

    @property
    def synced(self) -> bool:
        return self._synced.is_set()

    async def wait_synced(self, timeout: float | None = None) -> None:
        await asyncio.wait_for(self._synced.wait(), timeout)

    def start(self) -> asyncio.Task[None]:
        if self._task is None:
            self._task = asyncio.create_task(self.run(), name=f"informer-{self.model.__name__}")
        return self._task

    async def stop(self) -> None:
        if self._task is not None:
            # a failure was reported where the task was awaited (see run_informed)
            await cancel_and_wait(self._task, ignore=(InformerFailed,))
            self._task = None

    async def run(self) -> None:
        """List and watch until cancelled; raises :class:`InformerFailed` when it cannot
        recover."""
        name = self.model.__name__
        backoff = 0.2
        need_list = True
        failures = 0
        while True:
            try:
                if need_list:
                    await self._relist()
                    self._synced.set()
                    need_list = False
                await self._watch_once()
                backoff = 0.2
                failures = 0
                continue
            except ApiError as e:
                if is_gone(e):
                    need_list = True
                    continue
                log.warning("%s informer: %s", name, e)
            except (ConnectionError, TimeoutError) as e:
                log.info("%s informer reconnecting: %s", name, e)
            except Exception as e:
                failures += 1
                if failures >= self.max_failures:
                    log.error("%s informer failed %d times in a row; giving up", name, failures)
                    raise InformerFailed(f"{name} informer: {e!r}") from e
                log.exception("%s informer failed unexpectedly; listing again", name)
                need_list = True
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 5.0)

    async def _relist(self) -> None:
        page = await self.client.list_all(
            self.model, self.namespace, label_selector=self.label_selector,
            field_selector=self.field_selector, page_size=self.page_size)
        if self.trim_managed_fields:
            for o in page.items:
                o.metadata.managed_fields = None
        fresh = {object_key(o): o for o in page.items}
        old = self.store
        self.store = fresh
        self.resource_version = page.resource_version
        for key, obj in fresh.items():
            prev = old.get(key)
            if prev is None:
                self._emit_add(obj)
            elif prev.metadata.resource_version != obj.metadata.resource_version:
                self._emit_update(prev, obj)
        for key, prev in old.items():
            if key not in fresh:
                self._emit_delete(prev)

    async def _watch_once(self) -> None:
        timeout = random.randint(*self.watch_timeout)
        async for event in self.client.watch(
                self.model, self.namespace, resource_version=self.resource_version,
                label_selector=self.label_selector, field_selector=self.field_selector,
                timeout_seconds=timeout):
            obj = event.object
            if self.trim_managed_fields:
                obj.metadata.managed_fields = None
            rv = obj.metadata.resource_version or self.resource_version
            if event.type == "BOOKMARK":
                self.resource_version = rv
                continue
            key = object_key(obj)
            if event.type == "DELETED":
                prev = self.store.pop(key, None)
                self._emit_delete(prev if prev is not None else obj)
            else:
                prev = self.store.get(key)
                self.store[key] = obj
                if prev is None:
                    self._emit_add(obj)
                else:
                    self._emit_update(prev, obj)
            self.resource_version = rv

    def _emit_add(self, obj: T) -> None:
        for h in self._adds:
            _safely(h, obj)

    def _emit_update(self, old: T, new: T) -> None:
        for h in self._updates:
            _safely(h, old, new)

    def _emit_delete(self, obj: T) -> None:
        for h in self._deletes:
            _safely(h, obj)


async def run_informed(informers: Sequence[Informer[Any]],
                       work: Callable[[], Awaitable[None]]) -> None:
    """Start ``informers``, wait until all have synced, then run ``work()`` until it ends or
    an informer gives up (its :class:`InformerFailed` is raised here, ending ``work``)."""
    watched = [informer.start() for informer in informers]

    async def synced_then_work() -> None:
        await asyncio.gather(*(informer.wait_synced() for informer in informers))
        await work()

    main = asyncio.ensure_future(synced_then_work())
    try:
        done, _ = await asyncio.wait([main, *watched], return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            if task is not main and task.cancelled():
                raise InformerFailed(f"{task.get_name()} was stopped")
            task.result()
    finally:
        if not main.done():
            await cancel_and_wait(main)


def _safely(handler: Callable[..., None], *args: object) -> None:
    """A failing handler is logged; it must not stop the informer for every other handler."""
    try:
        handler(*args)
    except Exception:
        log.exception("informer handler %r failed", handler)


class Informers:
    """One informer per kind, shared by the components of one process (upstream's
    SharedInformerFactory)."""

    def __init__(self, client: Client, *,
                 trim_managed_fields: bool | Collection[type[Any]] = False) -> None:
        """``trim_managed_fields``: for every kind, or for the kinds given (see
        :class:`Informer`)."""
        self.client = client
        self.trim_managed_fields = trim_managed_fields
        self._by_model: dict[type[Any], Informer[Any]] = {}

    def get(self, model: type[T]) -> Informer[T]:
        informer: Informer[T] | None = self._by_model.get(model)
        if informer is None:
            trim = self.trim_managed_fields
            informer = self._by_model[model] = Informer(
                self.client, model,
                trim_managed_fields=trim if isinstance(trim, bool) else model in trim)
        return informer

    def all(self) -> list[Informer[Any]]:
        return list(self._by_model.values())

    async def start(self) -> None:
        for informer in self._by_model.values():
            informer.start()
        await asyncio.gather(*(i.wait_synced() for i in self._by_model.values()))

    async def run(self, work: Callable[[], Awaitable[None]]) -> None:
        """Run ``work`` once every informer has synced (see :func:`run_informed`)."""
        await run_informed(self.all(), work)

    async def stop(self) -> None:
        for informer in self._by_model.values():
            await informer.stop()
