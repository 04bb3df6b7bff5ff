"""What a simulated container prints: no process runs, so its output is composed from what the
node knows of the run, deterministically. At start: the image and command, then each device it
received (per claim it names in ``resources.claims``, and from 1.34 per request): driver, pool,
device, CDI ids, then the environment those CDI devices inject, printed as ``export`` in the
upstream example driver's demo pods prints it (``declare -x GPU_DEVICE_0="..."``). At the end
the exit code and reason, as the container status says them.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable

from kubedra.api import resourceclaim
from kubedra.api.core import Container, Pod
from kubedra.kubelet.cdi import CDISpecs
from kubedra.kubelet.containerlogs import ContainerLogs
from kubedra.kubelet.ledger import DriverDevices

PREFIX = "kubedra: "


def _quoted(words: Iterable[str]) -> str:
    return "[" + ", ".join(json.dumps(w) for w in words) + "]"


def _claims_of(pod: Pod, container: Container) -> list[tuple[str, str | None]]:
    """(claim name, request or None) of each claim the container names, in its order; a
    claim whose name is not known (not created, not needed) is left out."""
    by_pod_claim = {pc.name: pc for pc in pod.spec.resource_claims or ()}
    out: list[tuple[str, str | None]] = []
    for ref in container.resources.claims or ():
        pc = by_pod_claim.get(ref.name)
        if pc is None:
            continue
        try:
            name, _ = resourceclaim.claim_name(pod, pc)
        except resourceclaim.ClaimNameError:
            continue
        if name is not None:
            out.append((name, ref.request))
    return out


def _device_lines(claim: str, request: str | None,
                  held: list[DriverDevices]) -> tuple[list[str], list[str]]:
    """The lines for one claim (restricted to ``request`` if given) and its CDI ids."""
    lines: list[str] = []
    ids: list[str] = []
    for d in held:
        shown = [p for p in d.devices if request is None or request in p.request_names]
        for p in shown:
            requests = f" request {','.join(p.request_names)}" if p.request_names else ""
            cdi = f" cdi {','.join(p.cdi_ids)}" if p.cdi_ids else ""
            lines.append(f"{PREFIX}claim {claim}{requests}: driver {d.driver} pool {p.pool} "
                         f"device {p.device}{cdi}")
        per_device = any(p.cdi_ids for p in d.devices)
        chosen = [i for p in shown for i in p.cdi_ids] if per_device else list(d.cdi_ids)
        if not per_device and chosen:  # 1.30: the driver's CDI ids are the claim's
            lines.append(f"{PREFIX}claim {claim}: driver {d.driver} cdi {','.join(chosen)}")
        ids += chosen
    return lines, ids


def start_lines(pod: Pod, container: Container, held: dict[str, list[DriverDevices]],
                env_of: Callable[[list[str]], list[str]]) -> list[str]:
    """The container's first lines: what started, the devices, the injected environment."""
    command = [*(container.command or ()), *(container.args or ())]
    lines = [f"{PREFIX}container {container.name} started: image {container.image or ''}, "
             f"command {_quoted(command) if command else '(image default)'}"]
    ids: list[str] = []
    for claim, request in _claims_of(pod, container):
        claim_lines, claim_ids = _device_lines(claim, request, held.get(claim, []))
        lines += claim_lines
        ids += [i for i in claim_ids if i not in ids]
    for entry in sorted(env_of(ids)):
        key, _, value = entry.partition("=")
        lines.append(f"declare -x {key}={json.dumps(value)}")
    return lines


def exit_line(container: str, exit_code: int, reason: str) -> str:
    return f"{PREFIX}container {container} exited with code {exit_code} ({reason})"


class Console:
    """Where the simulated containers' output goes: their log files, composed with the CDI
    specs the drivers wrote."""

    def __init__(self, logs: ContainerLogs, cdi: CDISpecs) -> None:
        self.logs = logs
        self.cdi = cdi

    def started(self, pod: Pod, instance: int, held: dict[str, list[DriverDevices]]) -> None:
        for c in pod.spec.containers:
            self.logs.start(self.logs.path(pod, c.name, instance),
                            functools.partial(start_lines, pod, c, held, self.cdi.env))

    def exited(self, pod: Pod, instance: int, exit_code: int, reason: str) -> None:
        for c in pod.spec.containers:
            self.logs.end(self.logs.path(pod, c.name, instance),
                          [exit_line(c.name, exit_code, reason)])

    def stopped(self, pod: Pod, instance: int) -> None:
        """Killed with its pod: nothing more is printed."""
        for c in pod.spec.containers:
            self.logs.end(self.logs.path(pod, c.name, instance))
