"""The media type a client speaks for API objects besides JSON (``--kube-api-content-type``).

JSON is the client's own (``api/codec``); another type is an :class:`ObjectWire` handed to
the :class:`~kubedra.client.rest.Client` by whoever builds it (``cli/``, which gives
``proto/kube.py``'s protobuf one), since ``client/`` sits beside ``proto/`` and imports only
``api/``. Like client-go with a protobuf ``ContentType``: object bodies go in that type when
the kind has a form in it (patches stay JSON), every request accepts it first and JSON
after, and each answer is read in whatever type it came in.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

JSON = "application/json"


class ObjectWire(Protocol):
    """An encoding of API objects with their type meta inside (as protobuf's envelope)."""

    media_type: str
    """The Content-Type of a body in it, first in ``Accept`` (a watch stream of its events
    has it with parameters)."""
    magic: bytes
    """How an answer in it starts (an answer that does not is JSON)."""

    def encode(self, obj: dict[str, Any]) -> bytes:
        """An object's JSON form -> its bytes; ValueError when the kind (or a field) has no
        form in this type (the body then goes in JSON)."""
        ...

    def decode(self, data: bytes) -> dict[str, Any]:
        """An answer's bytes -> the JSON form of the object (or list, or Status)."""
        ...

    def watch_events(self, data: bytearray) -> Iterator[tuple[str, dict[str, Any]]]:
        """The complete events at the front of a watch stream's bytes, each removed from
        ``data`` as it is read (a partial one stays)."""
        ...
