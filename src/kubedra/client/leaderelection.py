"""Leader election through a coordination.k8s.io/v1 Lease, as client-go's leaderelection.

A candidate takes the Lease when it does not exist or its holder has not renewed it for
``lease_duration`` (measured on the candidate's own clock from when it last saw the record
change, so clock skew between machines does not matter). The leader renews every
``retry_period``; every write is compare-and-swap on resourceVersion, so two candidates can
never both believe they hold it. A leader that cannot renew within ``renew_deadline`` stops
leading (its work must stop).
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import time
from dataclasses import dataclass

import msgspec

from kubedra.api.coordination import Lease, LeaseSpec
from kubedra.api.meta import ObjectMeta
from kubedra.client.errors import ApiError, is_not_found
from kubedra.client.rest import Client

log = logging.getLogger(__name__)


def _micro_now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class LeaderElectionConfig:
    name: str
    namespace: str = "kube-system"
    identity: str = ""
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0


class LeaderElector:
    def __init__(self, client: Client, config: LeaderElectionConfig) -> None:
        self.client = client
        self.config = config
        self._observed: tuple[str, str, float] | None = None  # holder, renewTime, local time
        self.leading = asyncio.Event()

    async def _try_acquire_or_renew(self) -> bool:
        cfg = self.config
        now = _micro_now()
        try:
            lease = await self.client.get(Lease, cfg.name, cfg.namespace)
        except ApiError as e:
            if not is_not_found(e):
                raise
            spec = LeaseSpec(holder_identity=cfg.identity,
                             lease_duration_seconds=int(cfg.lease_duration),
                             acquire_time=now, renew_time=now, lease_transitions=0)
            await self.client.create(Lease(
                api_version="coordination.k8s.io/v1", kind="Lease",
                metadata=ObjectMeta(name=cfg.name, namespace=cfg.namespace), spec=spec))
            self._observed = (cfg.identity, now, time.monotonic())
            return True
        holder = lease.spec.holder_identity or ""
        renew = lease.spec.renew_time or ""
        if self._observed is None or self._observed[:2] != (holder, renew):
            self._observed = (holder, renew, time.monotonic())
        expired = time.monotonic() > self._observed[2] + cfg.lease_duration
        if holder and holder != cfg.identity and not expired:
            return False
        spec = msgspec.structs.replace(
            lease.spec, holder_identity=cfg.identity, renew_time=now,
            lease_duration_seconds=int(cfg.lease_duration))
        if holder != cfg.identity:
            spec = msgspec.structs.replace(
                spec, acquire_time=now, lease_transitions=(lease.spec.lease_transitions or 0) + 1)
        await self.client.update(msgspec.structs.replace(lease, spec=spec))
        self._observed = (cfg.identity, now, time.monotonic())
        return True

    async def _attempt(self) -> bool:
        try:
            return await self._try_acquire_or_renew()
        except (ApiError, OSError) as e:
            log.info("lease %s: %s", self.config.name, e)
            return False

    async def acquire(self) -> None:
        """Return once this candidate holds the Lease."""
        lease = f"{self.config.namespace}/{self.config.name}"
        log.info("attempting to acquire leader lease %s...", lease)
        while not await self._attempt():
            await asyncio.sleep(self.config.retry_period)
        self.leading.set()
        log.info("successfully acquired lease %s", lease)

    async def keep_renewing(self) -> None:
        """Renew until that fails for ``renew_deadline``; then return (leadership lost)."""
        cfg = self.config
        last_ok = time.monotonic()
        while True:
            await asyncio.sleep(cfg.retry_period)
            if await self._attempt():
                last_ok = time.monotonic()
            elif time.monotonic() - last_ok > cfg.renew_deadline:
                self.leading.clear()
                log.warning("%s lost lease %s", cfg.identity, cfg.name)
                return

    async def release(self) -> None:
        """Give the Lease up on clean shutdown so another replica takes over at once."""
        cfg = self.config
        try:
            lease = await self.client.get(Lease, cfg.name, cfg.namespace)
            if lease.spec.holder_identity == cfg.identity:
                await self.client.update(msgspec.structs.replace(
                    lease, spec=msgspec.structs.replace(lease.spec, holder_identity=None,
                                                        renew_time=_micro_now())))
        except (ApiError, OSError) as e:
            log.info("releasing lease %s: %s", cfg.name, e)
