"""What the server serves, learnt as upstream clients learn it: a group version the server
does not serve answers 404 (the DRA client of 1.34 falls back from ``v1`` to ``v1beta2`` to
``v1beta1`` on NotFound). Components ask here instead of being told the release, so one
binary runs against a server of either release (``--emulated-version``).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterable

from kubedra.api.release import R1_30, R1_34, Release, parse_release
from kubedra.client.errors import ApiError, is_not_found
from kubedra.client.rest import Client

log = logging.getLogger(__name__)

RESOURCE = "resource.k8s.io"
#: The DRA group version of the v1.30 era (the one the components' DRA parts speak).
V1ALPHA2 = "v1alpha2"
#: The DRA group version of today (1.34).
V1 = "v1"


async def served_versions(client: Client, group: str, versions: Iterable[str],
                          retry: float = 0.2) -> list[str]:
    """Those of ``versions`` (of ``group``; "" is the core group) the server serves, in the
    given order. A 404 means not served; any other answer, or no answer, is logged and the
    server asked again (backing off from ``retry`` to 5 s), as the informers do: a component
    may start before its server, or before its credentials are accepted."""
    out = []
    for version in versions:
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        backoff = retry
        while True:
            try:
                await client.get_path(path)
            except ApiError as err:
                if is_not_found(err):
                    break
                log.warning("discovery of %s: %s (asking again)", path, err)
            except (ConnectionError, TimeoutError) as err:
                log.warning("discovery of %s: %s (asking again)", path, err)
            else:
                out.append(version)
                break
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 5.0)
    return out


async def discover_release(client: Client) -> Release:
    """The release the server emulates: v1.30 when it serves ``resource.k8s.io/v1alpha2``,
    v1.34 when it serves a later DRA version; with DRA off altogether, ``/version`` says."""
    found = await served_versions(client, RESOURCE, (V1ALPHA2, "v1", "v1beta2", "v1beta1"))
    if V1ALPHA2 in found:
        return R1_30
    if found:
        return R1_34
    info = json.loads(await client.get_path("/version"))
    return parse_release(f"{info['major']}.{info['minor']}")


async def dra_served(client: Client, component: str,
                     without: str = "its DRA parts (drivers, ResourceSlices, claims)",
                     version: str = V1ALPHA2) -> bool:
    """Whether the server serves the DRA ``version`` the component's DRA parts speak
    (v1alpha2 unless given); when it does not, the component says so in one line (naming
    what it runs ``without``)."""
    if await served_versions(client, RESOURCE, (version,)):
        return True
    release = await discover_release(client)
    log.warning("%s: the API server emulates Kubernetes %s and does not serve %s/%s: running "
                "without %s", component, release.git_version, RESOURCE, version, without)
    return False
