"""The identity of one allocated device (or share of one), as structured's ``SharedDeviceID``.

Not an API type: the key of a claim's ``status.devices`` and of allocated devices. It is a Go
struct upstream, so a duplicate named in a field error prints as JSON with Go's field names.
(Kept out of the compiled ``validation/``: mypyc cannot build a msgspec field default.)
"""

from __future__ import annotations

import msgspec


class SharedDeviceID(msgspec.Struct, frozen=True, rename="pascal"):
    driver: str
    pool: str
    device: str
    share_id: str | None = msgspec.field(default=None, name="ShareID")
